import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SplintSecrets

/// `Credential` against the real gnome-keyring that `script/test` starts, through the default store.
@Suite("Credential against gnome-keyring", TestKeyring.required)
struct CredentialTests {
  let service = TestKeyring.uniqueService()

  @Test func roundTrip() throws {
    let credential = Credential(service: service, account: "alice")
    try credential.save("s3cr3t")
    #expect(try credential.read() == "s3cr3t")
    #expect(try credential.readData() == Data("s3cr3t".utf8))
  }

  @Test func overwriteReplacesTheSecret() throws {
    let credential = Credential(service: service, account: "alice")
    try credential.save("first")
    try credential.save("second")
    #expect(try credential.read() == "second")
    #expect(try Credential.accounts(service: service) == ["alice"])
  }

  @Test func absentReadsNil() throws {
    #expect(try Credential(service: service, account: "nobody").read() == nil)
    #expect(try Credential(service: service, account: "nobody").readData() == nil)
  }

  @Test func deleteTwiceSucceedsAndLeavesNothing() throws {
    let credential = Credential(service: service, account: "alice")
    try credential.save("s3cr3t")
    try credential.delete()
    try credential.delete()
    #expect(try credential.read() == nil)
  }

  @Test func deleteLeavesOtherAccountsAlone() throws {
    try Credential(service: service, account: "alice").save("a")
    try Credential(service: service, account: "bob").save("b")
    try Credential(service: service, account: "alice").delete()
    #expect(try Credential(service: service, account: "bob").read() == "b")
  }

  @Test func binaryWithNULBytesRoundTripsByteForByte() throws {
    let credential = Credential(service: service, account: "key")
    let bytes = Data([0x00, 0xFF, 0x00, 0x01, 0x80, 0x7F, 0x00])
    try credential.save(bytes)
    #expect(try credential.readData() == bytes)
    #expect(throws: CredentialError.notText) { try credential.read() }
  }

  @Test func textWithNULCharactersRoundTrips() throws {
    let credential = Credential(service: service, account: "alice")
    try credential.save("before\u{0}after")
    #expect(try credential.read() == "before\u{0}after")
  }

  @Test func emptySecretRoundTrips() throws {
    let credential = Credential(service: service, account: "alice")
    try credential.save("")
    #expect(try credential.read() == "")
    try credential.save(Data())
    #expect(try credential.readData() == Data())
  }

  @Test func unicodeInSecretServiceAndAccount() throws {
    let credential = Credential(service: "\(service).ключ", account: "jürgen 🔑")
    try credential.save("pässwörd 🗝️ 密码")
    #expect(try credential.read() == "pässwörd 🗝️ 密码")
    #expect(try Credential.accounts(service: "\(service).ключ") == ["jürgen 🔑"])
  }

  @Test func oneMebibyteSecretRoundTrips() throws {
    let credential = Credential(service: service, account: "big")
    let bytes = Data(
      (0..<(1 << 20)).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 13) })
    try credential.save(bytes)
    #expect(try credential.readData() == bytes)
  }

  @Test func accountsListsEachAccountOfTheServiceOnceSorted() throws {
    for account in ["carol", "alice", "bob"] {
      try Credential(service: service, account: account).save("x")
    }
    try Credential(service: service, account: "alice").save("again")
    try Credential(service: "\(service).other", account: "dave").save("x")
    #expect(try Credential.accounts(service: service) == ["alice", "bob", "carol"])
    #expect(try Credential.accounts(service: "\(service).none") == [])
  }

  @Test func asyncVariantsRoundTrip() async throws {
    let credential = Credential(service: service, account: "alice")
    try await credential.save("text")
    #expect(try await credential.read() == "text")
    try await credential.save(Data([0, 1, 2]))
    #expect(try await credential.readData() == Data([0, 1, 2]))
    #expect(try await Credential.accounts(service: service) == ["alice"])
    try await credential.delete()
    #expect(try await credential.read() == nil)
  }

  @Test func sixteenThreadsSavingAndReadingDistinctCredentialsAllSucceed() throws {
    let failures = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 16) { thread in
      for round in 0..<10 {
        let credential = Credential(service: service, account: "thread-\(thread)")
        let secret = "secret-\(thread)-\(round)"
        do {
          try credential.save(secret)
          let read = try credential.read()
          if read != secret { failures.withLock { $0.append("thread \(thread) read \(read ?? "nil")") } }
        } catch {
          failures.withLock { $0.append("thread \(thread): \(error)") }
        }
      }
    }
    #expect(failures.withLock { $0 } == [])
    #expect(try Credential.accounts(service: service).count == 16)
  }

  @Test func availabilityInAWorkingSession() {
    #expect(Credential.availability() == .available)
    #expect(Credential.availability().isAvailable)
  }

  @Test func explicitLabelIsAppliedToTheItem() async throws {
    let credential = Credential(service: service, account: "alice", label: "Example API token")
    try await credential.save("s3cr3t")
    #expect(try await SecretTool.labels(service: service) == ["Example API token"])
    // Saving again with another label relabels the same item rather than adding one.
    try await Credential(service: service, account: "alice", label: "Renamed").save("new")
    #expect(try await SecretTool.labels(service: service) == ["Renamed"])
    // Saving without a label keeps the item's label.
    try await Credential(service: service, account: "alice").save("newer")
    #expect(try await SecretTool.labels(service: service) == ["Renamed"])
  }
}
