// Inside a Flatpak sandbox: libsecret's password functions, which keep the app's secrets in a file of its own,
// encrypted with a master secret that the Secret portal (org.freedesktop.portal.Secret) hands over, and the check
// that the portal is there.

import CLibSecretLoader
import Dispatch
import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Secret portal as libsecret's password functions reach it: each call names its item by attributes, under
/// `splint_secret_generic_schema()`, and libsecret picks the file backend (the app's
/// `$XDG_DATA_HOME/keyrings/default.keyring`, which the portal's master secret unlocks) because it runs in a Flatpak
/// sandbox where the portal answers.
enum SecretPortal {
  /// The portal's D-Bus name, object and interface.
  static let busName = "org.freedesktop.portal.Desktop"
  static let objectPath = "/org/freedesktop/portal/desktop"
  static let interface = "org.freedesktop.portal.Secret"
  /// The portal interface's version libsecret 0.20 speaks; it uses its file backend only with this one.
  static let version: UInt32 = 1

  /// The version of the Secret portal on the session bus, as libsecret asks for it before it picks its file backend
  /// (starting the portal through D-Bus activation if it is not running yet); nil when no portal answers for the
  /// Secret interface.
  ///
  /// - Throws: ``CredentialError/noSessionBus`` without a session bus, and the call's interruption.
  static func installedVersion(call: LibSecretCall) throws(CredentialError) -> UInt32? {
    let bus = try SecretServiceConnection.sessionBus(call: call)
    let parameters = Variant.tuple(.string(interface), .string("version"))
    do throws(CredentialError) {
      let reply = try call.checking { error in
        Variant(
          takingIfSet: "(v)".withCString { type in
            glib.g_dbus_connection_call_sync(
              bus.pointer, busName, objectPath, "org.freedesktop.DBus.Properties", "Get", parameters.raw,
              OpaquePointer(type), SPLINT_G_DBUS_CALL_FLAGS_NONE, -1, call.gCancellable, error)
          })
      }
      guard let reply, reply.child(0).unboxed.is("u") else { return nil }
      return reply.child(0).unboxed.unsigned32
    } catch  where call.interruption != nil {
      throw error
    } catch {
      return nil  // no portal, or one without the Secret interface: org.freedesktop.DBus.Error.* of some kind
    }
  }

  /// What `error`, from one of libsecret's password functions in a sandbox, means there, if it means more than it
  /// says: the portal's refusal to hand over the app's master secret (libsecret reports the portal's answer
  /// "cancelled" as a cancellation that `call` did not make, and "failed" as GIO's "failed"), or an app keyring
  /// file that is not one.
  static func meaning(of error: CredentialError, call: LibSecretCall) -> CredentialError? {
    switch error.situation {
    case .cancelled where call.interruption == nil:
      .portalRefused("it cancelled the request")  // coverage:ignore — only a person dismissing a dialog does that
    case .backend("g-io-error-quark", Int(SPLINT_G_IO_ERROR_FAILED), let message):
      .portalRefused(message)
    case .backend("secret-error", Int(SPLINT_SECRET_ERROR_INVALID_FILE_FORMAT), let message):
      .unreadableSecret(
        """
        the app's keyring file, \(keyringFile), is not a keyring libsecret can read (\(message)). It is left as it \
        is: move it aside to start an empty one, or restore it from a backup.
        """)
    default:
      nil
    }
  }

  /// Where libsecret keeps the app's secrets: `default.keyring` in `keyrings` of the user's data directory (in a
  /// Flatpak, `~/.var/app/<app id>/data`).
  static var keyringFile: String {
    let configured = ProcessInfo.processInfo.environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
    let data = configured ?? (ProcessInfo.processInfo.environment["HOME"] ?? "~") + "/.local/share"
    return data + "/keyrings/default.keyring"
  }

  /// Has libsecret open the app's keyring: fetch the app's master secret from the portal and load its file, through
  /// a lookup that finds nothing. libsecret does that once per process, on its first call; every call after it works
  /// on the file alone.
  ///
  /// libsecret before 0.21.4 (Debian 12 has 0.20.5) subscribes to the portal's answer only after asking, so it can
  /// miss an answer that comes at once and then wait forever (libsecret#58); and before 0.21.0, cancelling that wait
  /// deadlocks the thread that cancels (libsecret#86). So each attempt runs on a thread of its own, without a
  /// cancellable, and one that has not finished after `patience` is left waiting and made again, until `call` is
  /// interrupted. A thread left behind stays blocked for the life of the process: this happens at most at the
  /// first call of a process, and only when that race is lost.
  ///
  /// - Throws: What libsecret reported (see ``meaning(of:call:)``), or the interruption of `call`.
  static func openKeyring(call: LibSecretCall, patience: Duration = .seconds(2)) throws(CredentialError) {
    let attempt = Attempt()
    DetachedThread.start {
      let result = Result { () throws(CredentialError) in
        _ = try lookup(["service": "\u{1}splint: no such service"], cancellable: nil, call: LibSecretCall())
      }
      attempt.finish(result)
    }
    let deadline = ContinuousClock.now + patience
    while !attempt.waitBriefly() {
      if let interruption = call.interruption { throw interruption == .timedOut ? .timedOut : .cancelled }
      // No answer after `patience`: libsecret missed it. This attempt is left waiting, and another one made.
      if ContinuousClock.now >= deadline { return try openKeyring(call: call, patience: patience) }
    }
    try attempt.outcome.get()
  }

