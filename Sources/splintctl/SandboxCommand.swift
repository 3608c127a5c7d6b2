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
      suites are throw-away too); DISPLAY and WAYLAND_DISPLAY are removed, so nothing prompts. When the command \
      ends, every process it left behind is ended, the directories are removed, and splintctl exits with the \
      command's status. SIGTERM and SIGHUP sent to splintctl are passed on to the command, which may clean up \
      first. Your own keyring is never touched. This is how a test suite runs against a real Secret \
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
        "\(tool) is not installed. Install it: apt-get install dbus-daemon dbus-bin gnome-keyring",
        ExitStatus.unavailable)
    }
    let sandbox: Sandbox
    do {
      sandbox = try Sandbox(home: home)
    } catch {
      throw failure(error.description, ExitStatus.failure)
    }
    defer { sandbox.end() }
    var environment = sandbox.environment
    // The keyring's password reaches the daemon through a shell builtin and is gone before the command starts: it is
    // never in any process's arguments, nor in the command's environment.
    environment["SPLINTCTL_SANDBOX_PASSWORD"] = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
    .joined()
    let script = """
      printf %s "$SPLINTCTL_SANDBOX_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
      || { echo "splintctl: gnome-keyring-daemon did not start; see its messages above." >&2; exit 69; }
      unset SPLINTCTL_SANDBOX_PASSWORD
      echo $$ >"$0"
      exec "$@"
      """
    // The command's process ID, for the signals passed on: dbus-run-session, which runs it, would die of them.
    let commandPID = "\(sandbox.root)/command.pid"
    let status = try await Self.run(
      ["dbus-run-session", "--", "sh", "-c", script, commandPID] + command, environment: environment,
      receiver: { (try? String(contentsOfFile: commandPID, encoding: .utf8)).flatMap { Int32($0.dropLast()) } })
    if status != 0 { throw ExitCode(status) }
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

  private static func isInstalled(_ tool: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
      FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
    }
  }
}
