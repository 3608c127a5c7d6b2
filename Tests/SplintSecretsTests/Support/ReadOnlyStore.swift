import Foundation
import SplintSecrets

/// A store that only reads what it was given, as a store of delivered secrets does.
final class ReadOnlyStore: CredentialStore {
  let secrets: [String: Data]
  /// What every read throws, when set.
  let failure: CredentialError?
  init(_ secrets: [String: Data] = [:], failure: CredentialError? = nil) {
    self.secrets = secrets
    self.failure = failure
  }
  var name: String { "read-only" }
  var isWritable: Bool { false }
  func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    if let failure { throw failure }
    return secrets[credential.account]
  }
  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError) {
    throw .readOnly(store: name, remedy: "Change it at its source.")
  }
  func deleteSecret(for credential: Credential) throws(CredentialError) {
    throw .readOnly(store: name, remedy: "Change it at its source.")
  }
  func accounts(service: String) throws(CredentialError) -> [String] { secrets.keys.sorted() }
  func availability() -> CredentialAvailability { .available }
}
