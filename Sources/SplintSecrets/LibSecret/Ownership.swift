// The owners of everything SplintSecrets holds from GLib and libsecret. Each owner holds one reference, releases it
// exactly once when it ends, and cannot be copied, so a leak or a double release cannot be written at a call site:
// call sites borrow the pointer for the length of a C call and never pair a reference with a release themselves.
// This file is the only place in SplintSecrets that releases a GLib or libsecret reference.

import CLibSecretLoader
import Glibc

#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// One reference to a GObject (a `GCancellable`, a `GDBusConnection`, a `GAsyncResult`), which Swift sees as an
/// `OpaquePointer`.
struct GObjectReference: ~Copyable {
  let pointer: OpaquePointer

  /// Takes over a reference the caller was given ("transfer full").
  init(taking pointer: OpaquePointer) { self.pointer = pointer }

  deinit { glib.g_object_unref(UnsafeMutableRawPointer(pointer)) }
}

/// libsecret's proxy for the Secret Service, and the context its signal subscriptions were made on (see
/// ``MainContext``): the proxy goes first, and then its context is drained of the notices its going queued.
struct ServiceProxyReference: ~Copyable {
  let pointer: OpaquePointer
  let context: MainContext

  /// Takes over `pointer`, and keeps the provider's signals (CollectionCreated, CollectionChanged,
  /// CollectionDeleted) from libsecret's handler: that handler updates the proxy's cached list of collections,
  /// which nothing here reads, and in libsecret before 0.21.5 it dereferences that list when the proxy has none
  /// cached (a provider still starting, or one that restarted), which crashes the process.
  init(taking pointer: OpaquePointer, on context: consuming MainContext) {
    self.pointer = pointer
    self.context = context
    // libsecret handles "g-signal" in the class handler, which runs after this one and is skipped when it stops
    // the emission. Connected for the proxy's life.
    _ = glib.g_signal_connect_data(
      UnsafeMutableRawPointer(pointer), "g-signal", unsafeBitCast(stopSignal, to: SplintGCallback.self), nil, nil, 0)
  }

  // `context` ends after this body, and drains itself as it does.
  deinit { glib.g_object_unref(UnsafeMutableRawPointer(pointer)) }

  /// The proxy as the `GDBusProxy` a `SecretService` is (its first ancestor: the same pointer).
  var dbusProxy: OpaquePointer { pointer }
}

/// A "g-signal" handler (proxy, sender, signal name, parameters, data) that ends the emission there.
private typealias SignalHandlerFunction =
  @convention(c) (
    UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?
  ) -> Void
private let stopSignal: SignalHandlerFunction = { proxy, _, _, _, _ in
  glib.g_signal_stop_emission_by_name(proxy, "g-signal")
}

extension String {
  /// The text of a string GLib allocated for the caller, which is freed.
  init?(takingGString pointer: UnsafeMutablePointer<CChar>?) {
    guard let pointer else { return nil }
    defer { glib.g_free(pointer) }
    self.init(cString: pointer)
  }
}

/// One reference to a `GVariant`, never floating: a value built here is sunk at once, so containers and D-Bus calls
/// it is passed to take references of their own.
struct Variant: ~Copyable {
  let raw: OpaquePointer

  /// Takes over a reference the caller was given ("transfer full"), as D-Bus replies and children are.
  init(taking raw: OpaquePointer) { self.raw = raw }

  /// Takes over a reference the caller was given, if it was given one.
  init?(takingIfSet raw: OpaquePointer?) {
    guard let raw else { return nil }
    self.raw = raw
  }

  /// Takes a reference of its own to a value the caller only borrows (a signal's parameters).
  init(retaining raw: OpaquePointer) { self.raw = glib.g_variant_ref(raw) }

  /// Owns a newly built value: sinks its floating reference (or takes one more if it was not floating).
  init(sinking raw: OpaquePointer) { self.raw = glib.g_variant_ref_sink(raw) }

  deinit { glib.g_variant_unref(raw) }
}

