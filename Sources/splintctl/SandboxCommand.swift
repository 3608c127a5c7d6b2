import ArgumentParser
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

struct SandboxCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sandbox",
    abstract: "Run a command with a throw-away Secret Service: its own D-Bus session and unlocked gnome-keyring.",
    discussion: """
      The command gets a private session bus, a gnome-keyring unlocked with a random password, and throw-away \
      XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR and TMPDIR (so settings \
      suites are throw-away too); DISPLAY and WAYLAND_DISPLAY are removed, so nothing prompts. When the command \
      ends, every process it left behind is ended, the directories are removed, and splintctl exits with the \
      command's status. Your own keyring is never touched. This is how a test suite runs against a real Secret \
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

  func run() throws {
    for tool in ["dbus-run-session", "gnome-keyring-daemon"] where !Self.isInstalled(tool) {
      throw failure(
        "\(tool) is not installed. Install it: apt-get install dbus-daemon dbus-bin gnome-keyring",
        ExitStatus.unavailable)
    }
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(base)/splintctl-sandbox.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      throw failure("cannot make a directory in \(base): \(String(cString: strerror(errno))).", ExitStatus.failure)
    }
    let root = String(cString: made)
    defer { Self.cleanUp(root) }

    var environment = ProcessInfo.processInfo.environment
    for name in ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL"] {
      environment[name] = nil
    }
    var directories = [
      ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
      ("XDG_STATE_HOME", "state"), ("XDG_RUNTIME_DIR", "run"), ("TMPDIR", "tmp"),
    ]
    if home { directories.append(("HOME", "home")) }
    for (name, directory) in directories {
      let path = "\(root)/\(directory)"
      mkdir(path, 0o700)
      environment[name] = path
    }
    // The keyring's password reaches the daemon through a shell builtin and is gone before the command starts: it is
    // never in any process's arguments, nor in the command's environment.
    environment["SPLINTCTL_SANDBOX_PASSWORD"] = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
    .joined()
    let script = """
      printf %s "$SPLINTCTL_SANDBOX_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
      || { echo "splintctl: gnome-keyring-daemon did not start; see its messages above." >&2; exit 69; }
      unset SPLINTCTL_SANDBOX_PASSWORD
      exec "$@"
      """
    let status = try Self.run(["dbus-run-session", "--", "sh", "-c", script, "sh"] + command, environment: environment)
    if status != 0 { throw ExitCode(status) }
  }

  /// Runs `arguments` and returns its exit status (128 + the signal when a signal ended it). While it runs, this
  /// process ignores the terminal's SIGINT and SIGQUIT (the command gets them and decides), and passes SIGTERM and
  /// SIGHUP on to it, so that it always gets to clean up afterwards.
  private static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawnp(&pid, arguments[0], nil, &attributes, argv, envp)
    guard spawned == 0 else {
      throw failure("cannot start \(arguments[0]): \(String(cString: strerror(spawned))).", ExitStatus.failure)
    }
    signal(SIGINT, SIG_IGN)
    signal(SIGQUIT, SIG_IGN)
    let forwarders = [SIGTERM, SIGHUP].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { kill(pid, number) }
      source.resume()
      return source
    }
    defer { forwarders.forEach { $0.cancel() } }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    let signaled = status & 0x7F
    return signaled == 0 ? (status >> 8) & 0xFF : 128 + signaled
  }

  /// Ends every process whose environment names `root` (the bus, the keyring daemons, anything the command left
  /// running), then removes `root`.
  private static func cleanUp(_ root: String) {
    let needle = Data(root.utf8)
    let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for pid in processes.compactMap(Int32.init) where pid != getpid() {
      if let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
        environment.range(of: needle) != nil
      {
        kill(pid, SIGKILL)
      }
    }
    try? FileManager.default.removeItem(atPath: root)
  }

  private static func isInstalled(_ tool: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
      FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
    }
  }
}
