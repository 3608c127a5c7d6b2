#if canImport(Glibc)
  import Glibc
#endif

/// Threads of our own, without Foundation's `Thread` (which would bring all of Foundation, ICU included, into every
/// program that links these libraries).
package enum DetachedThread {
  /// What a new thread runs, handed to it through `pthread_create`'s one pointer.
  private final class Work {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// Runs `body` on a new thread of its own, which ends when `body` returns, as `Thread { body() }.start()` did.
  package static func start(_ body: @escaping @Sendable () -> Void) {
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let result = pthread_create(
      &thread, &attributes,
      { work in
        Unmanaged<Work>.fromOpaque(work!).takeRetainedValue().body()
        return nil
      }, work)
    // Only when the system is out of threads or memory, where Foundation's Thread traps too.
    precondition(result == 0, "pthread_create failed: \(String(cString: strerror(result)))")
  }
}
