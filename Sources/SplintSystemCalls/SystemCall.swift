#if canImport(Glibc)
  import Glibc
#endif

/// The one place SplintSecrets and SplintSettings retry a system call a signal interrupted.
package enum SystemCall {
  /// Runs `call`, a system call that returns -1 and sets errno on failure, again while a signal interrupts it.
  ///
  /// - Parameters:
  ///   - call: The system call.
  ///   - failure: The error for the errno it failed with otherwise.
  /// - Returns: What the call returned.
  @discardableResult
  package static func retrying<T: SignedInteger, Failure: Error>(
    _ call: () -> T, orThrow failure: (Int32) -> Failure
  ) throws(Failure) -> T {
    var result = call()
    while result == -1, errno == EINTR { result = call() }
    if result == -1 { throw failure(errno) }
    return result
  }

  /// The value of the environment variable `name` now: one `getenv`, not the whole environment that
  /// `ProcessInfo.processInfo.environment` builds at every use (tens of microseconds, on a path a daemon repeats).
  package static func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  /// The whole of a small text file, such as one of procfs (which reports no size), or nil when it cannot be read.
  package static func text(of path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while let count = try? retrying(
      { chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } },
      orThrow: { SystemCallError("read", path, $0) }),
      count > 0
    {
      bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
