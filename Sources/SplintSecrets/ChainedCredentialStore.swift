#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A ``CredentialStore`` that asks several stores in order, and can say which one answered.
///
/// ```swift
/// let stores = ChainedCredentialStore([DeliveredCredentialStore.systemd, SecretServiceStore.shared])
/// let token = Credential(service: "api.example.com", account: "alice", store: stores)
/// let value = try token.read()  // the delivered file if there is one, else the keyring's item
/// ```
///
/// - Reads take the first store that has the secret. A store that answers with an error stops the read with that
///   error (a locked keyring is never passed over for a store further down), except that with
///   `skippingUnavailable` a store that cannot be reached here (no session bus, no Secret Service, a store not set
///   up on this machine) is passed over. The chain fails closed: when no store has the secret and one could not be
///   reached, the read fails with that store's error, or, when several could not, one that names each and why.
/// - ``saveSecret(_:contentType:for:)`` and ``deleteSecret(for:)`` go to the first store that can write
///   (``CredentialStore/isWritable``); stores of delivered secrets are never written. When a read-only store before
///   it holds the credential, they fail with ``CredentialError/readOnly(store:remedy:)`` naming that store: every
///   read takes its secret first, so a secret saved (or deleted) further down would never be seen.
/// - ``accounts(service:)`` lists the accounts of every store, merged.
public final class ChainedCredentialStore: CredentialStore, InterruptibleCredentialStore {
  /// The stores, in the order they are asked.
  public let stores: [any CredentialStore]
  /// Whether reads pass over a store that cannot be reached here.
  public let skipsUnavailableStores: Bool
  private let givenName: String?

  /// A chain of `stores`, asked in this order.
  ///
  /// - Parameters:
  ///   - stores: The stores.
  ///   - skippingUnavailable: Whether reads pass over a store that cannot be reached here, to a later store that has
  ///     the secret (its error is
  ///     ``CredentialError/noSessionBus``, ``CredentialError/serviceUnavailable``,
  ///     ``CredentialError/noDefaultCollection`` or ``CredentialError/storeUnavailable(store:reason:)``), rather
  ///     than stop at it.
  ///   - name: What errors and `splintctl` call the chain; by default the names of its stores.
  public init(_ stores: [any CredentialStore], skippingUnavailable: Bool = false, name: String? = nil) {
    self.stores = stores
    skipsUnavailableStores = skippingUnavailable
    givenName = name
  }

  /// The name given, or the stores' names: `systemd credentials, then Secret Service`.
  public var name: String { givenName ?? stores.map(\.name).joined(separator: ", then ") }

  /// Whether any of its stores can write.
  public var isWritable: Bool { stores.contains { $0.isWritable } }

