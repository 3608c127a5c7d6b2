import Foundation

/// The freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet), reached through libsecret on the D-Bus
/// session bus. The default store of every ``Credential``.
///
/// Items are those other tools write and read: attributes `service` and `username` under the schema name
/// `org.freedesktop.Secret.Generic`. Lookups match on `service` and `username` alone, so items written by
/// `secret-tool`, Python keyring, go-keyring or Rust keyring are found, and theirs find ours.
///
/// Every call is bounded by ``timeout``: a prompt nobody answers or a provider that hangs ends in
/// ``CredentialError/timedOut``, and the prompt is dismissed. Through `Credential`'s `async` API, a call also
/// ends, with ``CredentialError/cancelled``, when its task is cancelled.
public final class SecretServiceStore: CredentialStore, InterruptibleCredentialStore {
  /// The store every `Credential` uses unless given another: a timeout of one minute.
  public static let shared = SecretServiceStore()

  /// How long one operation may take, unlock prompts included, before it ends in ``CredentialError/timedOut``.
  public let timeout: Duration

  /// A store whose operations end after `timeout`.
  ///
  /// - Parameter timeout: How long one operation may take, prompts included. Must be positive. A person needs
  ///   time to type a keyring password; a headless service answers at once.
  public init(timeout: Duration = .seconds(60)) {
    precondition(timeout > .zero, "SecretServiceStore(timeout:) needs a positive timeout")
    self.timeout = timeout
  }