  /// One attempt of ``openKeyring(call:patience:)``: its outcome, once it has one.
  private final class Attempt: Sendable {
    private let result = Mutex<Result<Void, CredentialError>>(.success(()))
    private let done = DispatchSemaphore(value: 0)

    func finish(_ outcome: Result<Void, CredentialError>) {
      result.withLock { $0 = outcome }
      done.signal()
    }

    /// Waits up to 50 ms for the attempt to finish; whether it has.
    func waitBriefly() -> Bool { done.wait(timeout: .now() + .milliseconds(50)) == .success }

    /// The outcome, once ``waitBriefly()`` said the attempt has finished.
    var outcome: Result<Void, CredentialError> { result.withLock { $0 } }
  }

  /// The secret stored under `attributes`, or nil.
  static func lookup(_ attributes: [String: String], call: LibSecretCall) throws(CredentialError) -> Data? {
    try lookup(attributes, cancellable: call.gCancellable, call: call)
  }

  /// ``lookup(_:call:)``, with `cancellable` (nil: none).
  private static func lookup(
    _ attributes: [String: String], cancellable: OpaquePointer?, call: LibSecretCall
  ) throws(CredentialError) -> Data? {
    let table = AttributeTable(attributes)
    let value = try call.checking { error in
      glib.secret_password_lookupv_binary_sync(splint_secret_generic_schema(), table.raw, cancellable, error)
    }
    // NULL: nothing is stored under the attributes (an error would have been thrown).
    guard let value else { return nil }
    return SecretValueReference(taking: value).bytes
  }

  /// Stores `secret` under `attributes` with `label`, replacing what was stored under them.
  static func store(
    _ secret: Data, contentType: SecretContentType, label: String, attributes: [String: String],
    call: LibSecretCall
  ) throws(CredentialError) {
    let table = AttributeTable(attributes)
    let value = SecretValueReference(copying: secret, contentType: contentType.rawValue)
    _ = try call.checking { error in
      glib.secret_password_storev_binary_sync(
        splint_secret_generic_schema(), table.raw, nil, label, value.raw, call.gCancellable, error)
    }
  }

  /// Removes every item stored under `attributes`.
  static func clear(_ attributes: [String: String], call: LibSecretCall) throws(CredentialError) {
    let table = AttributeTable(attributes)
    _ = try call.checking { error in
      glib.secret_password_clearv_sync(splint_secret_generic_schema(), table.raw, call.gCancellable, error)
    }
  }

  /// The value of `attribute` of every item whose attributes include `attributes`.
  static func values(
    of attribute: String, matching attributes: [String: String], call: LibSecretCall
  ) throws(CredentialError) -> [String] {
    let table = AttributeTable(attributes)
    let items = try call.checking { error in
      ObjectList(
        taking: glib.secret_password_searchv_sync(
          splint_secret_generic_schema(), table.raw, SPLINT_SECRET_SEARCH_ALL, call.gCancellable, error))
    }
    return items.objects.compactMap { item in
      AttributeTable(taking: glib.secret_retrievable_get_attributes(item))[attribute]
    }
  }
}

/// A GList of GObjects that libsecret returned for the caller: the list and a reference to each object, released
/// together.
private struct ObjectList: ~Copyable {
  let raw: UnsafeMutablePointer<SplintGList>?

  init(taking raw: UnsafeMutablePointer<SplintGList>?) { self.raw = raw }

  deinit { glib.g_list_free_full(raw, glib.g_object_unref) }

  /// The objects, in list order; they live as long as the list.
  var objects: [OpaquePointer] {
    var objects: [OpaquePointer] = []
    var link = raw
    while let current = link {
      if let object = current.pointee.data { objects.append(OpaquePointer(object)) }
      link = current.pointee.next
    }
    return objects
  }
}

/// A GHashTable of attribute names and values: one made for libsecret's password functions (copies of the strings,
/// freed with the table), or one libsecret returned for the caller. Released with this.
private struct AttributeTable: ~Copyable {
  let raw: OpaquePointer

  init(_ attributes: [String: String]) {
    raw = glib.g_hash_table_new_full(glib.g_str_hash, glib.g_str_equal, glib.g_free, glib.g_free)
    for (name, value) in attributes {
      _ = glib.g_hash_table_insert(raw, glib.g_strdup(name), glib.g_strdup(value))
    }
  }

  init(taking raw: OpaquePointer) { self.raw = raw }

  deinit { glib.g_hash_table_unref(raw) }

  /// The value of attribute `name`, if the table has it.
  subscript(name: String) -> String? {
    glib.g_hash_table_lookup(raw, name).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
  }
}
