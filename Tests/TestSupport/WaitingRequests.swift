import Foundation

/// Requests that wait at a loopback server stopped with SIGSTOP: its port still takes connections and their bytes,
/// which the kernel holds for it, unread.
public enum WaitingRequests {
  /// How many connections to `port` on 127.0.0.1 hold request bytes the server has not read (/proc/net/tcp).
  public static func count(port: Int) -> Int {
    let table = String(decoding: wholeFile("/proc/net/tcp"), as: UTF8.self)
    return table.split(separator: "\n").dropFirst().filter { line in
      let fields = line.split(separator: " ")
      guard fields.count > 4, let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port,
        fields[3] == "01", let queued = fields[4].split(separator: ":").last
      else { return false }
      return (Int(queued, radix: 16) ?? 0) > 0
    }.count
  }

  /// Whether a request waits at `port` within `timeout`, polled every 5 ms.
  public static func arrive(at port: Int, within timeout: Duration = .seconds(10)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if count(port: port) > 0 { return true }
      try? await Task.sleep(for: .milliseconds(5))
    }
    return false
  }

  /// The bytes of `path`, read to its end: a file of /proc says its size is 0, and a reader that trusts it (as
  /// `String(contentsOfFile:)` does) gets only its first page, which leaves out most sockets of a busy machine.
  static func wholeFile(_ path: String) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = read(descriptor, &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return bytes }
      bytes += chunk[..<count]
    }
  }
}
