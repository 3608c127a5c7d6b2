// Every call into libsecret, GLib and GIO lives in this file. The rest of the module speaks Swift types only:
// `[String: String]` attributes, `Data` secrets, `CredentialError` failures, and `LibSecretItem` for found items.

import CLibSecret
import Dispatch
import Foundation
import Synchronization

// MARK: - One call: a GCancellable fired by a timeout or by the waiting task

/// The cancellation of one operation against the Secret Service.
///
/// Every blocking libsecret call of the operation takes this call's `GCancellable`. ``bounded(by:_:)`` cancels it
/// when the timeout passes; a cancelled Swift task cancels it through ``interrupt(_:)``. libsecret then dismisses any
/// prompt and returns, and the error names whichever came first.
final class LibSecretCall: Sendable {
  enum Interruption: Sendable { case timedOut, cancelled }

  private struct State {
    /// Owned reference. GLib documents `g_cancellable_cancel` as safe from any thread.
    let cancellable: UnsafeMutablePointer<GCancellable>
    var interruption: Interruption?
  }

  private let state = Mutex(State(cancellable: g_cancellable_new(), interruption: nil))

  deinit {
    state.withLock { g_object_unref($0.cancellable) }
  }

  /// Stops the libsecret call in flight, if any, and makes every later one of this operation fail at once.
  func interrupt(_ reason: Interruption) {
    state.withLock { state in
      guard state.interruption == nil else { return }
      state.interruption = reason
      g_cancellable_cancel(state.cancellable)
    }
  }

  /// Why the operation was stopped, if it was.
  var interruption: Interruption? { state.withLock { $0.interruption } }

  /// Runs `body`, interrupting it with ``Interruption/timedOut`` if it is still running after `timeout`.
  func bounded<T, E: Error>(by timeout: Duration, _ body: () throws(E) -> T) throws(E) -> T {
    let entry = Watchdog.shared.watch(self, for: timeout)
    defer { Watchdog.shared.forget(entry) }
    return try body()
  }

  fileprivate var gCancellable: UnsafeMutablePointer<GCancellable> { state.withLock { $0.cancellable } }
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
    Thread { [self] in run() }.start()
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

// MARK: - The connection, with libsecret's prompt completion repaired

/// The one connection to the Secret Service that every call shares: a proxy of our own subclass of
/// `SecretService`, opened on first use and dropped by ``drop()`` when the provider has restarted.
///
/// The subclass exists for one repair. When a prompt ends without a result (its provider went away mid-prompt, or
/// sent a result of another type than asked for), libsecret's `secret_service_real_prompt_async` hands a NULL
/// error to `g_task_return_error`, which GLib refuses, so its GTask never completes: the synchronous call above it
/// (an unlock inside a lookup, say) waits forever, and no GCancellable can end it. Seen on libsecret 0.20.5
/// (Debian 12); the GSimpleAsyncResult code before it completed such a prompt. Our `prompt_async` completes the
/// task in that case too, with "still locked"; a libsecret that gets it right loses nothing by it.
enum SecretServiceConnection {
  /// One reference to a `SplintSecretService` proxy. `GDBusProxy`, and `SecretService` on top of it, may be used
  /// from any thread (libsecret shares its own default instance between threads the same way), and the pointer
  /// never changes: sharing it is safe, which the compiler cannot know of a C pointer.
  private final class Proxy: @unchecked Sendable {
    let service: UnsafeMutablePointer<SecretService>
    init(owning service: UnsafeMutablePointer<SecretService>) { self.service = service }
    deinit { g_object_unref(service) }
  }

  private static let current = Mutex<Proxy?>(nil)

  /// The shared proxy, opened (with its session) first if needed, with one reference for the caller to release.
  static func retained(call: LibSecretCall) throws(CredentialError) -> UnsafeMutablePointer<SecretService> {
    let proxy = try shared(call: call)
    g_object_ref(proxy.service)
    return proxy.service
  }

  /// Drops the shared proxy, so that the next call opens a new one, with a new session, to whichever process owns
  /// the Secret Service's bus name now. Calls still running keep the old one until they end.
  static func drop() {
    current.withLock { $0 = nil }
  }

