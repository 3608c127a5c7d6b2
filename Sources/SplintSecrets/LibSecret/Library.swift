// libsecret, with GIO, GObject and GLib, loaded the first time a Secret Service operation runs: a program that
// links SplintSecrets but never asks the Secret Service (splintctl's settings commands, a daemon that reads only
// delivered secrets) starts without them.

import CLibSecretLoader

/// libsecret-1.so.0, loaded once (see CLibSecretLoader.h).
enum LibSecretLibrary {
  /// The functions, or why they cannot be had.
  fileprivate static let loaded: Result<SplintLibSecret, CredentialError> = {
    var reason: UnsafePointer<CChar>?
    guard let functions = splint_libsecret_load(&reason) else {
      let why = reason.map { String(cString: $0) } ?? "libsecret-1.so.0 did not load"  // coverage:ignore — no libsecret
      return .failure(unavailable(why))  // coverage:ignore — only where libsecret is missing
    }
    return .success(functions.pointee)
  }()

  /// Loads libsecret unless it is loaded; every operation starts with this (``LibSecretCall/start()``).
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when libsecret-1.so.0 cannot be loaded.
  static func load() throws(CredentialError) {
    _ = try loaded.get()
  }

  /// The error for a libsecret that cannot be loaded, for `reason` (dlerror's words).
  static func unavailable(_ reason: String) -> CredentialError {
    .storeUnavailable(
      store: "Secret Service",
      reason: """
        libsecret cannot be loaded (\(reason)). Install it (apt-get install libsecret-1-0, dnf install libsecret), \
        or use another store.
        """)
  }
}

/// libsecret's, GIO's and GLib's functions, under their C names: `glib.g_variant_new_string(text)`. The first use
/// loads libsecret; every operation makes sure it can first (``LibSecretCall/start()``), so that none gets here
/// without it.
let glib: SplintLibSecret = {
  guard case .success(let functions) = LibSecretLibrary.loaded else {
    preconditionFailure("libsecret used before LibSecretLibrary.load() succeeded")  // coverage:ignore — a bug only
  }
  return functions
}()