  /// The first secret a store has for `credential`, or nil when every store says it has none.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try answer(for: credential)?.secret
  }

  /// The store that answers for `credential` (the first that has its secret), or nil when none has it. It reads the
  /// secret to find out, and forgets it at once.
  public func answeringStore(for credential: Credential) throws(CredentialError) -> (any CredentialStore)? {
    try answer(for: credential)?.store
  }

  private func answer(for credential: Credential) throws(CredentialError) -> (store: any CredentialStore, secret: Data)?
  {
    var walk = Walk(chain: self, credential: credential)
    for store in stores {
      let outcome = Result { () throws(CredentialError) in try store.readSecret(for: credential) }
      if let secret = try walk.take(outcome, from: store) { return (store, secret) }
    }
    return try walk.end()
  }

  /// Saves in the first store that can write, unless a read-only store before it holds the credential.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try writableStore(for: credential).saveSecret(secret, contentType: contentType, for: credential)
  }

  /// Deletes from the first store that can write, unless a read-only store before it holds the credential.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try writableStore(for: credential).deleteSecret(for: credential)
  }

  /// The accounts of every store under `service`, merged, sorted, without duplicates.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    var walk = Walk(chain: self)
    var accounts: Set<String> = []
    for store in stores {
      let outcome = Result { () throws(CredentialError) in try store.accounts(service: service) }
      _ = try walk.take(outcome.map { _ in nil as [String]? }, from: store)
      if case .success(let found) = outcome { accounts.formUnion(found) }
    }
    _ = try walk.end() as [String]?
    return accounts.sorted()
  }

  /// Available when one of its stores is; otherwise why not, store by store. A secrets server that is sealed,
  /// unreachable, forbids or has no login before the first available store makes the chain unavailable with its
  /// error: every read stops there.
  public func availability() -> CredentialAvailability {
    var failures: [CredentialError.StoreFailure] = []
    for store in stores {
      switch store.availability() {
      case .available: return .available
      case .unavailable(let error) where error.isServerFailure: return .unavailable(error)
      case .unavailable(let error): failures.append(.init(store: store.name, error: error))
      }
    }
    return .unavailable(Self.failure(of: failures))
  }

  package func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
    var walk = Walk(chain: self, credential: credential)
    for store in stores {
      let outcome = await Self.interruptibly(store) { (store) async throws(CredentialError) in
        try await store.readSecretInterruptibly(for: credential)
      } orBlocking: { (store) throws(CredentialError) in
        try store.readSecret(for: credential)
      }
      if let secret = try walk.take(outcome, from: store) { return secret }
    }
    return try walk.end()
  }

  package func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError) {
    try await Self.interruptibly(try writableStoreInterruptibly(for: credential)) {
      (store) async throws(CredentialError) in
      try await store.saveSecretInterruptibly(secret, contentType: contentType, for: credential)
    } orBlocking: { (store) throws(CredentialError) in
      try store.saveSecret(secret, contentType: contentType, for: credential)
    }.get()
  }

  package func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
    try await Self.interruptibly(try writableStoreInterruptibly(for: credential)) {
      (store) async throws(CredentialError) in
      try await store.deleteSecretInterruptibly(for: credential)
    } orBlocking: { (store) throws(CredentialError) in
      try store.deleteSecret(for: credential)
    }.get()
  }

  /// ``writableStore()``, once no read-only store before it holds `credential`.
  private func writableStore(for credential: Credential) throws(CredentialError) -> any CredentialStore {
    let store = try writableStore()
    for earlier in readOnlyStores(before: store) {
      try refuseShadowing(
        Result { () throws(CredentialError) in try earlier.readSecret(for: credential) }, earlier, store)
    }
    return store
  }

  /// ``writableStore(for:)``, each read-only store asked as ``interruptibly`` asks.
  private func writableStoreInterruptibly(
    for credential: Credential
  ) async throws(CredentialError)
    -> any CredentialStore
  {
    let store = try writableStore()
    for earlier in readOnlyStores(before: store) {
      let outcome = await Self.interruptibly(earlier) { (earlier) async throws(CredentialError) in
        try await earlier.readSecretInterruptibly(for: credential)
      } orBlocking: { (earlier) throws(CredentialError) in
        try earlier.readSecret(for: credential)
      }
      try refuseShadowing(outcome, earlier, store)
    }
    return store
  }

  package func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
    var walk = Walk(chain: self)
    var accounts: Set<String> = []
    for store in stores {
      let outcome = await Self.interruptibly(store) { (store) async throws(CredentialError) in
        try await store.accountsInterruptibly(service: service)
      } orBlocking: { (store) throws(CredentialError) in
        try store.accounts(service: service)
      }
      _ = try walk.take(outcome.map { _ in nil as [String]? }, from: store)
      if case .success(let found) = outcome { accounts.formUnion(found) }
    }
    _ = try walk.end() as [String]?
    return accounts.sorted()
  }

  /// The first store that can write, or the read-only error of the first store when none can.
  private func writableStore() throws(CredentialError) -> any CredentialStore {
    guard let store = stores.first(where: { $0.isWritable }) else {
      throw .readOnly(
        store: name,
        remedy: "Add a store that can write to the chain, such as the Secret Service, or save with that store.")
    }
    return store
  }

  /// The stores every read asks before `writable`, which writes cannot change.
  private func readOnlyStores(before writable: any CredentialStore) -> some Sequence<any CredentialStore> {
    stores.lazy.prefix { $0 !== writable }
  }

  /// Refuses a write to `writable` when `earlier`, a read-only store every read asks first, holds the secret
  /// (`outcome` of reading it there): the write would never be seen. A store that cannot be reached holds nothing
  /// here; another failure is thrown, as a read would throw it.
  private func refuseShadowing(
    _ outcome: Result<Data?, CredentialError>, _ earlier: any CredentialStore, _ writable: any CredentialStore
  ) throws(CredentialError) {
    switch outcome {
    case .success(nil): return
    case .failure(let error) where error.isUnavailability: return
    case .failure(let error): throw error
    case .success: break
    }
    var remedy = "Change it where it is delivered."
    if case .readOnly(_, let own)? = (earlier as? DeliveredCredentialStore)?.readOnly.situation { remedy = own }
    throw .readOnly(
      store: earlier.name,
      remedy: """
        \(remedy) Every read takes it from \(earlier.name) first, so a change in \(writable.name) would never be \
        seen. To change \(writable.name) anyway, on purpose, use that store alone (splintctl's `--store NAME`, or \
        a Credential whose store it is).
        """)
  }

  /// One call of `store`: interruptibly when it can be interrupted, else on a thread of its own.
  private static func interruptibly<T: Sendable>(
    _ store: any CredentialStore,
    _ interruptibly: (any InterruptibleCredentialStore) async throws(CredentialError) -> T,
    orBlocking blocking: @escaping @Sendable (any CredentialStore) throws(CredentialError) -> T
  ) async -> Result<T, CredentialError> {
    if let store = store as? any InterruptibleCredentialStore {
      return await Result.of { () async throws(CredentialError) in try await interruptibly(store) }
    }
    return await offloadResult { () throws(CredentialError) in try blocking(store) }
  }

  /// What a chain throws when no store could be reached: the one store's own error, or all of them.
  private static func failure(of failures: [CredentialError.StoreFailure]) -> CredentialError {
    failures.count == 1 ? failures[0].error : .noStoreAnswered(failures)
  }

  /// The stores' outcomes so far, for one read (of `credential`) or listing.
  private struct Walk {
    let chain: ChainedCredentialStore
    var credential: Credential?
    var failures: [CredentialError.StoreFailure] = []
    /// The stores of delivered secrets that held no file for `credential`.
    var undelivered: [DeliveredCredentialStore] = []

    init(chain: ChainedCredentialStore, credential: Credential? = nil) {
      self.chain = chain
      self.credential = credential
    }

    /// The value to end with, nil to ask the next store, or the error that ends the walk.
    mutating func take<T>(
      _ outcome: Result<T?, CredentialError>, from store: any CredentialStore
    )
      throws(CredentialError) -> T?
    {
      switch outcome {
      case .success(let value):
        if value == nil, credential != nil, let delivered = store as? DeliveredCredentialStore {
          undelivered.append(delivered)
        }
        return value
      case .failure(let error) where chain.skipsUnavailableStores && error.isUnavailability:
        failures.append(.init(store: store.name, error: error))
        return nil
      case .failure(let error):
        throw error
      }
    }

    /// After every store: nothing found, unless a store could not be reached, which might have had it. Then the
    /// error first says which file each store of delivered secrets looked for (a misnamed delivery is the likely
    /// reason), and then why the others did not answer.
    func end<T>() throws(CredentialError) -> T? {
      if failures.isEmpty { return nil }
      let notes = undelivered.compactMap { store in
        credential.flatMap(store.absence(of:)).map { CredentialError.StoreFailure(store: store.name, error: $0) }
      }
      throw ChainedCredentialStore.failure(of: notes + failures)
    }
  }
}

extension CredentialError {
  /// Whether the error says the store cannot be reached here, rather than anything about the secret.
  var isUnavailability: Bool {
    switch situation {
    case .noSessionBus, .serviceUnavailable, .noDefaultCollection, .storeUnavailable: true
    default: false
    }
  }

  /// Whether the error is a secrets server's (sealed, unreachable, forbidden, no login, failing), which stops a chain
  /// whatever stores follow, even in ``ChainedCredentialStore/availability()``: another store's copy of a fleet's
  /// secret may be stale.
  package var isServerFailure: Bool {
    switch situation {
    case .sealed, .unreachable, .forbidden, .notLoggedIn, .secretIDSpent, .serverError: true
    default: false
    }
  }
}

extension Result where Failure == CredentialError {
  /// The outcome of `body`.
  static func of(_ body: () async throws(CredentialError) -> Success) async -> Self {
    do {
      return .success(try await body())
    } catch {
      return .failure(error)
    }
  }
}
