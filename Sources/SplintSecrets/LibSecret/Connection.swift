// The connection to the Secret Service that every operation shares: libsecret's proxy with its encrypted session,
// and the D-Bus method calls the operations are made of.

import CLibSecretLoader
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Secret Service as one process that owns `org.freedesktop.secrets` sees it: libsecret's proxy, with the
/// session libsecret negotiated (its key exchange, and the encoding of secrets for it), and that process's unique
/// bus name, to which every call goes.
///
/// Operations speak the Secret Service's D-Bus API through ``callMethod(_:on:of:_:returning:call:)`` rather than
/// libsecret's item and collection functions. Those leak in libsecret 0.20.5 (Debian 12): `secret_service_lookup`
/// and `secret_service_get_secret_for_dbus_path` never release the GetSecrets reply, encrypted secret and all
/// (fixed upstream in 0.21.2), and every item, collection and prompt proxy the synchronous functions return leaves
/// its signal subscriptions' end on a main context nobody iterates again (see ``MainContext``). Here each reply is
/// an owned ``Variant``, and the one context in use, the proxy's, is drained after every operation.
///
/// When the provider restarts, the unique name is gone and every call fails with ``CredentialError/serviceUnavailable``;
/// ``close()`` then lets the next operation open a new connection to the process that owns the name now (D-Bus
/// starts one when none does).
final class SecretServiceConnection: @unchecked Sendable {
  // Unchecked: everything here but the Mutex is set once in `init`. GDBus proxies and connections may be used from
  // any thread (libsecret shares its default proxy the same way), and the context is only iterated through
  // g_main_context_iteration, which takes the context for itself or returns. The compiler cannot know that of C
  // pointers.
  private let proxy: ServiceProxyReference
  /// The unique bus name (":1.42") of the process that owned `org.freedesktop.secrets` when this connected.
  let owner: String
  /// ``keepsItemChanges(call:)``'s answer, once asked.
  private let keepsChanges = Mutex<Bool?>(nil)

  private init(proxy: consuming ServiceProxyReference, owner: String) {
    self.proxy = proxy
    self.owner = owner
  }

  /// Whether a SetSecret or a new label is kept for good. oo7-daemon (read at its commit 439bee2) changes the item
  /// only in memory, never in its keyring file, so that the next start of the daemon brings back the old secret;
  /// only a create or a delete is written there. Asked of the bus the first time a save needs it (a read never
  /// does: one round trip less before a read's answer).
  func keepsItemChanges(call: LibSecretCall) throws(CredentialError) -> Bool {
    if let known = keepsChanges.withLock({ $0 }) { return known }
    let keeps = try Self.program(owning: owner, on: bus, call: call) != "oo7-daemon"
    keepsChanges.withLock { $0 = keeps }
    return keeps
  }

  private static let current = Mutex<SecretServiceConnection?>(nil)

  /// The shared connection, opened first if there is none. Opened outside the lock, so that no call waits for
  /// another's: two threads may both open one, and the second to finish uses the first one's.
  static func shared(call: LibSecretCall) throws(CredentialError) -> SecretServiceConnection {
    if let connection = current.withLock({ $0 }) { return connection }
    let opened: SecretServiceConnection
    do throws(CredentialError) {
      opened = try open(call: call)
    } catch  where error.code == .backend {
      // The provider refused the session libsecret offered: KWallet before 6.25 (KDE bug 514194) refuses a DH key
      // shorter than 128 bytes, which libsecret sends about once in 256 sessions. A new session has a new key.
      opened = try open(call: call)
    }
    return current.withLock { current in
      if let winner = current { return winner }
      current = opened
      return opened
    }
  }

  /// Stops sharing this connection, so that the next operation opens a new one. Operations still running keep it
  /// until they end; a connection another thread has already opened in its place stays.
  func close() {
    Self.current.withLock { if $0 === self { $0 = nil } }
  }

  /// Runs what the proxy's signal subscriptions queued (the provider's own signals, a change of the name's owner),
  /// so that nothing piles up on its context between operations. Returns at once when another thread is at it.
  func dispatchPending() {
    proxy.context.drain()
  }

  // MARK: Opening

