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
    // The known names, then any another library of the package registered (SplintFleet's vault, which a test of its
    // own registers in this process).
    let known = "delivered, systemd-credentials, container-secrets, secret-service, secret-portal, kernel-keyring"
    let unknown = #expect(throws: CredentialError.self) {
      try DefaultCredentialStore.chain(named: ["secret-service", "keychain"])
    }
    #expect(unknown?.code == .invalidConfiguration)
    #expect(unknown?.description.contains("\"keychain\" is not a credential store. Use one of \(known)") == true)
    let none = #expect(throws: CredentialError.self) { try DefaultCredentialStore.chain(named: []) }
    #expect(none?.description.contains("No store is named. Name one or more of \(known)") == true)
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
    // The secret not delivered: the error names the file systemd credentials looked for, then the missing bus.
    #expect(
      underSystemd.lines.dropFirst() == ["ok from systemd", "error noStoreAnswered", "error noSessionBus"],
      "\(underSystemd.stderr)")
    #expect(
      underSystemd.stderr.contains(
        "No store answered (systemd credentials, Secret Service). systemd credentials holds no file svc__bob in \(directory)"
      ), "\(underSystemd.stderr)")
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
      .noBus, environment: ["SPLINT_CREDENTIAL_STORES": "delivered, keychain"],
      ["store", "default", "read", "svc", "alice", "availability"])
    #expect(unknown.lines.count == 3)
    #expect(unknown.lines.first?.hasPrefix("ok SPLINT_CREDENTIAL_STORES (") == true, "\(unknown.lines)")
    #expect(unknown.lines.dropFirst() == ["error invalidConfiguration", "error invalidConfiguration"])
    #expect(
      unknown.stderr.contains(
        "SPLINT_CREDENTIAL_STORES=\"delivered, keychain\": \"keychain\" is not a credential store"))
  }

  @Test("the store names SPLINT_CREDENTIAL_STORES gives, trimmed as the chain reads them, for splintctl; nil unset")
  func namesInEnvironment() async throws {
    let named = try await PrivateSession.probe(
      .noBus, environment: ["SPLINT_CREDENTIAL_STORES": " vault ,\tdelivered,"], ["store-names"])
    #expect(named.lines == ["ok vault|delivered"], "\(named.stderr)")
    let unset = try await PrivateSession.probe(.noBus, ["store-names"])
    #expect(unset.lines == ["ok nil"], "\(unset.stderr)")
  }

  @Test("one program, no code change: its token from gnome-keyring, systemd-creds, /run/secrets, the kernel keyring")
  func oneProgramEveryPlace() async throws {
    let probe = Programs.helper("SecretsProbe")
    let file = DeliveredCredentialStore.fileName(service: "svc", account: "alice")
    // A desktop: gnome-keyring in a session of its own, where secret-tool stored the token.
    let keyring = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", "printf %s from-keyring | secret-tool store --label=token service svc username alice", "read", "svc",
        "alice",
      ])
    #expect(keyring.lines == ["ok sh 0", "ok from-keyring"], "\(keyring.stderr)")

    // A systemd unit: the token encrypted with systemd-creds, decrypted into CREDENTIALS_DIRECTORY as the unit's
    // start does (with a host key of the test's own, not the machine's).
    var environment = ProcessInfo.processInfo.environment
    environment["SYSTEMD_CREDENTIAL_SECRET"] = scratch.url("credential.secret").path
    let sealed = scratch.url("token.cred").path
    let credentials = scratch.url("credentials")
    try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
    let encrypt = try await Programs.run(
      ["systemd-creds", "encrypt", "--with-key=host", "--name=\(file)", "-", sealed], input: Data("from-systemd".utf8),
      environment: environment)
    #expect(encrypt.status == 0, "\(encrypt.stderr)")
    let decrypt = try await Programs.run(
      ["systemd-creds", "decrypt", "--name=\(file)", sealed, credentials.appendingPathComponent(file).path],
      environment: environment)
    #expect(decrypt.status == 0, "\(decrypt.stderr)")
    let systemd = try await PrivateSession.probe(
      .noBus, environment: ["CREDENTIALS_DIRECTORY": credentials.path], ["read", "svc", "alice"])
    #expect(systemd.lines == ["ok from-systemd"], "\(systemd.stderr)")

    // A container: /run/secrets, on a tmpfs of a mount namespace of its own.
    if getuid() == 0, (try? await Programs.run(["unshare", "--mount", "true"]))?.status == 0 {
      let script = """
        mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/secrets && printf %s from-container >/run/secrets/\(file) \
        && exec "$0" read svc alice
        """
      let container = try await Programs.run([
        "unshare", "--mount", "--propagation", "private", "sh", "-c", script, probe,
      ])
      #expect(container.lines == ["ok from-container"], "\(container.stderr)")
    } else {
      print("skipped the container: this system does not permit mount namespaces (unshare), so no /run/secrets")
    }

    // An SSH session: SPLINT_CREDENTIAL_STORES names the kernel keyring, which holds the token (a user namespace and
    // session keyring of its own, so no keyring of this machine's is touched).
    if (try? await Programs.run(["unshare", "--user", "--map-root-user", "keyctl", "show", "@s"]))?.status == 0 {
      let script =
        #"printf %s from-kernel | keyctl padd user splint:svc:alice "$(keyctl get_persistent @s)" >/dev/null && exec "$0" read svc alice"#
      environment["SPLINT_CREDENTIAL_STORES"] = "kernel-keyring"
      let kernel = try await Programs.run(
        ["unshare", "--user", "--map-root-user", "keyctl", "session", "-", "sh", "-c", script, probe],
        environment: environment)
      #expect(kernel.lines == ["ok from-kernel"], "\(kernel.stderr)")
    } else {
      print("skipped the kernel keyring: keyctl is refused here (a seccomp filter, or no user namespaces)")
    }
  }
}
