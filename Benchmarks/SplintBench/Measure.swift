import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Nanoseconds on the monotonic clock, comparable between processes on one machine.
func now() -> Int {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// Times `body` `count` times after `warmup` untimed runs; durations in nanoseconds.
func sample(_ count: Int, warmup: Int = 10, _ body: () throws -> Void) rethrows -> [Double] {
  for _ in 0..<warmup { try body() }
  var durations: [Double] = []
  durations.reserveCapacity(count)
  for _ in 0..<count {
    let start = now()
    try body()
    durations.append(Double(now() - start))
  }
  return durations
}

/// Times each of `bodies` in turn, `count` rounds, after `warmup` untimed rounds: the measurements interleave, so
/// that whatever the machine does meanwhile slows every one of them alike. Durations in nanoseconds, per body.
func interleaved(_ count: Int, warmup: Int = 10, _ bodies: [() throws -> Void]) throws -> [[Double]] {
  for _ in 0..<warmup { for body in bodies { try body() } }
  var durations = Array(repeating: [Double](), count: bodies.count)
  for _ in 0..<count {
    for (index, body) in bodies.enumerated() {
      let start = now()
      try body()
      durations[index].append(Double(now() - start))
    }
  }
  return durations
}

/// For operations of a few nanoseconds: the mean of each of `batches` batches of `size` runs, per run.
func sampleBatches(_ batches: Int, of size: Int, _ body: () -> Void) -> [Double] {
  (0..<batches).map { _ in
    let start = now()
    for _ in 0..<size { body() }
    return Double(now() - start) / Double(size)
  }
}

/// A distribution's median, 99th percentile and maximum.
struct Summary {
  let count: Int
  let median: Double
  let p99: Double
  let max: Double

  init(_ values: [Double]) {
    let sorted = values.sorted()
    count = sorted.count
    func percentile(_ p: Double) -> Double {
      sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
    median = percentile(0.5)
    p99 = percentile(0.99)
    max = sorted.last ?? .nan
  }
}

/// A duration in nanoseconds, in the unit that reads best.
func format(_ nanoseconds: Double) -> String {
  switch nanoseconds {
  case ..<1_000: String(format: "%.1f ns", nanoseconds)
  case ..<1_000_000: String(format: "%.1f µs", nanoseconds / 1_000)
  case ..<1_000_000_000: String(format: "%.2f ms", nanoseconds / 1_000_000)
  default: String(format: "%.2f s", nanoseconds / 1_000_000_000)
  }
}

/// A ratio of two medians: "12.3x faster", "4.2% slower", or "3.1x slower".
func ratio(ours: Double, anchor: Double) -> String {
  switch ours / anchor {
  case ...1: String(format: "%.1fx faster", anchor / ours)
  case ..<2: String(format: "%.1f%% slower", (ours / anchor - 1) * 100)
  case let slower: String(format: "%.1fx slower", slower)
  }
}

/// This binary, for starting its child modes.
let benchBinary: String =
  (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

/// A directory for one measurement, removed afterwards.
func withScratch<T>(_ body: (URL) async throws -> T) async rethrows -> T {
  let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
  let directory = URL(fileURLWithPath: base).appendingPathComponent("splint-bench-\(UUID())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  return try await body(directory)
}

/// Waits until `path` exists, for at most 30 seconds.
func waitForFile(_ path: String) {
  let deadline = now() + 30_000_000_000
  while !FileManager.default.fileExists(atPath: path), now() < deadline { usleep(2_000) }
}

/// The resident set size of this process, in bytes.
func residentBytes() -> Int {
  let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
  let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
  return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

/// Reads lines from a pipe as they arrive.
final class LineReader {
  private let handle: FileHandle
  private var buffer = Data()

  init(_ handle: FileHandle) { self.handle = handle }

  /// The next line without its newline, or nil at the end.
  func next() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer = Data(buffer[(newline + 1)...])
        return line
      }
      let chunk = handle.availableData
      if chunk.isEmpty { return nil }
      buffer += chunk
    }
  }
}
