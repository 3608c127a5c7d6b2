import Foundation
import SplintSecrets
import TestSupport
import Testing

/// `splintctl secret ...` against the keyring script/test starts.
@Suite("splintctl secret", TestKeyring.required)
struct SecretCommandTests {
  let service = TestKeyring.uniqueService()

  @Test func storeFromAPipeDropsOneTrailingNewline() async throws {
    #expect(try await splintctl("secret", "store", service, "echoed", input: "token-1\n").status == 0)
    #expect(try await splintctl("secret", "read", service, "echoed").stdout == "token-1")
    try await splintctl("secret", "store", service, "printf", input: "token-2")
    #expect(try await splintctl("secret", "read", service, "printf").stdout == "token-2")
    try await splintctl("secret", "store", service, "windows", input: "token-3\r\n")
    #expect(try await splintctl("secret", "read", service, "windows").stdout == "token-3")
    try await splintctl("secret", "store", service, "blank-line", input: "token-4\n\n")
    #expect(try await splintctl("secret", "read", service, "blank-line").stdout == "token-4\n")
    #expect(try await SecretTool.lookup(service: service, account: "echoed") == "token-1")
  }

  @Test func binaryKeepsEveryByte() async throws {
    let bytes = Data([0x00, 0xFF, 0x0A, 0x80, 0x0A])
    #expect(try await splintctl(["secret", "store", service, "key", "--binary"], bytes: bytes).status == 0)
    let hex = try await Programs.run([
      "sh", "-c", "\"$0\" secret read \"$1\" key --binary | od -An -tx1", Programs.helper("splintctl"), service,
    ])
    #expect(hex.stdout.split(whereSeparator: \.isWhitespace) == ["00", "ff", "0a", "80", "0a"])
    let text = try await splintctl("secret", "read", service, "key")
    #expect(text.status == 70)
    #expect(text.stdout.isEmpty)
    #expect(text.stderr == "splintctl: the stored secret is not UTF-8 text.\nPrint its bytes with --binary.\n")
    let notText = try await splintctl(["secret", "store", service, "latin1"], bytes: Data([0xE9, 0x0A]))
    #expect(notText.status == 64)
    #expect(notText.stderr.contains("Store it with --binary."))
  }

  @Test func absentIsExitOneWithNothingOnStdout() async throws {
    let output = try await splintctl("secret", "read", service, "nobody")
    #expect(output.status == 1)
    #expect(output.stdout.isEmpty)
    #expect(output.stderr == "splintctl: no secret is stored for account nobody of service \(service).\n")
  }

  @Test func labelDeleteAndList() async throws {
    try await splintctl("secret", "store", service, "bob", "--label", "Bob's token", input: "b")
    try await splintctl("secret", "store", service, "alice", input: "a")
    #expect(
      try await PythonKeyring.items(service: service).map(\.label).sorted() == [
        "Bob's token", "Password for 'alice' on '\(service)'",
      ])
    #expect(try await splintctl("secret", "list", service).stdout == "alice\nbob\n")
    #expect(try await splintctl("secret", "delete", service, "alice").status == 0)
    #expect(try await splintctl("secret", "delete", service, "alice").status == 0)
    #expect(try await splintctl("secret", "list", service).stdout == "bob\n")
  }

  @Test func readsWhatSecretToolAndPythonKeyringStored() async throws {
    try await SecretTool.store(service: service, account: "from-secret-tool", secret: "st-secret", label: "x")
    try await PythonKeyring.setPassword(service: service, account: "from-python", secret: "py-secret")
    #expect(try await splintctl("secret", "read", service, "from-secret-tool").stdout == "st-secret")
    #expect(try await splintctl("secret", "read", service, "from-python").stdout == "py-secret")
  }

  @Test func usageErrorsExitSixtyFour() async throws {
    let empty = try await splintctl("secret", "store", service, "empty", input: "")
    #expect(empty.status == 64)
    #expect(empty.stderr.contains("nothing to store: standard input was empty"))
    // An empty service is a name like any other (secret-tool stores and matches it): absent here, not a usage error.
    #expect(try await splintctl("secret", "read", "", "nobody-\(service)").status == 1)
    #expect(try await splintctl("secret", "read", service).status == 64)  // the account is missing
  }

  @Test func statusSaysTheSecretServiceIsThere() async throws {
    let output = try await splintctl("secret", "status")
    #expect(output.status == 0)
    #expect(
      output.stdout == """
        The Secret Service answers, and its default keyring is unlocked.
        Stores, in the order they are asked:
        - Secret Service: available

        """)
  }
}

/// `splintctl secret` with delivered secrets, SPLINT_CREDENTIAL_STORES and --store: the chain of stores.
@Suite("splintctl secret and its stores", TestKeyring.required)
struct SecretStoreCommandTests {
  let service = TestKeyring.uniqueService()
  let scratch = Scratch()

