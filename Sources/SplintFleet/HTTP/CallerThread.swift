#if SplintFleet
  import Dispatch
  import Glibc
  import Synchronization

  /// Runs asynchronous work to its end on the thread that asks for it, which waits meanwhile: for synchronous calls
  /// (`CredentialStore`'s) whose work is written once, asynchronously, over the HTTP client's asynchronous API.
  ///
  /// The work's task prefers this executor, so every step of it runs on the waiting thread: it never needs a free
  /// thread of Swift's cooperative pool, however many synchronous calls wait at once, nor holds one while it waits
  /// for the network (the HTTP client's event loop resumes it). A pause in it sleeps the waiting thread
  /// (``pause(_:)``) rather than ask the pool's timer to wake it.
  final class CallerThread: TaskExecutor, Sendable {
    /// The work's steps, ready to run.
    private let jobs = Mutex<[UnownedJob]>([])
    /// Signalled once for each step made ready.
    private let ready = DispatchSemaphore(value: 0)

    /// Whether the current task's steps run on a waiting thread.
    @TaskLocal private static var isWaiting = false

    private init() {}

    /// `body`'s outcome, `body` run on this thread, which waits until it ends.
    static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () async throws(E) -> T) throws(E) -> T {
      let executor = CallerThread()
      let outcome = Mutex<Result<T, E>?>(nil)
      Task(executorPreference: executor) {
        let result = await $isWaiting.withValue(true) { () async -> Result<T, E> in
          do throws(E) {
            return .success(try await body())
          } catch {
            return .failure(error)
          }
        }
        outcome.withLock { $0 = result }
      }
      while true {
        executor.ready.wait()
        let ready = executor.jobs.withLock { jobs in
          defer { jobs.removeAll() }
          return jobs
        }
        for job in ready { job.runSynchronously(on: executor.asUnownedTaskExecutor()) }
        // The last step of the work sets its outcome, on this thread.
        if let result = outcome.withLock({ $0 }) { return try result.get() }
      }
    }  // coverage:ignore — the loop above is left only by its return

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      jobs.withLock { $0.append(job) }
      ready.signal()
    }

    /// Waits `duration`: by sleeping the waiting thread in ``run(_:)``, else as a task sleeps (holding no thread),
    /// which its task's cancellation ends early: the caller looks at `Task.isCancelled` afterwards.
    static func pause(_ duration: Duration) async {
      guard isWaiting else {
        try? await Task.sleep(for: duration)
        return
      }
      var interval = timespec(
        tv_sec: Int(duration.components.seconds), tv_nsec: Int(duration.components.attoseconds / 1_000_000_000))
      var remaining = timespec()
      while nanosleep(&interval, &remaining) == -1 && errno == EINTR { interval = remaining }
    }
  }
#endif
