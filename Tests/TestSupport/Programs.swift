public import Foundation
import Subprocess
import Synchronization
import SystemPackage

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
  /// swift-subprocess could not start it, for this reason.
  case spawn(String, String)

  /// The reason, with what to do.
  public var description: String {
    switch self {
    case .notFound(let name):
      "\(name) is not installed; run script/bootstrap (script/test does) to install the test dependencies."
    case .spawn(let name, let reason):
      "Could not start \(name): \(reason)."
    }
  }
}

/// A program started by ``Programs/start(_:input:environment:seconds:)``, running until ``wait()``.
///
/// Until ``wait()`` the program is not reaped, even when it has ended, so that ``send(_:)`` cannot reach another
/// process that took its ID.
public final class RunningProgram: Sendable {
  /// The program's process ID (that of `timeout` when the program runs under it).
  public let pid: Int32
  private let directory: URL
  private let signaller: Signaller
  private let waiting: AsyncStream<Never>.Continuation
  private let ending: Task<ProgramOutput, any Error>

  fileprivate init(
    pid: Int32, directory: URL, signaller: Signaller, waiting: AsyncStream<Never>.Continuation,
    ending: Task<ProgramOutput, any Error>
  ) {
    self.pid = pid
    self.directory = directory
    self.signaller = signaller
    self.waiting = waiting
    self.ending = ending
  }

  /// What the program printed so far.
  public var stdoutSoFar: String {
    (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? ""
  }

  /// Waits for the program (only the program, not daemons it left behind) and returns its output.
  @discardableResult
  public func wait() async -> ProgramOutput {
    waiting.finish()
    do {
      return try await ending.value
    } catch {
      return ProgramOutput(status: -1, stdout: "", stderr: "The program could not be awaited: \(error)")
    }
  }

  /// Sends `signal` to the program, before returning.
  public func send(_ signal: Int32) {
    signaller.send(signal)
  }

  /// Stops the program (SIGSTOP), and returns once every thread of it is stopped (state T in
  /// `/proc/PID/task/TID/stat`), or after 30 s: a thread stops only when it next runs, and on a busy machine a server
  /// can answer a request sent after the signal. For a program started without `timeout(1)` in between.
  public func pause() {
    send(SIGSTOP)
    let deadline = Date().addingTimeInterval(30)
    while !isStopped, Date() < deadline { usleep(1_000) }
  }

  /// Whether every thread of the program is stopped, or it is gone.
  private var isStopped: Bool {
    let tasks = "/proc/\(pid)/task"
    guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return true }
    return threads.allSatisfy { thread in
      guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
        let end = stat.range(of: ") ", options: .backwards)
      else { return true }  // a thread that ended
      return stat[end.upperBound...].hasPrefix("T") || stat[end.upperBound...].hasPrefix("t")
    }
  }

  /// Kills the program and lets it be reaped in the background, where ``wait()`` cannot be awaited (a `defer`).
  public func kill() {
    signaller.send(SIGKILL)
    waiting.finish()
  }
}

/// Sends signals to a running program through its swift-subprocess `Execution`, only while that is valid.
final class Signaller: Sendable {
  private let send = Mutex<(@Sendable (Int32) -> Void)?>(nil)

  /// From now on, signals go through `send`.
  func attach(_ send: @escaping @Sendable (Int32) -> Void) { self.send.withLock { $0 = send } }

  /// From now on, signals go nowhere (the program is about to be reaped).
  func detach() { send.withLock { $0 = nil } }

  /// Sends `signal`, unless the program is no longer attached.
  func send(_ signal: Int32) { send.withLock { $0?(signal) } }
}

