#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSecrets
  import SplintSettings
  import TestSupport
  import Testing

  /// Certificates made with openssl for one test: a CA, a server certificate for 127.0.0.1 and a client certificate
  /// it signed, and another CA that signed nothing here.
  struct Certificates {
    let directory: URL

    /// The path of `name` in the directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func make(in scratch: Scratch) async throws -> Certificates {
      let directory = scratch.url("tls")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let script = """
        set -e
        cd "$1"
        for ca in ca other-ca; do
          openssl req -x509 -newkey rsa:2048 -nodes -keyout $ca-key.pem -out $ca.pem -days 2 -subj "/CN=$ca" 2>/dev/null
        done
        openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
        printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server.pem -days 2 \\
          -extfile server.ext 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -keyout client-key.pem -out client.csr -subj "/CN=splint" 2>/dev/null
        printf 'extendedKeyUsage=clientAuth\\n' > client.ext
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out client.pem -days 2 \\
          -extfile client.ext 2>/dev/null
        chmod 0600 ./*-key.pem
        """
      let output = try await Programs.run(["sh", "-c", script, "sh", directory.path])
      guard output.status == 0 else { throw EtcdFailure(command: "openssl", output: output.stderr) }
      return Certificates(directory: directory)
    }
  }

  /// TLS with certificates the test makes, and etcd's users: what a follower is refused, it says, typed.
  @Suite(.startsServers) struct SecurityTests {
    let scratch = Scratch()

    @Test("a client key that every user may read is refused before it is read; so are keys that are no key file")
    func clientKeyFiles() async throws {
      let certificates = try await Certificates.make(in: scratch)
      let key = certificates.path("client-key.pem")
      func follower(key: String) throws(FleetError) -> FleetFollower {
        try FleetFollower(
          suites: ["app"],
          cluster: EtcdCluster(
            endpoints: ["https://127.0.0.1:2379"],
            tls: FleetTLS(clientCertificateFile: certificates.path("client.pem"), clientKeyFile: key)))
      }
      _ = try follower(key: key)
      #expect(chmod(key, 0o644) == 0)
      let readable = #expect(throws: FleetError.self) { try follower(key: key) }
      #expect(readable?.code == .invalidConfiguration)
      #expect(
        readable?.description.contains("may be read by every user of this machine (mode 0644)") == true,
        "\(String(describing: readable))")
      #expect(chmod(key, 0o640) == 0, "its owner and group: as root:splint-fleet 0640 serves the system follower")
      _ = try follower(key: key)
      let large = scratch.url("large-key.pem")
      try Data(count: 2 << 20).write(to: large)
      #expect(chmod(large.path, 0o600) == 0)
      for (path, words) in [
        (scratch.directory.path, "not a regular file"), (scratch.url("missing-key.pem").path, "does not exist"),
        (large.path, "holds more than"),
      ] {
        let error = #expect(throws: FleetError.self) { try follower(key: path) }
        #expect(error?.description.contains(words) == true, "\(String(describing: error))")
      }
    }

    @Test("TLS with a CA and a client certificate: followed; another CA or no client certificate: a typed error")
    func tls() async throws {
      let certificates = try await Certificates.make(in: scratch)
      let etcd = try await LocalEtcd.start(
        size: 1,
        tls: .init(
          caFile: certificates.path("ca.pem"), certificateFile: certificates.path("server.pem"),
          keyFile: certificates.path("server-key.pem"), requiresClientCertificate: true,
          clientCertificateFile: certificates.path("client.pem"), clientKeyFile: certificates.path("client-key.pem")))
      try await etcd.put("/splint/app/interval", "60")
      let good = EtcdCluster(
        endpoints: etcd.endpoints,
        tls: FleetTLS(
          caFile: certificates.path("ca.pem"), clientCertificateFile: certificates.path("client.pem"),
          clientKeyFile: certificates.path("client-key.pem")), requestTimeout: .seconds(3))
      let machine = Machine(cluster: good)
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      #expect(try await good.storedValue(forKey: "interval", suite: "app") == "60")

      // A CA directory (VAULT_CAPATH's kind) serves as well as a file.
      let caDirectory = scratch.url("cas")
      try FileManager.default.createDirectory(at: caDirectory, withIntermediateDirectories: true)
      try FileManager.default.copyItem(
        atPath: certificates.path("ca.pem"), toPath: caDirectory.appendingPathComponent("ca.pem").path)
      var byDirectory = good
      byDirectory.tls.caFile = nil
      byDirectory.tls.caDirectory = caDirectory.path
      #expect(try await byDirectory.storedValue(forKey: "interval", suite: "app") == "60")

      var otherCA = good
      otherCA.tls.caFile = certificates.path("other-ca.pem")
      await #expect(throws: FleetError.self) { _ = try await otherCA.storedValue(forKey: "interval", suite: "app") }
      do {
        _ = try await otherCA.storedValue(forKey: "interval", suite: "app")
      } catch {
        #expect(error.code == .tls, "\(error)")
      }
      var noCertificate = good
      noCertificate.tls.clientCertificateFile = nil
      noCertificate.tls.clientKeyFile = nil
      do {
        _ = try await noCertificate.storedValue(forKey: "interval", suite: "app")
        Issue.record("a member that asks for a client certificate answered without one")
      } catch {
        #expect([.tls, .unreachable].contains(error.code), "\(error)")
      }
      // A follower refused so goes on trying (a member's certificate may be what is wrong, and be mended), and says
      // why once, however many times it tries.
      let refused = Machine(
        cluster: otherCA,
        options: FleetFollower.Options(checkInterval: .milliseconds(500), maximumReconnectDelay: .milliseconds(200)))
      try refused.start()
      #expect(await eventually { refused.events.contains { $0.hasPrefix("lost: TLS with") } }, "\(refused.events)")
      #expect(await refused.ending(within: 2) == nil, "it does not end")
      #expect(refused.events.filter { $0.hasPrefix("lost:") }.count == 1, "\(refused.events)")
      #expect(await refused.stop() == nil)
    }

    @Test("TLS files that cannot be used are told before anything is sent")
    func badFiles() async throws {
      let certificates = try await Certificates.make(in: scratch)
      let certificateAsKey = scratch.url("certificate-as-key.pem")
      try FileManager.default.copyItem(at: URL(fileURLWithPath: certificates.path("client.pem")), to: certificateAsKey)
      #expect(chmod(certificateAsKey.path, 0o600) == 0)
      let unusable = [
        // A key where the certificate is, a certificate where the key is.
        FleetTLS(caFile: certificates.path("ca-key.pem")),
        FleetTLS(clientCertificateFile: certificates.path("client.pem"), clientKeyFile: certificateAsKey.path),
      ]
      for tls in unusable {
        let error = #expect(throws: FleetError.self) {
          try FleetFollower(suites: ["app"], cluster: EtcdCluster(endpoints: ["https://127.0.0.1:2379"], tls: tls))
        }
        #expect(error?.description.contains("cannot be used") == true, "\(String(describing: error))")
        #expect(error?.description.contains("Give") == true, "\(String(describing: error))")
      }
      let empty = scratch.url("no-certificates")
      try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
      for tls in [
        FleetTLS(caFile: scratch.url("missing.pem").path),
        FleetTLS(clientCertificateFile: "/etc/hostname"),
        FleetTLS(clientKeyFile: "/etc/hostname"),
        FleetTLS(caDirectory: empty.path),
        FleetTLS(caDirectory: scratch.url("missing").path),
      ] {
        #expect(throws: FleetError.self, "\(tls)") {
          try FleetFollower(suites: ["app"], cluster: EtcdCluster(endpoints: ["https://127.0.0.1:2379"], tls: tls))
        }
      }
    }

    @Test("a user and password read through Credential; a wrong password and a missing permission are typed errors")
    func authentication() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.put("/other/secret", "1")
      try await etcd.enableAuthentication(user: "reader", password: "readpw", readOnly: "/splint/")
      var reader = cluster
      reader.user = "reader"
      reader.password = try password("readpw", for: "reader")
      let machine = Machine(cluster: reader)
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      try await etcd.put("/splint/app/interval", "61", user: "root:rootpw")
      #expect(await machine.waitFor("interval", 61))
      // A read-only role: a write is refused, typed.
      do {
        try await reader.setValue(jsonText: "1", forKey: "interval", suite: "app")
        Issue.record("a read-only user wrote")
      } catch {
        #expect(error.code == .permissionDenied, "\(error)")
      }

      var wrong = reader
      wrong.password = try password("nope", for: "reader")
      let refused = Machine(cluster: wrong)
      try refused.start()
      let ended = await refused.ending()
      #expect(ended?.code == .authenticationFailed, "\(String(describing: ended))")
      #expect(ended?.description.contains("nope") == false)
      #expect(refused.store().fleetStatus.first == nil, "no copy is made from a cluster that refused")

      var missing = reader
      missing.password = Credential(service: "etcd", account: "reader", store: InMemoryCredentialStore())
      do {
        _ = try await missing.storedValue(forKey: "interval", suite: "app")
        Issue.record("read without a password")
      } catch {
        #expect(error.code == .noPassword)
      }

      // A password that is not text, a store that fails, a member down when the token is asked for: typed.
      var binary = reader
      binary.password = Credential(service: "etcd", account: "reader", store: InMemoryCredentialStore())
      try await binary.password?.save(Data([0xFF, 0xFE]))
      var failing = reader
      let notADirectory = scratch.url("not-a-directory")
      try Data().write(to: notADirectory)
      failing.password = Credential(
        service: "etcd", account: "reader", store: DeliveredCredentialStore(directory: notADirectory))
      var down = reader
      down.endpoints = ["http://127.0.0.1:\(freeLoopbackPort())"]
      for (cluster, code, words) in [
        (binary, FleetError.Code.noPassword, "not UTF-8"), (failing, .noPassword, "not-a-directory"),
        (down, .unreachable, "127.0.0.1"),
      ] {
        do {
          _ = try await cluster.storedValue(forKey: "interval", suite: "app")
          Issue.record("read with \(words)")
        } catch {
          #expect(error.code == code, "\(error)")
          #expect(error.description.contains(words), "\(error)")
        }
      }

      // The user may read /splint/ only: following another prefix is refused.
      var elsewhere = reader
      elsewhere.prefix = "/other/"
      let outside = Machine(cluster: elsewhere)
      try outside.start()
      #expect(await outside.ending()?.code == .permissionDenied)

      // Without a user at all, the cluster says who is missing.
      let anonymous = Machine(cluster: cluster)
      try anonymous.start()
      let nobody = await anonymous.ending()
      #expect(nobody?.code == .permissionDenied && nobody?.description.contains("--user") == true)
    }

    /// Puts `interval` 60 in the suite `app` of `etcd`, turns authentication on with a user `reader` who may read
    /// `/splint/`, and starts a machine following as that user, checking its member every `checkInterval`.
    func readerFollowing(_ etcd: LocalEtcd, checkInterval: Duration) async throws -> Machine {
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.enableAuthentication(user: "reader", password: "readpw", readOnly: "/splint/")
      var reader = EtcdCluster(endpoints: etcd.endpoints, requestTimeout: .seconds(3))
      reader.user = "reader"
      reader.password = try password("readpw", for: "reader")
      let machine = Machine(cluster: reader, options: FleetFollower.Options(checkInterval: checkInterval))
      try machine.start()
      return machine
    }

    @Test("an expired token (etcd's simple tokens expire unused) is made again, and the follower goes on")
    func expiredToken() async throws {
      let etcd = try await LocalEtcd.start(size: 1, flags: ["--auth-token-ttl=1"])
      // A check of the member every 2.5 s: each finds the token it used last expired.
      let machine = try await readerFollowing(etcd, checkInterval: .milliseconds(2500))
      #expect(await machine.waitFor("interval", 60))
      try await Task.sleep(for: .seconds(6))
      try await etcd.put("/splint/app/interval", "61", user: "root:rootpw")
      #expect(await machine.waitFor("interval", 61))
      #expect(!machine.events.contains { $0.hasPrefix("lost") }, "\(machine.events)")
      await machine.stop()
      await etcd.stopAll()
    }

    @Test("a JWT token made stale by a change of users or roles is asked for again, and the follower goes on")
    func staleToken() async throws {
      // etcd's JWT tokens hold the auth store's revision they were made at: once a user or role changes (fleet enroll
      // of another machine), every older token is refused ("revision of auth store is old"), calls and new watches.
      let keys = Scratch()
      let (privateKey, publicKey) = (keys.url("private.pem").path, keys.url("public.pem").path)
      for arguments in [
        ["genrsa", "-out", privateKey, "2048"], ["rsa", "-in", privateKey, "-pubout", "-out", publicKey],
      ] {
        let made = try await Programs.run(["openssl"] + arguments)
        try #require(made.status == 0, "\(made)")
      }
      let etcd = try await LocalEtcd.start(
        size: 1, flags: ["--auth-token", "jwt,pub-key=\(publicKey),priv-key=\(privateKey),sign-method=RS256,ttl=10m"])
      let machine = try await readerFollowing(etcd, checkInterval: .milliseconds(500))
      #expect(await machine.waitFor("interval", 60))
      _ = try await etcd.etcdctl(
        ["role", "grant-permission", "reader-role", "read", "/other/", "--prefix=true"], user: "root:rootpw")
      // The member restarts: the follower's next watch, and its checks, carry the stale token.
      await etcd.kill(etcd.members[0])
      try await etcd.start(etcd.members[0])
      try await etcd.put("/splint/app/interval", "61", user: "root:rootpw")
      #expect(await machine.waitFor("interval", 61), "\(machine.events)")
      let ended = await machine.stop()
      #expect(ended == nil, "the follower ended by itself: \(machine.events)")
      await etcd.stopAll()
    }

    @Test(
      "plain HTTP only to a literal loopback address, with or without a user; endpoints that are not URLs are refused")
    func configuration() throws {
      // Another machine, or a name (whatever it resolves to), over plain HTTP: anyone on the way could change every
      // machine's values, and read a password.
      for (endpoint, user) in [
        ("http://10.0.0.1:2379", "reader"), ("http://10.0.0.1:2379", nil), ("http://localhost:2379", nil),
        ("http://127.attacker.example:2379", "reader"),
      ] as [(String, String?)] {
        let error = #expect(throws: FleetError.self) {
          try FleetFollower(suites: ["app"], cluster: EtcdCluster(endpoints: [endpoint], user: user))
        }
        #expect(error?.code == .insecureEndpoint, "\(endpoint)")
        #expect(error?.description.contains("literal loopback address") == true)
      }
      for endpoints in [[], ["10.0.0.1:2379"], ["ftp://h:1"], ["http://h:1/path"], ["https://user:pw@h:1"]] {
        #expect(throws: FleetError.self) {
          try FleetFollower(suites: ["app"], cluster: EtcdCluster(endpoints: endpoints))
        }
      }
      #expect(throws: FleetError.self) {
        try FleetFollower(suites: [], cluster: EtcdCluster(endpoints: ["http://127.0.0.1:1"]))
      }
      #expect(throws: FleetError.self) {
        try FleetFollower(suites: ["a/b"], cluster: EtcdCluster(endpoints: ["http://127.0.0.1:1"]))
      }
      // Loopback over plain HTTP is this machine: allowed with a user.
      _ = try FleetFollower(
        suites: ["app"],
        cluster: EtcdCluster(endpoints: ["http://127.0.0.1:2379", "http://[::1]:2379"], user: "reader"))
    }
  }
#endif
