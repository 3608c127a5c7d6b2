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

  /// The commands, with `FILE` for a settings file that holds `{"k": "v"}`, and `INPUT` for a file that holds
  /// `{"n": 3}`.
  static let commands: [[String]] = [
    ["--version"], ["--help"], ["get", "--help"], ["get", "--file", "FILE", "k"], ["set", "--file", "FILE", "n", "2"],
    ["list", "--file", "FILE"], ["delete", "--file", "FILE", "k"], ["path", "--file", "FILE"],
    ["get", "--suite", "splint-startup-test", "k"], ["get", "--suite", "splint-startup-test", "--origin", "k"],
    ["export", "--file", "FILE"],
    ["import", "--file", "FILE", "INPUT"],
    ["import", "--file", "FILE", "--replace", "INPUT"], ["reset", "--file", "FILE", "k", "n"],
    ["reset", "--file", "FILE", "--all"],
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
    let input = scratch.url("input.json").path
    try #"{"n": 3}"#.write(toFile: input, atomically: true, encoding: .utf8)
    let log = scratch.url("strace.log").path
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    let output = try await Programs.run(
      [
        "strace", "-f", "-qq", "-o", log, "-e", "trace=" + Self.watched.joined(separator: ","),
        Programs.helper("splintctl"),
      ]
        + command.map { ["FILE": file, "INPUT": input][$0] ?? $0 }, environment: environment)
    #expect([0, 1].contains(output.status), "\(output)")
    let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    #expect(calls.isEmpty, "splintctl \(command.joined(separator: " ")): \(calls)")
  }

  @Test("settings commands open no GLib, GIO or libsecret library")
  func settingsCommandsLoadNoGLib() async throws {
    guard (try? await Programs.run(["strace", "-f", "-o", "/dev/null", "true"]))?.status == 0 else {
      print("skipped: strace is not installed, or may not trace here")
      return
    }
    let file = scratch.url("settings.json").path
    let log = scratch.url("strace.log").path
    for command in [["set", "--file", file, "k", "1"], ["get", "--file", file, "k"], ["--help"]] {
      let output = try await Programs.run(
        ["strace", "-f", "-qq", "-o", log, "-e", "trace=openat,open", Programs.helper("splintctl")] + command)
      #expect(output.status == 0, "\(output)")
      let opened = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter {
        $0.contains("libsecret") || $0.contains("libglib") || $0.contains("libgio") || $0.contains("libgobject")
      }
      #expect(opened.isEmpty, "splintctl \(command.joined(separator: " ")): \(opened)")
    }
  }

  @Test("without libsecret, settings commands work and the Secret Service says what to install")
  func withoutLibsecret() async throws {
    // libsecret hidden behind /dev/null, in a mount namespace of the test's own.
    let script = """
      lib=$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null | awk '/libsecret-1\\.so\\.0 /{print $NF; exit}')
      for dir in /usr/lib/*-linux-gnu /lib/*-linux-gnu /usr/lib64 /usr/lib; do
        [ -n "$lib" ] || [ ! -e "$dir/libsecret-1.so.0" ] || lib=$dir/libsecret-1.so.0
      done
      [ -n "$lib" ] || { echo "no libsecret-1.so.0 to hide"; exit 3; }
      mount --bind /dev/null "$(readlink -f "$lib")" || exit 4
      "$0" set --file "$1" k 1 || exit 5
      "$0" get --file "$1" k || exit 6
      "$0" secret read --store secret-service service account
      echo "status $?"
      """
    let arguments = [Programs.helper("splintctl"), scratch.url("settings.json").path]
    guard await (try? Programs.run(["unshare", "--user", "--map-root-user", "--mount", "true"]))?.status == 0 else {
      print("skipped: this system does not permit user and mount namespaces (unshare)")
      return
    }
    let output = try await Programs.run(
      ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script] + arguments)
    if output.status == 3 {
      print("skipped: \(output.stdout)")
      return
    }
    #expect(output.status == 0, "\(output)")
    #expect(output.lines == ["1", "status 69"], "\(output)")
    #expect(output.stderr.contains("libsecret cannot be loaded"), "\(output)")
    #expect(output.stderr.contains("apt-get install libsecret-1-0"), "\(output)")
  }
}
