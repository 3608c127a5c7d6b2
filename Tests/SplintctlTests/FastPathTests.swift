import Foundation
import TestSupport
import Testing

/// `get` and `secret read` in their plainest spelling run before the argument parser (splintctl's fast path): each
/// case here is run that way and again spelled so that it goes through the parser, and the two must agree byte for
/// byte, exit status included.
@Suite("splintctl's fast path does what the parser does", TestKeyring.required)
struct FastPathTests {
  let scratch = Scratch()
  let service = TestKeyring.uniqueService()

  /// Runs `fast` and `parsed` (the same command, spelled another way) and expects the same outcome; returns it.
  @discardableResult
  func agree(_ fast: [String], _ parsed: [String], environment: [String: String]? = nil) async throws -> ProgramOutput {
    let one = try await splintctl(fast, environment: environment)
    let other = try await splintctl(parsed, environment: environment)
    #expect(one.status == other.status && one.stdout == other.stdout && one.stderr == other.stderr, "\(one) \(other)")
    return one
  }

  func splintctl(_ arguments: [String], environment: [String: String]?) async throws -> ProgramOutput {
    try await Programs.run([Programs.helper("splintctl")] + arguments, environment: environment)
  }

  @Test("get --file FILE KEY: a value, an absent key, a missing file, a file that is not JSON")
  func getFile() async throws {
    let file = scratch.url("settings.json").path
    try #"{"count": 3, "name": "x", "list": [1, {"a": null}]}"#.write(toFile: file, atomically: true, encoding: .utf8)
    for key in ["count", "name", "list", "absent"] {
      try await agree(["get", "--file", file, key], ["get", key, "--file", file])
    }
    #expect(try await agree(["get", "--file", file, "list"], ["get", "--file=\(file)", "list"]).status == 0)
    let missing = scratch.url("missing.json").path
    #expect(try await agree(["get", "--file", missing, "k"], ["get", "k", "--file", missing]).status == 1)
    // A relative path, from another directory: made absolute as Foundation's URL makes it.
    let relative = ["bash", "-c", "cd \"$1\" && shift && exec \"$@\"", "in", scratch.directory.path]
    let here = try await Programs.run(
      relative + [Programs.helper("splintctl"), "get", "--file", "./x/../settings.json", "count"])
    let there = try await Programs.run(
      relative + [Programs.helper("splintctl"), "get", "count", "--file", "settings.json"])
    #expect(here.stdout == "3\n" && here.stdout == there.stdout && here.status == there.status, "\(here) \(there)")
    let absent = try await Programs.run(
      relative + [Programs.helper("splintctl"), "get", "--file", "settings.json", "nope"])
    #expect(absent.stderr == "splintctl: nope is not set in \(file).\n", "\(absent)")
    let broken = scratch.url("broken.json").path
    try "{\"k\": ".write(toFile: broken, atomically: true, encoding: .utf8)
    #expect(try await agree(["get", "--file", broken, "k"], ["get", "k", "--file", broken]).status == 70)
  }

  @Test("get --suite SUITE KEY: the user's file, a system-wide default, an invalid suite name")
  func getSuite() async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.url("config").path
    environment["XDG_CONFIG_DIRS"] = scratch.url("system").path
    try FileManager.default.createDirectory(at: scratch.url("config/app"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: scratch.url("system/app"), withIntermediateDirectories: true)
    try #"{"mine": 1}"#.write(to: scratch.url("config/app/settings.json"), atomically: true, encoding: .utf8)
    try #"{"default": 2}"#.write(to: scratch.url("system/app/settings.json"), atomically: true, encoding: .utf8)
    for key in ["mine", "default", "absent"] {
      try await agree(["get", "--suite", "app", key], ["get", key, "--suite", "app"], environment: environment)
    }
    let invalid = try await agree(
      ["get", "--suite", "a/b", "k"], ["get", "k", "--suite", "a/b"], environment: environment)
    #expect(invalid.status == 64)
  }

  @Test("secret read SERVICE ACCOUNT: a secret, none, one that is not text")
  func secretRead() async throws {
    _ = try await TestSupport.Programs.run(
      [Programs.helper("splintctl"), "secret", "store", service, "alice"], input: Data("s3cr3t\n".utf8))
    _ = try await TestSupport.Programs.run(
      [Programs.helper("splintctl"), "secret", "store", "--binary", service, "bytes"], input: Data([0xff, 0]))
    #expect(
      try await agree(["secret", "read", service, "alice"], ["secret", "read", "--", service, "alice"]).stdout
        == "s3cr3t")
    #expect(try await agree(["secret", "read", service, "bob"], ["secret", "read", "--", service, "bob"]).status == 1)
    #expect(
      try await agree(["secret", "read", service, "bytes"], ["secret", "read", "--", service, "bytes"]).status == 70)
    _ = try await TestSupport.Programs.run([Programs.helper("splintctl"), "secret", "delete", service, "alice"])
    _ = try await TestSupport.Programs.run([Programs.helper("splintctl"), "secret", "delete", service, "bytes"])
  }
}
