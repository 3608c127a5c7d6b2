#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import Testing
  @testable import SplintFleet

  /// The store's pure parts: what an answer means, its JSON, base64, and the names of paths.
  @Suite struct VaultUnitTests {
    /// What the request loop makes of an answer of `status` with `body`, in words.
    private func outcome(_ status: Int, _ body: String, headers: [(String, String)] = []) -> String {
      let response = FleetHTTPResponse(status: status, headers: HTTPHeaders(headers), body: Array(body.utf8))
      switch VaultServer.outcome(of: response, from: "s") {
      case .answer: return "answer"
      case .sealed: return "sealed"
      case .failed(let note): return "failed: \(note)"
      case .later(let note, let wait): return "later \(wait.map { "\($0)" } ?? "-"): \(note)"
      }
    }

    @Test("which answers are asked again elsewhere, which are sealed, which go to the caller")
    func outcomes() {
      #expect(outcome(503, #"{"errors":["Vault is sealed"]}"#) == "sealed")
      #expect(outcome(503, #"{"initialized":true,"sealed":true}"#) == "sealed")
      #expect(outcome(503, #"{"errors":["standby"]}"#) == "later -: s is unavailable (503: standby).")
      #expect(outcome(503, "") == "later -: s is unavailable (503).")
      #expect(outcome(429, "", headers: [("Retry-After", "2")]).hasPrefix("later 2.0 seconds: s asked"))
      #expect(outcome(429, "", headers: [("Retry-After", "86400")]).hasPrefix("later 30.0 seconds"))
      #expect(outcome(429, "").hasPrefix("later -: s asked to be asked later (429"))
      #expect(outcome(412, "") == "later -: s has not caught up with this process's last write (412).")
      #expect(
        outcome(500, #"{"errors":["local node not active but active cluster node not found"]}"#)
          == "later -: s has no active node yet (an election).")
      #expect(outcome(500, #"{"errors":["internal error"]}"#) == "answer")
      #expect(outcome(200, "{}") == "answer")
    }

    @Test("JSON: what the server sends is read; anything else is refused, never half-read")
    func json() throws {
      let text =
        #" { "a" : [1, -2.5e3, true, false, null, {}, [], "\u00e9\ud834\udd1e\ud800x\n\"\\\/\b\f\r\t"], "b\u0063" : 2 } "#
      let bytes = Array(text.utf8)
      let value = try #require(VaultJSON.parse(bytes))
      #expect(value["bc"]?.integer(in: bytes) == 2, "a member's name is decoded")
      let elements = try #require(value["a"]).elements
      #expect(elements.count == 8)
      #expect(elements[0].integer(in: bytes) == 1)
      #expect(elements[1].integer(in: bytes) == nil)
      #expect(elements[2].isTrue && !elements[3].isTrue)
      #expect(elements[7].text(in: bytes) == "é𝄞\u{FFFD}x\n\"\\/\u{8}\u{C}\r\t")
      #expect(elements[7].secret(in: bytes) == Data("é𝄞\u{FFFD}x\n\"\\/\u{8}\u{C}\r\t".utf8))
      #expect(elements[0].text(in: bytes) == nil && elements[0].secret(in: bytes) == nil)
      #expect(elements[0].members.isEmpty && value.elements.isEmpty && elements[0]["x"] == nil)
      #expect(String(decoding: elements[5].raw(in: bytes), as: UTF8.self) == "{}")
      let invalid = [
        "", "{", "[", "[1,", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{1:2}", "{\"a\":1,}", "{\"a\":1 \"b\"}", "tru", "nul",
        "-", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"a\u{1}\"", "\"\\", "1 2", "{\"a\":1", "[1",
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
      ]
      for text in invalid { #expect(VaultJSON.parse(Array(text.utf8)) == nil, "\(text)") }
      #expect(
        VaultJSON.parse(Array((String(repeating: "[", count: 63) + String(repeating: "]", count: 63)).utf8)) != nil)
    }

    @Test("a server's error texts are escaped and cut before they are shown, logged or put in an error")
    func errorTexts() {
      let long = String(repeating: "e", count: 5000)
      let body = Array(#"{"errors": ["\u001b]0;owned\u0007\u001b[2Jdenied", "\#(long)", 1]}"#.utf8)
      let errors = VaultServer.errors(in: body)
      #expect(errors.first == "\\u{1B}]0;owned\\u{7}\\u{1B}[2Jdenied", "\(errors)")
      // Cut in the middle, where two long texts differ least often: their ends stay.
      #expect(
        errors.count == 2
          && errors[1] == String(repeating: "e", count: 134) + "…" + String(repeating: "e", count: 66), "\(errors)")
      let many = Array(("{\"errors\": [" + Array(repeating: "\"x\"", count: 50).joined(separator: ",") + "]}").utf8)
      #expect(VaultServer.errors(in: many).count == 10)
      #expect(
        VaultSession.lease(Int.max) == 366 * 24 * 3600 && VaultSession.lease(-5) == 0 && VaultSession.lease(60) == 60)
    }

    @Test("base64 both ways, and what is not base64")
    func base64() {
      for length in 0...7 {
        let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 200) })
        var encoded: [UInt8] = []
        Base64.encode(data, into: &encoded)
        #expect(String(decoding: encoded, as: UTF8.self) == data.base64EncodedString())
        #expect(Base64.decode(Data(encoded)) == data)
      }
      for text in ["abc", "ab=c", "a===", "ab!d", "====" + "abcd"] {
        #expect(Base64.decode(Data(text.utf8)) == nil, "\(text)")
      }
    }

    @Test("path segments: the rule's table, and what it never writes")
    func segments() {
      let table = [
        ("api.example.com", "api.example.com"), ("alice@example.com", "alice%40example.com"), ("a/b", "a%2Fb"),
        ("café", "caf%C3%A9"), ("", "%00"), (".", "%2E"), ("..", "%2E%2E"), ("a.b", "a.b"), ("\u{1}", "%01"),
      ]
      for (name, segment) in table {
        #expect(VaultConfiguration.pathSegment(name) == segment)
        #expect(VaultConfiguration.name(fromSegment: segment) == name)
      }
      for segment in ["%2e", "a%2fb", "%FF", "%", "%G0", "a@b"] {
        #expect(VaultConfiguration.name(fromSegment: segment) == nil, "\(segment)")
      }
      #expect(VaultServer.percentEncoded("secret/data/a%40b c") == "secret/data/a%2540b%20c")
      #expect(VaultServer.percentEncoded("\u{1}") == "%01")
    }

    @Test("a policy's grant reaches the credentials' folder, or a location of your own")
    func grants() {
      let folder = "secret/data/splint/"
      for (path, isGlob) in [
        ("secret/data/splint/api.example.com/", true), ("secret/data/", true), ("secret/data/spl", true),
        ("secret/data/splint/", true), ("secret/data/splint/api.example.com/syncd", false),
        ("secret/data/+/api.example.com/syncd", false),
      ] {
        #expect(VaultPolicy.grant(path, isGlob: isGlob, reaches: folder), "\(path)")
      }
      for (path, isGlob) in [("secret/data/other/", true), ("secret/data/splint", false), ("kv/data/splint/", true)] {
        #expect(!VaultPolicy.grant(path, isGlob: isGlob, reaches: folder), "\(path)")
      }
      let location = "secret/data/prod/db"
      for (path, isGlob) in [("secret/data/prod/db", false), ("secret/data/prod/", true), ("secret/data/+/db", false)] {
        #expect(VaultPolicy.grant(path, isGlob: isGlob, reaches: location), "\(path)")
      }
      for (path, isGlob) in [("secret/data/prod/db/x", false), ("secret/data/prod", false), ("secret/data/x/", true)] {
        #expect(!VaultPolicy.grant(path, isGlob: isGlob, reaches: location), "\(path)")
      }
    }

    @Test("error descriptions say what to do and never hold a secret")
    func descriptions() {
      let errors: [CredentialError] = [
        .sealed(store: "vault at X", servers: ["X"]), .unreachable(store: "vault at X", reason: "It is down."),
        .forbidden(store: "vault at X", path: "secret/data/a", capability: "read"),
        .notLoggedIn(store: "vault at X", reason: "No login."), .secretIDSpent(store: "vault at X"),
        .conflict(store: "vault at X", path: "secret/data/a"), .serverError(store: "vault at X", reason: "It failed."),
      ]
      #expect(Set(errors.map(\.code.description)).count == errors.count)
      for error in errors {
        #expect(error.description.hasPrefix("vault at X") || error.description.contains("vault at X"))
      }
    }
  }
#endif