  /// The shared proxy. Opened outside the lock, so that no call waits for another's: two threads may both open
  /// one, and the second to finish uses the first one's.
  private static func shared(call: LibSecretCall) throws(CredentialError) -> Proxy {
    if let proxy = current.withLock({ $0 }) { return proxy }
    var error: UnsafeMutablePointer<GError>?
    let opened = secret_service_open_sync(serviceType, nil, SECRET_SERVICE_OPEN_SESSION, call.gCancellable, &error)
    try LibSecret.throwIfSet(error, call: call)
    // libsecret sets an error whenever it returns NULL here.
    guard let opened else { throw .serviceUnavailable }  // coverage:ignore — NULL comes only with an error
    let proxy = Proxy(owning: opened)
    return current.withLock { current in
      if let winner = current { return winner }
      current = proxy
      return proxy
    }
  }

  /// `SplintSecretService`: `SecretService` with ``promptAsync`` and ``promptFinish`` in place of libsecret's.
  private static let serviceType: GType = {
    let parent = secret_service_get_type()
    let existing = g_type_from_name("SplintSecretService")
    // Another copy of this library in the process registered it, with these same functions.
    guard existing == 0 else { return existing }  // coverage:ignore — one copy of the library per test process
    var query = GTypeQuery()
    g_type_query(parent, &query)
    return g_type_register_static_simple(
      parent, "SplintSecretService", query.class_size,
      { typeClass, _ in
        guard let serviceClass = typeClass?.assumingMemoryBound(to: SecretServiceClass.self) else { return }
        serviceClass.pointee.prompt_async = promptAsync
        serviceClass.pointee.prompt_finish = promptFinish
      },
      query.instance_size, nil, GTypeFlags(rawValue: 0))
  }()

  /// Runs the prompt, and completes the task whatever happens: with the prompt's result, its error, or, when it
  /// ended with neither, `SECRET_ERROR_IS_LOCKED` (nothing was unlocked, created or deleted).
  private static let promptAsync:
    @convention(c) (
      UnsafeMutablePointer<SecretService>?, UnsafeMutablePointer<SecretPrompt>?, OpaquePointer?,
      UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback?, gpointer?
    ) -> Void = { service, prompt, returnType, cancellable, callback, userData in
      let task = g_task_new(service, cancellable, callback, userData)
      secret_prompt_perform(
        prompt, nil, returnType, cancellable,
        { source, result, taskPointer in
          guard let task = taskPointer.map(OpaquePointer.init) else { return }  // coverage:ignore — always set
          defer { g_object_unref(UnsafeMutableRawPointer(task)) }
          var error: UnsafeMutablePointer<GError>?
          let prompt = source.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: SecretPrompt.self) }
          if let value = secret_prompt_perform_finish(prompt, result, &error) {
            g_task_return_pointer(task, UnsafeMutableRawPointer(value)) { g_variant_unref(OpaquePointer($0)) }
          } else {
            g_task_return_error(
              task,
              error
                ?? g_error_new_literal(
                  secret_error_get_quark(), gint(SECRET_ERROR_IS_LOCKED.rawValue),
                  "The prompt ended without a result: it was dismissed, or the Secret Service went away"))
          }
        }, UnsafeMutableRawPointer(task))
    }

  /// The prompt's result (one reference, for the caller), or its error.
  private static let promptFinish:
    @convention(c) (
      UnsafeMutablePointer<SecretService>?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
    ) -> OpaquePointer? = { _, result, error in
      g_task_propagate_pointer(result, error).map(OpaquePointer.init)
    }
}

// MARK: - Items

/// A Secret Service item found by ``LibSecret/search(_:call:)``. Owns one reference to its `SecretItem` proxy.
final class LibSecretItem {
  private let item: UnsafeMutablePointer<SecretItem>

  fileprivate init(retaining item: UnsafeMutablePointer<SecretItem>) {
    self.item = item
    g_object_ref(item)
  }

  deinit { g_object_unref(item) }

