import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// The secrets of a sandboxed app (Flatpak, or Snap), kept through the Secret portal: what ``Credential`` uses by
/// default inside a sandbox, the way libsecret does.
///
/// Inside a Flatpak sandbox the app cannot reach the user's keyring, unless its manifest grants
/// `--talk-name=org.freedesktop.secrets`, which reaches past the sandbox. The portal way needs no permission: the
/// Secret portal (`org.freedesktop.portal.Secret`, from xdg-desktop-portal and a backend such as gnome-keyring's)
/// hands the app a master secret of its own, and libsecret keeps the app's secrets in a file in the app's data
/// directory (`~/.var/app/<app id>/data/keyrings/default.keyring`), encrypted with it. No other app can read them.
///
/// This store calls libsecret's password functions for that, with the same attributes as ``SecretServiceStore``
/// (`service`, `username`, schema `org.freedesktop.Secret.Generic`), so that other libsecret programs in the same
/// sandbox (Python keyring, `secret-tool` inside it) find what it stores. Secrets keep every byte, NUL included;
/// their content type is not kept (libsecret's file reads back `text/plain`).
///
/// Outside a sandbox, and inside one where the portal does not answer, it is unavailable and says what is missing:
/// it never falls back to the host's keyring, which libsecret itself would do. A program granted the host keyring
/// that prefers it names ``SecretServiceStore`` (or `SPLINT_CREDENTIAL_STORES=secret-service`).
///
/// Every call is bounded by ``timeout``, and through `Credential`'s `async` API ends with
/// ``CredentialError/cancelled`` when its task is cancelled.
public final class SecretPortalStore: CredentialStore, InterruptibleCredentialStore {
  /// The store ``DefaultCredentialStore`` uses inside a sandbox: a timeout of one minute.
  public static let shared = SecretPortalStore()

  /// How long one operation may take, the portal's answer included, before it ends in ``CredentialError/timedOut``.
  public let timeout: Duration

  /// Whether the portal answered once and libsecret opened the app's keyring with it: libsecret decides for its
  /// file backend, and fetches the master secret, once per process, so neither is done again.
  private let portalAnswered = Atomic(false)

  /// A store whose operations end after `timeout`.
  ///
  /// - Parameter timeout: How long one operation may take. Must be positive.
  public init(timeout: Duration = .seconds(60)) {
    precondition(timeout > .zero, "SecretPortalStore(timeout:) needs a positive timeout")
    self.timeout = timeout
  }

  /// Whether this process runs in a sandbox whose secrets go through the Secret portal, told as libsecret tells
  /// it: `/.flatpak-info` exists (a Flatpak), or `SNAP_NAME` is set (a Snap).
  public static var isSandboxed: Bool {
    DeliveredFiles.exists("/.flatpak-info") || !(SystemCall.environment("SNAP_NAME") ?? "").isEmpty
  }

  /// "Secret portal".
  public var name: String { "Secret portal" }

