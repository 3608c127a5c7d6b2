#if SplintFleet
  import Foundation
  import SplintSecrets
  import SplintSettings
  import TestSupport
  import Testing

  @testable import SplintFleet

  /// What a follower and the fleet's commands say when the cluster is down, slow, lying or refusing: a typed error
  /// that says what happened and what to do, and never a password.
  @Suite struct FleetErrorTests {
    @Test("each situation says what happened, and what to do where there is something to do")
    func words() {
      let cases: [(FleetError, FleetError.Code, transient: Bool, says: [String])] = [
        (.init(.invalidConfiguration("no endpoint.")), .invalidConfiguration, false, ["configured wrongly"]),
        (
          .init(.unreachable(["a: refused", "b: refused"])), .unreachable, true,
          ["a: refused; b: refused", "endpoint health"]
        ),
        (.init(.timedOut(server: "http://h:1", after: .seconds(3))), .timedOut, true, ["within 3", "--timeout"]),
        (.init(.noLeader(server: "http://h:1")), .noLeader, true, ["quorum", "endpoint status"]),
        (.init(.tls(server: "https://h:1", reason: "untrusted")), .tls, false, ["untrusted", "--ca-file"]),
        (.init(.invalidResponse(server: "http://h:1", reason: "x")), .invalidResponse, true, ["gateway", "v3"]),
        (.init(.insecureEndpoint("http://10.0.0.1:2379")), .insecureEndpoint, false, ["plain HTTP", "https"]),
        (.init(.noPassword(user: "r", reason: "none.")), .noPassword, false, ["etcd__r", "secret store etcd r"]),
        (.init(.authenticationFailed(user: "r", server: "http://h:1")), .authenticationFailed, false, ["user r"]),
        (
          .init(.permissionDenied(server: "http://h:1", what: "read")), .permissionDenied, false,
          ["grant-permission", "/splint.history/"]
        ),
        (.init(.rejected(server: "http://h:1", message: "nope")), .rejected, false, ["nope"]),
        (.init(.notJSON(key: "k", reason: "line 1")), .notJSON, false, ["not JSON", "in quotes"]),
        (.init(.reservedKey("$k")), .reservedKey, false, ["reserves", "$enforced"]),
        (.init(.valueTooLarge(key: "k", size: 9, limit: 5)), .valueTooLarge, false, ["9 bytes", "maximumValueSize"]),
        (.init(.copyTooLarge(suite: "s", size: 9, limit: 5)), .copyTooLarge, false, ["9 bytes", "maximumCopySize"]),
        (
          .init(.schemaViolation(suite: "s", violations: ["k: must be at most 5 (maximum), found 9"], existing: false)),
          .schemaViolation, false,
          ["schema of s refuses the value: k: must be at most 5", "fleet schema get --suite s"]
        ),
        (
          .init(.schemaViolation(suite: "s", violations: ["a: x", "b: y"], existing: true)), .schemaViolation, false,
          ["refuse values s holds now: a: x; b: y", "--force"]
        ),
        (
          .init(.unknownLabel(suite: "s", label: "eu", labels: ["host:*", "canary"])), .unknownLabel, false,
          ["eu is not one of s's labels", "names host:*, canary", "fleet labels set --suite s"]
        ),
        (.init(.unknownLabel(suite: "s", label: "eu", labels: [])), .unknownLabel, false, ["names none"]),
        (
          .init(.invalidSchema(suite: "s", reason: "#/oneOf: not checked")), .invalidSchema, false,
          ["schema of s is not one", "#/oneOf: not checked", "fleet schema set --suite s FILE"]
        ),
        (
          .init(.copyFailed(.writeFailed(URL(fileURLWithPath: "/c.json"), reason: "disk full"))), .copyFailed, false,
          ["/c.json", "disk full"]
        ),
        (.init(.conflict(key: "$enforced")), .conflict, true, ["nothing was changed", "Try again"]),
        (
          .init(
            .transactionTooLarge(
              what: "Rolling s back", compares: 131, operations: 130, bytes: 9000,
              limits: .init(operations: 128, bytes: 1000))), .transactionTooLarge, false,
          ["131 comparisons and 130 operations", "at most 128 of each (--max-txn-ops)", "never split"]
        ),
        (
          .init(.revisionNotKept(suite: "s", revision: 7, reason: "it is compacted")), .revisionNotKept, false,
          ["revision 7 is not known: it is compacted", "fleet history --suite s"]
        ),
        (.init(.cancelled), .cancelled, false, ["cancelled"]),
      ]
      for (error, code, transient, says) in cases {
        #expect(error.code == code)
        #expect(error.code.description == "\(code)")
        #expect(error.isTransient == transient, "\(code)")
        #expect(!error.summary.isEmpty && !error.summary.contains("\n"))
        #expect(error.description.hasPrefix(error.summary))
        for words in says { #expect(error.description.contains(words), "\(code): \(error.description)") }
      }
      #expect(FleetError(.notJSON(key: "k", reason: "line 1")).skipReason == "not JSON (line 1)")
      #expect(FleetError(.reservedKey("$k")).skipReason.contains("reserved"))
      #expect(
        FleetError(.valueTooLarge(key: "k", size: 9, limit: 5)).skipReason
          == "9 bytes, more than the 5 a value may hold")
      #expect(FleetError(.copyTooLarge(suite: "s", size: 9, limit: 5)).skipReason.contains("more than its 5"))
      #expect(
        FleetError(.schemaViolation(suite: "s", violations: ["k: a", "k: b"], existing: false)).skipReason
          == "breaks the schema (k: a; k: b)")
      #expect(
        FleetError(.invalidSchema(suite: "s", reason: "#/oneOf: x")).skipReason
          == "not a schema this package checks (#/oneOf: x)")
      #expect(FleetError(.cancelled).skipReason == FleetError(.cancelled).description)
    }

    @Test("what etcd answers becomes the error it stands for")
    func etcdFailures() {
      let server = "http://h:1"
      func code(_ message: String, _ grpc: Int, user: String? = "r") -> FleetError.Code {
        FleetError(failure: EtcdFailure(message: message, code: grpc), server: server, user: user).code
      }
      #expect(code("etcdserver: permission denied", EtcdFailure.permissionDenied) == .permissionDenied)
      #expect(code("etcdserver: invalid auth token", EtcdFailure.unauthenticated) == .authenticationFailed)
      #expect(code("etcdserver: no leader", EtcdFailure.unavailable) == .noLeader)
      #expect(code("etcdserver: too many requests", EtcdFailure.unavailable) == .unreachable)
      #expect(code("etcdserver: authentication failed, invalid user ID or password", 3) == .authenticationFailed)
      #expect(code("etcdserver: user name is empty", 3, user: nil) == .permissionDenied)
      #expect(code("etcdserver: leader changed", 2) == .noLeader)
      #expect(code("etcdserver: request timed out", 2) == .noLeader)
      #expect(code("etcdserver: mvcc: required revision is a future revision", 11) == .rejected)
      let anonymous = FleetError(failure: EtcdFailure(message: "x", code: 16), server: server, user: nil)
      #expect(anonymous.description.contains("(none)"))
      // Decoded from what the gateway sends, including its older field names.
      let decoded = try? JSONDecoder().decode(EtcdFailure.self, from: Data(#"{"error":"boom","grpc_code":14}"#.utf8))
      #expect(decoded?.message == "boom" && decoded?.code == 14)
      let bare = try? JSONDecoder().decode(EtcdFailure.self, from: Data("{}".utf8))
      #expect(bare?.message == "no message" && bare?.code == 2)
    }

    @Test("a request with no HTTP answer becomes an error that names the server, and says whether to move on")
    func transport() {
      let kinds: [(FleetTransportError.Kind, FleetError.Code, movesOn: Bool)] = [
        (.timedOut, .timedOut, true), (.tls, .tls, true), (.invalidResponse, .invalidResponse, true),
        (.tooLarge, .invalidResponse, true), (.cancelled, .cancelled, false), (.unreachable, .unreachable, true),
      ]
      for (kind, code, movesOn) in kinds {
        let error = FleetError(
          transport: FleetTransportError(kind, server: "http://h:1", reason: "why"), timeout: .seconds(2))
        #expect(error.code == code)
        #expect(error.movesOn == movesOn)
        #expect(!error.shortReason.isEmpty)
      }
      #expect(FleetError(.unreachable(["http://h:1: the watch ended"])).shortReason == "the watch ended")
      #expect(FleetError(.noLeader(server: "x")).shortReason == "no leader")
      #expect(FleetError(.rejected(server: "x", message: "m")).shortReason.contains("m"))
      #expect(FleetTransportError(.tls, server: "https://h:1", reason: "r").description == "https://h:1: r")
    }

    @Test("each line of a watch is read for what it says, and a line that is not etcd's is refused")
    func watchLines() throws {
      let gateway = try EtcdGateway(cluster: EtcdCluster(endpoints: ["http://127.0.0.1:1"]))
      func change(_ json: String) throws(FleetError) -> FleetChange? {
        try EtcdEngine.change(in: Array(json.utf8), server: "http://127.0.0.1:1", user: nil, gateway: gateway)
      }
      let header = #""header":{"cluster_id":"15118495548433857066","revision":"9"}"#
      #expect(try change("") == nil)
      #expect(throws: FleetError.self) { try change("not json") }
      #expect(throws: FleetError.self) { try change(#"{"result":{}}"#) }
      do {
        _ = try change(#"{"error":{"message":"etcdserver: no leader","code":14}}"#)
        Issue.record("an error line was taken")
      } catch {
        #expect(error.code == .noLeader)
      }
      guard case .started(let at)? = try change(#"{"result":{\#(header),"created":true}}"#) else {
        Issue.record("a created watch is no start")
        return
      }
      #expect(at.cluster == "15118495548433857066" && at.revision == 9)
      guard case .compacted(4)? = try change(#"{"result":{\#(header),"canceled":true,"compact_revision":"4"}}"#) else {
        Issue.record("a compaction is not told")
        return
      }
      guard case .progress? = try change(#"{"result":{\#(header)}}"#) else {
        Issue.record("a progress notification is not told")
        return
      }
      let events =
        #""events":[{"kv":{"key":"YQ==","value":"MQ==","mod_revision":"9"}},{"type":"DELETE","kv":{"key":"Yg=="}}]"#
      guard case .changed(_, let seen)? = try change(#"{"result":{\#(header),\#(events)}}"#) else {
        Issue.record("events are not told")
        return
      }
      #expect(seen.map(\.key) == [[0x61], [0x62]])
      #expect(seen[0].value == [0x31] && seen[0].revision == 9)
      #expect(seen[1].value == nil && seen[1].revision == 9, "a deletion without its revision is at the header's")
      for (reason, code) in [
        ("rpc error: code = PermissionDenied desc = etcdserver: permission denied", FleetError.Code.permissionDenied),
        ("rpc error: code = Unauthenticated desc = etcdserver: invalid auth token", .unreachable),
        ("rpc error: code = InvalidArgument desc = etcdserver: revision of auth store is old", .unreachable),
        ("etcdserver: no leader", .noLeader),
        ("something else", .unreachable),
      ] {
        do {
          _ = try change(#"{"result":{\#(header),"canceled":true,"cancel_reason":"\#(reason)"}}"#)
          Issue.record("a cancelled watch was taken")
        } catch {
          #expect(error.code == code, "\(reason)")
        }
      }
      #expect(throws: FleetError.self) { try change(#"{"result":{"header":{},"created":true}}"#) == nil }
    }

    @Test("etcd's integers (text, or numbers from some versions), its base64 bytes, and answers that are not etcd's")
    func messages() throws {
      func integer(_ json: String) throws -> Int64 {
        try JSONDecoder().decode([EtcdInteger].self, from: Data("[\(json)]".utf8))[0].value
      }
      #expect(try integer(#""42""#) == 42)
      #expect(try integer(#""18446744073709551615""#) == -1, "an unsigned ID, kept by its bits")
      #expect(try integer("42") == 42)
      #expect(try integer("18446744073709551615") == -1)
      #expect(throws: DecodingError.self) { try integer(#""forty""#) }
      #expect(throws: DecodingError.self) { try JSONDecoder().decode([EtcdBytes].self, from: Data("[\"*?\"]".utf8)) }
      #expect(try JSONDecoder().decode([EtcdBytes].self, from: Data(#"["YQ=="]"#.utf8))[0].bytes == [0x61])
      do {
        _ = try EtcdGateway.decode(
          Array("<html>".utf8), as: EtcdRangeResponse.self, answering: "/v3/kv/range", server: "http://h:1")
        Issue.record("an answer that is not etcd's was taken")
      } catch {
        #expect(error.code == .invalidResponse)
        #expect(error.description.contains("its answer to /v3/kv/range is not etcd's"), "\(error)")
      }
      // An answer to authenticate without a token is not etcd's either.
      #expect(throws: FleetError.self) {
        try EtcdGateway.decode(
          Array("{}".utf8), as: EtcdAuthenticateResponse.self, answering: "/v3/auth/authenticate", server: "h")
      }
    }

    @Test("a watch that cannot start (no one listens) is an error that names the member")
    func watchThatCannotStart() async throws {
      let endpoint = "http://127.0.0.1:\(freeLoopbackPort())"
      let gateway = try EtcdGateway(cluster: EtcdCluster(endpoints: [endpoint], requestTimeout: .seconds(2)))
      do {
        _ = try await gateway.watch(from: 1, key: [0x61], rangeEnd: [0x62], on: 0)
        Issue.record("a watch started without a member")
      } catch {
        #expect(error.code == .unreachable)
        #expect(error.description.contains(endpoint), "\(error)")
      }
    }

    @Test("the key past a prefix, and the password's body, are built byte by byte")
    func bytes() {
      #expect(EtcdGateway.rangeEnd(ofPrefix: Array("/splint/".utf8)) == Array("/splint0".utf8))
      #expect(EtcdGateway.rangeEnd(ofPrefix: [0x61, 0xFF]) == [0x62])
      #expect(EtcdGateway.rangeEnd(ofPrefix: [0xFF, 0xFF]) == [0])
      let body = EtcdGateway.authenticationBody(user: "r", password: Data("a\"b\\c\n".utf8))
      #expect(body.map { String(decoding: $0, as: UTF8.self) } == #"{"name":"r","password":"a\"b\\c\u000a"}"#)
      #expect(EtcdGateway.authenticationBody(user: "r", password: Data([0xFF])) == nil)
      // Plain HTTP goes only to a literal loopback address: a name, whatever it resolves to, is not one.
      for host in ["127.0.0.1", "127.255.0.9", "[::1]", "::1", "0:0:0:0:0:0:0:1"] {
        #expect(FleetHTTPClient.isLoopbackLiteral(host), "\(host)")
      }
      for host in [
        "localhost", "127.attacker.example", "127.1", "10.0.0.1", "128.0.0.1", "::2", "[::ffff:10.0.0.1]", "",
      ] {
        #expect(!FleetHTTPClient.isLoopbackLiteral(host), "\(host)")
      }
    }

    @Test("an etcd member's URL and a vault's address follow one rule: what one takes the other takes, and the same")
    func serverURLs() async {
      let taken = [
        "https://10.0.0.1:2379": "https://10.0.0.1:2379", "https://vault:8200/": "https://vault:8200",
        "http://127.0.0.1:1//": "http://127.0.0.1:1", "http://[::1]:8200": "http://[::1]:8200",
        "https://h": "https://h",
      ]
      for (text, base) in taken {
        #expect((try? FleetServerURL(text))?.base == base, "\(text)")
        #expect((try? EtcdGateway(cluster: EtcdCluster(endpoints: [text])))?.endpoints == [base], "\(text)")
        #expect((try? VaultServer.Address(text))?.base == base, "\(text)")
      }
      // A path, query, fragment, user or password would be dropped by the requests, or sent where it should not be.
      let refused: [(String, FleetServerURL.Problem)] = [
        ("10.0.0.1:2379", .notAServerURL), ("ftp://h:21", .notAServerURL), ("https://h:1/v1", .notAServerURL),
        ("https://h:1?a=b", .notAServerURL), ("https://h:1#a", .notAServerURL), ("https://user:pw@h:1", .notAServerURL),
        ("https://user@h:1", .notAServerURL), ("https://", .notAServerURL), ("", .notAServerURL),
        ("http://localhost:1", .plainHTTP), ("http://10.0.0.1:2379", .plainHTTP),
        ("http://user@127.0.0.1:1", .notAServerURL),
      ]
      for (text, problem) in refused {
        #expect(throws: problem, "\(text)") { try FleetServerURL(text) }
        let etcd = #expect(throws: FleetError.self) { try EtcdGateway(cluster: EtcdCluster(endpoints: [text])) }
        #expect(etcd?.code == (problem == .plainHTTP ? .insecureEndpoint : .invalidConfiguration), "\(text)")
        let vault = await failure { () throws(CredentialError) in try VaultServer.Address(text) }
        #expect(vault?.code == .invalidConfiguration, "\(text)")
        #expect(vault?.description.contains("in the clear") == (problem == .plainHTTP), "\(text)")
      }
    }
  }
#endif
