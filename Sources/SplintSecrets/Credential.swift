#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A secret, such as an API token or a password, kept in the freedesktop Secret Service (gnome-keyring, KeePassXC,
/// KWallet) under a service name and an account.
///
/// A `Credential` only names the secret: it never holds or caches it. Every ``read()-1kb2a`` asks the store again, so a
/// change made by another program is seen at once.
///
/// ```swift
/// let token = Credential(service: "api.example.com", account: "alice")
/// try token.save("s3cr3t")
/// let value = try token.read()   // "s3cr3t"; nil if nothing is stored
/// try token.delete()
/// ```
///
/// Items are written as `secret-tool`, Python keyring and go-keyring write them (attributes `service` and
/// `username`), so `Credential(service: "S", account: "U")` reads what `secret-tool store service S username U`
/// stored, and the reverse. The synchronous calls block while the Secret Service works (a few D-Bus calls, or as
/// long as an unlock prompt is open); in `async` code the compiler picks the asynchronous variants, which run on a
/// thread of their own.
public struct Credential: Sendable, Hashable, CustomStringConvertible {
  /// The program, site or API the secret belongs to, stored as the item's `service` attribute.
  public let service: String
  /// Whose secret it is (a user name, a key name), stored as the item's `username` attribute.
  public let account: String
  /// The label ``save(_:)-1vzsc`` gives the item, or nil for `Password for '<account>' on '<service>'`, the
  /// label Python keyring and go-keyring write.
  public let label: String?
  /// Where the secret is kept: ``DefaultCredentialStore/shared`` (a delivered secret when there is one, else the
  /// Secret Service) unless you pass another store.
  public let store: any CredentialStore

  /// Names a secret. Nothing is read or written until you call a method, and the arguments are checked then.
  ///
  /// - Parameters:
  ///   - service: The program, site or API the secret belongs to.
  ///   - account: Whose secret it is. Empty is a name too: go-keyring programs keep a service's default item under
  ///     an empty user (the GitHub CLI's token, under service `gh:github.com`).
  ///   - label: What keyring managers such as Seahorse show for the item; nil for the usual
  ///     `Password for '<account>' on '<service>'`.
  ///   - store: Where the secret is kept. Pass an ``InMemoryCredentialStore`` in tests.
  public init(
    service: String, account: String, label: String? = nil,
    store: any CredentialStore = DefaultCredentialStore.shared
  ) {
    self.service = service
    self.account = account
    self.label = label
    self.store = store
  }

  /// A credential's service and account, without its label or store: what names it in a map of your own, such as the
  /// file names of a ``DeliveredCredentialStore`` (`fileNames:`), or SplintFleet's vault store's locations.
  public struct Key: Hashable, Sendable {
    /// The credential's ``Credential/service``.
    public let service: String
    /// The credential's ``Credential/account``.
    public let account: String

    /// The credential with this service and account.
    public init(service: String, account: String) {
      self.service = service
      self.account = account
    }
  }

  /// The credential's service and account.
  package var key: Key { Key(service: service, account: account) }

  /// The stored secret as text, or nil when nothing is stored.
  ///
  /// - Throws: ``CredentialError/notText`` when the secret is not UTF-8 (read it with ``readData()-7p5ww``),
  ///   ``CredentialError/locked`` when its keyring is locked, and the other ``CredentialError``s when the Secret
  ///   Service cannot be reached.
  public func read() throws(CredentialError) -> String? {
    try Self.text(from: readData())
  }

  /// The stored secret as bytes, exactly as they were saved (NUL bytes included), or nil when nothing is stored.
  ///
  /// - Throws: ``CredentialError/locked`` when its keyring is locked, and the other ``CredentialError``s when the
  ///   Secret Service cannot be reached.
  public func readData() throws(CredentialError) -> Data? {
    try validate()
    return try store.readSecret(for: self)
  }

  /// Stores `secret` as text (`text/plain`), replacing what was stored before.
  ///
  /// - Throws: ``CredentialError/invalidArgument(_:)`` for a NUL character in a name or an empty label, and the other
  ///   ``CredentialError``s when the secret could not be stored; nothing was changed then.
  public func save(_ secret: String) throws(CredentialError) {
    try save(Data.wiping(utf8: secret), as: .text)
  }

  /// Stores `secret` as bytes (`application/octet-stream`), replacing what was stored before.
  ///
  /// - Throws: ``CredentialError/invalidArgument(_:)`` for a NUL character in a name or an empty label, and the other
  ///   ``CredentialError``s when the secret could not be stored; nothing was changed then.
  public func save(_ secret: Data) throws(CredentialError) {
    try save(secret, as: .binary)
  }

  /// Removes the secret. Removing a secret that is not there succeeds.
  ///
  /// - Throws: ``CredentialError/locked`` when its keyring is locked, and the other ``CredentialError``s when the
  ///   Secret Service cannot be reached.
  public func delete() throws(CredentialError) {
    try validate()
    try store.deleteSecret(for: self)
  }

  private func save(_ secret: Data, as contentType: SecretContentType) throws(CredentialError) {
    try validate()
    try store.saveSecret(secret, contentType: contentType, for: self)
  }

  /// The accounts that have a secret stored under `service`, sorted.
  ///
  /// - Parameters:
  ///   - service: The service name to list.
  ///   - store: Where to look.
  /// - Throws: ``CredentialError/locked`` when a matching item's keyring is locked, and the other
  ///   ``CredentialError``s when the Secret Service cannot be reached.
  public static func accounts(
    service: String, store: any CredentialStore = DefaultCredentialStore.shared
  ) throws(CredentialError) -> [String] {
    try validate(service, as: "service name")
    return try store.accounts(service: service)
  }

