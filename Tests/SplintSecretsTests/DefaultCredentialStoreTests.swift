import Foundation
import SplintSecrets
import TestSupport
import Testing

/// `Credential(service:account:)` without a store: a delivered secret when one is there for it, else the Secret
/// Service; or the chain SPLINT_CREDENTIAL_STORES names. The same probe binary runs in each environment.
@Suite("The default store")
struct DefaultCredentialStoreTests {
  let scratch = Scratch()

  /// A CREDENTIALS_DIRECTORY as systemd makes one at unit start, holding `secret` for svc/alice.
  private func credentialsDirectory(_ secret: String) throws -> String {
    let directory = scratch.url("credentials")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent(DeliveredCredentialStore.fileName(service: "svc", account: "alice"))
    try Data(secret.utf8).write(to: file)
    chmod(file.path, 0o400)
    chmod(directory.path, 0o500)
    return directory.path
  }

  @Test("the names stand for the stores, and an unknown name is an error that lists the known ones")
  func names() throws {
    #expect(try DefaultCredentialStore.chain(named: ["secret-service"]).stores.first === SecretServiceStore.shared)
    let named = try DefaultCredentialStore.chain(named: ["systemd-credentials", "container-secrets", "kernel-keyring"])
    #expect(named.stores.map(\.name) == ["systemd credentials", "container secrets (/run/secrets)", "kernel keyring"])
    #expect(named.skipsUnavailableStores)
    // Here no unit delivers credentials and no /run/secrets exists: `delivered` stands for no store.
    #expect(try DefaultCredentialStore.chain(named: ["delivered"]).stores.isEmpty)
    let known = "delivered, systemd-credentials, container-secrets, secret-service, kernel-keyring"
    #expect(throws: CredentialError.invalidConfiguration("\"vault\" is not a credential store. Use one of \(known).")) {
      try DefaultCredentialStore.chain(named: ["secret-service", "vault"])
    }
    #expect(throws: CredentialError.invalidConfiguration("No store is named. Name one or more of \(known).")) {
      try DefaultCredentialStore.chain(named: [])
    }
  }

  @Test("on a desktop the default reads and writes the Secret Service, as before")
  func desktop() throws {
    let token = Credential(service: "splint-default-\(UUID())", account: "alice")
    #expect(token.store === DefaultCredentialStore.shared)
    try token.save("in the keyring")
    #expect(
      try Credential(service: token.service, account: "alice", store: SecretServiceStore.shared).read()
        == "in the keyring")
    #expect(try token.read() == "in the keyring")
    #expect(try Credential.accounts(service: token.service) == ["alice"])
    #expect(Credential.availability() == .available)
    try token.delete()
    #expect(try token.read() == nil)
  }

  @Test("where no Secret Service runs, the same program reads a delivered secret; without one, it fails closed")
  func noSessionBus() async throws {
    let directory = try credentialsDirectory("from systemd")
    let steps = ["store", "default", "read", "svc", "alice", "read", "svc", "bob", "save", "svc", "bob", "x"]
    let underSystemd = try await PrivateSession.probe(
      .noBus, environment: ["CREDENTIALS_DIRECTORY": directory], steps)
    #expect(
      underSystemd.lines.dropFirst() == ["ok from systemd", "error noSessionBus", "error noSessionBus"],
      "\(underSystemd.stderr)")
    let bare = try await PrivateSession.probe(.noBus, steps)
    #expect(bare.lines.dropFirst() == ["error noSessionBus", "error noSessionBus", "error noSessionBus"])
  }

  @Test("SPLINT_CREDENTIAL_STORES sets the chain; an unknown name is an error at the first call, not a default")
  func environmentVariable() async throws {
    let directory = try credentialsDirectory("delivered")
    let configured = try await PrivateSession.probe(
      .noBus,
      environment: ["CREDENTIALS_DIRECTORY": directory, "SPLINT_CREDENTIAL_STORES": "systemd-credentials"],
      ["store", "default", "read", "svc", "alice", "save", "svc", "alice", "x", "accounts", "svc", "availability"])
    #expect(
      configured.lines == [
        "ok systemd credentials", "ok delivered", "error readOnly", "ok alice", "ok available",
      ], "\(configured.stderr)")
    let unknown = try await PrivateSession.probe(
      .noBus, environment: ["SPLINT_CREDENTIAL_STORES": "delivered, vault"],
      ["store", "default", "read", "svc", "alice", "availability"])
    #expect(unknown.lines.count == 3)
    #expect(unknown.lines.first?.hasPrefix("ok SPLINT_CREDENTIAL_STORES (") == true, "\(unknown.lines)")
    #expect(unknown.lines.dropFirst() == ["error invalidConfiguration", "error invalidConfiguration"])
    #expect(
      unknown.stderr.contains("SPLINT_CREDENTIAL_STORES=\"delivered, vault\": \"vault\" is not a credential store"))
  }
}
