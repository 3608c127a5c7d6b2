import Foundation
import SplintSecrets
import SplintSecretsTesting
import Synchronization
import TestSupport
import Testing

/// Every store of SplintSecrets keeps the one contract `CredentialStoreConformance` checks, and the check finds a
/// store that breaks it.
@Suite struct ConformanceTests {
  @Test func inMemoryStore() throws {
    try CredentialStoreConformance(store: InMemoryCredentialStore()).run()
  }

  @Test func secretServiceStore() throws {
    try CredentialStoreConformance(store: SecretServiceStore.shared).run()
  }

  @Test("delivered secrets: a directory as systemd and Docker fill it")
  func deliveredStore() throws {
    let scratch = Scratch()
    let directory = scratch.url("delivered")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let delivered = ["alice": Data([0, 1, 2, 0]), "bob": Data("token\n".utf8)]
    for (account, secret) in delivered {
      let file = directory.appendingPathComponent(DeliveredCredentialStore.fileName(service: "svc", account: account))
      try secret.write(to: file)
      chmod(file.path, 0o400)
    }
    let store = DeliveredCredentialStore(directory: directory)
    try CredentialStoreConformance(store: store, service: "svc", delivered: delivered).run()
  }

  @Test("the kernel keyring, persistent and session, in a user namespace and session keyring of their own")
  func kernelKeyringStore() async throws {
    guard (try? await Programs.run(["unshare", "--user", "--map-root-user", "keyctl", "show", "@s"]))?.status == 0
    else {
      print("skipped: keyctl is refused here (a seccomp filter, or no user namespaces)")
      return
    }
    for keyring in ["kernel-persistent", "kernel-session"] {
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_PROBE_STORE"] = keyring
      let output = try await Programs.run(
        [
          "unshare", "--user", "--map-root-user", "keyctl", "session", "-", Programs.helper("SecretsProbe"),
          "conformance",
        ],
        environment: environment)
      #expect(output.lines == ["ok conforms"], "\(keyring): \(output.stderr)")
    }
  }

  @Test func chainOfAReadOnlyAndAWritableStore() throws {
    try CredentialStoreConformance(store: ChainedCredentialStore([ReadOnlyStore(), InMemoryCredentialStore()])).run()
  }

  @Test func readOnlyStoreWithDeliveredSecrets() throws {
    let delivered = ["alice": Data([0, 1, 2]), "bob": Data("token".utf8)]
    try CredentialStoreConformance(store: ReadOnlyStore(delivered), service: "svc", delivered: delivered).run()
  }

  @Test("a store that breaks every rule is told each one")
  func brokenWritableStore() throws {
    let failure = try #require(throws: CredentialStoreConformance.Failure.self) {
      try CredentialStoreConformance(store: BrokenStore()).run()
    }
    #expect(
      failure.violations == [
        "- availability() changed the accounts stored",
        "- accounts are not sorted and unique: [\"b\", \"a\", \"a\"]",
        "- a secret that is not there does not read as nil",
        "- text does not come back exactly",
        "- bytes (with NUL) do not come back byte for byte",
        "- a save does not replace the secret before it",
        "- an empty account (a service's default item) does not come back",
        "- accounts are not sorted and unique: [\"b\", \"a\", \"a\"], not [\"\", bytes, c, text]",
        "- a deleted secret still reads",
        "- deleting a secret that is not there fails: \(CredentialError.locked)",
        "- accounts are left after every secret was deleted",
      ])
    #expect(failure.description.hasPrefix("The store breaks the CredentialStore contract:\n- availability()"))
  }

  @Test("a read-only store that lets writes through, or loses what was delivered, is told so")
  func brokenReadOnlyStore() throws {
    let failure = try #require(throws: CredentialStoreConformance.Failure.self) {
      try CredentialStoreConformance(store: ReadOnlyStore(), service: "svc", delivered: ["alice": Data("a".utf8)])
        .run()
    }
    #expect(
      failure.violations == [
        "- the delivered secret of alice does not come back byte for byte",
        "- accounts are [], not the delivered [\"alice\"]",
      ])
    let lenient = try #require(throws: CredentialStoreConformance.Failure.self) {
      try CredentialStoreConformance(store: LenientReadOnlyStore()).run()
    }
    #expect(
      lenient.violations == [
        "- a read-only store's save does not fail with readOnly",
        "- a read-only store's delete does not fail with readOnly",
      ])
  }

  @Test("a store whose calls fail where they must succeed throws its own error")
  func failingStore() {
    let store = InMemoryCredentialStore()
    store.failure = .noSessionBus
    #expect(throws: CredentialError.noSessionBus) { try CredentialStoreConformance(store: store).run() }
  }
}

/// Breaks every rule of a writable store: reads one secret for all, keeps nothing, lists accounts unsorted, and
/// fails to delete a secret twice.
private final class BrokenStore: CredentialStore {
  private let calls = Mutex((accounts: 0, deletes: 0))
  func readSecret(for credential: Credential) throws(CredentialError) -> Data? { Data("always".utf8) }
  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError) {}
  func deleteSecret(for credential: Credential) throws(CredentialError) {
    let call = calls.withLock {
      $0.deletes += 1
      return $0.deletes
    }
    if call == 5 { throw .locked }
  }
  func accounts(service: String) throws(CredentialError) -> [String] {
    let call = calls.withLock {
      $0.accounts += 1
      return $0.accounts
    }
    return call == 2 ? ["x"] : ["b", "a", "a"]
  }
  func availability() -> CredentialAvailability { .available }
}

/// A store that says it cannot write, then writes.
private final class LenientReadOnlyStore: CredentialStore {
  var isWritable: Bool { false }
  func readSecret(for credential: Credential) throws(CredentialError) -> Data? { nil }
  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError) {}
  func deleteSecret(for credential: Credential) throws(CredentialError) { throw .locked }
  func accounts(service: String) throws(CredentialError) -> [String] { [] }
  func availability() -> CredentialAvailability { .available }
}
