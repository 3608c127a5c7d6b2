import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// The store a ``Credential`` uses when you name none: a chain (see ``ChainedCredentialStore``) that reads a
/// delivered secret when one is there for the credential, and otherwise the Secret Service.
///
/// Without configuration the chain is `delivered,secret-service`: systemd credentials (`$CREDENTIALS_DIRECTORY`),
/// then container secrets (`/run/secrets`), then the Secret Service; the first two are passed over where they are
/// not set up, so on a desktop everything works as with ``SecretServiceStore`` alone, and the same program reads
/// its token from a systemd unit's credentials with no code change. Saves go to the Secret Service. Inside a
/// Flatpak (or Snap) sandbox the Secret portal takes the Secret Service's place (``SecretPortalStore``), as it does
/// for libsecret's own password functions: the app's secrets stay in the sandbox, and need no permission.
///
/// An administrator sets another chain without code, in the environment:
///
/// ```sh
/// SPLINT_CREDENTIAL_STORES=delivered,kernel-keyring my-daemon
/// ```
///
/// The names are those of ``storeNames``. An unknown name is an error at the first call
/// (``CredentialError/invalidConfiguration(_:)``), never a silent default. No store of the chain writes plaintext
/// files, and a locked keyring is never passed over.
public final class DefaultCredentialStore: CredentialStore, InterruptibleCredentialStore {
  /// The store every `Credential` without a store of its own uses.
  public static let shared = DefaultCredentialStore()

  /// The environment variable that sets the chain: store names, separated by commas.
  public static let environmentVariable = "SPLINT_CREDENTIAL_STORES"

  /// The chain used when ``environmentVariable`` is not set: `delivered,secret-service`, and inside a Flatpak or
  /// Snap sandbox `delivered,secret-portal` (the app's own secrets through the Secret portal, as libsecret keeps
  /// them there; see ``SecretPortalStore``).
  public static var defaultChain: [String] {
    ["delivered", SecretPortalStore.isSandboxed ? "secret-portal" : "secret-service"]
  }

  /// The names a chain is made of, and what each stands for: `delivered` (systemd credentials, then container
  /// secrets), `systemd-credentials`, `container-secrets`, `secret-service`, `secret-portal` and `kernel-keyring`.
  /// A program built with the SplintFleet trait that calls its `VaultCredentialStore.register()` at start-up may
  /// also name `vault` (OpenBao or HashiCorp Vault).
  public static let storeNames = [
    "delivered", "systemd-credentials", "container-secrets", "secret-service", "secret-portal", "kernel-keyring",
  ]

  /// The names the environment variable gave last, parsed: read once per value, not at every call.
  private let parsed = Mutex<(setting: String?, generation: Int, names: Result<[Name], CredentialError>)?>(nil)

  /// One name of a chain, as parsed.
  private enum Name {
    /// `delivered`: the delivered sources set up here, at each call.
    case delivered
    /// Any other store.
    case store(any CredentialStore)
  }

  private init() {}

  /// The names, parsed; errors begin with `source`.
  private static func parse(_ names: [String], source: String) throws(CredentialError) -> [Name] {
    var parsed: [Name] = []
    let known = storeNames + RegisteredStores.names
    for name in names {
      if !storeNames.contains(name), let store = try RegisteredStores.store(named: name) {
        parsed.append(.store(store))
        continue
      }
      switch name {
      case "delivered": parsed.append(.delivered)
      case "systemd-credentials": parsed.append(.store(DeliveredCredentialStore.systemd))
      case "container-secrets": parsed.append(.store(DeliveredCredentialStore.containerSecrets))
      case "secret-service": parsed.append(.store(SecretServiceStore.shared))
      case "secret-portal": parsed.append(.store(SecretPortalStore.shared))
      case "kernel-keyring": parsed.append(.store(KernelKeyringStore()))
      default:
        throw .invalidConfiguration(source + RegisteredStores.unknown(name, known: known))
      }
    }
    if parsed.isEmpty {
      throw .invalidConfiguration("\(source)No store is named. Name one or more of \(known.joined(separator: ", ")).")
    }
    return parsed
  }