  private static func open(call: LibSecretCall) throws(CredentialError) -> SecretServiceConnection {
    // Held until the proxy has its own reference: GLib keeps the shared session bus only while someone holds it,
    // and libsecret, which asks GLib for it again, would otherwise connect, authenticate and say Hello anew on a
    // connection without our exit-on-close setting.
    let bus = try sessionBus(call: call)
    // Registers the Secret Service's error names (org.freedesktop.Secret.Error.IsLocked, ...) as libsecret's error
    // domain, so that errors the provider sends arrive with a code, not only a name.
    _ = glib.secret_error_get_quark()
    let context = MainContext()
    // On our own context, so that the proxy's signal subscriptions (the owner of its name, its properties) report
    // where we drain; libsecret's synchronous open would leave them on a context of its own that nobody iterates.
    let opened = try call.checking { error in
      context.complete(
        { callback, data in
          glib.secret_service_open(
            glib.secret_service_get_type(), nil, SPLINT_SECRET_SERVICE_OPEN_SESSION, call.gCancellable, callback, data)
        }, finish: { result in glib.secret_service_open_finish(result, error) })
    }
    // libsecret sets an error whenever it returns NULL here.
    guard let opened else { throw .serviceUnavailable }  // coverage:ignore — never NULL without error
    let proxy = ServiceProxyReference(taking: opened, on: context)
    _ = consume bus  // the proxy holds the connection now
    // libsecret settles for the plain algorithm when the provider answers the key exchange with NotSupported: every
    // secret would then cross the session bus as it is, readable by whatever watches the bus (dbus-monitor, a
    // proxy). Refused, before any secret is sent, rather than done without a word.
    if glib.secret_service_get_session_algorithms(proxy.pointer).map({ String(cString: $0) }) == "plain" {
      throw Self.plainSession
    }
    let name = glib.g_dbus_proxy_get_name_owner(proxy.dbusProxy)
    // The session was just opened with the owner, so there is one.
    guard let owner = String(takingGString: name) else { throw .serviceUnavailable }  // coverage:ignore — it answered
    return SecretServiceConnection(proxy: proxy, owner: owner)
  }

  /// The name of the program (its `/proc/PID/comm`) whose connection is `owner`, or nil when `/proc` does not tell
  /// (another PID namespace, as in a Flatpak sandbox). Every bus daemon answers the question; an interruption ends
  /// it as it ends any call.
  private static func program(
    owning owner: String, on bus: OpaquePointer, call: LibSecretCall
  ) throws(CredentialError) -> String? {
    let parameters = Variant.tuple(.string(owner))
    let reply = try call.checking { error in
      Variant(
        takingIfSet: "(u)".withCString { type in
          glib.g_dbus_connection_call_sync(
            bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "GetConnectionUnixProcessID", parameters.raw, OpaquePointer(type), SPLINT_G_DBUS_CALL_FLAGS_NONE, -1,
            call.gCancellable, error)
        })
    }
    guard let reply else { return nil }  // coverage:ignore — GDBus sets an error instead
    let name = try? String(contentsOfFile: "/proc/\(reply.child(0).unsigned32)/comm", encoding: .utf8)
    return name?.split(separator: "\n").first.map(String.init)
  }

  /// Why a provider that offers only the plain session algorithm is not used.
  static let plainSession = CredentialError.storeUnavailable(
    store: "Secret Service",
    reason: """
      the provider offers no encrypted session (only the "plain" algorithm, not \
      dh-ietf1024-sha256-aes128-cbc-pkcs7), so secrets would cross the session bus unencrypted, for anything that \
      watches the bus to read; they are not sent. Use a provider that encrypts the session: gnome-keyring, \
      KeePassXC, KWallet and oo7 do.
      """)