  /// Whether the item's collection is locked; a locked item's secret can be neither read nor changed.
  var isLocked: Bool { secret_item_get_locked(item) != 0 }

  /// The item's attributes as its proxy loaded them. After gnome-keyring restarts with its keyring locked, these
  /// are only `gkr:compat:hashed:*` placeholders until the keyring is unlocked and the item is found again.
  var attributes: [String: String] {
    // NULL only when given an object that is not an item, which a search never returns.
    guard let table = secret_item_get_attributes(item) else { return [:] }  // coverage:ignore — never for an item
    defer { g_hash_table_unref(table) }
    return LibSecret.dictionary(from: table)
  }

  /// Replaces the item's secret; its attributes and label stay as they are.
  func setSecret(_ secret: Data, contentType: String, call: LibSecretCall) throws(CredentialError) {
    try LibSecret.withValue(secret, contentType: contentType) { value throws(CredentialError) in
      try LibSecret.check(call) { secret_item_set_secret_sync(item, value, call.gCancellable, $0) }
    }
  }

  /// Replaces the item's label.
  func setLabel(_ label: String, call: LibSecretCall) throws(CredentialError) {
    try LibSecret.check(call) { secret_item_set_label_sync(item, label, call.gCancellable, $0) }
  }

  /// Deletes the item from its collection.
  func delete(call: LibSecretCall) throws(CredentialError) {
    try LibSecret.check(call) { secret_item_delete_sync(item, call.gCancellable, $0) }
  }

  /// Asks the Secret Service to unlock `items`, which may show a prompt. Returns how many it unlocked: fewer than
  /// asked when the prompt was dismissed or could not be shown.
  static func unlock(_ items: [LibSecretItem], call: LibSecretCall) throws(CredentialError) -> Int {
    var list: UnsafeMutablePointer<GList>?
    for item in items.reversed() { list = g_list_prepend(list, item.item) }
    defer { g_list_free(list) }
    var error: UnsafeMutablePointer<GError>?
    // Through the items' own proxy (ours), never libsecret's default one, whose prompts can hang.
    let service = items.first.flatMap { secret_item_get_service($0.item) }
    let count = secret_service_unlock_sync(service, list, call.gCancellable, nil, &error)
    try LibSecret.throwIfSet(error, call: call)
    return Int(count)
  }
}

// MARK: - Operations

/// The libsecret operations `SecretServiceStore` is built from. Attributes are Swift strings that the caller has
/// validated (non-empty, no NUL), matched under the generic schema without its name.
enum LibSecret {
  /// The first unlocked secret whose item carries `attributes`, unlocking (and so perhaps prompting) if needed;
  /// nil when no unlocked item matches. The secret is copied out of libsecret's non-pageable memory, which
  /// libsecret wipes when the value is freed.
  static func lookup(_ attributes: [String: String], call: LibSecretCall) throws(CredentialError) -> Data? {
    let service = try service(call: call)
    defer { g_object_unref(service) }
    return try withAttributes(attributes) { table throws(CredentialError) -> Data? in
      var error: UnsafeMutablePointer<GError>?
      let value = secret_service_lookup_sync(service, splint_generic_schema(), table, call.gCancellable, &error)
      try throwIfSet(error, call: call)
      guard let value else { return nil }
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      var length = 0
      guard let bytes = secret_value_get(value, &length), length > 0 else { return Data() }
      return Data(bytes: bytes, count: length)
    }
  }

