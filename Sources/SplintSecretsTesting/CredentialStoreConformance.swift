public import SplintSecrets

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// The behaviour every ``SplintSecrets/CredentialStore`` must have, as one check your tests can run on a store of
/// your own, the way SplintSecrets runs it on each of its stores.
///
/// ```swift
/// import SplintSecretsTesting
/// import Testing
///
/// @Test func myStoreConforms() throws {
///   try CredentialStoreConformance(store: MyVaultStore()).run()
/// }
/// ```
///
/// A store that can write (``SplintSecrets/CredentialStore/isWritable``) is checked with secrets it saves and then
/// deletes, under a service name of its own. A store of delivered secrets cannot save: put secrets in place first
/// and name them in `delivered`; the check reads them and checks that saving and deleting are refused.
///
/// The rules: a secret that is not there reads as nil; text and bytes (NUL included) come back exactly; a save
/// replaces; an empty account is a name like any other; deleting twice succeeds; accounts come sorted, without
/// duplicates; a read-only store refuses to save
/// and delete with ``SplintSecrets/CredentialError/readOnly(store:remedy:)``; checking availability writes nothing.
public struct CredentialStoreConformance: Sendable {
  /// The rules a store broke, each with what happened.
  public struct Failure: Error, CustomStringConvertible {
    /// One line per broken rule.
    public let violations: [String]

    /// The store's name and every broken rule.
    public var description: String {
      "The store breaks the CredentialStore contract:\n" + violations.joined(separator: "\n")
    }
  }

  private let store: any CredentialStore
  private let service: String
  private let delivered: [String: Data]

  /// A check of `store`.
  ///
  /// - Parameters:
  ///   - store: The store to check.
  ///   - service: The service name the check uses; by default one of its own, so that nothing else is touched.
  ///   - delivered: For a store that cannot write: the secrets put in place under `service`, by account.
  public init(
    store: any CredentialStore, service: String = "splint-conformance-\(UUID().uuidString)",
    delivered: [String: Data] = [:]
  ) {
    self.store = store
    self.service = service
    self.delivered = delivered
  }

  /// Checks every rule.
  ///
  /// - Throws: ``Failure`` naming every rule the store broke, or the store's own error where a call that must
  ///   succeed failed.
  public func run() throws {
    var violations: [String] = []
    func check(_ holds: Bool, _ rule: @autoclosure () -> String) {
      if !holds { violations.append("- \(rule())") }
    }
    let before = try store.accounts(service: service)
    _ = store.availability()
    check(try store.accounts(service: service) == before, "availability() changed the accounts stored")
    check(
      before == before.sorted() && Set(before).count == before.count, "accounts are not sorted and unique: \(before)")
    check(try read("splint-absent") == nil, "a secret that is not there does not read as nil")
    if store.isWritable {
      try checkWrites(check)
    } else {
      try checkReadOnly(check, accounts: before)
    }
    if !violations.isEmpty { throw Failure(violations: violations) }
  }

  private func checkWrites(_ check: (Bool, @autoclosure () -> String) -> Void) throws {
    let text = "s3cr3t, café ✓"
    try save(Data(text.utf8), .text, as: "text")
    check(try read("text") == Data(text.utf8), "text does not come back exactly")
    let bytes = Data([0, 1, 0xFF, 0, 0x80, 0])
    try save(bytes, .binary, as: "bytes")
    check(try read("bytes") == bytes, "bytes (with NUL) do not come back byte for byte")
    try save(Data("first".utf8), .text, as: "text")
    check(try read("text") == Data("first".utf8), "a save does not replace the secret before it")
    try save(Data("c".utf8), .text, as: "c")
    try save(Data("default".utf8), .text, as: "")
    check(try read("") == Data("default".utf8), "an empty account (a service's default item) does not come back")
    let accounts = try store.accounts(service: service)
    check(
      accounts == ["", "bytes", "c", "text"],
      "accounts are not sorted and unique: \(accounts), not [\"\", bytes, c, text]")
    for account in ["text", "bytes", "c", ""] { try store.deleteSecret(for: credential(account)) }
    check(try read("text") == nil, "a deleted secret still reads")
    do {
      try store.deleteSecret(for: credential("text"))
    } catch {
      check(false, "deleting a secret that is not there fails: \(error)")
    }
    check(try store.accounts(service: service).isEmpty, "accounts are left after every secret was deleted")
  }

  private func checkReadOnly(_ check: (Bool, @autoclosure () -> String) -> Void, accounts: [String]) throws {
    for (account, secret) in delivered {
      check(try read(account) == secret, "the delivered secret of \(account) does not come back byte for byte")
    }
    check(accounts == delivered.keys.sorted(), "accounts are \(accounts), not the delivered \(delivered.keys.sorted())")
    let refused = Credential(service: service, account: delivered.keys.sorted().first ?? "splint-refused", store: store)
    check(
      refusal { () throws(CredentialError) in try store.saveSecret(Data("x".utf8), contentType: .text, for: refused) },
      "a read-only store's save does not fail with readOnly")
    check(
      refusal { () throws(CredentialError) in try store.deleteSecret(for: refused) },
      "a read-only store's delete does not fail with readOnly")
  }

  /// Whether `call` fails with ``SplintSecrets/CredentialError/readOnly(store:remedy:)``.
  private func refusal(_ call: () throws(CredentialError) -> Void) -> Bool {
    do throws(CredentialError) {
      try call()
      return false
    } catch {
      return error.code == .readOnly
    }
  }

  private func credential(_ account: String) -> Credential {
    Credential(service: service, account: account, store: store)
  }

  private func read(_ account: String) throws(CredentialError) -> Data? {
    try store.readSecret(for: credential(account))
  }

  private func save(_ secret: Data, _ type: SecretContentType, as account: String) throws(CredentialError) {
    try store.saveSecret(secret, contentType: type, for: credential(account))
  }
}
