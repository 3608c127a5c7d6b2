import Foundation
import Testing

@testable import SplintSecrets

/// `Credential` as a value: equality, description, and the checks it makes before calling any store.
@Suite struct CredentialValueTests {
  /// A store that fails every call, so that an `invalidArgument` proves the store was never asked.
  let unreachable: InMemoryCredentialStore = {
    let store = InMemoryCredentialStore()
    store.failure = .serviceUnavailable
    return store
  }()

  @Test(
    arguments: [
      ("s\u{0}vc", "alice", nil), ("svc", "al\u{0}ice", nil), ("svc", "alice", ""), ("svc", "alice", "la\u{0}bel"),
    ] as [(String, String, String?)])
  func invalidArgumentsAreRejectedBeforeAnyStoreCall(service: String, account: String, label: String?) async {
    let credential = Credential(service: service, account: account, label: label, store: unreachable)
    for error in [
      #expect(throws: CredentialError.self) { try credential.read() },
      #expect(throws: CredentialError.self) { try credential.readData() },
      #expect(throws: CredentialError.self) { try credential.save("x") },
      #expect(throws: CredentialError.self) { try credential.save(Data()) },
      #expect(throws: CredentialError.self) { try credential.delete() },
      await #expect(throws: CredentialError.self) { try await credential.read() },
      await #expect(throws: CredentialError.self) { try await credential.save("x") },
      await #expect(throws: CredentialError.self) { try await credential.save(Data()) },
      await #expect(throws: CredentialError.self) { try await credential.delete() },
    ] {
      guard case .invalidArgument(let reason)? = error?.situation else {
        Issue.record("expected invalidArgument, got \(String(describing: error))")
        continue
      }
      #expect(reason.contains("empty") || reason.contains("NUL"))
    }
  }

  @Test func invalidServiceNamesAreRejectedWhenListing() async {
    let reasons = [
      #expect(throws: CredentialError.self) { try Credential.accounts(service: "\u{0}", store: unreachable) },
      await #expect(throws: CredentialError.self) {
        try await Credential.accounts(service: "a\u{0}", store: unreachable)
      },
    ]
    #expect(reasons.map { $0.map { "\($0)" }?.hasPrefix("Invalid argument: The service name") } == [true, true])
  }

  @Test func equalityNamesTheSameSecretInTheSameStore() {
    let store = InMemoryCredentialStore()
    let credential = Credential(service: "svc", account: "alice", store: store)
    #expect(credential == Credential(service: "svc", account: "alice", store: store))
    #expect(credential.hashValue == Credential(service: "svc", account: "alice", store: store).hashValue)
    #expect(credential != Credential(service: "svc", account: "bob", store: store))
    #expect(credential != Credential(service: "other", account: "alice", store: store))
    #expect(credential != Credential(service: "svc", account: "alice", label: "L", store: store))
    #expect(credential != Credential(service: "svc", account: "alice", store: InMemoryCredentialStore()))
    #expect(Credential(service: "svc", account: "alice").store === DefaultCredentialStore.shared)
    #expect(Set([credential, credential, Credential(service: "svc", account: "bob", store: store)]).count == 2)
  }

  @Test func descriptionNamesServiceAccountAndLabel() {
    #expect("\(Credential(service: "svc", account: "alice"))" == #"Credential(service: "svc", account: "alice")"#)
    #expect(
      String(reflecting: Credential(service: "svc", account: "alice", label: "Work"))
        == #"Credential(service: "svc", account: "alice", label: "Work")"#)
  }

  @Test func itemsAreIdentifiedByTheAttributesOtherToolsUse() {
    let credential = Credential(service: "svc", account: "alice")
    #expect(credential.attributes == ["service": "svc", "username": "alice"])
    #expect(credential.itemLabel == "Password for 'alice' on 'svc'")
    #expect(Credential(service: "svc", account: "alice", label: "Mine").itemLabel == "Mine")
  }

  @Test func secretServiceStoreKeepsItsTimeout() {
    #expect(SecretServiceStore.shared.timeout == .seconds(60))
    #expect(SecretServiceStore(timeout: .milliseconds(250)).timeout == .milliseconds(250))
  }
}
