import SplintSystemCalls

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// What the bytes of a secret are. The Secret Service records it as the item's content type, and tools such as
/// KeePassXC decide by it whether to show the secret as a password or keep it as an attachment.
public enum SecretContentType: String, Sendable, Hashable {
  /// UTF-8 text: `text/plain`.
  case text = "text/plain"
  /// Arbitrary bytes: `application/octet-stream`.
  case binary = "application/octet-stream"
}

/// Where ``Credential``s keep their secrets.
///
/// Two stores come with the library: ``SecretServiceStore`` (the default, the freedesktop Secret Service through
/// libsecret) and ``InMemoryCredentialStore`` (for your unit tests, with error injection). To keep secrets
/// elsewhere, implement these five synchronous calls; blocking in them is fine. `Credential` validates its
/// service, account and label before it calls a store, and its `async` variants run a store's calls on a thread of
/// their own, so that a store that blocks never holds one of Swift's cooperative threads.
public protocol CredentialStore: AnyObject, Sendable {
  /// Returns the secret stored for `credential`, or nil when there is none.
  func readSecret(for credential: Credential) throws(CredentialError) -> Data?
  /// Stores `secret` for `credential`, replacing any secret stored for it before.
  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError)
  /// Removes every secret stored for `credential`. Succeeds when there is none.
  func deleteSecret(for credential: Credential) throws(CredentialError)
  /// The accounts that have a secret stored under `service`, sorted, without duplicates.
  func accounts(service: String) throws(CredentialError) -> [String]
  /// Whether secrets can be read and saved now. Writes nothing and shows no prompt.
  func availability() -> CredentialAvailability
  /// A short name for the store, as errors, chains of stores and `splintctl secret status` show it. The
  /// default is the type's name.
  var name: String { get }
  /// Whether the store can save and delete secrets; false for stores of secrets something else delivers, which
  /// throw ``CredentialError/readOnly(store:remedy:)`` instead. The default is true.
  var isWritable: Bool { get }
}

extension CredentialStore {
  /// The type's name.
  public var name: String { String(describing: type(of: self)) }
  /// True.
  public var isWritable: Bool { true }
}

/// A store whose calls the waiting task can interrupt: its asynchronous variants end the call in flight (and
/// dismiss any prompt) when the task is cancelled, and hold no thread while they wait. `Credential`'s `async` API
/// uses these when a store has them (the stores of this package, and SplintFleet's), and runs any other store's
/// blocking calls on a thread of their own.
package protocol InterruptibleCredentialStore: CredentialStore {
  func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data?
  func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError)
  func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError)
  func accountsInterruptibly(service: String) async throws(CredentialError) -> [String]
}

/// Runs blocking `work` on a new thread and suspends until it is done, so that a call that waits (on D-Bus, on a
/// prompt) never holds one of Swift's cooperative threads, however many such calls are under way.
func offload<T: Sendable>(
  _ work: @escaping @Sendable () throws(CredentialError) -> T
) async throws(CredentialError) -> T {
  try await offloadResult(work).get()
}

/// ``offload(_:)``, with the outcome as a value for callers that must not throw where they wait.
func offloadResult<T: Sendable>(
  _ work: @escaping @Sendable () throws(CredentialError) -> T
) async -> Result<T, CredentialError> {
  await withCheckedContinuation { done in
    DetachedThread.start { done.resume(returning: Result { () throws(CredentialError) in try work() }) }
  }
}
