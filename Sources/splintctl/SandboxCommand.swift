import ArgumentParser
import Dispatch
import SplintSystemCalls
import Subprocess

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

struct SandboxCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sandbox",
    abstract: "Run a command with a throw-away Secret Service: its own D-Bus session and unlocked gnome-keyring.",
    discussion: """
      The command gets a private session bus, a gnome-keyring unlocked with a random password, and throw-away \
      XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR and TMPDIR (so settings \
      suites are throw-away too); DISPLAY and WAYLAND_DISPLAY are removed, so nothing prompts. SPLINT_SANDBOX is set \
      (to the sandbox's directory), so that a test that needs a real Secret Service can require it. When the command \
      ends, every process it left behind is ended, the directories are removed, and splintctl exits with the \
      command's status. SIGTERM and SIGHUP sent to splintctl are passed on to the command, which may clean up \
      first. What the bus and the services it starts print is shown when the command ends (but for D-Bus's harmless \
      "Failed to set fd limit"). Your own keyring is never touched. This is how a test suite runs against a real Secret \
      Service in CI:

        splintctl sandbox -- swift test

      It needs dbus-run-session and gnome-keyring-daemon: apt-get install dbus-daemon dbus-bin gnome-keyring.
      """)

  @Flag(help: "Give the command a throw-away HOME as well.")
  var home = false

  @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
  var command: [String] = []

  func validate() throws {
    guard !command.isEmpty else { throw ValidationError("Give the command after --: splintctl sandbox -- swift test") }
  }

  func run() async throws {
    for tool in ["dbus-run-session", "gnome-keyring-daemon"] where !Self.isInstalled(tool) {
      throw failure(
        "\(tool) is not installed.", remedy: "Install it: apt-get install dbus-daemon dbus-bin gnome-keyring",
        ExitStatus.unavailable)
    }
    // As a shell says it, before anything starts: 127 for no such command, 126 for a file that cannot run.
    guard Self.executable(command[0]) != nil else {
      guard command[0].contains("/"), FileManager.default.fileExists(atPath: command[0]) else {
        throw failure(
          "\(command[0]): command not found.", remedy: "Check its name, or give its path (PATH is searched).",
          ExitCode(127))
      }
      throw failure(
        "\(command[0]): cannot run it: it is not an executable file.", remedy: "Make it executable (chmod +x).",
        ExitCode(126))
    }
    let sandbox: Sandbox
    do {
      sandbox = try Sandbox(home: home)
    } catch {
      throw failure(error.description, ExitStatus.failure)
    }
    var environment = sandbox.environment
    // The keyring's password reaches the daemon through a shell builtin and is gone before the command starts: it is
    // never in any process's arguments, nor in the command's environment.
    environment["SPLINTCTL_SANDBOX_PASSWORD"] = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
    .joined()
    // The command's process ID, for the signals passed on: dbus-run-session, which runs it, would die of them.
    let commandPID = "\(sandbox.root)/command.pid"
    environment["SPLINTCTL_SANDBOX_PID_FILE"] = commandPID
    // The bus's own messages (and those of the services it starts) go to a log, shown when the command ends; the
    // keyring's and the command's go to standard error, which waits on descriptor 3 meanwhile.
    let busLog = "\(sandbox.root)/bus.log"
    let outer = #"exec 3>&2 2>"$0"; exec "$@""#
    let inner = """
      printf %s "$SPLINTCTL_SANDBOX_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&3 \
      || { echo "splintctl: gnome-keyring-daemon did not start; see its messages above." >&3; exit 69; }
      echo $$ >"$SPLINTCTL_SANDBOX_PID_FILE"
      unset SPLINTCTL_SANDBOX_PASSWORD SPLINTCTL_SANDBOX_PID_FILE
      exec "$@" 2>&3 3>&-
      """
    defer { Self.end(sandbox, busLog: busLog) }
    let status = try await Self.run(
      ["sh", "-c", outer, busLog, "dbus-run-session", "--", "sh", "-c", inner, "splintctl sandbox"] + command,
      environment: environment,
      receiver: { (try? String(contentsOfFile: commandPID, encoding: .utf8)).flatMap { Int32($0.dropLast()) } })
    if status != 0 { throw ExitCode(status) }
  }

  /// Ends `sandbox`, after showing what the bus logged but for dbus-daemon's "Failed to set fd limit to 65536" (it
  /// tries to raise its limit whenever it runs as root, and cannot in a container: harmless, but alarming).
  private static func end(_ sandbox: Sandbox, busLog: String) {
    let logged = (try? String(contentsOfFile: busLog, encoding: .utf8)) ?? ""
    for line in logged.split(separator: "\n") where !line.contains("Failed to set fd limit to") {
      Output.error(String(line))
    }
    sandbox.end()
  }

  /// The program `name` runs, as `execvp` finds it: `name` itself when it holds a `/`, else the first executable
  /// file of that name in a directory of PATH. Nil when there is none.
  static func executable(_ name: String) -> String? {
    let candidates =
      name.contains("/")
      ? [name]
      : (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map {
        "\($0.isEmpty ? "." : $0)/\(name)"
      }
    return candidates.first { path in
      var info = stat()
      return stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR && access(path, X_OK) == 0
    }
  }

  /// Runs `arguments` with this process's standard input, output and error, and returns its exit status (128 + the
  /// signal when a signal ended it). While it runs, this process ignores the terminal's SIGINT and SIGQUIT (the
  /// command gets them from the terminal and decides), and passes SIGTERM and SIGHUP on to the process `receiver`
  /// names (the program itself when it names none yet), so that the command gets to clean up and this process still
  /// ends the sandbox afterwards. swift-subprocess starts the program with every signal at its default, none blocked.
  private static func run(
    _ arguments: [String], environment: [String: String], receiver: @escaping @Sendable () -> Int32?
  ) async throws -> Int32 {
    let result: ExecutionResult<Void, FileDescriptorOutput, FileDescriptorOutput>
    do {
      result = try await Subprocess.run(
        .name(arguments[0]),
        arguments: Arguments(Array(arguments.dropFirst())),
        environment: .custom(
          Dictionary(
            uniqueKeysWithValues: environment.compactMap { name, value in
              Environment.Key(rawValue: name).map { ($0, value) }
            })),
        input: .currentStandardInput,
        output: .currentStandardOutput,
        error: .currentStandardError
      ) { execution in
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        let forwarders = [SIGTERM, SIGHUP].map { number in
          signal(number, SIG_IGN)
          let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
          source.setEventHandler {
            if let pid = receiver() { kill(pid, number) } else { try? execution.send(signal: Signal(rawValue: number)) }
          }
          source.resume()
          return source
        }
        await exit(of: execution.processIdentifier.value)
        forwarders.forEach { $0.cancel() }
      }
    } catch {
      throw failure("cannot start \(arguments[0]): \(error)", ExitStatus.failure)
    }
    return switch result.terminationStatus {
    case .exited(let code): code
    case .signaled(let signal): 128 + signal
    }
  }

  /// Returns once the child `pid` has ended, leaving it to be reaped: until then a signal forwarded to it cannot
  /// reach another process that took its ID.
  private static func exit(of pid: pid_t) async {
    await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
      DetachedThread.start {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        ended.resume()
      }
    }
  }

  private static func isInstalled(_ tool: String) -> Bool { executable(tool) != nil }
}
