import Foundation

/// What a finished program printed and how it ended.
struct ProgramOutput {
  let status: Int32
  let stdout: String
  let stderr: String

  /// Standard output, one entry per line.
  var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

enum ProgramError: Error, CustomStringConvertible {
  case notFound(String)
  case spawn(String, Int32)

  var description: String {
    switch self {
    case .notFound(let name):
      "\(name) is not installed; run script/bootstrap (script/test does) to install the test dependencies."
    case .spawn(let name, let code):
      "Could not start \(name): \(String(cString: strerror(code)))."
    }
  }
}

/// Runs programs for the tests, bounded by `timeout(1)` so that a hang fails the test instead of the whole run.
///
/// Output goes through files and only the direct child is awaited: a daemon the program leaves behind (gnome-keyring
/// forks one) keeps inherited pipes and sockets open, which would stall Foundation's `Process` forever.
enum Programs {
  /// The directory holding the test binary, and the helper executables built beside it.
  static let buildDirectory: URL = {
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent()
  }()

  /// The `SecretsProbe` helper built with the tests.
  static var probe: String { buildDirectory.appendingPathComponent("SecretsProbe").path }

  /// Debian's Python, which has `keyring` (the `python3` first on PATH may be another one).
  static let python = "/usr/bin/python3"

  /// Runs `arguments[0]` (looked up on PATH unless it is a path) with the rest as its arguments.
  ///
  /// - Parameters:
  ///   - input: The program's standard input.
  ///   - environment: The whole environment; the test process's own when nil.
  ///   - seconds: After this long the program is stopped (status 124).
  @discardableResult
  static func run(
    _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil, seconds: Int = 60
  ) throws -> ProgramOutput {
    guard let program = arguments.first, isInstalled(program) else {
      throw ProgramError.notFound(arguments.first ?? "")
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("splint-run-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let files = ["stdin", "stdout", "stderr"].map { directory.appendingPathComponent($0).path }
    try input.write(to: URL(fileURLWithPath: files[0]))

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, files[0], O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, files[1], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, files[2], O_WRONLY | O_CREAT | O_TRUNC, 0o600)

    // Children start with default signal handling, not the test runner's blocked or ignored signals, which would
    // otherwise pass to every descendant (and keep `kill` from stopping a daemon).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let command = ["timeout", "--kill-after=5", String(seconds)] + arguments
    let argv = command.map { strdup($0) } + [nil]
    let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawnp(&pid, "timeout", &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw ProgramError.spawn(program, spawned) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    return ProgramOutput(
      status: (status >> 8) & 0xff,
      stdout: (try? String(contentsOfFile: files[1], encoding: .utf8)) ?? "",
      stderr: (try? String(contentsOfFile: files[2], encoding: .utf8)) ?? "")
  }

  private static func isInstalled(_ program: String) -> Bool {
    if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
  }
}