  /// Every item, locked or not, in every collection, whose attributes include `attributes`. Prompts for nothing.
  static func search(_ attributes: [String: String], call: LibSecretCall) throws(CredentialError) -> [LibSecretItem] {
    let service = try service(call: call)
    defer { g_object_unref(service) }
    return try withAttributes(attributes) { table throws(CredentialError) -> [LibSecretItem] in
      var error: UnsafeMutablePointer<GError>?
      let list = secret_service_search_sync(
        service, splint_generic_schema(), table, SECRET_SEARCH_ALL, call.gCancellable, &error)
      defer { g_list_free_full(list) { g_object_unref($0) } }
      try throwIfSet(error, call: call)
      var items: [LibSecretItem] = []
      var node = list
      while let current = node {
        if let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) {
          items.append(LibSecretItem(retaining: item))
        }
        node = current.pointee.next
      }
      return items
    }
  }

  /// Creates an item with `attributes` (and the schema name) in the default collection, or replaces the secret of
  /// the one there that carries the same attributes.
  ///
  /// - Throws: `noDefaultCollection` when the store failed and the Secret Service has no default collection
  ///   (gnome-keyring without a login keyring says only "Object does not exist at path …/collection/login").
  static func store(
    _ secret: Data, contentType: String, attributes: [String: String], label: String, call: LibSecretCall
  ) throws(CredentialError) {
    let service = try service(call: call)
    defer { g_object_unref(service) }
    try withAttributes(attributes) { table throws(CredentialError) in
      try withValue(secret, contentType: contentType) { value throws(CredentialError) in
        do throws(CredentialError) {
          try check(call) {
            secret_service_store_sync(service, splint_generic_schema(), table, nil, label, value, call.gCancellable, $0)
          }
        } catch let failure {
          if case .backend = failure, try defaultCollection(service, call: call) == nil { throw .noDefaultCollection }
          throw failure
        }
      }
    }
  }

  /// Returns when secrets can be stored now; otherwise throws what stands in the way. Writes nothing and prompts
  /// for nothing.
  static func checkAvailability(call: LibSecretCall) throws(CredentialError) {
    let service = try service(call: call)
    defer { g_object_unref(service) }
    guard let collection = try defaultCollection(service, call: call) else { throw .noDefaultCollection }
    defer { g_object_unref(collection) }
    if secret_collection_get_locked(collection) != 0 { throw .locked }
  }

  /// Whether `error` can mean that the provider restarted since the shared proxy was opened. The proxy keeps
  /// sending to the unique bus name of the process that is gone ("The name :1.0 was not provided by any
  /// .service files"), which reads as `serviceUnavailable` until the proxy is dropped.
  static func isStaleConnection(_ error: CredentialError) -> Bool {
    error == .serviceUnavailable
  }

  /// Drops the shared connection to the Secret Service, so that the next call opens a new one with a new session.
  /// Needed after the provider restarts: the proxy and session belong to the process that is gone.
  static func disconnect() {
    SecretServiceConnection.drop()
  }

  // MARK: Helpers

  /// Fails with `noSessionBus` when there is no session bus, before libsecret would try (and log) anything.
  /// GLib keeps the connection once made, so this is a lookup on every call after the first. The connection is
  /// told not to exit the process when the bus goes away, which GLib's default would do to a long-running daemon.
  private static func connectedBus(call: LibSecretCall) throws(CredentialError) {
    var error: UnsafeMutablePointer<GError>?
    guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, call.gCancellable, &error) else {
      g_error_free(error)
      throw .noSessionBus
    }
    g_dbus_connection_set_exit_on_close(bus, 0)
    g_object_unref(UnsafeMutableRawPointer(bus))
  }

  /// The shared Secret Service proxy (see ``SecretServiceConnection``), with one reference for the caller to
  /// release, after checking that there is a session bus.
  private static func service(call: LibSecretCall) throws(CredentialError) -> UnsafeMutablePointer<SecretService> {
    try connectedBus(call: call)
    return try SecretServiceConnection.retained(call: call)
  }

  /// The collection the `default` alias points to (one reference, for the caller to release), or nil when the
  /// Secret Service has none.
  private static func defaultCollection(
    _ service: UnsafeMutablePointer<SecretService>, call: LibSecretCall
  ) throws(CredentialError) -> UnsafeMutablePointer<SecretCollection>? {
    var error: UnsafeMutablePointer<GError>?
    let collection = secret_collection_for_alias_sync(
      service, "default", SECRET_COLLECTION_NONE, call.gCancellable, &error)
    try throwIfSet(error, call: call)
    return collection
  }

  /// Runs a libsecret call that returns FALSE on failure and throws the GError it set. (libsecret returns FALSE
  /// without a GError only for arguments it rejects, which `Credential` has already ruled out.)
  fileprivate static func check(
    _ call: LibSecretCall, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> gboolean
  ) throws(CredentialError) {
    var error: UnsafeMutablePointer<GError>?
    _ = body(&error)
    try throwIfSet(error, call: call)
  }

  /// Throws the GError a libsecret call set, converted, and frees it; returns when none was set. An interruption
  /// of `call` (its timeout, its task's cancellation) wins over the error the interrupted call reported.
  fileprivate static func throwIfSet(
    _ error: UnsafeMutablePointer<GError>?, call: LibSecretCall
  ) throws(CredentialError) {
    guard let error else { return }
    defer { g_error_free(error) }
    switch call.interruption {
    case .timedOut: throw .timedOut
    case .cancelled: throw .cancelled
    case nil:
      let domain = String(cString: g_quark_to_string(error.pointee.domain))
      let message = error.pointee.message.map { String(cString: $0) } ?? ""
      throw CredentialError(domain: domain, code: Int(error.pointee.code), message: message)
    }
  }

  /// Runs `body` with a new GHashTable holding copies of `attributes`.
  private static func withAttributes<T, E: Error>(
    _ attributes: [String: String], _ body: (OpaquePointer) throws(E) -> T
  ) throws(E) -> T {
    let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
    defer { g_hash_table_unref(table) }
    for (name, value) in attributes {
      g_hash_table_insert(table, g_strdup(name), g_strdup(value))
    }
    return try body(table)
  }

  /// Runs `body` with a SecretValue holding a copy of `secret` in libsecret's non-pageable memory, which libsecret
  /// wipes when the value is freed.
  fileprivate static func withValue<T, E: Error>(
    _ secret: Data, contentType: String, _ body: (OpaquePointer) throws(E) -> T
  ) throws(E) -> T {
    let value = secret.withUnsafeBytes { bytes in
      // An empty Data may have no base address; libsecret takes NULL for an empty secret.
      secret_value_new(bytes.baseAddress?.assumingMemoryBound(to: gchar.self), bytes.count, contentType)!
    }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    return try body(value)
  }

  fileprivate static func dictionary(from table: OpaquePointer) -> [String: String] {
    var result: [String: String] = [:]
    var iterator = GHashTableIter()
    g_hash_table_iter_init(&iterator, table)
    var key: gpointer?
    var value: gpointer?
    while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
      guard let key, let value else { continue }  // coverage:ignore — attribute tables never hold NULL strings
      result[String(cString: key.assumingMemoryBound(to: CChar.self))] =
        String(cString: value.assumingMemoryBound(to: CChar.self))
    }
    return result
  }
}

