// Only where swift-testing is: a release build with the Swift runtime linked in (script/torture's and script/leaks',
// made as the installed splintctl is) has no Testing module, and its programs use none of this.
#if canImport(Testing)
  import Synchronization
  public import Testing

  /// A trait for tests that start servers (etcd clusters, OpenBao): at most ``limit`` such tests run at once, in a
  /// run where every other test runs beside them.
  ///
  /// swift-testing starts every test of a run at once. The fleet's tests start Go servers (a 180 MB `bao` a start, three
  /// etcd members with 50 ms heartbeats) and `bao` commands; all of them together, beside the rest of the suite,
  /// loaded two cores to a load average of 35, and tests that wait for a change within seconds (a watch, a timeout
  /// of another process) failed for want of a core, theirs and the servers' alike. Each test holds one slot for its
  /// whole run, so no test waits for a slot while it holds one.
  public struct ServerTests: SuiteTrait, TestTrait, TestScoping {
    /// How many such tests run at once.
    public static let limit = 3

    private static let slots = Slots(limit)

    /// Given to a suite, the trait is every test's in it.
    public var isRecursive: Bool { true }

    /// A slot for each test case, none for its suite as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
      testCase == nil ? nil : self
    }

    /// Runs the test once a slot is free, and frees it after.
    public func provideScope(
      for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
      await Self.slots.acquire()
      defer { Self.slots.release() }
      // The servers the test starts keep their logs where the run's output names them.
      try await ServerLogs.$directory.withValue(ServerLogs.directory(forTest: test.displayName ?? test.name)) {
        try await function()
      }
    }
  }

  extension Trait where Self == ServerTests {
    /// The test, or every test of the suite, starts servers: see ``ServerTests``.
    public static var startsServers: Self { ServerTests() }
  }

  /// A counting semaphore for tasks: ``acquire()`` suspends (never blocks a thread) until a slot is free.
  private final class Slots: Sendable {
    private struct State {
      var free: Int
      var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
      state = Mutex(State(free: count))
    }

    func acquire() async {
      await withCheckedContinuation { (slot: CheckedContinuation<Void, Never>) in
        let now = state.withLock { state in
          guard state.free > 0 else {
            state.waiting.append(slot)
            return false
          }
          state.free -= 1
          return true
        }
        if now { slot.resume() }
      }
    }

    func release() {
      let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
        guard !state.waiting.isEmpty else {
          state.free += 1
          return nil
        }
        return state.waiting.removeFirst()
      }
      next?.resume()
    }
  }
#endif
