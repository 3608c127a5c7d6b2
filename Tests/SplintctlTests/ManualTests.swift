import Foundation
import TestSupport
import Testing

/// What splintctl's man page is made of. script/install generates it with swift-argument-parser's generate-manual
/// from `splintctl --experimental-dump-help`, so every command must say what it does, and every option and argument
/// have its help, or the page has bare entries.
@Suite("splintctl's man page")
struct ManualTests {
  @Test func everyCommandOptionAndArgumentHasHelpText() async throws {
    let output = try await splintctl("--experimental-dump-help")
    #expect(output.status == 0)
    let tool = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    let root = try #require(tool["command"] as? [String: Any])
    #expect((root["discussion"] as? String)?.contains("Exit status") == true)
    // script/install turns these blocks into the page's ENVIRONMENT and EXAMPLES sections.
    let discussion = root["discussion"] as? String ?? ""
    for variable in ["SPLINT_CREDENTIAL_STORES", "CREDENTIALS_DIRECTORY", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS"] {
      #expect(discussion.contains("\nEnvironment:\n") && discussion.contains("\n  \(variable)\n"), "\(variable)")
    }
    #expect(discussion.contains("\n\nExamples:\n  "))

    var bare: [String] = []
    var commands = 0
    func walk(_ command: [String: Any], path: String) {
      let name = command["commandName"] as? String ?? "?"
      let path = path.isEmpty ? name : "\(path) \(name)"
      guard name != "help" else { return }  // swift-argument-parser's own
      commands += 1
      if (command["abstract"] as? String ?? "").isEmpty { bare.append(path) }
      for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
        if (argument["abstract"] as? String ?? "").isEmpty {
          bare.append("\(path) \(argument["valueName"] as? String ?? "?")")
        }
      }
      for subcommand in command["subcommands"] as? [[String: Any]] ?? [] { walk(subcommand, path: path) }
    }
    walk(root, path: "")
    #expect(commands >= 15, "only \(commands) commands")
    #expect(bare.isEmpty, "without help text: \(bare)")
  }
}