  /// Whether secrets can be read and saved right now, and if not, why and what to do. Writes nothing and shows no
  /// prompt.
  ///
  /// - Parameter store: The store to probe.
  public static func availability(store: any CredentialStore = DefaultCredentialStore.shared) -> CredentialAvailability
  {
    store.availability()
  }

  /// `Credential(service: "…", account: "…")`. Never contains the secret, which a `Credential` does not hold.
  public var description: String {
    let label = label.map { ", label: \"\($0)\"" } ?? ""
    return "Credential(service: \"\(service)\", account: \"\(account)\"\(label))"
  }

  /// Credentials are equal when they name the same secret with the same label in the same store.
  public static func == (lhs: Credential, rhs: Credential) -> Bool {
    lhs.service == rhs.service && lhs.account == rhs.account && lhs.label == rhs.label && lhs.store === rhs.store
  }

  /// Hashes what ``==(_:_:)`` compares.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(service)
    hasher.combine(account)
    hasher.combine(label)
    hasher.combine(ObjectIdentifier(store))
  }
}

// MARK: - Asynchronous variants

extension Credential {
  /// ``read()-1kb2a`` without blocking the calling thread: the store's work runs on a thread of its own. With the Secret
  /// Service, cancelling the task ends the wait with ``CredentialError/cancelled`` and dismisses any prompt.
  public func read() async throws(CredentialError) -> String? {
    try Self.text(from: await readData())
  }

  /// ``readData()-7p5ww`` without blocking the calling thread.
  public func readData() async throws(CredentialError) -> Data? {
    try validate()
    return try await Self.run(
      on: store, { store async throws(CredentialError) in try await store.readSecretInterruptibly(for: self) },
      orBlocking: { store throws(CredentialError) in try store.readSecret(for: self) })
  }

  /// ``save(_:)-1vzsc`` without blocking the calling thread.
  public func save(_ secret: String) async throws(CredentialError) {
    try await save(Data.wiping(utf8: secret), as: .text)
  }

  /// ``save(_:)-5q1mn`` without blocking the calling thread.
  public func save(_ secret: Data) async throws(CredentialError) {
    try await save(secret, as: .binary)
  }

  /// ``delete()`` without blocking the calling thread.
  public func delete() async throws(CredentialError) {
    try validate()
    try await Self.run(
      on: store, { store async throws(CredentialError) in try await store.deleteSecretInterruptibly(for: self) },
      orBlocking: { store throws(CredentialError) in try store.deleteSecret(for: self) })
  }

  /// ``accounts(service:store:)`` without blocking the calling thread.
  public static func accounts(
    service: String, store: any CredentialStore = DefaultCredentialStore.shared
  ) async throws(CredentialError) -> [String] {
    try validate(service, as: "service name")
    return try await run(
      on: store, { store async throws(CredentialError) in try await store.accountsInterruptibly(service: service) },
      orBlocking: { store throws(CredentialError) in try store.accounts(service: service) })
  }

  private func save(_ secret: Data, as contentType: SecretContentType) async throws(CredentialError) {
    try validate()
    try await Self.run(
      on: store,
      { store async throws(CredentialError) in
        try await store.saveSecretInterruptibly(secret, contentType: contentType, for: self)
      },
      orBlocking: { store throws(CredentialError) in try store.saveSecret(secret, contentType: contentType, for: self) }
    )
  }

  /// Runs one call of `store` for the `async` API: interruptibly when the store can be interrupted, otherwise on a
  /// thread of its own, so that a blocking store never holds one of Swift's cooperative threads.
  private static func run<T: Sendable>(
    on store: any CredentialStore,
    _ interruptibly: (any InterruptibleCredentialStore) async throws(CredentialError) -> T,
    orBlocking blocking: @escaping @Sendable (any CredentialStore) throws(CredentialError) -> T
  ) async throws(CredentialError) -> T {
    if let store = store as? any InterruptibleCredentialStore { return try await interruptibly(store) }
    return try await offload { () throws(CredentialError) in try blocking(store) }
  }
}

// MARK: - Checks and conversions

extension Credential {
  /// The attributes that identify this credential's items: what every other Secret Service client matches on.
  var attributes: [String: String] { ["service": service, "username": account] }

  /// The label new items get.
  var itemLabel: String { label ?? "Password for '\(account)' on '\(service)'" }

  /// An empty service or account is a name like any other: libsecret, secret-tool, Python keyring and go-keyring
  /// store and match it (the GitHub CLI keeps its token under an empty user), and gnome-keyring matches it. An empty
  /// label is not: pass nil for the usual one.
  private func validate() throws(CredentialError) {
    try Self.validate(service, as: "service name")
    try Self.validate(account, as: "account")
    if let label {
      if label.isEmpty { throw .invalidArgument("The label is empty. Pass nil to get the usual label.") }
      try Self.validate(label, as: "label")
    }
  }

  private static func validate(_ value: String, as name: String) throws(CredentialError) {
    if value.utf8.contains(0) {
      throw .invalidArgument("The \(name) contains a NUL character, which the Secret Service cannot store. Remove it.")
    }
  }

  private static func text(from data: Data?) throws(CredentialError) -> String? {
    guard let data else { return nil }
    guard let text = String(validating: data, as: UTF8.self) else { throw .notText }
    return text
  }
}
