#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// The freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet), reached over the D-Bus session bus with
/// libsecret's help. The default store of every ``Credential``.
///
/// Items are those other tools write and read: attributes `service` and `username` under the schema name
/// `org.freedesktop.Secret.Generic`. Lookups match on `service` and `username` alone, so items written by
/// `secret-tool`, Python keyring, go-keyring or Rust keyring are found, and theirs find ours.
///
/// Every call is bounded by ``timeout``: a prompt nobody answers or a provider that hangs ends in
/// ``CredentialError/timedOut``, and the prompt is dismissed. Through `Credential`'s `async` API, a call also
/// ends, with ``CredentialError/cancelled``, when its task is cancelled.
///
/// Secrets cross the bus encrypted (libsecret negotiates the session). A secret read is decrypted into libsecret's
/// non-pageable memory, which is wiped when freed, and handed out in a `Data` whose bytes are wiped when its last
/// copy goes. Calls made over and over, as a long-running daemon makes them, do not grow the process.
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

  /// Looks the secret up, unlocking its collection if needed (which may prompt). Where several items match the
  /// credential (Python keyring makes one of its own beside ours), the newest of the credential's items: see
  /// "Several items for one credential" in the StoringAToken guide.
  ///
  /// - Throws: ``CredentialError/locked`` or ``CredentialError/promptDismissed`` when a matching item exists but
  ///   its collection stays locked (libsecret's own lookup reports that as "nothing found"; this store does not),
  ///   or when nothing matches while a locked collection lists no items (as KeePassXC's locked database does) and
  ///   stays locked.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
      try self.read(credential, service, call)
    }
  }

  /// Stores the secret. Every item of the credential (ours, or one secret-tool or Python keyring wrote; never a
  /// third program's that merely shares `service` and `username`) gets the new secret in place, keeping its
  /// attributes; when there is none, a new item is created in the default collection, which is created first, as
  /// libsecret does, where there is none (the provider asks the person). An explicit ``Credential/label`` is applied
  /// to every such item.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
      try self.save(secret, contentType: contentType, for: credential, service, call)
    }
  }

  /// Deletes every item of the credential (see ``saveSecret(_:contentType:for:)``), unlocking their collection first
  /// if needed.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
      try self.delete(credential, service, call)
    }
  }

  /// The `username` attribute of every item whose `service` attribute is `service`.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try perform(try LibSecretCall.start()) { connection, call throws(CredentialError) in
      try self.accounts(service, connection, call)
    }
  }

  /// "Secret Service".
  public var name: String { "Secret Service" }

  /// The items, in every collection, whose attributes include `attributes`, as `secret-tool search` finds them:
  /// items any program stored (git's credential helper, NetworkManager, a browser), with what they say about
  /// themselves and without their secrets. Shows no prompt, so it finds nothing in a collection that hides its items
  /// while locked (KeePassXC's locked database).
  ///
  /// - Parameter attributes: One or more attribute names and values, all of which an item must have.
  /// - Throws: ``CredentialError/invalidArgument(_:)`` for no attribute or a NUL character, and the other
  ///   ``CredentialError``s when the Secret Service cannot be reached.
  public func items(matching attributes: [String: String]) throws(CredentialError) -> [SecretServiceItem] {
    if attributes.isEmpty { throw .invalidArgument("Name at least one attribute to match.") }
    if attributes.contains(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }) {
      throw .invalidArgument("An attribute contains a NUL character, which the Secret Service cannot match. Remove it.")
    }
    return try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
      var items: [SecretServiceItem] = []
      for path in try service.search(attributes, call: call).all {
        items.append(try service.item(at: path, call: call))
      }
      return items.sorted { ($0.label, $0.path) < ($1.label, $1.path) }
    }
  }

  /// The secret of `item`, read now; nil when the item is gone. A locked item's keyring is unlocked first, which
  /// may show a prompt (it may have been locked since it was found).
  ///
  /// - Throws: ``CredentialError/locked`` or ``CredentialError/promptDismissed`` when its keyring stays locked, and
  ///   the other ``CredentialError``s when the Secret Service cannot be reached.
  public func secret(of item: SecretServiceItem) throws(CredentialError) -> Data? {
    try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
      try self.unlock([item.path], service, call)  // at once when it is not locked
      return try service.secret(of: item.path, call: call)
    }
  }

  /// Probes the session bus, the provider, and the default collection and its lock. Writes nothing, shows no
  /// prompt, and starts a D-Bus-activatable provider if one is installed, as any call would.
  public func availability() -> CredentialAvailability {
    do throws(CredentialError) {
      try perform(try LibSecretCall.start()) { service, call throws(CredentialError) in
        guard let collection = try service.defaultCollection(call: call) else { throw .noDefaultCollection }
        if try service.isLocked(collection: collection, call: call) { throw .locked }
      }
      return .available
    } catch {
      return .unavailable(error)
    }
  }

  // MARK: - Interruptible variants, for Credential's async API

  package func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
    try await performDetached { service, call throws(CredentialError) in try self.read(credential, service, call) }
  }

  package func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError) {
    try await performDetached { service, call throws(CredentialError) in
      try self.save(secret, contentType: contentType, for: credential, service, call)
    }
  }

  package func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
    try await performDetached { service, call throws(CredentialError) in try self.delete(credential, service, call) }
  }

  package func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
    try await performDetached { connection, call throws(CredentialError) in
      try self.accounts(service, connection, call)
    }
  }

  // MARK: - Operations

  private typealias Service = SecretServiceConnection

  private func read(
    _ credential: Credential, _ service: Service, _ call: LibSecretCall, tries: Int = 3
  ) throws(CredentialError) -> Data? {
    var found = try search(credential.attributes, service, call)
    if found.unlocked.isEmpty && !found.locked.isEmpty {
      // Unlocking may prompt. Searched again whatever the prompt said: the keyring may have been unlocked behind a
      // prompt that was then dismissed (by another program, or by the person in another way).
      _ = try service.unlock(found.locked, call: call)
      found = try service.search(credential.attributes, call: call)
      if found.unlocked.isEmpty && !found.locked.isEmpty { throw Self.stillLocked }
    }
    guard let item = try newest(found.unlocked, of: credential, service, call) else { return nil }
    if let secret = try service.secret(of: item, call: call) { return secret }
    // Listed unlocked, but no secret came: locked or deleted since the search. Look again; three tries in all,
    // against a provider that lists items whose secrets it does not give out.
    return tries == 1 ? nil : try read(credential, service, call, tries: tries - 1)
  }

  /// The item a read returns of `items`, which a search for the credential found unlocked: the only one, asking
  /// nothing more (so that a read stays a search and a GetSecrets, as libsecret's lookup is); of several, the
  /// newest of the credential's own (see ``isItem(_:of:)``), or of them all when none is.
  private func newest(
    _ items: [String], of credential: Credential, _ service: Service, _ call: LibSecretCall
  ) throws(CredentialError) -> String? {
    guard items.count > 1 else { return items.first }
    var described: [SecretServiceItem] = []
    for item in items { described.append(try service.item(at: item, call: call)) }
    let own = described.filter { Self.isItem($0.attributes, of: credential) }
    return (own.isEmpty ? described : own).max(by: Self.isOlder)?.path
  }

  /// Whether an item with `attributes`, which a search for the credential's `service` and `username` found, is the
  /// credential's: every other attribute it has is one that we write or that a client or provider we know adds.
  /// An item of a third program that merely shares the two attributes (its own schema, a `protocol`, an
  /// `application` of its own) is not, and saves and deletes leave it alone.
  static func isItem(_ attributes: [String: String], of credential: Credential) -> Bool {
    attributes.allSatisfy { name, value in
      switch name {
      case "service": value == credential.service
      case "username": value == credential.account
      // The schema we, secret-tool, Python keyring (through SecretStorage) and keytar write.
      case "xdg:schema": value == SecretServiceAPI.schemaName
      // Python keyring's set_password adds it to the item it makes.
      case "application": value == SecretServiceAPI.pythonKeyring
      // The secret's content type, which oo7-daemon and libsecret 0.21's file backend keep as an attribute.
      case "xdg:content-type": true
      // What KeePassXC shows of every entry (its own fields, its ID and place), and its note of a secret that is
      // not text.
      case "Title", "UserName", "URL", "Notes", "Uuid", "Path", "FDO_SECRETS_CONTENT_TYPE": true
      default: false
      }
    }
  }

  /// Whether `first` was written before `second`, for a read among several items: the one modified last is newest;
  /// of items modified in the same second (the Secret Service counts whole seconds), the one created last; then
  /// Python keyring's (with its `application` attribute) before one of ours, since a save of ours gives every item of
  /// the credential the same secret, so that where they differ another program wrote after it; then the object
  /// path that sorts last (shorter first, then in byte order), so that every process picks the same one.
  static func isOlder(_ first: SecretServiceItem, _ second: SecretServiceItem) -> Bool {
    let byPython = { (item: SecretServiceItem) in item.attributes["application"] == SecretServiceAPI.pythonKeyring }
    return (first.modified, first.created, byPython(first) ? 1 : 0, first.path.utf8.count, first.path)
      < (second.modified, second.created, byPython(second) ? 1 : 0, second.path.utf8.count, second.path)
  }

  private func save(
    _ secret: Data, contentType: SecretContentType, for credential: Credential, _ service: Service,
    _ call: LibSecretCall
  ) throws(CredentialError) {
    let value = SecretValueReference(copying: secret, contentType: contentType.rawValue)
    let (items, others) = try credentialItems(credential, service, call)
    guard items.isEmpty else {
      guard try service.keepsItemChanges(call: call) else {
        return try recreate(items, value, contentType: contentType, for: credential, service, call)
      }
      for item in items {
        try service.setSecret(of: item, to: value, call: call)
        if let label = credential.label { try service.setLabel(of: item, to: label, call: call) }
      }
      return
    }
    let collection = try defaultCollection(service, call)
    // Not replacing, beside a third program's item: gnome-keyring would replace one whose attributes include ours.
    let create = { () throws(CredentialError) -> Bool in
      try service.createItem(
        in: collection, attributes: credential.attributes, label: credential.itemLabel, secret: value,
        replacing: others == 0, call: call)
    }
    var created: Bool
    do throws(CredentialError) {
      created = try create()
    } catch .locked {
      // The default collection is locked: unlock it (which may prompt), then create.
      try unlock([collection], service, call)
      created = try create()
    }
    if !created { throw Self.stillLocked }
  }

  /// The collection the `default` alias points to. Where it points nowhere (a desktop that logs its user in
  /// automatically has no login keyring until a program asks for one), one is created as libsecret creates it, which
  /// gnome-keyring does through a prompt for the new keyring's password.
  ///
  /// - Throws: ``CredentialError/noDefaultCollection`` when that prompt was dismissed or could not be shown.
  private func defaultCollection(_ service: Service, _ call: LibSecretCall) throws(CredentialError) -> String {
    if let collection = try service.defaultCollection(call: call) { return collection }
    guard let created = try service.createCollection(label: "Default keyring", alias: "default", call: call) else {
      throw .noDefaultCollection
    }
    return created
  }

  /// The credential's items (see ``isItem(_:of:)``) among those a search for it finds, their collections unlocked
  /// first (which may prompt): until then, gnome-keyring shows an item it loaded locked with placeholder attributes.
  /// `others` counts the items found that are not the credential's.
  private func credentialItems(
    _ credential: Credential, _ service: Service, _ call: LibSecretCall
  ) throws(CredentialError) -> (items: [String], others: Int) {
    let found = try search(credential.attributes, service, call)
    try unlock(found.locked, service, call)
    var items: [String] = []
    for item in found.all where Self.isItem(try service.attributes(of: item, call: call), of: credential) {
      items.append(item)
    }
    return (items, found.all.count - items.count)
  }

  /// Gives `items` the secret `value` by creating each again (see ``SecretServiceConnection/recreate``), for
  /// oo7-daemon, which would forget a SetSecret at its next start. Its creates replace the items whose attributes
  /// are equal; one whose content type changed is left beside the new one, and deleted.
  private func recreate(
    _ items: [String], _ value: borrowing SecretValueReference, contentType: SecretContentType,
    for credential: Credential, _ service: Service, _ call: LibSecretCall
  ) throws(CredentialError) {
    var created: Set<String> = []
    for item in items {
      let path = try service.recreate(
        item, with: value, contentType: contentType.rawValue, label: credential.label, call: call)
      guard let path else { throw Self.stillLocked }  // coverage:ignore — the items' collections were unlocked
      created.insert(path)
    }
    let left = Set(try service.search(credential.attributes, call: call).all)
    for item in items where !created.contains(item) && left.contains(item) {
      if try !service.delete(item, call: call) { throw Self.stillLocked }  // coverage:ignore — unlocked, as above
    }
  }

  private func delete(_ credential: Credential, _ service: Service, _ call: LibSecretCall) throws(CredentialError) {
    for item in try credentialItems(credential, service, call).items {
      // false: the provider asked before deleting, and the prompt was dismissed.
      if try !service.delete(item, call: call) { throw Self.stillLocked }
    }
  }

  private func accounts(
    _ serviceName: String, _ service: Service, _ call: LibSecretCall
  ) throws(CredentialError) -> [String] {
    let found = try search(["service": serviceName], service, call)
    // Unlocked first: until then, gnome-keyring shows an item it loaded locked with hashed attributes only.
    try unlock(found.locked, service, call)
    var accounts = Set<String>()
    for item in found.all {
      if let account = try service.attributes(of: item, call: call)["username"] { accounts.insert(account) }
    }
    return accounts.sorted()
  }

  /// The items whose attributes include `attributes`. When none is found while a collection is locked and lists no
  /// items (KeePassXC's locked database), nothing can be said yet: that collection is unlocked, which may show a
  /// prompt, and the search is made again. A collection that stays locked throws, never reads as absent.
  private func search(
    _ attributes: [String: String], _ service: Service, _ call: LibSecretCall
  ) throws(CredentialError) -> FoundItems {
    let found = try service.search(attributes, call: call)
    guard found.all.isEmpty else { return found }
    let hiding = try service.lockedCollectionsHidingItems(call: call)
    guard !hiding.isEmpty else { return found }
    try unlock(hiding, service, call)
    return try service.search(attributes, call: call)
  }

  /// Unlocks `objects`, which may show a prompt, or throws if any stay locked.
  private func unlock(_ objects: [String], _ service: Service, _ call: LibSecretCall) throws(CredentialError) {
    guard !objects.isEmpty else { return }
    if try service.unlock(objects, call: call).count < objects.count { throw Self.stillLocked }
  }

  /// A collection that stayed locked after we asked to unlock it (or a change it asked about was refused). Where a display exists the Secret Service
  /// could show its prompt, so it was dismissed; without one (SSH, CI, containers) no prompt could be shown.
  private static var stillLocked: CredentialError {
    let environment = ProcessInfo.processInfo.environment
    let hasDisplay = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
    return hasDisplay ? .promptDismissed : .locked
  }

  // MARK: - Running operations

  /// Runs `operation` within the timeout, on the shared connection. When the provider has restarted since the
  /// connection was opened, the first call fails on the old one; when the provider and the connection's session do
  /// not agree on a key (a KWallet bug), a secret does not decode or is refused. A new connection, with a new
  /// session, is then opened and the operation runs once more.
  private func perform<T>(
    _ call: LibSecretCall, _ operation: (Service, LibSecretCall) throws(CredentialError) -> T
  ) throws(CredentialError) -> T {
    try call.bounded(by: timeout) { () throws(CredentialError) -> T in
      let service = try Service.shared(call: call)
      defer { service.dispatchPending() }
      do throws(CredentialError) {
        return try operation(service, call)
      } catch  where error.code == .serviceUnavailable || service.isSessionMismatch(error) {
        service.close()
        let reopened = try Service.shared(call: call)
        defer { reopened.dispatchPending() }
        return try operation(reopened, call)
      }
    }
  }

  /// ``perform(_:_:)`` on a thread of its own, interrupted when the calling task is cancelled.
  private func performDetached<T: Sendable>(
    _ operation: @escaping @Sendable (Service, LibSecretCall) throws(CredentialError) -> T
  ) async throws(CredentialError) -> T {
    try await LibSecretCall.detached { call throws(CredentialError) in try self.perform(call, operation) }
  }
}
