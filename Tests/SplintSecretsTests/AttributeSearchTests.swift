import Foundation
import SplintSecrets
import TestSupport
import Testing

/// Items other programs stored with attributes of their own, found by attribute: git's libsecret credential helper
/// (built from the source Debian's git package ships), and secret-tool.
@Suite("Search by attributes", TestKeyring.required)
struct AttributeSearchTests {
  let scratch = Scratch()
  let host = "splint-\(UUID().uuidString.lowercased()).example.com"

  /// git's credential-libsecret, built from the source in Debian's git documentation.
  private func gitCredentialHelper() async throws -> String? {
    let source = "/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c"
    guard FileManager.default.fileExists(atPath: source) else { return nil }
    let binary = scratch.url("git-credential-libsecret").path
    let flags = try await Programs.run(["pkg-config", "--cflags", "--libs", "libsecret-1", "glib-2.0"])
    let build = try await Programs.run(
      ["cc", "-o", binary, source] + flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init))
    #expect(build.status == 0, "\(build.stderr)")
    return build.status == 0 ? binary : nil
  }

  @Test("a credential git's libsecret helper stored is found by its attributes, its secret read only when asked")
  func gitCredential() async throws {
    guard let helper = try await gitCredentialHelper() else {
      print("skipped: git's credential-libsecret source (Debian's git package documentation) is not installed")
      return
    }
    let stored = try await Programs.run(
      [helper, "store"], input: Data("protocol=https\nhost=\(host)\nusername=alice\npassword=s3cr3t\n\n".utf8))
    #expect(stored.status == 0, "\(stored.stderr)")
    let before = Date().addingTimeInterval(-60)
    let items = try SecretServiceStore.shared.items(matching: ["server": host])
    #expect(items.count == 1)
    let item = try #require(items.first)
    #expect(item.label == "Git: https://\(host)/")
    #expect(item.attributes["protocol"] == "https" && item.attributes["user"] == "alice")
    #expect(item.schema != nil, "git's helper names its schema")
    #expect(!item.isLocked)
    #expect(item.created > before && item.modified >= item.created)
    #expect(try SecretServiceStore.shared.secret(of: item) == Data("s3cr3t".utf8))
    // splintctl finds it too, and prints the secret only when asked.
    let listed = try await Programs.run([Programs.helper("splintctl"), "secret", "search", "server", host])
    #expect(listed.status == 0)
    #expect(listed.lines.contains("label = Git: https://\(host)/") && listed.lines.contains("attribute.user = alice"))
    #expect(!listed.stdout.contains("s3cr3t"))
    let shown = try await Programs.run([Programs.helper("splintctl"), "secret", "search", "--secret", "server", host])
    #expect(shown.lines.last == "secret = s3cr3t")
    let erased = try await Programs.run(
      [helper, "erase"], input: Data("protocol=https\nhost=\(host)\nusername=alice\n\n".utf8))
    #expect(erased.status == 0)
    #expect(try SecretServiceStore.shared.items(matching: ["server": host]).isEmpty)
  }

  @Test("items secret-tool stored with attributes of its own are found, every attribute must match")
  func secretToolItems() async throws {
    for (user, label) in [("bob", "B"), ("carol", "A")] {
      let stored = try await Programs.run(
        ["secret-tool", "store", "--label=\(label)", "server", host, "user", user], input: Data("\(user)-secret".utf8))
      #expect(stored.status == 0)
    }
    let both = try SecretServiceStore.shared.items(matching: ["server": host])
    #expect(both.map(\.label) == ["A", "B"], "sorted by label")
    #expect(both.allSatisfy { $0.schema == nil || $0.schema == "org.freedesktop.Secret.Generic" })
    let carol = try SecretServiceStore.shared.items(matching: ["server": host, "user": "carol"])
    #expect(carol.map(\.attributes["user"]) == ["carol"])
    #expect(try carol.first.map { try SecretServiceStore.shared.secret(of: $0) } == Data("carol-secret".utf8))
    let none = try await Programs.run([Programs.helper("splintctl"), "secret", "search", "server", "nowhere-\(host)"])
    #expect(none.status == 1 && none.stderr.contains("no item matches"))
    #expect(try await Programs.run([Programs.helper("splintctl"), "secret", "search", "server"]).status == 64)
    for user in ["bob", "carol"] {
      _ = try await Programs.run(["secret-tool", "clear", "server", host, "user", user])
    }
  }

  @Test("a search names at least one attribute, without NUL")
  func invalidSearches() {
    #expect(throws: CredentialError.invalidArgument("Name at least one attribute to match.")) {
      try SecretServiceStore.shared.items(matching: [:])
    }
    let nul = #expect(throws: CredentialError.self) { try SecretServiceStore.shared.items(matching: ["a\u{0}": "b"]) }
    #expect(nul?.code == .invalidArgument)
  }
}