  /// The chain in use now: from ``environmentVariable`` when it is set, else ``defaultChain``. `delivered` stands
  /// for the delivered sources set up at this moment (systemd credentials when `$CREDENTIALS_DIRECTORY` is set,
  /// container secrets when `/run/secrets` exists), so that one not set up is left out rather than reported; a
  /// source named on its own is always asked.
  ///
  /// - Throws: ``CredentialError/invalidConfiguration(_:)`` when ``environmentVariable`` names an unknown store.
  public func chain() throws(CredentialError) -> ChainedCredentialStore {
    let setting = SystemCall.environment(Self.environmentVariable)
    let generation = RegisteredStores.generation
    let names = parsed.withLock { parsed in
      if let parsed, parsed.setting == setting, parsed.generation == generation { return parsed.names }
      let names = Result { () throws(CredentialError) in
        let source = setting.map { "\(Self.environmentVariable)=\"\($0)\": " } ?? ""
        return try Self.parse(setting.map(Self.names(in:)) ?? Self.defaultChain, source: source)
      }
      parsed = (setting, generation, names)
      return names
    }
    return Self.chain(of: try names.get())
  }

  /// The store names ``environmentVariable`` gives now, as ``chain()`` reads them, or nil when it is not set: for
  /// `splintctl`, which runs its build with SplintFleet when they name `vault`.
  package static var namesInEnvironment: [String]? {
    SystemCall.environment(environmentVariable).map(names(in:))
  }

  /// The names `setting` lists: split at its commas, each without the spaces and tabs around it.
  private static func names(in setting: String) -> [String] {
    setting.split(separator: ",").map { $0.trimming(\.isSpaceOrTab) }
  }

  /// The chain `names` stand for now, as ``chain()`` makes it from the environment: `delivered` stands for the
  /// delivered sources set up at this moment.
  ///
  /// - Throws: ``CredentialError/invalidConfiguration(_:)`` for a name that is not one of ``storeNames``, or no name.
  public static func chain(named names: [String]) throws(CredentialError) -> ChainedCredentialStore {
    chain(of: try parse(names, source: ""))
  }

  private static func chain(of names: [Name]) -> ChainedCredentialStore {
    let stores = names.flatMap { name -> [any CredentialStore] in
      switch name {
      case .delivered:
        [DeliveredCredentialStore.systemd, DeliveredCredentialStore.containerSecrets].filter(\.isSetUp)
      case .store(let store): [store]
      }
    }
    return ChainedCredentialStore(stores, skippingUnavailable: true)
  }

  /// The chain's name, or what is wrong with its configuration.
  public var name: String {
    do {
      return try chain().name
    } catch {
      return "\(Self.environmentVariable) (\(error))"
    }
  }

  /// Reads through the chain.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    try chain().readSecret(for: credential)
  }

  /// Saves in the chain's first store that can write.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    try chain().saveSecret(secret, contentType: contentType, for: credential)
  }

  /// Deletes from the chain's first store that can write.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    try chain().deleteSecret(for: credential)
  }

  /// The accounts of every store of the chain.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try chain().accounts(service: service)
  }

  /// Available when one store of the chain is.
  public func availability() -> CredentialAvailability {
    do {
      return try chain().availability()
    } catch {
      return .unavailable(error)
    }
  }

  package func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
    try await chain().readSecretInterruptibly(for: credential)
  }

  package func saveSecretInterruptibly(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) async throws(CredentialError) {
    try await chain().saveSecretInterruptibly(secret, contentType: contentType, for: credential)
  }

  package func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
    try await chain().deleteSecretInterruptibly(for: credential)
  }

  package func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
    try await chain().accountsInterruptibly(service: service)
  }
}
