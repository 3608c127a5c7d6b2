import Synchronization

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A ``CredentialStore`` that keeps secrets in memory, for your unit tests: no D-Bus, no keyring, nothing on disk.
///
/// Give each test its own store, and make it fail on purpose to test how your program handles a locked keyring or
/// a missing Secret Service:
///
/// ```swift
/// let store = InMemoryCredentialStore()
/// let token = Credential(service: "api.example.com", account: "alice", store: store)
/// try token.save("s3cr3t")
///
/// store.failure = .locked
/// #expect(throws: CredentialError.locked) { try token.read() }
/// ```
///
/// Its description and reflection list the stored credentials, never their secrets.
public final class InMemoryCredentialStore: CredentialStore, CustomStringConvertible, CustomReflectable {
  private struct Key: Hashable {
    let service: String
    let account: String

    init(_ credential: Credential) {
      service = credential.service
      account = credential.account
    }
  }

  private struct Item {
    let secret: Data
    let contentType: SecretContentType
    let label: String
  }

  private struct State {
    var items: [Key: Item] = [:]
    var failure: CredentialError?
  }

  private let state = Mutex(State())

  /// An empty store that works.
  public init() {}

  /// When set, every call fails with this error (and ``availability()`` reports it) until you set it back to nil.
  /// Stored secrets are kept meanwhile.
  public var failure: CredentialError? {
    get { state.withLock { $0.failure } }
    set { state.withLock { $0.failure = newValue } }
  }

  /// The content type `credential`'s secret was saved with, or nil when nothing is stored for it.
  public func contentType(for credential: Credential) -> SecretContentType? {
    state.withLock { $0.items[Key(credential)]?.contentType }
  }

  /// The label `credential`'s item carries, or nil when nothing is stored for it.
  public func label(for credential: Credential) -> String? {
    state.withLock { $0.items[Key(credential)]?.label }
  }

  /// Returns the stored secret, or nil.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try read(credential)
  }

  /// Stores the secret. The item keeps its label unless the credential names one.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try save(secret, contentType: contentType, for: credential)
  }

  /// Removes the secret, if there is one.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try delete(credential)
  }

  /// The accounts with a secret under `service`, sorted.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try list(service)
  }

  /// ``CredentialAvailability/available``, or the injected ``failure``.
  public func availability() -> CredentialAvailability {
    failure.map(CredentialAvailability.unavailable) ?? .available
  }

  /// The stored credentials, without their secrets.
  public var description: String {
    let names = state.withLock { state in
      state.items.keys.map { "\($0.service)/\($0.account)" }.sorted()
    }
    return "InMemoryCredentialStore(\(names.joined(separator: ", ")))"
  }

  /// The stored credentials, without their secrets, for `dump` and debuggers.
  public var customMirror: Mirror {
    let items = state.withLock { state in
      state.items.map { key, item in
        (label: "\(key.service)/\(key.account)", value: "<redacted \(item.secret.count) bytes>" as Any)
      }.sorted { $0.label < $1.label }
    }
    return Mirror(self, children: items.map { (label: $0.label, value: $0.value) }, displayStyle: .dictionary)
  }

  private func read(_ credential: Credential) throws(CredentialError) -> Data? {
    try withState { $0.items[Key(credential)]?.secret }
  }

  private func save(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try withState { state in
      let key = Key(credential)
      let label = credential.label ?? state.items[key]?.label ?? credential.itemLabel
      state.items[key] = Item(secret: secret, contentType: contentType, label: label)
    }
  }

  private func delete(_ credential: Credential) throws(CredentialError) {
    try withState { $0.items[Key(credential)] = nil }
  }

  private func list(_ service: String) throws(CredentialError) -> [String] {
    try withState { state in state.items.keys.filter { $0.service == service }.map(\.account).sorted() }
  }

  private func withState<T>(_ body: (inout State) -> T) throws(CredentialError) -> T {
    let result = state.withLock { state -> Result<T, CredentialError> in
      if let failure = state.failure { return .failure(failure) }
      return .success(body(&state))
    }
    return try result.get()
  }
}
