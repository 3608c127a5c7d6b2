#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import SplintSecretsTesting
  import Synchronization
  import TestSupport
  import Testing
  @testable import SplintFleet

  /// The KV version 2 store against a real OpenBao dev server: what it reads, writes, lists and refuses.
  @Suite(.startsServers) struct VaultStoreTests {
    @Test func conformance() async throws {
      let server = try await OpenBaoServer.dev()
      try CredentialStoreConformance(store: server.store()).run()
      await server.stop()
    }

    @Test("the layout: secret/splint/<service>/<account>, field value, as bao kv reads and writes it")
    func layout() async throws {
      let server = try await OpenBaoServer.dev()
      let store = try server.store()
      try await credential("alice", store, service: "api.example.com").save("s3cr3t")
      #expect(
        try await server.run(["kv", "get", "-mount=secret", "-field=value", "splint/api.example.com/alice"]) == "s3cr3t"
      )
      try await server.run(["kv", "put", "-mount=secret", "splint/api.example.com/bob", "value=from bao"])
      #expect(try await credential("bob", store, service: "api.example.com").read() == "from bao")
      #expect(try await Credential.accounts(service: "api.example.com", store: store) == ["alice", "bob"])
      #expect(store.name == "vault at \(server.address)")
      // script/bench's floor: the same request, bare; its answer is the whole JSON, more than the secret.
      #expect(
        try VaultFloor(credential("alice", store, service: "api.example.com"), in: store).read() > "s3cr3t".utf8.count)
      await server.stop()
    }

    @Test("names become one path segment each, and read back as themselves")
    func names() async throws {
      let server = try await OpenBaoServer.dev()
      let store = try server.store()
      let names = ["", "a/b", "100%", "café", ".", "..", "x y@z", "%00"]
      for (index, name) in names.enumerated() {
        try await credential(name, store, service: "s/%").save("secret \(index)")
      }
      for (index, name) in names.enumerated() {
        #expect(try await credential(name, store, service: "s/%").read() == "secret \(index)", "\(name)")
      }
      #expect(try await Credential.accounts(service: "s/%", store: store) == names.sorted())
      let listed = try server.admin(.GET, "secret/metadata/splint/s%252F%2525?list=true")
      #expect(
        Set((listed["data"] as? [String: Any])?["keys"] as? [String] ?? [])
          == ["%00", "a%2Fb", "100%25", "caf%C3%A9", "%2E", "%2E%2E", "x%20y%40z", "%2500"])
      // Keys the rule does not write (another spelling, bytes that are not UTF-8, a folder) are not accounts.
      for key in ["caf%c3%a9", "%FF", "sub/x", "%4", "plain"] {
        try server.admin(
          .POST, "secret/data/splint/s%252F%2525/\(key.replacingOccurrences(of: "%", with: "%25"))",
          ["data": ["value": "x"]])
      }
      #expect(try await Credential.accounts(service: "s/%", store: store) == (names + ["plain"]).sorted())
      #expect(VaultConfiguration.name(fromSegment: "%4") == nil)
      await server.stop()
    }

    @Test("64 KiB of random bytes come back byte for byte, kept in base64 in value_base64")
    func randomBytes() async throws {
      let server = try await OpenBaoServer.dev()
      let store = try server.store()
      var bytes = [UInt8](repeating: 0, count: 64 << 10)
      for index in bytes.indices { bytes[index] = .random(in: 0...255) }
      bytes[0] = 0xFF  // never UTF-8
      let secret = Data(bytes)
      try await credential("blob", store).save(secret)
      #expect(try await credential("blob", store).readData() == secret)
      let encoded = try #require(try server.field("splint/svc/blob", "value_base64") as? String)
      #expect(Data(base64Encoded: encoded) == secret)
      #expect(try server.field("splint/svc/blob") == nil)
      // Text with every escape JSON has, and a character outside the BMP, as text.
      let text = "quote \" backslash \\ slash / controls \u{0}\u{1}\u{1F}\n\r\t\u{8}\u{C} and 𝄞 é"
      try await credential("text", store).save(text)
      #expect(try await credential("text", store).read() == text)
      #expect(try server.field("splint/svc/text") as? String == text)
      // Saving text over bytes drops the base64 field, and the other way round.
      try await credential("blob", store).save("now text")
      #expect(try server.field("splint/svc/blob", "value_base64") == nil)
      #expect(try await credential("blob", store).read() == "now text")
      await server.stop()
    }

    @Test("a credential at a path and field of your own; its secret's other fields are kept")
    func locations() async throws {
      let server = try await OpenBaoServer.dev()
      try server.admin(.POST, "secret/data/prod/db", ["data": ["user": "app", "password": "old", "port": 5432]])
      let store = try server.store {
        $0.locations[.init(service: "db.example.com", account: "app")] = .init(path: "prod/db", field: "password")
        $0.locations[.init(service: "db.example.com", account: "ro")] = .init(path: "prod/ro", field: "password")
      }
      let password = credential("app", store, service: "db.example.com")
      #expect(try await password.read() == "old")
      #expect(try await Credential.accounts(service: "db.example.com", store: store) == ["app"])
      try await password.save("new")
      #expect(try server.field("prod/db", "password") as? String == "new")
      #expect(try server.field("prod/db", "user") as? String == "app")
      #expect(try server.field("prod/db", "port") as? Int == 5432)
      try await password.delete()
      #expect(try await password.read() == nil)
      #expect(try server.field("prod/db", "user") as? String == "app")
      let readOnly = credential("ro", store, service: "db.example.com")
      try await readOnly.delete()  // nothing there
      try await readOnly.save("only field")
      try await readOnly.delete()  // its only field: the secret goes
      #expect(try server.api(.GET, "secret/metadata/prod/ro").status == 404)
      // A secret without the field is unreadable, naming the fields it has (never their values).
      try server.admin(.POST, "secret/data/splint/svc/other", ["data": ["token": "hidden"]])
      let error = await failure { () throws(CredentialError) in try credential("other", store).read() }
      #expect(error?.code == .unreadableSecret)
      #expect(error?.description.contains("its fields are token") == true)
      #expect(error?.description.contains("hidden") == false)
      // A path that is not one (it would lead elsewhere on the server) is refused when the store is made.
      for (mount, path) in [("secret", "../config"), ("secret", "prod//db"), ("secret", ""), ("a/./b", "x")] {
        let error = await failure { () throws(CredentialError) in
          try VaultCredentialStore(VaultConfiguration(addresses: [server.address]).with(mount, path))
        }
        #expect(error?.code == .invalidConfiguration, "\(mount) \(path)")
      }
      try server.admin(.POST, "secret/data/splint/svc/bad", ["data": ["value_base64": "not base64!"]])
      #expect(
        await failure { () throws(CredentialError) in try credential("bad", store).read() }?.code == .unreadableSecret)
      await server.stop()
    }

    @Test("a deleted or destroyed newest version is absent; an older one does not come back")
    func deletedVersions() async throws {
      let server = try await OpenBaoServer.dev()
      let store = try server.store()
      let alice = credential("alice", store)
      try await alice.save("one")
      try await alice.save("two")
      try await credential("bob", store).save("bob's")
      try await server.run(["kv", "delete", "-mount=secret", "splint/svc/alice"])
      #expect(try await alice.read() == nil)
      #expect(try await Credential.accounts(service: "svc", store: store) == ["bob"])
      try await server.run(["kv", "undelete", "-mount=secret", "-versions=2", "splint/svc/alice"])
      #expect(try await alice.read() == "two")
      try await server.run(["kv", "destroy", "-mount=secret", "-versions=2", "splint/svc/alice"])
      #expect(try await alice.read() == nil)
      #expect(try await Credential.accounts(service: "svc", store: store) == ["bob"])
      try await alice.save("three")  // a new version over a destroyed one: check-and-set against version 2
      #expect(try await alice.read() == "three")
      try await alice.delete()
      #expect(try server.api(.GET, "secret/metadata/splint/svc/alice").status == 404)
      await server.stop()
    }

    @Test("a KV version 1 mount, another engine, or a missing mount is a configuration error, never nil")
    func wrongMounts() async throws {
      let server = try await OpenBaoServer.dev()
      try server.admin(.POST, "sys/mounts/kv1", ["type": "kv", "options": ["version": "1"]])
      let version1 = try server.store { $0.mount = "kv1" }
      for (what, call) in operations(version1) {
        let error = await failure(call)
        #expect(error?.code == .invalidConfiguration, "\(what)")
        #expect(error?.description.contains("KV version 1") == true, "\(what): \(String(describing: error))")
      }
      #expect(try server.api(.GET, "kv1/data/splint/svc/a").status == 404, "a save wrote into the KV version 1 mount")
      let cubbyhole = try server.store { $0.mount = "cubbyhole" }
      #expect(
        await failure { () throws(CredentialError) in try credential("a", cubbyhole).read() }?.description
          .contains("a cubbyhole secrets engine") == true)
      let missing = try server.store { $0.mount = "nothing-here" }
      for (what, call) in operations(missing) {
        let error = await failure(call)
        #expect(error?.code == .invalidConfiguration, "\(what)")
      }
      let read = await failure { () throws(CredentialError) in try credential("a", missing).read() }
      #expect(read?.description.contains("The mount nothing-here is not at") == true, "\(String(describing: read))")
      await server.stop()
    }

    /// Each operation of a store, for checks every one must pass.
    private func operations(_ store: any CredentialStore) -> [(String, @Sendable () throws(CredentialError) -> Void)] {
      [
        ("read", { () throws(CredentialError) in _ = try credential("a", store).read() }),
        ("save", { () throws(CredentialError) in try credential("a", store).save("x") }),
        ("delete", { () throws(CredentialError) in try credential("a", store).delete() }),
        ("list", { () throws(CredentialError) in _ = try Credential.accounts(service: "svc", store: store) }),
      ]
    }

    @Test("check-and-set: a mount that requires it works, and a save that lost a race is told")
    func checkAndSet() async throws {
      let server = try await OpenBaoServer.dev()
      try server.admin(.POST, "sys/mounts/strict", ["type": "kv", "options": ["version": "2"]])
      try server.admin(.POST, "strict/config", ["cas_required": true])
      let store = try server.store { $0.mount = "strict" }
      try await credential("a", store).save("one")
      try await credential("a", store).save("two")
      #expect(try await credential("a", store).read() == "two")
      // Two savers at once, many times: each save either lands as a version of its own or is told it lost.
      let outcomes = Outcomes()
      let rounds = 40
      for round in 0..<rounds {
        await withTaskGroup(of: Void.self) { group in
          for saver in 0..<2 {
            group.addTask {
              let result: Result<Void, CredentialError>
              do throws(CredentialError) {
                try await credential("race", store).save("round \(round) saver \(saver)")
                result = .success(())
              } catch {
                result = .failure(error)
              }
              outcomes.counts.withLock { outcomes in
                switch result {
                case .success: outcomes.saved += 1
                case .failure(let error) where error.code == .conflict: outcomes.conflicts += 1
                case .failure(let error): outcomes.other.append("\(error)")
                }
              }
            }
          }
        }
      }
      let (saved, conflicts, other) = outcomes.counts.withLock { $0 }
      #expect(other.isEmpty, "\(other)")
      #expect(saved + conflicts == rounds * 2)
      let metadata = try server.admin(.GET, "strict/metadata/splint/svc/race")
      #expect((metadata["data"] as? [String: Any])?["current_version"] as? Int == saved, "a save was lost")
      #expect(conflicts > 0, "no save lost a race in \(rounds) rounds")
      await server.stop()
    }

    /// What the racing savers got.
    final class Outcomes: Sendable {
      let counts = Mutex<(saved: Int, conflicts: Int, other: [String])>((0, 0, []))
    }

    @Test("a save whose version changed between its read and its write is refused, and changes nothing")
    func conflictIsTold() async throws {
      let server = try await OpenBaoServer.dev()
      let store = try server.store()
      try await credential("a", store).save("one")
      // The save's two requests, with another client's save between them.
      let location = store.configuration.location(of: credential("a", store))
      let current = try await store.kv.current(location)
      try server.api(.POST, "secret/data/splint/svc/a", ["data": ["value": "theirs"]])
      var error: CredentialError?
      do throws(CredentialError) {
        try await store.kv.write(Data("mine".utf8), over: current)
        Issue.record("the save that lost its check-and-set succeeded")
      } catch let refusal {
        error = refusal
      }
      #expect(error == .conflict(store: store.name, path: "secret/data/splint/svc/a"))
      #expect(error?.description.contains("nothing was changed") == true)
      #expect(try await credential("a", store).read() == "theirs")
      await server.stop()
    }

    @Test("a policy that denies names the path and the capability; a revoked token is no login")
    func refusals() async throws {
      let server = try await OpenBaoServer.dev(audited: true)
      try server.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "x"]])
      try server.policy("read-only", ["secret/data/splint/*": ["read"], "secret/metadata/splint/*": ["read"]])
      let readOnly = try server.store(.token(try server.token(["read-only"])))
      #expect(try await credential("a", readOnly).read() == "x")
      #expect(
        await failure { () throws(CredentialError) in try credential("a", readOnly).save("y") }
          == .forbidden(store: readOnly.name, path: "secret/data/splint/svc/a", capability: "update"))
      #expect(
        await failure { () throws(CredentialError) in try credential("new", readOnly).save("y") }
          == .forbidden(store: readOnly.name, path: "secret/data/splint/svc/new", capability: "create"))
      #expect(
        await failure { () throws(CredentialError) in try credential("a", readOnly).delete() }
          == .forbidden(store: readOnly.name, path: "secret/metadata/splint/svc/a", capability: "delete"))
      #expect(
        await failure { () throws(CredentialError) in try Credential.accounts(service: "svc", store: readOnly) }
          == .forbidden(store: readOnly.name, path: "secret/metadata/splint/svc", capability: "list"))
      #expect(readOnly.availability() == .available)
      // A policy for one service's secrets, or for one secret at a location of your own, is enough to be available.
      try server.policy("one-service", ["secret/data/splint/svc/*": ["read"]])
      #expect(try server.store(.token(try server.token(["one-service"]))).availability() == .available)
      try server.policy("one-path", ["secret/data/prod/db": ["read"]])
      let mapped = try server.store(.token(try server.token(["one-path"]))) {
        $0.locations[.init(service: "db", account: "app")] = .init(path: "prod/db", field: "password")
      }
      #expect(mapped.availability() == .available)
      try server.policy("elsewhere", ["secret/data/other/*": ["read"]])
      let elsewhere = try server.store(.token(try server.token(["elsewhere"])))
      let denied = await failure { () throws(CredentialError) in try credential("a", elsewhere).read() }
      #expect(denied == .forbidden(store: elsewhere.name, path: "secret/data/splint/svc/a", capability: "read"))
      #expect(denied?.description.contains("path \"secret/data/splint/svc/a\" { capabilities = [\"read\"] }") == true)
      #expect(
        elsewhere.availability()
          == .unavailable(.forbidden(store: elsewhere.name, path: "secret/data/splint/", capability: "read")))
      // A 403 is checked against the token before it is called forbidden: one lookup-self for each refusal.
      let audited = try server.auditedPaths()
      #expect(audited.filter { $0 == "auth/token/lookup-self" }.count == 5, "\(audited)")
      // A given token that was revoked is no login, and says where it came from.
      let token = try server.token(["read-only"])
      let revoked = try server.store(.token(token))
      #expect(try await credential("a", revoked).read() == "x")
      try server.admin(.POST, "auth/token/revoke", ["token": token])
      let error = await failure { () throws(CredentialError) in try credential("a", revoked).read() }
      #expect(error?.code == .notLoggedIn)
      #expect(error?.description.contains("a token given in code is not valid any more") == true)
      #expect(error?.description.contains(token) == false)
      #expect(revoked.availability().isAvailable == false)
      await server.stop()
    }

    @Test("sealed: told apart from unreachable, in reads and availability; sealed only when every address is")
    func sealed() async throws {
      let server = try await OpenBaoServer.dev()
      let other = try await OpenBaoServer.dev()
      let store = try server.store()
      try await credential("a", store).save("x")
      try await server.seal()
      let error = await failure { () throws(CredentialError) in try credential("a", store).read() }
      #expect(error == .sealed(store: store.name, servers: [server.address]))
      #expect(error?.description.contains("is sealed") == true)
      #expect(store.availability() == .unavailable(.sealed(store: store.name, servers: [server.address])))
      // Two addresses, one sealed: the other answers (these two servers do not share their data).
      try other.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "from the other"]])
      var both = VaultConfiguration(addresses: [server.address, other.address], login: .token(other.rootToken))
      both.timeout = .seconds(5)
      let configured = both
      #expect(try await credential("a", try VaultCredentialStore(both)).read() == "from the other")
      try await other.seal()
      let all = await failure { () throws(CredentialError) in
        try credential("a", try VaultCredentialStore(configured)).read()
      }
      #expect(all?.code == .sealed)
      try await server.unseal()
      #expect(try await credential("a", store).read() == "x")
      #expect(store.availability() == .available)
      await server.stop()
      await other.stop()
    }

    @Test("a namespace is sent with every request (X-Vault-Namespace), the login's included")
    func namespace() async throws {
      let server = try await OpenBaoServer.dev()
      try server.admin(.POST, "sys/namespaces/team")
      try server.admin(.POST, "team/sys/mounts/secret", ["type": "kv", "options": ["version": "2"]])
      let team = try server.store { $0.namespace = "team" }
      try await credential("a", team).save("in team")
      #expect(try await credential("a", team).read() == "in team")
      #expect(try server.field("splint/svc/a", mount: "team/secret") as? String == "in team")
      #expect(
        try await credential("a", try server.store()).read() == nil, "the root namespace's secret/ has no such secret")
      await server.stop()
    }

    @Test("429 with Retry-After: that member is not asked again before its time, while another is")
    func retryAfter() async throws {
      let token = "root-\(UUID().uuidString)"
      let slow = try await OpenBaoServer.dev(rootToken: token)
      let quick = try await OpenBaoServer.dev(rootToken: token)
      // Each has the secret, then lets one request through in each window: 10 s on one, 2 s on the other.
      for (server, interval) in [(slow, "10s"), (quick, "2s")] {
        try server.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "x"]])
        try server.admin(.POST, "sys/quotas/config", ["enable_rate_limit_response_headers": true])
        try server.admin(.POST, "sys/quotas/rate-limit/one", ["path": "secret/", "rate": 1, "interval": interval])
      }
      var configuration = VaultConfiguration(addresses: [slow.address, quick.address], login: .token(token))
      configuration.timeout = .seconds(8)
      let store = try VaultCredentialStore(configuration)
      #expect(try await credential("a", store).read() == "x")  // the slow one's request for its 10 s
      #expect(try await credential("a", store).read() == "x")  // the slow one says 429; the quick one answers
      let started = ContinuousClock.now
      // The quick one, asked first now, says 429 for a second or two; the slow one's time has not come, so it is
      // not asked; the quick one is asked again once its time has.
      #expect(try await credential("a", store).read() == "x")
      let waited = ContinuousClock.now - started
      #expect(waited >= .milliseconds(500) && waited < .seconds(8), "\(waited)")
      await slow.stop()
      await quick.stop()
    }

    @Test("a secret larger than the server takes is its refusal, as it gave it")
    func tooLarge() async throws {
      let port = try OpenBaoServer.freePort()
      let server = try await OpenBaoServer.dev(
        configuration: """
          listener "tcp" {
            address = "127.0.0.1:\(port)"
            tls_disable = true
            max_request_size = 4096
          }
          """)
      var configuration = VaultConfiguration(addresses: ["http://127.0.0.1:\(port)"], login: .token(server.rootToken))
      configuration.timeout = .seconds(10)
      let store = try VaultCredentialStore(configuration)
      try await credential("small", store).save("fits")
      let error = await failure { () throws(CredentialError) in
        try credential("large", store).save(String(repeating: "x", count: 8192))
      }
      #expect(error?.code == .serverError)
      #expect(error?.description.contains("HTTP status 413") == true, "\(String(describing: error))")
      #expect(try await credential("large", store).read() == nil)
      await server.stop()
    }

    @Test("a server that was never initialized is not available, and says so")
    func uninitialized() async throws {
      let server = try await OpenBaoServer.uninitialized()
      let store = try server.store(.token("t")) { $0.timeout = .seconds(3) }
      guard case .unavailable(let error) = store.availability() else {
        Issue.record("an uninitialized server is available")
        return
      }
      #expect(error.code == .serverError)
      #expect(error.description.contains("HTTP status 501"), "\(error)")
      await server.stop()
    }

    @Test("unreachable: a port no one listens on, and a server that stopped answering, within the timeout")
    func unreachable() async throws {
      let closed = try VaultCredentialStore(
        VaultConfiguration(addresses: ["http://127.0.0.1:\(try OpenBaoServer.freePort())"], login: .token("t")))
      let started = ContinuousClock.now
      let refused = await failure { () throws(CredentialError) in try credential("a", closed).read() }
      #expect(refused?.code == .unreachable)
      #expect(ContinuousClock.now - started < .seconds(5), "a refused connection is not tried again until the timeout")
      #expect(closed.availability().isAvailable == false)
      let server = try await OpenBaoServer.dev()
      let store = try server.store { $0.timeout = .milliseconds(1500) }
      try await credential("a", store).save("x")
      server.pause()
      let paused = ContinuousClock.now
      let error = await failure { () throws(CredentialError) in try credential("a", store).read() }
      let waited = ContinuousClock.now - paused
      server.resume()
      #expect(error?.code == .unreachable)
      #expect(error?.description.contains("no answer within") == true, "\(String(describing: error))")
      #expect(waited >= .milliseconds(1400) && waited < .seconds(10))
      #expect(try await credential("a", store).read() == "x")
      await server.stop()
    }

    @Test("the last good value: opt-in, used only while the server cannot be asked, reported, up to its age")
    func lastGoodValue() async throws {
      let server = try await OpenBaoServer.dev()
      let reports = Mutex<[String]>([])
      let store = try server.store {
        $0.timeout = .seconds(1)
        $0.lastGoodValue = .init(maximumAge: .seconds(5)) { credential, age, reason in
          reports.withLock { $0.append("\(credential.account) \(reason.code) \(age < .seconds(5))") }
        }
      }
      let plain = try server.store { $0.timeout = .seconds(1) }
      let silent = try server.store {
        $0.timeout = .seconds(1)
        $0.lastGoodValue = .init(maximumAge: .seconds(60))  // told on standard error
      }
      try await credential("a", store).save("x")
      try await credential("gone", store).save("y")
      #expect(try await credential("a", store).read() == "x")
      #expect(try await credential("gone", store).read() == "y")
      #expect(try await credential("a", silent).read() == "x")
      try await credential("gone", store).delete()  // forgets the kept value
      #expect(try await credential("a", store).read() == "x")  // kept now, well within its 5 s
      try await server.seal()
      #expect(try await credential("a", store).read() == "x")
      #expect(try await credential("a", silent).read() == "x")
      #expect(await failure { () throws(CredentialError) in try credential("a", plain).read() }?.code == .sealed)
      #expect(await failure { () throws(CredentialError) in try credential("gone", store).read() }?.code == .sealed)
      try await server.unseal()
      #expect(try await credential("a", store).read() == "x")  // kept again, now
      server.pause()
      #expect(try await credential("a", store).read() == "x")
      #expect(reports.withLock { $0 } == ["a sealed true", "a unreachable true"])
      try await Task.sleep(for: .seconds(5))
      #expect(await failure { () throws(CredentialError) in try credential("a", store).read() }?.code == .unreachable)
      server.resume()
      // Not for a refusal, nor for an absent secret.
      try server.policy("none", ["secret/data/other": ["read"]])
      try await server.run(["kv", "delete", "-mount=secret", "splint/svc/a"])
      #expect(try await credential("a", store).read() == nil)
      await server.stop()
    }

    @Test("in a chain before the keyring, a vault that cannot answer stops the read with its error")
    func chain() async throws {
      let keyring = Credential(service: "fleet-chain-\(UUID())", account: "alice", store: SecretServiceStore.shared)
      try await keyring.save("the keyring's copy")
      var configuration = VaultConfiguration(
        addresses: ["http://127.0.0.1:\(try OpenBaoServer.freePort())"], login: .token("t"))
      configuration.timeout = .seconds(2)
      VaultCredentialStore.register(configuration)
      let chain = try DefaultCredentialStore.chain(named: ["vault", "secret-service"])
      #expect(chain.name.hasPrefix("vault at http://127.0.0.1:"))
      let read = await failure { () throws(CredentialError) in
        try Credential(service: keyring.service, account: "alice", store: chain).read()
      }
      #expect(read?.code == .unreachable)
      #expect(chain.availability().isAvailable == false)
      #expect(try DefaultCredentialStore.chain(named: ["vault"]).stores.first === chain.stores.first)
      try await keyring.delete()
      // The names a program that does not register it, or was built without SplintFleet, is told.
      #expect(
        RegisteredStores.unknown("vault", builtWithFleet: true, known: []).contains("VaultCredentialStore.register()"))
      #expect(RegisteredStores.unknown("vault", builtWithFleet: false, known: []).contains("built without SplintFleet"))
      #expect(RegisteredStores.unknown("nope", known: ["a"]) == "\"nope\" is not a credential store. Use one of a.")
    }
  }

  extension VaultConfiguration {
    /// This configuration with `mount` for its mount, and a credential at `path` (field `value`) of its own.
    fileprivate func with(_ mount: String, _ path: String) -> VaultConfiguration {
      var configuration = self
      configuration.mount = mount
      configuration.locations[.init(service: "svc", account: "a")] = .init(path: path, field: "value")
      return configuration
    }
  }
#endif