/// A `GVariantBuilder` for an array, released when it ends; ``Variant/array(of:_:)`` hands it out.
struct ArrayBuilder: ~Copyable {
  private let raw: OpaquePointer

  init(type: String) {
    // g_variant_builder_new copies the type.
    raw = allocated(type.withCString { glib.g_variant_builder_new(OpaquePointer($0)) })
  }

  deinit { glib.g_variant_builder_unref(raw) }

  /// Appends `element`, which must have the array's element type; the array takes a reference of its own.
  func append(_ element: borrowing Variant) { glib.g_variant_builder_add_value(raw, element.raw) }

  /// The array built so far.
  consuming func end() -> Variant { Variant(sinking: glib.g_variant_builder_end(raw)) }
}

/// One reference to a libsecret `SecretValue`, whose bytes live in non-pageable memory that libsecret wipes when
/// the last reference goes.
struct SecretValueReference: ~Copyable {
  let raw: OpaquePointer

  init(taking raw: OpaquePointer) { self.raw = raw }

  /// A `SecretValue` holding a copy of `bytes`, with `contentType`.
  init(copying bytes: Data, contentType: String) {
    // An empty Data may have no base address; libsecret takes NULL for an empty secret.
    raw = allocated(
      bytes.withUnsafeBytes {
        glib.secret_value_new($0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, contentType)
      })
  }

  deinit { glib.secret_value_unref(UnsafeMutableRawPointer(raw)) }

  /// A copy of the secret's bytes that wipes itself when its last copy is freed (see ``Data/wiping(_:)``).
  var bytes: Data {
    var length = 0
    let bytes = glib.secret_value_get(raw, &length)
    return Data.wiping(UnsafeRawBufferPointer(start: bytes, count: length))
  }
}

/// A `GError` a call set, freed once it has been read.
struct GErrorReference: ~Copyable {
  let pointer: UnsafeMutablePointer<SplintGError>

  init(taking pointer: UnsafeMutablePointer<SplintGError>) { self.pointer = pointer }

  deinit { glib.g_error_free(pointer) }
}

/// What a GLib constructor returned. They abort rather than return NULL (g_malloc does), but Swift sees their results
/// as optional.
func allocated<T>(_ value: T?) -> T {
  guard let value else { fatalError("a GLib constructor returned NULL") }  // coverage:ignore — GLib aborts first
  return value
}

/// A `GMainContext` of our own, on which GIO dispatches the callbacks of what was started while it was the
/// thread's default: asynchronous calls, signal subscriptions, and the notices that a subscription has ended.
///
/// GLib delivers each of those as a source attached to the context, so a context that is no longer iterated keeps
/// them forever. That is the leak of libsecret 0.20.5's synchronous API: each call runs on a context of its own,
/// and the proxies it returns subscribe to signals on it, so releasing them later queues an "unsubscribed" notice
/// that nothing ever runs (about 1 KB per item or collection proxy). Ours are drained before they go.
struct MainContext: ~Copyable {
  let raw: OpaquePointer

  init() { raw = allocated(glib.g_main_context_new()) }

  deinit {
    drain()
    glib.g_main_context_unref(raw)
  }

  /// Dispatches everything already queued on the context, without waiting. Returns at once when another thread is
  /// iterating it.
  func drain() {
    while glib.g_main_context_iteration(raw, 0) != 0 {}
  }

  /// Dispatches what is queued on the context, waiting for the next thing if nothing is.
  func iterate() {
    _ = glib.g_main_context_iteration(raw, 1)
  }

