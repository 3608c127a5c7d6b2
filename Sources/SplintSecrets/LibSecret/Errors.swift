// From the GError a GLib or libsecret call sets to the CredentialError SplintSecrets throws.

import CLibSecretLoader

extension LibSecretCall {
  /// Runs a GLib call that may set a GError, and throws that error, converted and freed; returns `body`'s result
  /// when none was set. An interruption of this call (its timeout, its task's cancellation) wins over the error
  /// the interrupted call reported.
  ///
  /// `body` gets the error location to pass to the C function and should hand whatever the function returns to
  /// its owner at once, so that it is released even when this throws.
  func checking<T: ~Copyable>(
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<SplintGError>?>) -> T
  ) throws(CredentialError) -> T {
    var location: UnsafeMutablePointer<SplintGError>?
    let result = body(&location)
    guard let set = location else { return result }
    let error = GErrorReference(taking: set)
    switch interruption {
    case .timedOut: throw .timedOut
    case .cancelled: throw .cancelled
    case nil: throw CredentialError(error)
    }
  }
}

extension CredentialError {
  /// Classifies a GError. An error the provider sent names itself on D-Bus (`org.freedesktop.Secret.Error.IsLocked`);
  /// libsecret registers the Secret Service's names as its own error domain, and GDBus its own, so such errors
  /// arrive with a domain and code. The message loses GDBus's "GDBus.Error:NAME: " prefix.
  init(_ error: borrowing GErrorReference) {
    _ = glib.g_dbus_error_strip_remote_error(error.pointer)
    // A GError's domain is never 0, the one quark without a string.
    let domain = glib.g_quark_to_string(error.pointer.pointee.domain).map { String(cString: $0) } ?? ""
    let message = error.pointer.pointee.message.map { String(cString: $0) } ?? ""
    self.init(domain: domain, code: Int(error.pointer.pointee.code), message: message)
  }

  /// Classifies a GError by its domain name and code. Anything not named here stays a `backend` error with the
  /// provider's or GLib's own words, which never contain a secret.
  init(domain: String, code: Int, message: String) {
    let dbus = "g-dbus-error-quark"
    let io = "g-io-error-quark"
    let spawnErrors = Int(SPLINT_G_DBUS_ERROR_SPAWN_EXEC_FAILED)...Int(SPLINT_G_DBUS_ERROR_SPAWN_NO_MEMORY)
    switch (domain, code) {
    case ("secret-error", Int(SPLINT_SECRET_ERROR_IS_LOCKED)):
      self = .locked
    // NO_REPLY: the provider went away in the middle of the call (it crashed, or was killed). CLOSED: the bus
    // connection itself went away.
    case (dbus, Int(SPLINT_G_DBUS_ERROR_SERVICE_UNKNOWN)), (dbus, Int(SPLINT_G_DBUS_ERROR_NAME_HAS_NO_OWNER)),
      (dbus, Int(SPLINT_G_DBUS_ERROR_NO_REPLY)), (dbus, spawnErrors), (io, Int(SPLINT_G_IO_ERROR_CLOSED)):
      self = .serviceUnavailable
    case (dbus, Int(SPLINT_G_DBUS_ERROR_TIMEOUT)), (dbus, Int(SPLINT_G_DBUS_ERROR_TIMED_OUT)),
      (io, Int(SPLINT_G_IO_ERROR_TIMED_OUT)):
      self = .timedOut
    case (io, Int(SPLINT_G_IO_ERROR_CANCELLED)):
      self = .cancelled
    default:
      self = .backend(domain: domain, code: code, message: message)
    }
  }

  /// A reply that does not follow the Secret Service's specification.
  static func protocolViolation(_ what: String) -> CredentialError {
    .backend(domain: "secret-error", code: Int(SPLINT_SECRET_ERROR_PROTOCOL), message: what)
  }
}
