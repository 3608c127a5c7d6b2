import Foundation
import TestSupport
import Testing

/// `splintctl get --origin`, and the system-wide defaults a suite reads (a temporary directory standing for
/// `/etc/xdg`).
@Suite("splintctl and system-wide defaults")
struct SystemDefaultsCommandTests {
  let scratch = Scratch()
  var home: URL { scratch.url("home") }
  var first: URL { scratch.url("vendor", "app", "settings.json") }
  var second: URL { scratch.url("xdg", "app", "settings.json") }

  /// splintctl with `app`'s user file under `home`, and the system directories `vendor`, then `xdg`.
  func run(_ arguments: String...) async throws -> ProgramOutput {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = home.path
    environment["XDG_CONFIG_DIRS"] = "\(scratch.url("vendor").path):\(scratch.url("xdg").path)"
    return try await Programs.run([Programs.helper("splintctl")] + arguments, environment: environment)
  }

  func save(_ text: String, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
  }

  @Test("get --origin names the user's file, the system file the value comes from, or the program's default")
  func getOriginSaysWhereTheValueComesFrom() async throws {
    try save(#"{"interval": 300}"#, to: first)
    try save(#"{"interval": 600, "mode": "quiet"}"#, to: second)
    let user = home.appendingPathComponent("app/settings.json").path

    let system = try await run("get", "--suite", "app", "--origin", "interval")
    #expect(system.status == 0 && system.stdout == "300\nsystem file \(first.path)\n", "\(system)")
    let second = try await run("get", "--suite", "app", "--verbose", "mode")
    #expect(second.stdout == "\"quiet\"\nsystem file \(self.second.path)\n", "\(second)")
    #expect(try await run("get", "--suite", "app", "interval").stdout == "300\n")

    #expect(try await run("set", "--suite", "app", "interval", "60").status == 0)
    let mine = try await run("get", "--suite", "app", "--origin", "interval")
    #expect(mine.status == 0 && mine.stdout == "60\nuser file \(user)\n", "\(mine)")
    // list and export show the user's file only.
    #expect(try await run("list", "--suite", "app").stdout == "{\n  \"interval\": 60\n}\n")

    let unset = try await run("get", "--suite", "app", "--origin", "missing")
    #expect(unset.status == 1, "\(unset)")
    #expect(unset.stdout == "no file sets missing: the program's default applies\n")
    #expect(unset.stderr == "splintctl: missing is not set in \(user).\n")

    // A reset falls back to the system value; the system files stay as they were.
    #expect(try await run("reset", "--suite", "app", "interval").stdout == "interval\n")
    #expect(
      try await run("get", "--suite", "app", "--origin", "interval").stdout.hasSuffix("system file \(first.path)\n"))
    #expect(try String(contentsOf: first, encoding: .utf8) == #"{"interval": 300}"#)
  }

  @Test("a file named with --file has no system defaults")
  func anExplicitFileHasNoSystemDefaults() async throws {
    try save(#"{"interval": 300}"#, to: first)
    let output = try await run("get", "--file", scratch.url("settings.json").path, "--origin", "interval")
    #expect(
      output.status == 1 && output.stdout == "no file sets interval: the program's default applies\n", "\(output)")
  }

  @Test("a broken system file is told on standard error and skipped; a broken user file fails get as before")
  func aBrokenSystemFileIsSkipped() async throws {
    try save("{broken", to: first)
    try save(#"{"interval": 600}"#, to: second)
    let output = try await run("get", "--suite", "app", "--origin", "interval")
    #expect(output.status == 0 && output.stdout == "600\nsystem file \(second.path)\n", "\(output)")
    #expect(
      output.errorText.hasPrefix("splintctl: warning: The system settings file \(first.path) is not a JSON object"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: first.deletingLastPathComponent().path) == ["settings.json"])

    try save("[]", to: home.appendingPathComponent("app/settings.json"))
    let broken = try await run("get", "--suite", "app", "interval")
    #expect(broken.status != 0 && broken.stdout.isEmpty, "\(broken)")
  }

  @Test("watch --suite prints an administrator's edit, and the system value when the user's is removed")
  func watchSeesSystemEdits() async throws {
    try save(#"{"mode": "quiet"}"#, to: second)
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = home.path
    environment["XDG_CONFIG_DIRS"] = "\(scratch.url("vendor").path):\(scratch.url("xdg").path)"
    let watcher = try await Programs.start(
      [Programs.helper("splintctl"), "watch", "--suite", "app", "mode"], environment: environment)
    defer { watcher.send(SIGTERM) }
    // The watcher may not be watching yet: edit until it reports, then carry on.
    var attempt = 0
    let started = await eventually {
      attempt += 1
      try? save(#"{"mode": "attempt-\#(attempt)"}"#, to: second)
      return watcher.stdoutSoFar.contains("mode \"attempt-")
    }
    #expect(started)
    #expect(try await run("set", "--suite", "app", "mode", "loud").status == 0)
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("mode \"loud\"\n") })
    // Hidden by the user's value: not printed. A change of the user's value after it is the sentinel: the watcher
    // hears both files through one inotify queue, in order, so once the sentinel is printed the edit was heard.
    try save(#"{"mode": "hidden"}"#, to: second)
    #expect(try await run("set", "--suite", "app", "mode", "sentinel").status == 0)
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("mode \"sentinel\"\n") }, "\(watcher.stdoutSoFar)")
    #expect(watcher.stdoutSoFar.hasSuffix("mode \"loud\"\nmode \"sentinel\"\n"), "\(watcher.stdoutSoFar)")
    // The user's value removed: the system value is the one in effect.
    #expect(try await run("delete", "--suite", "app", "mode").status == 0)
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("mode \"hidden\"\n") }, "\(watcher.stdoutSoFar)")
    watcher.send(SIGTERM)
    _ = await watcher.wait()
  }

  @Test func listSaysWhereSystemDefaultsAreShown() async throws {
    #expect(try await run("list", "--help").stdout.contains("get --origin"))
    #expect(try await run("get", "--help").stdout.contains("--origin"))
  }
}