  /// Looks the secret up, unlocking its collection if needed (which may prompt).
  ///
  /// - Throws: ``CredentialError/locked`` or ``CredentialError/promptDismissed`` when a matching item exists but
  ///   its collection stays locked: libsecret reports that as "nothing found", this store does not.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try perform(LibSecretCall()) { call throws(CredentialError) in try self.read(credential, call: call) }
  }

  /// Stores the secret. Every item that already matches the credential (ours, or one written by another tool)
  /// gets the new secret in place, keeping its attributes; when none does, a new item is created in the default
  /// collection. An explicit ``Credential/label`` is applied to every such item.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try perform(LibSecretCall()) { call throws(CredentialError) in
      try self.save(secret, contentType: contentType, for: credential, call: call)
    }
  }

  /// Deletes every item that matches the credential, unlocking their collection first if needed.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try perform(LibSecretCall()) { call throws(CredentialError) in try self.delete(credential, call: call) }
  }

  /// The `username` attribute of every item whose `service` attribute is `service`.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try perform(LibSecretCall()) { call throws(CredentialError) in try self.accounts(service, call: call) }
  }

  /// Probes the session bus, the provider, and the default collection and its lock. Writes nothing, shows no
  /// prompt, and starts a D-Bus-activatable provider if one is installed, as any call would.
  public func availability() -> CredentialAvailability {
    do throws(CredentialError) {
      try perform(LibSecretCall()) { call throws(CredentialError) in try LibSecret.checkAvailability(call: call) }
      return .available
    } catch {
      return .unavailable(error)
    }
  }

  // MARK: - Interruptible variants, for Credential's async API

  func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
    try await performDetached { call throws(CredentialError) in try self.read(credential, call: call) }
  }

  func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError) {
    try await performDetached { call throws(CredentialError) in
      try self.save(secret, contentType: contentType, for: credential, call: call)
    }
  }

  func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
    try await performDetached { call throws(CredentialError) in try self.delete(credential, call: call) }
  }

  func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
    try await performDetached { call throws(CredentialError) in try self.accounts(service, call: call) }
  }

  // MARK: - Operations

  private func read(_ credential: Credential, call: LibSecretCall, tries: Int = 3) throws(CredentialError) -> Data? {
    do throws(CredentialError) {
      if let secret = try LibSecret.lookup(credential.attributes, call: call) { return secret }
    } catch .locked {
      // Its unlock prompt ended without a result; the search below tells whether the matches stayed locked.
    }
    // libsecret says "nothing" both when nothing matches and when the matches stayed locked. Tell them apart.
    let items = try LibSecret.search(credential.attributes, call: call)
    if items.contains(where: \.isLocked) { throw Self.stillLocked }
    if items.isEmpty || tries == 1 { return nil }
    // Matches, all unlocked, that the lookup did not find were unlocked in the meantime (by another program, or
    // behind a prompt that was then dismissed): look again. Three tries in all, against a provider that lists
    // items whose secrets it does not give out.
    return try read(credential, call: call, tries: tries - 1)
  }

  private func save(
    _ secret: Data, contentType: SecretContentType, for credential: Credential, call: LibSecretCall
  ) throws(CredentialError) {
    let items = try LibSecret.search(credential.attributes, call: call)
    guard !items.isEmpty else {
      do {
        try LibSecret.store(
          secret, contentType: contentType.rawValue, attributes: credential.attributes,
          label: credential.itemLabel, call: call)
      } catch .locked {
        throw Self.stillLocked
      }
      return
    }
    try unlock(items, call: call)
    for item in items {
      try item.setSecret(secret, contentType: contentType.rawValue, call: call)
      if let label = credential.label { try item.setLabel(label, call: call) }
    }
  }

  private func delete(_ credential: Credential, call: LibSecretCall) throws(CredentialError) {
    let items = try LibSecret.search(credential.attributes, call: call)
    try unlock(items, call: call)
    for item in items { try item.delete(call: call) }
  }

  private func accounts(_ service: String, call: LibSecretCall) throws(CredentialError) -> [String] {
    let query = ["service": service]
    try unlock(LibSecret.search(query, call: call), call: call)
    // Searched again: until its keyring is unlocked, an item shows only hashed attributes, and a found item's
    // proxy keeps what it loaded.
    let items = try LibSecret.search(query, call: call)
    return Set(items.compactMap { $0.attributes["username"] }).sorted()
  }

  /// Unlocks the locked ones among `items`, which may show a prompt, or throws if any stay locked.
  private func unlock(_ items: [LibSecretItem], call: LibSecretCall) throws(CredentialError) {
    let locked = items.filter(\.isLocked)
    let unlocked: Int
    do throws(CredentialError) {
      unlocked = locked.isEmpty ? 0 : try LibSecretItem.unlock(locked, call: call)
    } catch .locked {
      unlocked = 0  // the prompt ended without a result
    }
    if unlocked < locked.count { throw Self.stillLocked }
  }

  /// A collection that stayed locked after libsecret asked to unlock it. Where a display exists the Secret Service
  /// could show its prompt, so it was dismissed; without one (SSH, CI, containers) no prompt could be shown.
  private static var stillLocked: CredentialError {
    let environment = ProcessInfo.processInfo.environment
    let hasDisplay = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
    return hasDisplay ? .promptDismissed : .locked
  }

  // MARK: - Running operations

  /// Runs `operation` within the timeout. When the provider has restarted since the shared proxy was opened, the
  /// first call fails on the old session; the proxy is then opened again and the operation runs once more.
  private func perform<T>(
    _ call: LibSecretCall, _ operation: (LibSecretCall) throws(CredentialError) -> T
  ) throws(CredentialError) -> T {
    try call.bounded(by: timeout) { () throws(CredentialError) -> T in
      do throws(CredentialError) {
        return try operation(call)
      } catch let error where LibSecret.isStaleConnection(error) {
        LibSecret.disconnect()
        return try operation(call)
      }
    }
  }

  /// ``perform(_:_:)`` on a thread of its own, interrupted when the calling task is cancelled.
  private func performDetached<T: Sendable>(
    _ operation: @escaping @Sendable (LibSecretCall) throws(CredentialError) -> T
  ) async throws(CredentialError) -> T {
    let call = LibSecretCall()
    let result = await withTaskCancellationHandler {
      await offloadResult { () throws(CredentialError) -> T in try self.perform(call, operation) }
    } onCancel: {
      call.interrupt(.cancelled)
    }
    return try result.get()
  }
}
