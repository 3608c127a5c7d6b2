import Foundation
import TestSupport
import Testing

/// What splintctl prints when something goes wrong: a first line of at most 160 characters that says what happened,
/// then what to do, on lines of its own, each phrase once.
@Suite struct ErrorOutputTests {
  let scratch = Scratch()

  /// Failing commands, each with the environment it fails in.
  func failures() throws -> [(arguments: [String], environment: [String: String]?)] {
    let corrupt = scratch.url("corrupt.json").path
    try "{\n  // the interval\n  \"interval\": 60,,\n}\n".write(toFile: corrupt, atomically: true, encoding: .utf8)
    let fifo = scratch.url("fifo.json").path
    mkfifo(fifo, 0o600)
    var busless = ProcessInfo.processInfo.environment
    busless["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    busless["SPLINT_CREDENTIAL_STORES"] = "secret-service"
    var unknownStore = ProcessInfo.processInfo.environment
    unknownStore["SPLINT_CREDENTIAL_STORES"] = "delivered,vault"
    return [
      (["get", "--file", corrupt, "interval"], nil), (["set", "--file", corrupt, "interval", "1"], nil),
      (["list", "--file", fifo], nil), (["set", "--file", fifo, "k", "1"], nil),
      (["get", "--suite", "two\nlines", "k"], nil), (["get", "--suite", " ", "k"], nil),
      (["import", "--file", scratch.url("new.json").path, corrupt], nil),
      (["secret", "read", "api.example.com", "alice"], busless), (["secret", "status"], busless),
      (["secret", "read", "api.example.com", "alice"], unknownStore), (["sandbox", "--", "no-such-command"], nil),
    ]
  }

  @Test("every failure's first line is at most 160 characters and says what happened; what to do follows")
  func firstLinesAreShort() async throws {
    for (arguments, environment) in try failures() {
      let output = try await Programs.run([Programs.helper("splintctl")] + arguments, environment: environment)
      #expect(output.status != 0, "\(arguments)")
      // `secret status` says it on standard output, the others on standard error.
      let text = arguments == ["secret", "status"] ? output.stdout : output.stderr
      let lines = text.split(separator: "\n")
      #expect(lines.first.map { !$0.isEmpty && $0.count <= 160 } == true, "\(arguments): \(text)")
      #expect(lines.count > 1, "what to do follows what happened: \(arguments): \(text)")
      // No sentence twice.
      let sentences = text.split(separator: "\n").flatMap { $0.components(separatedBy: ". ") }.filter { $0.count > 20 }
      #expect(Set(sentences).count == sentences.count, "\(arguments): \(text)")
    }
  }

  @Test("a settings file's error: what happened on the first line, where it goes wrong, then what to do")
  func aCorruptFile() async throws {
    let file = scratch.url("settings.json").path
    try "{\"interval\": 60,,}".write(toFile: file, atomically: true, encoding: .utf8)
    let output = try await splintctl("set", "--file", file, "interval", "1")
    #expect(output.status == 70)
    let lines = output.stderr.split(separator: "\n").map(String.init)
    #expect(lines.first.map { $0.hasPrefix("splintctl: The settings file ") && $0.count <= 160 } == true)
    #expect(
      output.errorText.hasPrefix(
        "splintctl: The settings file \(file) is not a JSON object (line 1, column 17: two commas in a row after the "
          + "value of \"interval\"). It is not used"), "\(output)")
    #expect(lines.dropLast().last?.hasPrefix("It is not used, and it is not written until it is fixed") == true)
    #expect(lines.last?.hasPrefix("Fix the file, or start over on purpose with `splintctl reset --all`") == true)
  }

  @Test("SPLINT_SANDBOX is set inside splintctl sandbox, to a directory of its own, and gone afterwards")
  func sandboxVariable() async throws {
    let splintctl = Programs.helper("splintctl")
    let output = try await Programs.run([
      splintctl, "sandbox", "--", "sh", "-c",
      #"test -d "$SPLINT_SANDBOX" && echo "$SPLINT_SANDBOX" && "$0" sandbox -- sh -c 'echo "$SPLINT_SANDBOX"'"#,
      splintctl,
    ])
    #expect(output.status == 0, "\(output)")
    #expect(
      output.lines.count == 2 && output.lines[0] != output.lines[1], "a sandbox inside one has its own: \(output)")
    #expect(output.lines.allSatisfy { $0.contains("/splintctl-sandbox.") }, "\(output)")
    #expect(output.lines.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "removed at the end: \(output)")
    // Outside a sandbox nothing sets it: a test that needs one can tell.
    var outside = ProcessInfo.processInfo.environment
    outside["SPLINT_SANDBOX"] = nil
    let plain = try await Programs.run(["sh", "-c", #"echo "${SPLINT_SANDBOX-unset}""#], environment: outside)
    #expect(plain.lines == ["unset"])
  }
}
