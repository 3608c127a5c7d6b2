import Foundation
import Testing

@testable import SplintSecrets

/// The test double apps use in their own unit tests: no D-Bus at all.
@Suite struct InMemoryCredentialStoreTests {
  let store = InMemoryCredentialStore()

  @Test func roundTripOverwriteAndDelete() throws {
    let credential = Credential(service: "api.example.com", account: "alice", store: store)
    #expect(try credential.read() == nil)
    try credential.save("first")
    try credential.save("second")
    #expect(try credential.read() == "second")
    try credential.delete()
    try credential.delete()
    #expect(try credential.read() == nil)
  }

  @Test func keepsTheContentTypeAndLabelASecretServiceWouldGet() throws {
    let plain = Credential(service: "api.example.com", account: "alice", store: store)
    try plain.save("text")
    #expect(store.contentType(for: plain) == .text)
    #expect(store.label(for: plain) == "Password for 'alice' on 'api.example.com'")

    try plain.save(Data([0xFF, 0x00]))
    #expect(store.contentType(for: plain) == .binary)
    #expect(try plain.readData() == Data([0xFF, 0x00]))
    #expect(throws: CredentialError.notText) { try plain.read() }

    let labelled = Credential(service: "api.example.com", account: "alice", label: "Work token", store: store)
    try labelled.save("text")
    #expect(store.label(for: plain) == "Work token")
    try plain.save("again")
    #expect(store.label(for: plain) == "Work token", "saving without a label keeps the item's label")
    #expect(store.label(for: Credential(service: "other", account: "x", store: store)) == nil)
    #expect(store.contentType(for: Credential(service: "other", account: "x", store: store)) == nil)
  }

  @Test func accountsAreSortedAndPerService() throws {
    for account in ["carol", "alice", "bob"] {
      try Credential(service: "one", account: account, store: store).save("x")
    }
    try Credential(service: "two", account: "dave", store: store).save("x")
    #expect(try Credential.accounts(service: "one", store: store) == ["alice", "bob", "carol"])
    #expect(try Credential.accounts(service: "three", store: store) == [])
  }

  @Test(arguments: [CredentialError.locked, .serviceUnavailable, .noSessionBus, .timedOut])
  func injectedFailureMakesEveryCallFailUntilCleared(_ failure: CredentialError) throws {
    let credential = Credential(service: "svc", account: "alice", store: store)
    try credential.save("kept")
    store.failure = failure
    #expect(store.failure == failure)
    #expect(throws: failure) { try credential.read() }
    #expect(throws: failure) { try credential.save("lost") }
    #expect(throws: failure) { try credential.delete() }
    #expect(throws: failure) { try Credential.accounts(service: "svc", store: store) }
    #expect(Credential.availability(store: store) == .unavailable(failure))

    store.failure = nil
    #expect(try credential.read() == "kept")
    #expect(Credential.availability(store: store) == .available)
  }

  @Test func injectedFailureReachesAsyncCallsToo() async throws {
    let credential = Credential(service: "svc", account: "alice", store: store)
    store.failure = .locked
    await #expect(throws: CredentialError.locked) { try await credential.read() }
    await #expect(throws: CredentialError.locked) { try await credential.save("x") }
    await #expect(throws: CredentialError.locked) { try await credential.delete() }
    await #expect(throws: CredentialError.locked) { try await Credential.accounts(service: "svc", store: store) }
  }

  @Test func asyncVariantsWork() async throws {
    let credential = Credential(service: "svc", account: "alice", store: store)
    try await credential.save("text")
    #expect(try await credential.read() == "text")
    try await credential.save(Data([9]))
    #expect(try await credential.readData() == Data([9]))
    #expect(try await Credential.accounts(service: "svc", store: store) == ["alice"])
    try await credential.delete()
    #expect(try await credential.readData() == nil)
  }

  @Test func descriptionAndReflectionNameCredentialsButNeverSecrets() throws {
    try Credential(service: "api.example.com", account: "alice", store: store).save("hunter2-secret")
    try Credential(service: "api.example.com", account: "bob", store: store).save(Data("bytes-secret".utf8))
    var dumped = ""
    dump(store, to: &dumped)
    for text in [store.description, String(reflecting: store), dumped] {
      #expect(text.contains("api.example.com/alice"))
      #expect(text.contains("api.example.com/bob"))
      #expect(!text.contains("hunter2"))
      #expect(!text.contains("bytes-secret"))
    }
    #expect(store.description == "InMemoryCredentialStore(api.example.com/alice, api.example.com/bob)")
  }

  @Test("a store that says nothing else is named after its type and can be written")
  func defaultNameAndWritability() {
    #expect(store.name == "InMemoryCredentialStore")
    #expect(store.isWritable)
    #expect(SecretServiceStore.shared.name == "Secret Service")
  }
}