  /// Runs `body` with this context as the calling thread's default, so that what `body` starts reports here.
  func asThreadDefault<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    glib.g_main_context_push_thread_default(raw)
    defer { glib.g_main_context_pop_thread_default(raw) }
    return try body()
  }

  /// Starts an asynchronous GIO call with this context as the thread's default and iterates the context until the
  /// call completes, then hands its result to `finish` (the call's `_finish` function).
  ///
  /// - Parameter start: Starts the call, given the callback and the callback's data to pass it.
  func complete<T>(
    _ start: (SplintGAsyncReadyCallback, UnsafeMutableRawPointer) -> Void, finish: (OpaquePointer) -> T
  ) -> T {
    let slot = AsyncResultSlot()
    return asThreadDefault {
      start(
        { _, result, data in
          guard let data, let result else { return }  // coverage:ignore — GIO always passes both
          // The result is GIO's until this callback returns; the slot keeps a reference of its own.
          Unmanaged<AsyncResultSlot>.fromOpaque(data).takeRetainedValue().result = glib.g_object_ref(
            UnsafeMutableRawPointer(result)
          ).map(OpaquePointer.init)
        }, Unmanaged.passRetained(slot).toOpaque())
      while slot.result == nil { iterate() }
      guard let raw = slot.result else { preconditionFailure() }  // coverage:ignore — the loop above waits for it
      let result = GObjectReference(taking: raw)
      return finish(result.pointer)
    }
  }
}

/// Where ``MainContext/complete(_:finish:)``'s callback leaves the call's result, with one reference. Only the
/// thread iterating the context touches it.
private final class AsyncResultSlot {
  var result: OpaquePointer?
}

/// A subscription to a D-Bus signal, which ends when its owner does.
///
/// GDBus tells the end of a subscription by queueing its `user_data_free_func` on the context that was the
/// thread's default when it began, so the owner of that ``MainContext`` must drain it after this ends.
struct SignalSubscription: ~Copyable {
  private let connection: OpaquePointer
  private let id: UInt32

  /// Subscribes `handler` to the signals that match; `handler` runs on the thread's default context. `connection`
  /// must outlive the subscription.
  init(
    on connection: OpaquePointer, sender: String, interface: String, member: String, path: String,
    arg0: String? = nil, handler: @escaping (OpaquePointer) -> Void
  ) {
    self.connection = connection
    id = glib.g_dbus_connection_signal_subscribe(
      connection, sender, interface, member, path, arg0, SPLINT_G_DBUS_SIGNAL_FLAGS_NONE,
      { _, _, _, _, _, parameters, data in
        guard let data, let parameters else { return }  // coverage:ignore — GDBus always passes both
        Unmanaged<SignalHandler>.fromOpaque(data).takeUnretainedValue().handle(parameters)
      }, Unmanaged.passRetained(SignalHandler(handler)).toOpaque(),
      { data in
        guard let data else { return }  // coverage:ignore — the data given above is never NULL
        Unmanaged<SignalHandler>.fromOpaque(data).release()
      })
  }

  deinit { glib.g_dbus_connection_signal_unsubscribe(connection, id) }
}

/// The Swift closure a ``SignalSubscription`` calls, kept alive by GDBus until the subscription's end is dispatched.
private final class SignalHandler {
  let handle: (OpaquePointer) -> Void
  init(_ handle: @escaping (OpaquePointer) -> Void) { self.handle = handle }
}

extension Data {
  /// The UTF-8 bytes of `text`, in a `Data` whose storage is zeroed before it is freed (see ``wiping(_:)``): the
  /// copy `Credential.save(_:)` makes of the caller's text.
  package static func wiping(utf8 text: String) -> Data {
    var text = text
    return text.withUTF8 { wiping(UnsafeRawBufferPointer($0)) }
  }

  /// A copy of `bytes` whose storage is zeroed before it is freed, so that a secret does not outlive the last
  /// `Data` that holds it in freed heap memory (and so in a core dump). A copy the caller makes is the caller's.
  package static func wiping(_ bytes: UnsafeRawBufferPointer) -> Data {
    guard let source = bytes.baseAddress, bytes.count > 0 else { return Data() }
    let storage = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
    storage.copyMemory(from: source, byteCount: bytes.count)
    return Data(
      bytesNoCopy: storage, count: bytes.count,
      deallocator: .custom { pointer, count in
        // explicit_bzero: a store the optimizer may not drop because the memory is freed right after.
        explicit_bzero(pointer, count)
        pointer.deallocate()
      })
  }
}
