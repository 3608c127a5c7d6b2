#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintFleet
  import SplintSecrets
  import TestSupport
  import Testing

  /// The vault store's asynchronous calls hold no thread while they wait for the server: a read cancelled mid-request
  /// ends at once, and many reads at once leave Swift's cooperative pool free. Measured in a process of their own
  /// (SecretsProbe), whose threads are theirs alone, against a real OpenBao stopped with SIGSTOP meanwhile.
  @Suite(.startsServers) struct VaultAsyncTests {
    /// Runs SecretsProbe's `steps` with the vault store of `server` (its root token, a timeout of 30 seconds), and
    /// returns the numbers of its last line, which begins with `ok`.
    func probe(_ server: OpenBaoServer, _ steps: String...) async throws -> [String: Int] {
      var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("VAULT_") }
      environment["BAO_ADDR"] = server.address
      environment["BAO_TOKEN"] = server.rootToken
      environment["BAO_CLIENT_TIMEOUT"] = "30"
      let output = try await Programs.run(
        [Programs.helper("SecretsProbe"), "store", "vault"] + steps, environment: environment)
      server.resume()
      let last = try #require(output.lines.last, "\(output)")
      #expect(last.hasPrefix("ok "), "\(output)")
      // `name value` pairs: a number after each word that names one.
      let words = last.split(separator: " ").map(String.init)
      var numbers: [String: Int] = [:]
      for (index, word) in words.enumerated().dropFirst() where Int(word) == nil {
        numbers[word] = words.dropFirst(index + 1).first.flatMap { Int($0) }
      }
      for (index, word) in words.enumerated() where word == "threads" {
        numbers["baseline"] = Int(words[index + 1])
        numbers["during"] = Int(words[index + 2])
      }
      numbers["ended cancelled"] = last.contains(" ended cancelled ") ? 1 : 0
      return numbers
    }

    @Test("an async read cancelled mid-request ends at once with cancelled, and leaves no thread waiting")
    func cancelledMidRequest() async throws {
      let server = try await OpenBaoServer.dev()
      try await Credential(service: "svc", account: "a", store: try server.store()).save("x")
      // 20 reads wait for the stopped server, then are cancelled: each ends as cancelled, at once; no thread was made
      // for them, and none is left (the blocking way made one a read, each kept until the server's timeout).
      let numbers = try await probe(server, "threads-cancel", "20", "svc", "a", "\(server.processID)")
      let baseline = try #require(numbers["baseline"])
      #expect(try #require(numbers["during"]) <= baseline + 2, "\(numbers)")
      #expect(try #require(numbers["at-server"]) >= 1, "the requests reached the server before the cancel")
      #expect(numbers["ended cancelled"] == 1, "\(numbers)")
      #expect(try #require(numbers["in"]) < 1000, "\(numbers)")
      await server.stop()
    }

    @Test("200 async reads at once wait without a thread each, and the cooperative pool goes on meanwhile")
    func manyAtOnce() async throws {
      let server = try await OpenBaoServer.dev()
      try await Credential(service: "svc", account: "a", store: try server.store()).save("x")
      let numbers = try await probe(server, "threads-many", "200", "svc", "a", "\(server.processID)")
      #expect(numbers["read"] == 200, "\(numbers)")
      #expect(try #require(numbers["during"]) <= (numbers["baseline"] ?? 0) + 4, "\(numbers)")
      // Reads that held the pool's threads would keep its wake-ups waiting until the server came back, two seconds
      // on; a wake-up late by half of that is no busy machine's doing (one late by 411 ms was seen at nice 19 beside
      // a build).
      #expect(try #require(numbers["gap"]) < 1000, "the pool kept a wake-up waiting: \(numbers)")
      await server.stop()
    }

    @Test("an async read waiting for a login under way ends at once with cancelled; the login goes on for the next")
    func cancelledWhileLoggingIn() async throws {
      let server = try await OpenBaoServer.dev()
      try server.policy("app", ["secret/data/splint/*": ["read"]])
      try server.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "the secret"]])
      let role = try server.appRole("app", ["token_policies": ["app"]])
      let scratch = Scratch()
      try Data(role.roleID.utf8).write(to: scratch.url("role-id"))
      try Data(role.secretID.utf8).write(to: scratch.url("secret-id"))
      let store = try server.store(
        .appRole(roleIDFile: scratch.url("role-id").path, secretIDFile: scratch.url("secret-id").path))
      let credential = Credential(service: "svc", account: "a", store: store)
      server.pause()
      let read = Task { try await credential.read() }
      // The login's request waits at the stopped server, and the read waits for the login.
      #expect(
        await WaitingRequests.arrive(at: Int(server.address.split(separator: ":").last ?? "") ?? 0),
        "the login never reached the server")
      read.cancel()
      // The server is still stopped: a read that waited for the login (or its timeout) would not end here.
      let outcome = await read.result
      server.resume()
      #expect(throws: CredentialError.cancelled) { try outcome.get() }
      #expect(try await credential.read() == "the secret")
      await server.stop()
    }
  }
#endif
