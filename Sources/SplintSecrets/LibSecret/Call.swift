// One operation against the Secret Service: the GCancellable its D-Bus calls take, fired by its timeout (through
// one watchdog thread for every call in the process) or by the task waiting for it.

import CLibSecretLoader
import Dispatch
import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The cancellation of one operation against the Secret Service.
///
/// Every D-Bus call of the operation takes this call's `GCancellable`. ``bounded(by:_:)`` cancels it when the
/// timeout passes; a cancelled Swift task cancels it through ``interrupt(_:)``. A prompt the operation waits for is
/// woken and dismissed, and the error names whichever came first.
final class LibSecretCall: Sendable {
  enum Interruption: Sendable { case timedOut, cancelled }

  private struct State: ~Copyable {
    /// GLib documents `g_cancellable_cancel` as safe from any thread.
    let cancellable: GObjectReference
    var interruption: Interruption?
    /// The address of the `GMainContext` a prompt of this call is waiting on, to wake when the call is
    /// interrupted. An address, not a pointer, because a pointer may not cross into the lock (it is not
    /// `Sendable`); ``waking(_:_:)`` keeps the context alive while it is set.
    var waiting: UInt?
  }

  private let state: Mutex<State>

  /// A call for a new operation, once libsecret is loaded (see ``LibSecretLibrary``).
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when libsecret cannot be loaded.
  static func start() throws(CredentialError) -> LibSecretCall {
    try LibSecretLibrary.load()
    return LibSecretCall()
  }

  /// A call; libsecret must be loadable (``start()`` checks that first).
  init() {
    let cancellable = GObjectReference(taking: allocated(glib.g_cancellable_new()))
    state = Mutex(State(cancellable: cancellable, interruption: nil, waiting: nil))
  }

  /// Stops the D-Bus call in flight, if any, wakes a prompt that waits, and makes every later call of this
  /// operation fail at once.
  func interrupt(_ reason: Interruption) {
    state.withLock { state in
      guard state.interruption == nil else { return }
      state.interruption = reason
      glib.g_cancellable_cancel(state.cancellable.pointer)
      if let waiting = state.waiting { glib.g_main_context_wakeup(OpaquePointer(bitPattern: waiting)) }
    }
  }

  /// Why the operation was stopped, if it was.
  var interruption: Interruption? { state.withLock { $0.interruption } }

  /// Runs `body` with a new call, on a thread of its own (a call that blocks holds none of Swift's cooperative
  /// threads), and interrupts it with ``Interruption/cancelled`` when the waiting task is cancelled.
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when libsecret cannot be loaded, and what `body`
  ///   throws.
  static func detached<T: Sendable>(
    _ body: @escaping @Sendable (LibSecretCall) throws(CredentialError) -> T
  ) async throws(CredentialError) -> T {
    let call = try start()
    let result = await withTaskCancellationHandler {
      await offloadResult { () throws(CredentialError) -> T in try body(call) }
    } onCancel: {
      call.interrupt(.cancelled)
    }
    return try result.get()
  }

  /// Runs `body`, interrupting it with ``Interruption/timedOut`` if it is still running after `timeout`.
  func bounded<T, E: Error>(by timeout: Duration, _ body: () throws(E) -> T) throws(E) -> T {
    let entry = Watchdog.shared.watch(self, for: timeout)
    defer { Watchdog.shared.forget(entry) }
    return try body()
  }

  /// Runs `body` (which waits on `context`) so that an interruption wakes `context`.
  func waking<T, E: Error>(_ context: borrowing MainContext, _ body: () throws(E) -> T) throws(E) -> T {
    let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context.raw)))
    state.withLock { $0.waiting = address }
    defer { state.withLock { $0.waiting = nil } }
    return try body()
  }

  /// The cancellable for the D-Bus calls of this operation; it lives as long as the call.
  var gCancellable: OpaquePointer { state.withLock { $0.cancellable.pointer } }
}

/// One thread that interrupts calls still running at their deadline.
///
/// Watching a call costs a lock and an insertion, and forgetting it a removal: the thread sleeps until the earliest
/// deadline and is woken only when a call comes with an earlier one. With the same timeout for every call, that is
/// once when calls start after a quiet spell, not once per call (a timer source per call cost about 0.2 ms of wall
/// time each here, on top of a 3 ms lookup).
final class Watchdog: Sendable {
  static let shared = Watchdog()

  private struct Entry {
    let deadline: UInt64
    weak var call: LibSecretCall?
  }

  private struct State {
    var entries: [UInt64: Entry] = [:]
    var nextID: UInt64 = 0
    /// When the thread will wake next; `.max` while it waits for work.
    var sleepingUntil = UInt64.max
  }

  private let state = Mutex(State())
  private let wakeUp = DispatchSemaphore(value: 0)

  private init() {
    DetachedThread.start { [self] in run() }
  }

  /// Interrupts `call` with ``LibSecretCall/Interruption/timedOut`` unless it is forgotten within `timeout`.
  func watch(_ call: LibSecretCall, for timeout: Duration) -> UInt64 {
    let span = UInt64(min(max(timeout / .nanoseconds(1), 0), Double(UInt64.max / 4)))
    let deadline = DispatchTime.now().uptimeNanoseconds + span
    let (id, earlier) = state.withLock { state in
      state.nextID += 1
      state.entries[state.nextID] = Entry(deadline: deadline, call: call)
      return (state.nextID, deadline < state.sleepingUntil)
    }
    if earlier { wakeUp.signal() }
    return id
  }

  /// Stops watching the call `watch` returned `id` for.
  func forget(_ id: UInt64) {
    state.withLock { _ = $0.entries.removeValue(forKey: id) }
  }

  private func run() -> Never {
    while true {
      let now = DispatchTime.now().uptimeNanoseconds
      let (expired, next) = state.withLock { state in
        let expired = state.entries.filter { $0.value.deadline <= now }
        for id in expired.keys { state.entries[id] = nil }
        state.sleepingUntil = state.entries.values.map(\.deadline).min() ?? .max
        return (expired.values.compactMap(\.call), state.sleepingUntil)
      }
      for call in expired { call.interrupt(.timedOut) }
      if next == .max {
        wakeUp.wait()
      } else {
        _ = wakeUp.wait(timeout: DispatchTime(uptimeNanoseconds: next))
      }
    }
  }
}
