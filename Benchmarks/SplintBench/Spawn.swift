// How the benchmark starts, times and listens to other programs. A process is started with posix_spawn and reaped
// with waitpid on the calling thread, as hyperfine -N does, so that a process row times the program and not the way
// it was started: Foundation's Process added up to 50 ms (`waitUntilExit()` sleeps in 50 ms slices of the run loop),
// and swift-subprocess hands each start and end between threads. Every process call of the benchmark is here.

import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A program the benchmark started: its standard input is /dev/null or a pipe from the benchmark, its standard output
/// /dev/null or a pipe to the benchmark, its standard error /dev/null.
final class Child: Sendable {
  let pid: pid_t
  /// The write end of the program's standard input, when `input` was asked for.
  let input: FileHandle?
  /// The read end of the program's standard output, when `output` was asked for.
  let output: FileHandle?

  /// Starts `arguments[0]` (a path, or a name looked up on PATH).
  init(_ arguments: [String], input wantsInput: Bool = false, output wantsOutput: Bool = false) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // No signal blocked and every signal's default action, whatever the benchmark's threads block or ignore.
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    // The pipes are close-on-exec: the program gets its ends through dup2, and no other program inherits them (the
    // benchmark starts its programs from one thread at a time).
    var closeAfterSpawn: [Int32] = []
    defer { closeAfterSpawn.forEach { close($0) } }
    func pipeEnds() throws -> (read: Int32, write: Int32) {
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
      ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
      return (ends[0], ends[1])
    }
    if wantsInput {
      let ends = try pipeEnds()
      closeAfterSpawn.append(ends.read)
      input = FileHandle(fileDescriptor: ends.write, closeOnDealloc: true)
      posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
    } else {
      input = nil
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    if wantsOutput {
      let ends = try pipeEnds()
      closeAfterSpawn.append(ends.write)
      output = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
      posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
    } else {
      output = nil
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
    guard result == 0 else { throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(result)))") }
    self.pid = pid
  }

  /// Sends the program SIGTERM. It is reaped only by `wait()`, so its process ID cannot have been reused.
  func terminate() { kill(pid, SIGTERM) }

  /// Waits for the program to end: its exit status, or 128 plus the signal that ended it.
  @discardableResult
  func wait() -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }
}

/// Runs a program to its end: its standard output (read only when `output` is true; otherwise it goes to /dev/null,
/// as hyperfine's does), how long it took in nanoseconds (from just before posix_spawn to just after waitpid, as
/// hyperfine -N times a run), and its exit status (-1 when it could not start).
func runProgram(_ arguments: [String], output: Bool = false) -> (output: String, nanoseconds: Int, status: Int32) {
  let start = now()
  guard let program = try? Child(arguments, output: output) else { return ("", 0, -1) }
  let text = program.output.map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
  let status = program.wait()
  return (text, now() - start, status)
}

/// Child mode: times `command` `runs` times as the benchmark times a process, and prints each run's nanoseconds, so
/// that they can be set beside `hyperfine -N`'s.
func timeMode(runs: Int, command: [String]) -> Never {
  for _ in 0..<runs { print(runProgram(command).nanoseconds) }
  exit(0)
}

/// The latencies of the stamps a watching program prints, each line timed on arrival by a thread of its own, until
/// a negative stamp.
final class StampArrivals: Sendable {
  private let latencies = Mutex<[Double]>([])
  private let finished = DispatchSemaphore(value: 0)

  /// Reads `output`; `stamp` picks the stamp out of a line, or returns nil for a line that carries none.
  init(_ output: FileHandle, stamp: @escaping @Sendable (Substring) -> Int?) {
    Thread { [self] in
      defer { finished.signal() }
      let lines = LineReader(output)
      while let line = lines.next() {
        let arrived = now()
        guard let value = stamp(line[...]) else { continue }
        if value < 0 { return }
        latencies.withLock { $0.append(Double(arrived - value)) }
      }
    }.start()
  }

  /// Forgets what arrived so far (the warm-up).
  func clear() { latencies.withLock { $0.removeAll() } }

  /// Waits for the negative stamp, for at most 30 seconds; the latencies in nanoseconds.
  func wait() -> [Double] {
    _ = finished.wait(timeout: .now() + 30)
    return latencies.withLock { $0 }
  }
}