  /// The environment of a systemd unit whose CREDENTIALS_DIRECTORY holds `secret` for `service`/alice.
  private func underSystemd(_ secret: String) throws -> [String: String] {
    let directory = scratch.url("credentials")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let name = DeliveredCredentialStore.fileName(service: service, account: "alice")
    try Data(secret.utf8).write(to: directory.appendingPathComponent(name))
    var environment = ProcessInfo.processInfo.environment
    environment["CREDENTIALS_DIRECTORY"] = directory.path
    return environment
  }

  @Test("status lists the chain in order, each store available or not and why")
  func statusListsTheChain() async throws {
    let output = try await splintctl("secret", "status", environment: try underSystemd("token"))
    #expect(output.status == 0)
    #expect(output.lines.first == "Secrets are read from systemd credentials first: it answers.")
    #expect(
      output.lines.dropFirst() == [
        "Stores, in the order they are asked:", "- systemd credentials: available", "- Secret Service: available",
      ])
    // No session bus: the headline names what answers, never the Secret Service that does not.
    var busless = try underSystemd("token")
    busless["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    let headless = try await splintctl("secret", "status", environment: busless)
    #expect(headless.status == 0)
    #expect(headless.lines.first == "Secrets are read from systemd credentials first: it answers.")
    #expect(
      headless.lines.contains { $0.hasPrefix("- Secret Service: unavailable. No D-Bus session bus is reachable") },
      "\(headless.lines)")
    #expect(
      headless.stdout.components(separatedBy: "No D-Bus session bus").count == 2
        && headless.stdout.components(separatedBy: "The SecretsForDaemons guide").count == 2,
      "each phrase once: \(headless.stdout)")
    var misconfigured = ProcessInfo.processInfo.environment
    misconfigured["SPLINT_CREDENTIAL_STORES"] = "delivered,keychain"
    let unknown = try await splintctl("secret", "status", environment: misconfigured)
    #expect(unknown.status == 64)
    #expect(unknown.errorText.contains("\"keychain\" is not a credential store. Use one of delivered,"))
    misconfigured["SPLINT_CREDENTIAL_STORES"] = "systemd-credentials"
    let unavailable = try await splintctl("secret", "status", environment: misconfigured)
    #expect(unavailable.status == 69)
    #expect(
      unavailable.lines.contains {
        $0.hasPrefix(
          "- systemd credentials: unavailable. systemd credentials cannot be used: CREDENTIALS_DIRECTORY is not set")
      }, "\(unavailable.lines)")
    #expect(
      unavailable.lines.first
        == "No store answers here: secrets cannot be read or saved now. Each store says why below.")
  }

  @Test("a delivered credential under a wrong name: read and status name the file looked for, and the close one")
  func misnamedDeliveredCredential() async throws {
    // api.example.com.syncd where systemd's credential ID had to be api.example.com__syncd.
    let directory = scratch.url("misnamed")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try Data("token".utf8).write(to: directory.appendingPathComponent("\(service).syncd"))
    var environment = ProcessInfo.processInfo.environment
    environment["CREDENTIALS_DIRECTORY"] = directory.path
    let looked = "systemd credentials holds no file \(service)__syncd in \(directory.path)"
    let close = "\(service).syncd is there, a close name: rename it \(service)__syncd."
    // No session bus, as on a server: the error names the file before the bus.
    var busless = environment
    busless["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    let headless = try await splintctl("secret", "read", service, "syncd", environment: busless)
    #expect(headless.status == 69)
    #expect(
      headless.stderr.hasPrefix("splintctl: No store answered (systemd credentials, Secret Service).\n\(looked)"),
      "\(headless.stderr)")
    #expect(headless.stderr.contains(close) && headless.stderr.contains("No D-Bus session bus is reachable"))
    // The Secret Service answers, without it: absent, and the file looked for.
    let absent = try await splintctl("secret", "read", service, "syncd", environment: environment)
    #expect(absent.status == 1)
    #expect(
      absent.stderr.hasPrefix("splintctl: no secret is stored for account syncd of service \(service).\n\(looked),"),
      "\(absent.stderr)")
    #expect(absent.stderr.contains(close))
    let systemdOnly = try await splintctl(
      "secret", "read", "--store", "systemd-credentials", service, "syncd", environment: environment)
    #expect(systemdOnly.status == 1 && systemdOnly.stderr.contains(close))
    // status: the file no credential's name gives; with the service and account, the one it looks for.
    let status = try await splintctl("secret", "status", environment: environment)
    #expect(
      status.lines.contains {
        $0.hasPrefix("- systemd credentials: available. It holds files no secret is read from unless")
          && $0.hasSuffix("says which): \(service).syncd.")
      }, "\(status.lines)")
    let named = try await splintctl("secret", "status", service, "syncd", environment: environment)
    #expect(
      named.lines.contains(
        "- systemd credentials: available. \(looked), the file it reads this credential from (a systemd credential's ID, a container secret's target). \(close)"
      ), "\(named.lines)")
    try Data("token".utf8).write(to: directory.appendingPathComponent("\(service)__syncd"))
    let there = try await splintctl("secret", "status", service, "syncd", environment: environment)
    #expect(
      there.lines.contains(
        "- systemd credentials: available. It holds \(service)__syncd, the file of account syncd of service \(service)."
      ),
      "\(there.lines)")
    #expect(try await splintctl("secret", "status", service, environment: environment).status == 64)
  }

  @Test("which names the store that answers, and never prints the secret")
  func whichNamesTheStore() async throws {
    try await splintctl("secret", "store", service, "bob", input: "in the keyring")
    let systemd = try underSystemd("delivered token")
    let delivered = try await splintctl("secret", "which", service, "alice", environment: systemd)
    #expect(delivered.status == 0 && delivered.stdout == "systemd credentials\n")
    let keyring = try await splintctl("secret", "which", service, "bob", environment: systemd)
    #expect(keyring.status == 0 && keyring.stdout == "Secret Service\n")
    let nobody = try await splintctl("secret", "which", service, "carol")
    #expect(nobody.status == 1 && nobody.stdout.isEmpty)
    #expect(nobody.stderr.contains("no store has a secret for account carol"))
    var misconfigured = ProcessInfo.processInfo.environment
    misconfigured["SPLINT_CREDENTIAL_STORES"] = "keychain"
    #expect(try await splintctl("secret", "which", service, "bob", environment: misconfigured).status == 64)
    #expect(try await splintctl("secret", "read", service, "alice", environment: systemd).stdout == "delivered token")
    try await splintctl("secret", "delete", service, "bob")
  }

  @Test("--store uses one store: a delivered secret is read there and refuses to be changed")
  func storeOption() async throws {
    let systemd = try underSystemd("delivered token")
    let read = try await splintctl(
      "secret", "read", "--store", "systemd-credentials", service, "alice", environment: systemd)
    #expect(read.stdout == "delivered token")
    let list = try await splintctl("secret", "list", "--store", "delivered", service, environment: systemd)
    #expect(list.stdout == "alice\n")
    let store = try await splintctl(
      "secret", "store", "--store", "systemd-credentials", service, "alice", input: "x", environment: systemd)
    #expect(store.status == 70)
    #expect(store.stderr.contains("delivers its secrets read-only"))
    let delete = try await splintctl(
      "secret", "delete", "--store", "systemd-credentials", service, "alice", environment: systemd)
    #expect(delete.status == 70)
    let keyring = try await splintctl(
      "secret", "read", "--store", "secret-service", service, "alice", environment: systemd)
    #expect(keyring.status == 1, "the keyring has no alice: --store asks no other store")
    let unknown = try await splintctl("secret", "read", "--store", "keychain", service, "alice")
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("\"keychain\" is not a credential store"))
  }

  @Test("a store or delete through the chain that a delivered secret shadows fails, naming it; --store writes anyway")
  func aShadowedWriteIsRefused() async throws {
    let systemd = try underSystemd("delivered token")
    let store = try await splintctl("secret", "store", service, "alice", input: "rotated", environment: systemd)
    #expect(store.status == 70)
    #expect(store.stderr.contains("systemd credentials delivers its secrets read-only"))
    #expect(store.stderr.contains("`systemctl edit UNIT`"), "the systemd remedy")
    #expect(store.stderr.contains("so a change in Secret Service would never be seen"))
    let delete = try await splintctl("secret", "delete", service, "alice", environment: systemd)
    #expect(delete.status == 70)
    #expect(try await SecretTool.lookup(service: service, account: "alice") == nil, "the keyring was not written")
    let chosen = try await splintctl(
      "secret", "store", "--store", "secret-service", service, "alice", input: "on purpose", environment: systemd)
    #expect(chosen.status == 0)
    #expect(try await SecretTool.lookup(service: service, account: "alice") == "on purpose")
    #expect(try await splintctl("secret", "read", service, "alice", environment: systemd).stdout == "delivered token")
    try await splintctl("secret", "delete", "--store", "secret-service", service, "alice")
  }
}

