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
}
