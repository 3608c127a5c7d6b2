import Foundation
import TestSupport
import Testing

/// What splintctl's settings commands start: nothing beyond the read or write itself.
@Suite("splintctl settings commands start no thread, watcher or connection") struct StartupTests {
  let scratch = Scratch()

  /// The system calls that would start a thread, a watcher or a connection.
  static let watched = [
    "clone", "clone3", "fork", "vfork", "epoll_create", "epoll_create1", "epoll_wait", "epoll_pwait",
    "inotify_init", "inotify_init1", "socket", "connect",
  ]

  /// The commands, with `FILE` for a settings file that holds `{"k": "v"}`.
  static let commands: [[String]] = [
    ["--version"], ["--help"], ["get", "--help"], ["get", "--file", "FILE", "k"], ["set", "--file", "FILE", "n", "2"],
    ["list", "--file", "FILE"], ["delete", "--file", "FILE", "k"], ["path", "--file", "FILE"],
    ["get", "--suite", "splint-startup-test", "k"],
  ]

  @Test(arguments: commands)
  func startsNothing(command: [String]) async throws {
    // strace may be missing, or ptrace refused (some containers): then there is nothing to look with.
    guard (try? await Programs.run(["strace", "-f", "-o", "/dev/null", "true"]))?.status == 0 else {
      print("skipped: strace is not installed, or may not trace here")
      return
    }
    let file = scratch.url("settings.json").path
    try #"{"k": "v"}"#.write(toFile: file, atomically: true, encoding: .utf8)
    let log = scratch.url("strace.log").path
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    let output = try await Programs.run(
      [
        "strace", "-f", "-qq", "-o", log, "-e", "trace=" + Self.watched.joined(separator: ","),
        Programs.helper("splintctl"),
      ]
        + command.map { $0 == "FILE" ? file : $0 }, environment: environment)
    #expect([0, 1].contains(output.status), "\(output)")
    let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    #expect(calls.isEmpty, "splintctl \(command.joined(separator: " ")): \(calls)")
  }
}