  /// GLib's shared connection to the session bus, which libsecret opens the service on. Fails with `noSessionBus`
  /// when there is no session bus, before libsecret would try (and log) anything. The connection is told not to
  /// exit the process when the bus goes away, which GLib's default would do to a long-running daemon.
  static func sessionBus(call: LibSecretCall) throws(CredentialError) -> GObjectReference {
    do throws(CredentialError) {
      let raw = try call.checking { glib.g_bus_get_sync(SPLINT_G_BUS_TYPE_SESSION, call.gCancellable, $0) }
      // NULL comes with an error, which `checking` has thrown.
      guard let raw else { throw .noSessionBus }  // coverage:ignore — never without an error
      let bus = GObjectReference(taking: raw)
      glib.g_dbus_connection_set_exit_on_close(bus.pointer, 0)
      return bus
    } catch  where call.interruption != nil {
      throw error  // a bus that does not answer in time (a wedged dbus-daemon), or a cancelled task
    } catch {
      throw .noSessionBus  // whatever the reason (no address, a socket that is gone), there is no bus to reach
    }
  }

  // MARK: Calls

  /// Calls `method` of `interface` on the object at `path`, in the provider this connected to, and returns its
  /// reply, which GDBus has checked to be of type `replyType`. Bounded by `call`.
  func callMethod(
    _ method: String, on path: String, of interface: String, _ parameters: borrowing Variant,
    returning replyType: String, call: LibSecretCall
  ) throws(CredentialError) -> Variant {
    let reply = try call.checking { error in
      Variant(
        takingIfSet: replyType.withCString { type in
          glib.g_dbus_connection_call_sync(
            bus, owner, path, interface, method, parameters.raw, OpaquePointer(type),
            SPLINT_G_DBUS_CALL_FLAGS_NO_AUTO_START,
            -1, call.gCancellable, error)
        })
    }
    // GDBus returns NULL only with an error set.
    guard let reply else { throw .protocolViolation("No reply.") }  // coverage:ignore — with an error instead
    return reply
  }

  /// Sends `method` of `interface` to the object at `path` and returns at once, asking for no reply.
  func send(_ method: String, to path: String, of interface: String, _ parameters: borrowing Variant) {
    // With no callback, GDBus sends the call flagged NO_REPLY_EXPECTED and keeps nothing for a reply.
    glib.g_dbus_connection_call(
      bus, owner, path, interface, method, parameters.raw, nil, SPLINT_G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, nil, nil,
      nil)
  }

  /// The bus connection the proxy uses; it lives as long as this connection.
  var bus: OpaquePointer { glib.g_dbus_proxy_get_connection(proxy.dbusProxy) }

  /// The session's encoding of `secret` and its content type (`(oayays)`), to send in CreateItem or SetSecret.
  func encode(_ secret: borrowing SecretValueReference) throws(CredentialError) -> Variant {
    let encoded = glib.secret_service_encode_dbus_secret(proxy.pointer, secret.raw)
    // NULL only without a session, and this connection was opened with one.
    guard let encoded else { throw .protocolViolation("No session.") }  // coverage:ignore — it has a session
    return Variant(sinking: encoded)
  }

  /// The secret in a `(oayays)` struct the provider sent, decoded with the session.
  ///
  /// - Throws: ``undecodable`` when it was not encoded for this session, or does not decrypt.
  func decode(_ encoded: borrowing Variant) throws(CredentialError) -> SecretValueReference {
    let decoded = glib.secret_service_decode_dbus_secret(proxy.pointer, encoded.raw)
    guard let decoded else { throw Self.undecodable }
    return SecretValueReference(taking: decoded)
  }

  /// A secret the provider sent that the session cannot decode.
  static let undecodable = CredentialError.protocolViolation("A secret did not decode.")

  /// Whether `error` says that the provider and this connection do not share a session key: a secret it sent did
  /// not decode, or it did not take one sent to it, naming this connection's session ("Can't find session
  /// /org/freedesktop/secrets/session/7"). KWallet before 6.25 (KDE bug 514194) derives another key than libsecret
  /// about once in 256 sessions; a new session agrees on a new one.
  func isSessionMismatch(_ error: CredentialError) -> Bool {
    if error == Self.undecodable { return true }
    guard case .backend(_, _, let message) = error.situation else { return false }
    return message.contains(sessionPath)
  }

  /// The object path of this connection's session, which GetSecrets names.
  var sessionPath: String {
    // The connection was opened with a session, which libsecret keeps until the proxy goes.
    glib.secret_service_get_session_dbus_path(proxy.pointer).map { String(cString: $0) } ?? "/"
  }
}