/// Runs programs for the tests through swift-subprocess, bounded by `timeout(1)` so that a hang fails the test
/// instead of the whole run.
///
/// Output goes through files and only the direct child is awaited: a daemon the program leaves behind (gnome-keyring
/// forks one) keeps inherited pipes and sockets open, which would stall a reader of pipes forever. swift-subprocess
/// starts children with default signal handling, not the test runner's blocked or ignored signals.
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
  ) async throws -> ProgramOutput {
    try await start(arguments, input: input, environment: environment, seconds: seconds).wait()
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
  ) async throws -> ProgramOutput {
    try await spawn(arguments, input: input, environment: environment, seconds: seconds).wait()
  }

  /// Starts `arguments[0]` like ``run(_:input:environment:seconds:)`` and returns once it runs.
  ///
  /// - Parameters:
  ///   - arguments: The program and its arguments.
  ///   - input: The program's standard input.
  ///   - environment: The whole environment; the test process's own when nil.
  ///   - seconds: After this long the program is stopped; nil runs it without `timeout(1)` in between, so
  ///     that ``RunningProgram/send(_:)`` signals the program itself (SIGKILL cannot be passed on).
  public static func start(
    _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil, seconds: Int? = 60
  ) async throws -> RunningProgram {
    try await spawn(arguments.map { Array($0.utf8) }, input: input, environment: environment, seconds: seconds)
  }

  private static func spawn(
    _ arguments: [[UInt8]], input: Data, environment: [String: String]?, seconds: Int?
  ) async throws -> RunningProgram {
    let program = String(decoding: arguments.first ?? [], as: UTF8.self)
    // Looked up on this process's PATH, as posix_spawnp does (swift-subprocess would use the child's).
    guard let path = locate(program), let timeout = locate("timeout") else { throw ProgramError.notFound(program) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("splint-run-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let files = ["stdin", "stdout", "stderr"].map { directory.appendingPathComponent($0) }
    try input.write(to: files[0])
    let stdin = try FileDescriptor.open(files[0].path, .readOnly)
    let (stdout, stderr) = try (output(files[1]), output(files[2]))

    let located = [Array(path.utf8)] + arguments.dropFirst()
    let command = seconds.map { [timeout, "--kill-after=5", String($0)].map { Array($0.utf8) } + located } ?? located
    let signaller = Signaller()
    let (waited, waiting) = AsyncStream<Never>.makeStream()
    let (started, starting) = AsyncStream<Int32>.makeStream()
    let ending = Task {
      defer { starting.finish() }
      let result = try await Subprocess.run(
        .path(FilePath(String(decoding: command[0], as: UTF8.self))),
        // swift-subprocess 1.0.2 copies raw-byte arguments and environment entries with strdup, which reads up to a
        // NUL the array does not have: each gets one here (a NUL at the end is allowed, and harmless once fixed).
        arguments: Arguments(command.dropFirst().map { $0 + [0] }),
        environment: .custom((environment ?? ProcessInfo.processInfo.environment).map { Array("\($0)=\($1)\0".utf8) }),
        input: .fileDescriptor(stdin, closeAfterSpawningProcess: true),
        output: .fileDescriptor(stdout, closeAfterSpawningProcess: true),
        error: .fileDescriptor(stderr, closeAfterSpawningProcess: true)
      ) { execution in
        // Signals reach the program from when `start` returns until `wait()`: it is reaped only once this returns.
        signaller.attach { try? execution.send(signal: Signal(rawValue: $0)) }
        starting.yield(execution.processIdentifier.value)
        for await _ in waited {}
        signaller.detach()
      }
      defer { try? FileManager.default.removeItem(at: directory) }
      let status =
        switch result.terminationStatus {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
      return ProgramOutput(
        status: status,
        stdout: (try? String(contentsOf: files[1], encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: files[2], encoding: .utf8)) ?? "")
    }
    var pids = started.makeAsyncIterator()
    guard let pid = await pids.next() else {
      do {
        _ = try await ending.value
      } catch {
        throw ProgramError.spawn(program, "\(error)")
      }
      throw ProgramError.spawn(program, "it ended before it started")
    }
    return RunningProgram(pid: pid, directory: directory, signaller: signaller, waiting: waiting, ending: ending)
  }

  /// A file for standard output or error, made for the program to write.
  private static func output(_ url: URL) throws -> FileDescriptor {
    try FileDescriptor.open(url.path, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
  }

  /// Where `program` is: itself when it is a path, else the first on PATH; nil when it is not there.
  private static func locate(_ program: String) -> String? {
    if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) ? program : nil }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(program)" }.first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }

}

extension Sequence {
  /// The results of `transform` on each element, in order, one after the other: several programs started at once.
  public func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var results: [T] = []
    for element in self { results.append(try await transform(element)) }
    return results
  }
}
