#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import TestSupport
  import Testing
  @testable import SplintFleet

  /// The logins servers use, against a real OpenBao: AppRole with delivered secrets, JWT, token files; renewal, a new
  /// login when the token expired, revocation, and a single-use secret ID that is spent.
  @Suite(.startsServers) struct VaultLoginTests {
    let scratch = Scratch()

    /// `text` in a file of the scratch directory, readable by its owner only, as systemd delivers credentials.
    private func file(_ name: String, _ text: String) throws -> String {
      let url = scratch.url(name)
      try Data(text.utf8).write(to: url)
      chmod(url.path, 0o400)
      return url.path
    }

    /// A server with a policy that lets its logins read and write `secret/splint/*`, and one secret there.
    private func server(audited: Bool = false) async throws -> OpenBaoServer {
      let server = try await OpenBaoServer.dev(audited: audited)
      try server.policy("app", ["secret/data/splint/*": ["read", "create", "update"]])
      try server.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "the secret"]])
      return server
    }

    @Test("AppRole with the role ID and secret ID in files (one trailing newline dropped); logging out revokes")
    func appRole() async throws {
      let server = try await server()
      let role = try server.appRole("app", ["token_policies": ["app"]])
      let store = try server.store(
        .appRole(
          roleIDFile: try file("role-id", role.roleID + "\n"), secretIDFile: try file("secret-id", role.secretID)))
      let before = try await server.tokenAccessors().count
      #expect(try await credential("a", store).read() == "the secret")
      #expect(try await server.tokenAccessors().count == before + 1)
      #expect(
        store.login.description.hasPrefix("AppRole (auth/approle): role ID from \(scratch.directory.path)/role-id"))
      #expect(!store.login.description.contains(role.secretID))
      store.logOut()
      #expect(try await server.tokenAccessors().count == before)
      #expect(try await credential("a", store).read() == "the secret")  // logs in again
      store.logOut()
      let missing = try server.store(
        .appRole(roleIDFile: scratch.url("none").path, secretIDFile: scratch.url("x").path))
      let error = await failure { () throws(CredentialError) in try credential("a", missing).read() }
      #expect(error?.code == .notLoggedIn)
      #expect(error?.description.contains("The AppRole role ID is not there") == true, "\(String(describing: error))")
      var elsewhere = VaultConfiguration(
        addresses: ["http://127.0.0.1:\(try OpenBaoServer.freePort())"],
        login: .appRole(roleIDFile: scratch.url("role-id").path, secretIDFile: scratch.url("secret-id").path))
      elsewhere.timeout = .seconds(2)
      let down = try VaultCredentialStore(elsewhere)
      #expect(await failure { () throws(CredentialError) in try credential("a", down).read() }?.code == .unreachable)
      let wrong = try server.store(.appRole(roleIDFile: try file("wrong", "nope"), secretIDFile: try file("s", "x")))
      let refused = await failure { () throws(CredentialError) in try credential("a", wrong).read() }
      #expect(refused?.code == .notLoggedIn)
      #expect(refused?.description.contains("invalid role or secret ID") == true)
      await server.stop()
    }

    @Test("a single-use secret ID: the first login works; once it is spent, the store says so")
    func singleUseSecretID() async throws {
      let server = try await server()
      let role = try server.appRole("once", ["token_policies": ["app"], "secret_id_num_uses": 1])
      let login = VaultLogin.appRole(
        roleIDFile: try file("role-id", role.roleID), secretIDFile: try file("secret-id", role.secretID + "\n"))
      let store = try server.store(login)
      #expect(try await credential("a", store).read() == "the secret")
      store.logOut()  // as if the token had expired: the next read must log in again
      let spent = await failure { () throws(CredentialError) in try credential("a", store).read() }
      #expect(spent == .secretIDSpent(store: store.name))
      #expect(spent?.description.contains("single-use") == true)
      // Another process (a restart) with the same secret ID cannot tell spent from wrong, and says both.
      let again = try server.store(login)
      let restarted = await failure { () throws(CredentialError) in try credential("a", again).read() }
      #expect(restarted?.code == .notLoggedIn)
      #expect(restarted?.description.contains("single-use and was used already") == true)
      await server.stop()
    }

    @Test("a token with a 5 s time to live, in a long-running process: renewed, then made again by a new login")
    func renewal() async throws {
      let server = try await server(audited: true)
      let role = try server.appRole("short", ["token_policies": ["app"], "token_ttl": "5s", "token_max_ttl": "9s"])
      let store = try server.store(
        .appRole(roleIDFile: try file("role-id", role.roleID), secretIDFile: try file("secret-id", role.secretID)))
      let started = ContinuousClock.now
      var reads = 0
      while ContinuousClock.now - started < .seconds(14) {
        #expect(try await credential("a", store).read() == "the secret")
        reads += 1
        try await Task.sleep(for: .milliseconds(300))
      }
      let audited = try server.auditedPaths()
      #expect(audited.filter { $0 == "auth/token/renew-self" }.count >= 1, "\(audited)")
      #expect(audited.filter { $0 == "auth/approle/login" }.count >= 2, "\(audited)")
      #expect(reads >= 10, "a read every 300 ms for 14 s, through the renewals and logins")
      store.logOut()
      await server.stop()
    }

    @Test("reads refused together with a revoked token make one new login between them")
    func oneNewLogin() async throws {
      let server = try await server(audited: true)
      let role = try server.appRole("app", ["token_policies": ["app"]])
      let store = try server.store(
        .appRole(roleIDFile: try file("role-id", role.roleID), secretIDFile: try file("secret-id", role.secretID)))
      let before = Set(try await server.tokenAccessors())
      #expect(try await credential("a", store).read() == "the secret")
      for accessor in Set(try await server.tokenAccessors()).subtracting(before) {
        try server.admin(.POST, "auth/token/revoke-accessor", ["accessor": accessor])
      }
      let reads = await withTaskGroup(of: String?.self) { group in
        for _ in 0..<8 { group.addTask { try? await credential("a", store).read() } }
        return await group.reduce(into: []) { $0.append($1) }
      }
      #expect(reads == Array(repeating: "the secret", count: 8))
      #expect(try server.auditedPaths().filter { $0 == "auth/approle/login" }.count == 2)
      store.logOut()
      await server.stop()
    }

    @Test("a batch token is neither renewed nor revoked")
    func batchToken() async throws {
      let server = try await server(audited: true)
      let role = try server.appRole(
        "batch", ["token_policies": ["app"], "token_type": "batch", "token_ttl": "5s", "token_max_ttl": "5s"])
      let store = try server.store(
        .appRole(roleIDFile: try file("role-id", role.roleID), secretIDFile: try file("secret-id", role.secretID)))
      #expect(try await credential("a", store).read() == "the secret")
      store.logOut()
      #expect(try await credential("a", store).read() == "the secret")
      try await Task.sleep(for: .seconds(4))
      // (The dev server revokes a token of its own at start, before the first login.)
      let audited = try server.auditedPaths().drop { $0 != "auth/approle/login" }
      #expect(audited.filter { $0 == "auth/approle/login" }.count == 2, "\(audited)")
      #expect(!audited.contains("auth/token/renew-self"), "\(audited)")
      #expect(!audited.contains("auth/token/revoke-self"), "\(audited)")
      await server.stop()
    }

    @Test("JWT with a key pair the test makes, and the Kubernetes method's request; a refused JWT is named, not shown")
    func jwt() async throws {
      let server = try await server()
      let key = scratch.url("key.pem").path
      let publicKey = scratch.url("public.pem").path
      let made = try await shell(
        "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out '\(key)' 2>/dev/null && "
          + "openssl pkey -in '\(key)' -pubout -out '\(publicKey)'")
      #expect(made.status == 0, "\(made.stderr)")
      try server.admin(.POST, "sys/auth/jwt", ["type": "jwt"])
      try server.admin(
        .POST, "auth/jwt/config", ["jwt_validation_pubkeys": [try String(contentsOfFile: publicKey, encoding: .utf8)]])
      try server.admin(
        .POST, "auth/jwt/role/pod",
        ["role_type": "jwt", "bound_audiences": ["splint"], "user_claim": "sub", "token_policies": ["app"]])
      let good = try file("token", try await jwt(key: key, audience: "splint"))
      #expect(try await credential("a", try server.store(.jwt(role: "pod", tokenFile: good))).read() == "the secret")
      // The kubernetes method sends the same request to its own mount; here the JWT method stands in for it.
      let kubernetes = try server.store(.kubernetes(role: "pod", tokenFile: good, mount: "jwt"))
      #expect(try await credential("a", kubernetes).read() == "the secret")
      #expect(kubernetes.login.description == "Kubernetes (auth/jwt) as role pod, with the token in \(good)")
      #expect(
        VaultLogin.kubernetes(role: "r").description.contains("/var/run/secrets/kubernetes.io/serviceaccount/token"))
      let otherAudience = try await jwt(key: key, audience: "someone-else")
      let wrong = try server.store(.jwt(role: "pod", tokenFile: try file("wrong", otherAudience)))
      let refused = await failure { () throws(CredentialError) in try credential("a", wrong).read() }
      #expect(refused?.code == .notLoggedIn)
      #expect(refused?.description.contains("JWT (auth/jwt) as role pod") == true, "\(String(describing: refused))")
      #expect(refused?.description.contains(otherAudience) == false)
      wrong.logOut()
      await server.stop()
    }

    /// A JWT signed with the RSA key in `key` (RS256), for `audience`, valid for ten minutes.
    private func jwt(key: String, audience: String) async throws -> String {
      let now = Int(Date().timeIntervalSince1970)
      let script = """
        b64() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
        header=$(printf '{"alg":"RS256","typ":"JWT"}' | b64)
        claims=$(printf '{"sub":"system:serviceaccount:ns:app","aud":"%s","iat":%d,"exp":%d}' "$1" \(now) \(now + 600) | b64)
        signature=$(printf '%s.%s' "$header" "$claims" | openssl dgst -sha256 -sign "$2" | b64)
        printf '%s.%s.%s' "$header" "$claims" "$signature"
        """
      let output = try await Programs.run(["/bin/bash", "-c", script, "jwt", audience, key])
      #expect(output.status == 0, "\(output.stderr)")
      return output.stdout
    }

    @Test("a token file is read again when it changes; a token in it that is no longer valid says so")
    func tokenFile() async throws {
      let server = try await server()
      let first = try server.token(["app"])
      let path = scratch.url("agent-token").path
      try Data((first + "\n").utf8).write(to: URL(fileURLWithPath: path))
      let store = try server.store(.tokenFile(path))
      #expect(try await credential("a", store).read() == "the secret")
      // The agent writes a new token (a new file renamed over the old one, as Vault Agent's sink does).
      let second = try server.token(["app"])
      try Data(second.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
      try server.admin(.POST, "auth/token/revoke", ["token": first])
      #expect(try await credential("a", store).read() == "the secret")
      try server.admin(.POST, "auth/token/revoke", ["token": second])
      let error = await failure { () throws(CredentialError) in try credential("a", store).read() }
      #expect(error?.code == .notLoggedIn)
      #expect(error?.description.contains("The token in \(path) is not valid any more") == true)
      #expect(error?.description.contains("auto-auth sink") == true)
      #expect(error?.description.contains(second) == false)
      // Written again: the next read reads it.
      let third = try server.token(["app"])
      try Data(third.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
      #expect(try await credential("a", store).read() == "the secret")
      // Written again while a read is on its way with the old token: the 403's re-check finds the new one.
      try server.admin(.POST, "auth/token/revoke", ["token": third])
      let fourth = try server.token(["app"])
      server.pause()
      let reading = Task { try await credential("a", store).read() }
      try await Task.sleep(for: .milliseconds(500))
      try Data(fourth.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
      server.resume()
      #expect(try await reading.value == "the secret")
      try FileManager.default.removeItem(atPath: path)
      let gone = await failure { () throws(CredentialError) in try credential("a", store).read() }
      #expect(gone?.description.contains("The token file is not there") == true, "\(String(describing: gone))")
      let unreadable = try server.store(.tokenFile(scratch.directory.path))
      #expect(
        await failure { () throws(CredentialError) in try credential("a", unreadable).read() }?.code == .notLoggedIn)
      await server.stop()
    }

    @Test("~/.vault-token (bao login's) is read again when it changes, and its refusal says to log in again")
    func defaultTokenFile() async throws {
      let server = try await server()
      let path = scratch.url(".vault-token").path
      try Data(try server.token(["app"]).utf8).write(to: URL(fileURLWithPath: path))
      let store = try server.store(VaultLogin(method: .tokenFile(path, isDefault: true)))
      #expect(store.login.description == "token: the token file \(path) (bao login's)")
      #expect(try await credential("a", store).read() == "the secret")
      try Data("expired".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
      let error = await failure { () throws(CredentialError) in try credential("a", store).read() }
      #expect(error?.description.contains("Log in again (`bao login`)") == true, "\(String(describing: error))")
      await server.stop()
    }
  }
#endif