/// `splintctl secret ...` where there is no Secret Service: no keyring needed.
@Suite("splintctl secret without a session bus")
struct SecretCommandUnavailableTests {
  var noBus: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = nil
    environment["DISPLAY"] = nil
    environment["XDG_RUNTIME_DIR"] = "/nonexistent"
    return environment
  }

  @Test func everyCommandExitsSixtyNineWithTheRemedy() async throws {
    for arguments in [["status"], ["read", "s", "a"], ["list", "s"], ["delete", "s", "a"]] {
      let output = try await Programs.run([Programs.helper("splintctl"), "secret"] + arguments, environment: noBus)
      #expect(output.status == 69, "\(arguments)")
      // Over SSH or in a container, what works there: delivered secrets, the kernel keyring, a sandbox for CI.
      let remedy = "SPLINT_CREDENTIAL_STORES=delivered,kernel-keyring"
      #expect(output.stderr.contains(remedy) || output.stdout.contains(remedy), "\(arguments)")
      #expect(!(output.stderr + output.stdout).contains("dbus-run-session"), "\(arguments)")
    }
    let store = try await Programs.run(
      [Programs.helper("splintctl"), "secret", "store", "s", "a"], input: Data("x".utf8), environment: noBus)
    #expect(store.status == 69)
  }
}
