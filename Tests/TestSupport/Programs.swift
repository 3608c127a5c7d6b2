public import Foundation
import Synchronization

/// What a finished program printed and how it ended.
public struct ProgramOutput: Sendable {
  /// The exit status, or 128 plus the signal that ended the program.
  public let status: Int32
  /// Everything the program wrote to standard output.
  public let stdout: String
  /// Everything the program wrote to standard error.
  public let stderr: String

  /// Standard output, one entry per line.
  public var lines: [String] {
    stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }
}

/// Why a program could not be started.
public enum ProgramError: Error, CustomStringConvertible {
  /// The program is not installed.
  case notFound(String)
  /// posix_spawn failed with this errno.
  case spawn(String, Int32)

  /// The reason, with what to do.
  public var description: String {
    switch self {
    case .notFound(let name):
      "\(name) is not installed; run script/bootstrap (script/test does) to install the test dependencies."
    case .spawn(let name, let code):
      "Could not start \(name): \(String(cString: strerror(code)))."
    }
  }
}

/// A program started by ``Programs/start(_:input:environment:seconds:)``, running until ``wait()``.
public final class RunningProgram: Sendable {
  /// The program's process ID (that of `timeout` when the program runs under it).
  public let pid: pid_t
  private let directory: URL
  private let result = Mutex<ProgramOutput?>(nil)

  fileprivate init(pid: pid_t, directory: URL) {
    self.pid = pid
    self.directory = directory
  }

  /// What the program printed so far.
  public var stdoutSoFar: String {
    (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? ""
  }

  /// Waits for the program (only the program, not daemons it left behind) and returns its output.
  @discardableResult
  public func wait() -> ProgramOutput {
    if let done = result.withLock({ $0 }) { return done }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    let output = ProgramOutput(
      status: (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F),
      stdout: stdoutSoFar,
      stderr: (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "")
    try? FileManager.default.removeItem(at: directory)
    result.withLock { $0 = output }
    return output
  }

  /// Sends `signal` to the program.
  public func send(_ signal: Int32) {
    kill(pid, signal)
  }
}

/// Runs programs for the tests, bounded by `timeout(1)` so that a hang fails the test instead of the whole run.
///
/// Output goes through files and only the direct child is awaited: a daemon the program leaves behind (gnome-keyring
/// forks one) keeps inherited pipes and sockets open, which would stall Foundation's `Process` forever. Children
/// start with default signal handling, not the test runner's blocked or ignored signals.
public enum Programs {
  /// The directory holding the test binary, and the helper executables built beside it.
  public static let buildDirectory: URL = {
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent()
  }()

  /// A helper executable built with the tests.
  public static func helper(_ name: String) -> String {
    buildDirectory.appendingPathComponent(name).path
  }

  /// Debian's Python, which has `keyring` (the `python3` first on PATH may be another one).
  public static let python = "/usr/bin/python3"

  /// Runs `arguments[0]` (looked up on PATH unless it is a path) with the rest as its arguments, and waits for it.
  ///
  /// - Parameters:
  ///   - arguments: The program and its arguments.
  ///   - input: The program's standard input.
  ///   - environment: The whole environment; the test process's own when nil.
  ///   - seconds: After this long the program is stopped (status 124).
  @discardableResult
  public static func run(
    _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil, seconds: Int = 60
  ) throws -> ProgramOutput {
    try start(arguments, input: input, environment: environment, seconds: seconds).wait()
  }

  /// Runs a program like ``run(_:input:environment:seconds:)``, with arguments given as bytes, which need not be
  /// UTF-8 (a Swift `String` cannot hold such an argument).
  ///
  /// - Parameters:
  ///   - arguments: The program and its arguments, each as the bytes the program receives (without a NUL).
  ///   - input: The program's standard input.
  ///   - environment: The whole environment; the test process's own when nil.
  ///   - seconds: After this long the program is stopped (status 124).
  @discardableResult
  public static func run(
    bytes arguments: [[UInt8]], input: Data = Data(), environment: [String: String]? = nil, seconds: Int = 60
  ) throws -> ProgramOutput {
    try spawn(arguments, input: input, environment: environment, seconds: seconds).wait()
  }

  /// Starts `arguments[0]` like ``run(_:input:environment:seconds:)`` and returns at once.
  ///
  /// - Parameters:
  ///   - arguments: The program and its arguments.
  ///   - input: The program's standard input.
  ///   - environment: The whole environment; the test process's own when nil.
  ///   - seconds: After this long the program is stopped; nil runs it without `timeout(1)` in between, so
  ///     that ``RunningProgram/send(_:)`` signals the program itself (SIGKILL cannot be passed on).
  public static func start(
    _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil, seconds: Int? = 60
  ) throws -> RunningProgram {
    try spawn(arguments.map { Array($0.utf8) }, input: input, environment: environment, seconds: seconds)
  }

  private static func spawn(
    _ arguments: [[UInt8]], input: Data, environment: [String: String]?, seconds: Int?
  ) throws -> RunningProgram {
    let program = String(decoding: arguments.first ?? [], as: UTF8.self)
    guard !arguments.isEmpty, isInstalled(program) else { throw ProgramError.notFound(program) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("splint-run-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let files = ["stdin", "stdout", "stderr"].map { directory.appendingPathComponent($0).path }
    try input.write(to: URL(fileURLWithPath: files[0]))

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, files[0], O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, files[1], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, files[2], O_WRONLY | O_CREAT | O_TRUNC, 0o600)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let command =
      seconds.map { ["timeout", "--kill-after=5", String($0)].map { Array($0.utf8) } + arguments } ?? arguments
    let argv = command.map(cString) + [nil]
    let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let spawned = argv[0].map { posix_spawnp(&pid, $0, &actions, &attributes, argv, envp) } ?? ENOMEM
    guard spawned == 0 else { throw ProgramError.spawn(program, spawned) }
    return RunningProgram(pid: pid, directory: directory)
  }

  /// A copy of `bytes` with a NUL after them, to `free`.
  private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
    (bytes + [0]).withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { $0.baseAddress.flatMap(strdup) }
    }
  }

  private static func isInstalled(_ program: String) -> Bool {
    if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
  }
}