  /// The secret stored for the credential in the app's keyring file, or nil.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try perform(try LibSecretCall.start()) { call throws(CredentialError) in
      try SecretPortal.lookup(credential.attributes, call: call)
    }
  }

  /// Stores the secret in the app's keyring file, replacing the one stored for the credential.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try perform(try LibSecretCall.start()) { call throws(CredentialError) in
      try Self.save(secret, contentType: contentType, for: credential, call: call)
    }
  }

  /// Removes the credential's secret from the app's keyring file.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try perform(try LibSecretCall.start()) { call throws(CredentialError) in
      try SecretPortal.clear(credential.attributes, call: call)
    }
  }

  /// The `username` attribute of every item of the app's keyring file whose `service` attribute is `service`.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try perform(try LibSecretCall.start()) { call throws(CredentialError) in
      try Self.accounts(service, call: call)
    }
  }

  /// Available inside a sandbox whose Secret portal answers; otherwise unavailable, saying what is missing. Writes
  /// nothing; starts the portal through D-Bus activation when it is installed but not running, as a call would.
  public func availability() -> CredentialAvailability {
    do throws(CredentialError) {
      try perform(try LibSecretCall.start()) { _ throws(CredentialError) in }
      return .available
    } catch {
      return .unavailable(error)
    }
  }

  // MARK: - Interruptible variants, for Credential's async API

  package func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
    try await performDetached { call throws(CredentialError) in
      try SecretPortal.lookup(credential.attributes, call: call)
    }
  }

  package func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError) {
    try await performDetached { call throws(CredentialError) in
      try Self.save(secret, contentType: contentType, for: credential, call: call)
    }
  }

  package func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
    try await performDetached { call throws(CredentialError) in
      try SecretPortal.clear(credential.attributes, call: call)
    }
  }

  package func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
    try await performDetached { call throws(CredentialError) in try Self.accounts(service, call: call) }
  }

  // MARK: - Operations

  private static func save(
    _ secret: Data, contentType: SecretContentType, for credential: Credential, call: LibSecretCall
  ) throws(CredentialError) {
    try SecretPortal.store(
      secret, contentType: contentType, label: credential.itemLabel, attributes: credential.attributes, call: call)
  }

  private static func accounts(_ service: String, call: LibSecretCall) throws(CredentialError) -> [String] {
    Array(Set(try SecretPortal.values(of: "username", matching: ["service": service], call: call))).sorted()
  }

  /// Runs `operation` within the timeout, once the sandbox and its portal are known to be there. The portal's
  /// refusal to hand over the master secret (libsecret reports it as a cancelled or failed "user interaction")
  /// becomes ``CredentialError/portalRefused(_:)``, and a keyring file that is not one
  /// ``CredentialError/unreadableSecret(_:)``.
  private func perform<T>(
    _ call: LibSecretCall, _ operation: (LibSecretCall) throws(CredentialError) -> T
  ) throws(CredentialError) -> T {
    try call.bounded(by: timeout) { () throws(CredentialError) -> T in
      try ensurePortal(call)
      do throws(CredentialError) {
        return try operation(call)
      } catch {
        throw SecretPortal.meaning(of: error, call: call) ?? error
      }
    }
  }

  /// Throws unless this process is sandboxed, the Secret portal answers with the version libsecret speaks, and
  /// libsecret could open the app's keyring (see `SecretPortal.openKeyring(call:patience:)`).
  private func ensurePortal(_ call: LibSecretCall) throws(CredentialError) {
    guard !portalAnswered.load(ordering: .acquiring) else { return }
    guard Self.isSandboxed else {
      throw .storeUnavailable(
        store: name,
        reason: """
          this program does not run in a Flatpak or Snap sandbox (there is no /.flatpak-info), and the Secret \
          portal serves sandboxed apps only. Use the Secret Service (SecretServiceStore), which Credential uses by \
          default outside a sandbox.
          """)
    }
    let version = try SecretPortal.installedVersion(call: call)
    guard version == SecretPortal.version else {
      let found = version.map { "answers with version \($0), and libsecret speaks version \(SecretPortal.version)" }
      throw .storeUnavailable(
        store: name,
        reason: """
          Flatpak sandbox, but the Secret portal (org.freedesktop.portal.Secret) \(found ?? "does not answer"). \
          The host needs xdg-desktop-portal and a portal backend for secrets, such as gnome-keyring's \
          (apt-get install xdg-desktop-portal gnome-keyring), running in the desktop session. Or give the app \
          --talk-name=org.freedesktop.secrets and use the host's keyring: SPLINT_CREDENTIAL_STORES=secret-service.
          """)
    }
    do throws(CredentialError) {
      try SecretPortal.openKeyring(call: call)
    } catch {
      throw SecretPortal.meaning(of: error, call: call) ?? error
    }
    portalAnswered.store(true, ordering: .releasing)
  }

  /// ``perform(_:_:)`` on a thread of its own, interrupted when the calling task is cancelled.
  private func performDetached<T: Sendable>(
    _ operation: @escaping @Sendable (LibSecretCall) throws(CredentialError) -> T
  ) async throws(CredentialError) -> T {
    try await LibSecretCall.detached { call throws(CredentialError) in try self.perform(call, operation) }
  }
}
