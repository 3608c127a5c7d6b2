#if SplintFleet
  import Foundation
  import TestSupport
  import Testing

  /// `splintctl` built with SplintFleet, against a real OpenBao: the vault store configured from the environment as
  /// `bao` is, the logins it finds there, the store and login it names, and the tokens it leaves (none).
  @Suite(.startsServers) struct VaultCommandTests {
    let scratch = Scratch()

    /// The environment of a splintctl that reads `vault` only, at `server`, with `variables` on top (nil removes one).
    private func environment(_ server: OpenBaoServer, _ variables: [String: String?] = [:]) -> [String: String] {
      var environment = ProcessInfo.processInfo.environment.filter {
        !$0.key.hasPrefix("BAO_") && !$0.key.hasPrefix("VAULT_") && $0.key != "CREDENTIALS_DIRECTORY"
      }
      environment["SPLINT_CREDENTIAL_STORES"] = "vault"
      environment["BAO_ADDR"] = server.address
      environment["HOME"] = scratch.url("home").path
      for (name, value) in variables { environment[name] = value }
      return environment
    }

    @Test("the address, token and settings come from BAO_* or VAULT_*, the BAO_ one winning, as for bao itself")
    func environment() async throws {
      let server = try await OpenBaoServer.dev()
      try FileManager.default.createDirectory(at: scratch.url("home"), withIntermediateDirectories: true)
      let root = ["BAO_TOKEN": server.rootToken]
      let stored = try await splintctl(
        "secret", "store", "svc", "alice@example.com", input: "s3cr3t\n", environment: environment(server, root))
      #expect(stored.status == 0, "\(stored.stderr)")
      #expect(
        try await server.run(["kv", "get", "-mount=secret", "-field=value", "splint/svc/alice%40example.com"])
          == "s3cr3t")
      let read = try await splintctl(
        "secret", "read", "svc", "alice@example.com", environment: environment(server, root))
      #expect(read.stdout == "s3cr3t" && read.status == 0, "\(read.stderr)")
      #expect(
        try await splintctl("secret", "list", "svc", environment: environment(server, root)).lines == [
          "alice@example.com"
        ])
      let chosen = environment(server, ["SPLINT_CREDENTIAL_STORES": nil, "VAULT_TOKEN": server.rootToken])
      #expect(
        try await splintctl("secret", "read", "--store", "vault", "svc", "alice@example.com", environment: chosen)
          .stdout
          == "s3cr3t")

      // BAO_TOKEN wins over VAULT_TOKEN, and BAO_ADDR over VAULT_ADDR.
      let badBao = try await splintctl(
        "secret", "read", "svc", "alice@example.com",
        environment: environment(server, ["BAO_TOKEN": "wrong", "VAULT_TOKEN": server.rootToken]))
      #expect(badBao.status == 69)
      #expect(badBao.errorText.contains("the token in BAO_TOKEN is not valid any more"), "\(badBao.stderr)")
      #expect(!badBao.errorText.contains(server.rootToken))
      let closed = "http://127.0.0.1:\(try OpenBaoServer.freePort())"
      let badAddress = try await splintctl(
        "secret", "read", "svc", "alice@example.com",
        environment: environment(server, ["BAO_ADDR": closed, "VAULT_ADDR": server.address] + root))
      #expect(badAddress.status == 69)
      #expect(badAddress.errorText.contains("\(closed) cannot be reached"), "\(badAddress.stderr)")
      let vaultOnly = try await splintctl(
        "secret", "read", "svc", "alice@example.com",
        environment: environment(
          server, ["BAO_ADDR": nil, "VAULT_ADDR": server.address, "VAULT_TOKEN": server.rootToken]))
      #expect(vaultOnly.stdout == "s3cr3t", "\(vaultOnly.stderr)")

      // ~/.vault-token (what `bao login` leaves) when no token is given; a token given wins over it.
      try Data(server.rootToken.utf8).write(to: scratch.url("home", ".vault-token"))
      #expect(
        try await splintctl("secret", "read", "svc", "alice@example.com", environment: environment(server)).stdout
          == "s3cr3t")
      let explicit = try await splintctl(
        "secret", "read", "svc", "alice@example.com", environment: environment(server, ["VAULT_TOKEN": "wrong"]))
      #expect(explicit.status == 69 && explicit.errorText.contains("VAULT_TOKEN"), "\(explicit.stderr)")

      // Status and which name the store and its login.
      let status = try await splintctl("secret", "status", environment: environment(server, root))
      #expect(status.status == 0, "\(status.stderr)")
      #expect(
        status.lines == [
          "Secrets are read from vault at \(server.address) first: it answers.", "Stores, in the order they are asked:",
          "- vault at \(server.address) (login: token: the token in BAO_TOKEN): available",
        ])
      let which = try await splintctl("secret", "which", "svc", "alice@example.com", environment: environment(server))
      #expect(
        which.lines == [
          "vault at \(server.address) (login: token: the token file \(scratch.url("home", ".vault-token").path) "
            + "(bao login's))"
        ], "\(which.stderr)")
      #expect(
        try await splintctl("secret", "delete", "svc", "alice@example.com", environment: environment(server, root))
          .status == 0)
      #expect(
        try await splintctl("secret", "read", "svc", "alice@example.com", environment: environment(server)).status == 1)

      // What is refused before anything is sent.
      let insecure = try await splintctl(
        "secret", "read", "svc", "a", environment: environment(server, ["VAULT_SKIP_VERIFY": "true"] + root))
      #expect(insecure.status == 64 && insecure.errorText.contains("VAULT_SKIP_VERIFY=true asks not to check"))
      let timeout = try await splintctl(
        "secret", "read", "svc", "a", environment: environment(server, ["BAO_CLIENT_TIMEOUT": "soon"] + root))
      #expect(timeout.status == 64 && timeout.errorText.contains("is not a number of seconds"), "\(timeout.stderr)")
      let seconds = try await splintctl(
        "secret", "read", "svc", "a", environment: environment(server, ["VAULT_CLIENT_TIMEOUT": "5s"] + root))
      #expect(seconds.status == 1, "\(seconds.stderr)")
      try FileManager.default.removeItem(at: scratch.url("home", ".vault-token"))
      let noLogin = try await splintctl("secret", "status", environment: environment(server))
      #expect(noLogin.status == 69)
      #expect(noLogin.stdout.contains("The token file is not there"), "\(noLogin.stdout)")
      #expect(noLogin.stdout.contains("`bao login`"), "\(noLogin.stdout)")
      await server.stop()
    }

    @Test("AppRole with the role ID and secret ID as systemd credentials; the token splintctl made is revoked at exit")
    func appRoleAsSystemdCredentials() async throws {
      let server = try await OpenBaoServer.dev()
      try await server.run(["auth", "enable", "approle"])
      try await server.policy("app", #"path "secret/data/splint/*" { capabilities = ["read"] }"#)
      try await server.run(["write", "auth/approle/role/app", "token_policies=app"])
      try await server.run(["kv", "put", "-mount=secret", "splint/svc/alice", "value=from AppRole"])
      let roleID = try await server.run(["read", "-field=role_id", "auth/approle/role/app/role-id"])
      let secretID = try await server.run(["write", "-f", "-field=secret_id", "auth/approle/role/app/secret-id"])
      let credentials = scratch.url("credentials")
      try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
      for (name, value) in ["vault-role-id": roleID, "vault-secret-id": secretID] {
        let file = credentials.appendingPathComponent(name)
        try Data((value.trimmingCharacters(in: .newlines) + "\n").utf8).write(to: file)
        chmod(file.path, 0o400)
      }
      let before = try await server.tokenAccessors()
      let delivered = environment(server, ["CREDENTIALS_DIRECTORY": credentials.path])
      let read = try await splintctl("secret", "read", "svc", "alice", environment: delivered)
      #expect(read.stdout == "from AppRole" && read.status == 0, "\(read.stderr)")
      #expect(try await server.tokenAccessors() == before, "splintctl left its token on the server")
      let status = try await splintctl("secret", "status", environment: delivered)
      #expect(
        status.stdout.contains(
          "(login: AppRole (auth/approle): role ID from the systemd credential vault-role-id "
            + "($CREDENTIALS_DIRECTORY/vault-role-id), secret ID from the systemd credential vault-secret-id"),
        "\(status.stdout)")
      #expect(!status.stdout.contains(secretID.trimmingCharacters(in: .newlines)))
      #expect(!status.stdout.contains("Warning"), "\(status.stdout)")
      #expect(try await server.tokenAccessors() == before)

      // An operator's token in the environment wins over the service's AppRole: said, where it used to pass unseen.
      for variable in ["BAO_TOKEN", "VAULT_TOKEN"] {
        let shadowed = try await splintctl(
          "secret", "status",
          environment: environment(server, ["CREDENTIALS_DIRECTORY": credentials.path, variable: server.rootToken]))
        #expect(shadowed.status == 0, "\(shadowed)")
        #expect(shadowed.stdout.contains("(login: token: the token in \(variable)): available\n"), "\(shadowed.stdout)")
        #expect(
          shadowed.lines.contains(
            "  Warning: the token in \(variable) is used, not the AppRole login that $CREDENTIALS_DIRECTORY also gives "
              + "(vault-role-id and vault-secret-id): unset \(variable) to log in as a service given those "
              + "credentials does."), "\(shadowed.stdout)")
      }
      await server.stop()
    }

    @Test("with BAO_ADDR or VAULT_ADDR set and no store named, the error of no store says how to add the vault")
    func noStoreNamedWithAnAddress() async throws {
      let server = try await OpenBaoServer.dev()
      try await server.run(["kv", "put", "-mount=secret", "splint/svc/alice", "value=from the vault"])
      // As over SSH, with the vault's address and a token exported: no session bus, no delivered secrets.
      var unnamed = environment(server, ["SPLINT_CREDENTIAL_STORES": nil, "BAO_TOKEN": server.rootToken])
      unnamed["DBUS_SESSION_BUS_ADDRESS"] = nil
      unnamed["DISPLAY"] = nil
      unnamed["XDG_RUNTIME_DIR"] = "/nonexistent"
      let note =
        "is set, but the vault is asked only when it is named: SPLINT_CREDENTIAL_STORES=vault (or "
        + "vault,secret-service, to ask the keyring after it), or --store vault."
      let read = try await splintctl("secret", "read", "svc", "alice", environment: unnamed)
      #expect(read.status == 69, "\(read)")
      #expect(read.errorText.hasPrefix("splintctl: No D-Bus session bus is reachable"), "\(read)")
      #expect(read.errorText.hasSuffix("BAO_ADDR \(note)"), "\(read)")
      // A store of delivered secrets set up, without the secret: the error of no store, which lists those it asked.
      var delivered = unnamed
      delivered["CREDENTIALS_DIRECTORY"] = scratch.url("credentials").path
      try FileManager.default.createDirectory(at: scratch.url("credentials"), withIntermediateDirectories: true)
      let none = try await splintctl("secret", "read", "svc", "alice", environment: delivered)
      #expect(none.status == 69 && none.errorText.hasPrefix("splintctl: No store answered ("), "\(none)")
      #expect(none.errorText.hasSuffix("BAO_ADDR \(note)"), "\(none)")
      #expect(
        !(try await splintctl("secret", "read", "--store", "secret-service", "svc", "alice", environment: unnamed))
          .errorText.contains(note))
      let status = try await splintctl("secret", "status", environment: unnamed)
      #expect(status.status == 69 && status.lines.last == "BAO_ADDR \(note)", "\(status)")
      var vaultAddress = unnamed
      vaultAddress["BAO_ADDR"] = nil
      vaultAddress["VAULT_ADDR"] = server.address
      let named = try await splintctl("secret", "read", "svc", "alice", environment: vaultAddress)
      #expect(named.errorText.hasSuffix("VAULT_ADDR \(note)"), "\(named)")
      // Done as it says, the vault answers; a chain that is named gets no note.
      unnamed["SPLINT_CREDENTIAL_STORES"] = "vault"
      #expect(try await splintctl("secret", "read", "svc", "alice", environment: unnamed).stdout == "from the vault")
      unnamed["SPLINT_CREDENTIAL_STORES"] = "delivered,secret-service"
      let chosen = try await splintctl("secret", "read", "svc", "alice", environment: unnamed)
      #expect(chosen.status == 69 && !chosen.errorText.contains("SPLINT_CREDENTIAL_STORES=vault"), "\(chosen)")
      await server.stop()
    }

    @Test("vault,secret-service with the vault down: its error, never the keyring's copy")
    func chainWithTheVaultDown() async throws {
      let service = "vault-chain-\(UUID())"
      let stored = try await splintctl(
        "secret", "store", "--store", "secret-service", service, "alice", input: "the keyring's copy")
      #expect(stored.status == 0, "\(stored.stderr)")
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_CREDENTIAL_STORES"] = "vault,secret-service"
      environment["BAO_ADDR"] = "http://127.0.0.1:\(try OpenBaoServer.freePort())"
      environment["BAO_TOKEN"] = "token"
      let read = try await splintctl("secret", "read", service, "alice", environment: environment)
      #expect(read.status == 69)
      #expect(read.stdout.isEmpty)
      #expect(read.errorText.contains("cannot be reached"), "\(read.stderr)")
      let status = try await splintctl("secret", "status", environment: environment)
      #expect(status.status == 69, "\(status.stdout)")
      #expect(
        status.lines.first == "No store answers here: secrets cannot be read or saved now. Each store says why below.")
      #expect(
        status.lines.contains { $0.hasPrefix("- vault at ") && $0.contains("cannot be reached") }, "\(status.stdout)")
      try await splintctl("secret", "delete", "--store", "secret-service", service, "alice")
    }
  }

  /// `lhs` with `rhs`'s entries over it.
  private func + (lhs: [String: String?], rhs: [String: String]) -> [String: String?] {
    lhs.merging(rhs.mapValues { $0 }) { $1 }
  }
#endif