// MARK: - Errors

extension CredentialError {
  /// Classifies a GError by its domain name and code. Anything not named here stays a `backend` error with
  /// libsecret's own words, which never contain a secret.
  init(domain: String, code: Int, message: String) {
    let dbus = "g-dbus-error-quark"
    let io = "g-io-error-quark"
    let spawnErrors = Int(G_DBUS_ERROR_SPAWN_EXEC_FAILED.rawValue)...Int(G_DBUS_ERROR_SPAWN_NO_MEMORY.rawValue)
    switch (domain, code) {
    case ("secret-error", Int(SECRET_ERROR_IS_LOCKED.rawValue)):
      self = .locked
    // NO_REPLY: the provider went away in the middle of the call (it crashed, or was killed).
    case (dbus, Int(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue)), (dbus, Int(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue)),
      (dbus, Int(G_DBUS_ERROR_NO_REPLY.rawValue)), (dbus, spawnErrors):
      self = .serviceUnavailable
    case (dbus, Int(G_DBUS_ERROR_TIMEOUT.rawValue)), (dbus, Int(G_DBUS_ERROR_TIMED_OUT.rawValue)),
      (io, Int(G_IO_ERROR_TIMED_OUT.rawValue)):
      self = .timedOut
    case (io, Int(G_IO_ERROR_CANCELLED.rawValue)):
      self = .cancelled
    default:
      self = .backend(domain: domain, code: code, message: message)
    }
  }
}
