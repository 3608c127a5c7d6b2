#if SplintConfiguration
  public import Configuration
  public import SplintSecrets

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// Chosen configuration keys answered from `Credential`s (the Secret Service, a delivered credential, any
  /// `CredentialStore`), every value marked secret, so that swift-configuration's access logs and descriptions print
  /// `<REDACTED>` in its place.
  ///
  /// ```swift
  /// let secrets = SecretsProvider(["api.token": Credential(service: "api.example.com", account: "daemon")])
  /// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), secrets])
  /// let token = try await config.fetchRequiredString(forKey: "api.token", isSecret: true)
  /// ```
  ///
  /// Secrets are read on demand and never cached: every `value`, `fetchValue` and snapshot lookup asks the
  /// credential's store again (a millisecond or so with the Secret Service), so a rotated secret is seen at the next
  /// read. `fetchValue` (`config.fetch…`) reads without blocking the calling thread; `value` (`config.string…`)
  /// blocks while the store works. Keys the provider has no credential for, and credentials with nothing stored,
  /// are absent: the next provider, or the default, answers.
  ///
  /// - A snapshot holds no secret: it is the provider itself, and reads when asked, so two reads of one snapshot see
  ///   a secret that changed between them.
  /// - A watch yields the secret once, when it starts, and nothing after: the Secret Service does not announce
  ///   changes. Read with `fetch…` when you need the secret, rather than keeping it.
  ///
  /// Values convert from the secret's text as `EnvironmentVariablesProvider` converts a variable's: integers,
  /// doubles, booleans (`true`/`false`, `yes`/`no`, `1`/`0`), comma-separated arrays. `bytes` is the secret exactly
  /// as stored (binary secrets included), and `byteChunkArray` one chunk of it.
  public struct SecretsProvider: ConfigProvider, ConfigSnapshot, CustomStringConvertible {
    /// Each configuration key, dot-separated (`api.token`), and the credential that answers it.
    public let credentials: [String: Credential]

    /// A provider answering each key of `credentials` from its credential.
    ///
    /// - Parameter credentials: Keys dot-separated as swift-configuration writes them (`"database.password"`), and
    ///   the credential that holds each one's secret.
    public init(_ credentials: [String: Credential]) {
      self.credentials = credentials
    }

    /// `SecretsProvider`.
    public var providerName: String { "SecretsProvider" }

    /// `SecretsProvider[<count> credentials: <key>=<credential>, ...]`: names only, never a secret.
    public var description: String {
      let names = credentials.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      return "\(providerName)[\(credentials.count) credentials: \(names.joined(separator: ", "))]"
    }

    /// The secret for `key`, read now, converted to `type`, marked secret.
    ///
    /// - Throws: ``ConfigLookupError`` with ``ConfigLookupError/Code/credentialUnavailable`` when the credential
    ///   cannot be read (its ``ConfigLookupError/credentialError`` says why and what to do), or
    ///   ``ConfigLookupError/Code/notConvertible`` when the secret's text is not a value of `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
      let encodedKey = SettingsSnapshot.encode(key)
      guard let credential = credentials[encodedKey] else { return LookupResult(encodedKey: encodedKey, value: nil) }
      let secret: Data?
      do { secret = try credential.readData() } catch {
        throw ConfigLookupError.credentialUnavailable(key: encodedKey, credential: credential, error: error)
      }
      return try Self.lookupResult(secret, key: encodedKey, credential: credential, type: type)
    }

    /// ``value(forKey:type:)``, reading on a thread of its own so that the calling thread does not wait.
    ///
    /// - Throws: ``ConfigLookupError``, as ``value(forKey:type:)`` throws it.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
      let encodedKey = SettingsSnapshot.encode(key)
      guard let credential = credentials[encodedKey] else { return LookupResult(encodedKey: encodedKey, value: nil) }
      let secret: Data?
      do { secret = try await credential.readData() } catch {
        throw ConfigLookupError.credentialUnavailable(key: encodedKey, credential: credential, error: error)
      }
      return try Self.lookupResult(secret, key: encodedKey, credential: credential, type: type)
    }

    /// Yields the secret as it is now, once (or the error reading it), and nothing after.
    ///
    /// - Parameters:
    ///   - key: The key to read.
    ///   - type: The type to convert the secret to.
    ///   - updatesHandler: Reads the update.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
      forKey key: AbsoluteConfigKey, type: ConfigType,
      updatesHandler:
        nonisolated(nonsending) (
          _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
        ) async throws -> Return
    ) async throws -> Return {
      try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    /// The provider itself, which reads each secret when asked: a snapshot holds none.
    public func snapshot() -> any ConfigSnapshot { self }

    /// Yields ``snapshot()`` once, and nothing after.
    ///
    /// - Parameter updatesHandler: Reads the snapshot.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
      updatesHandler:
        nonisolated(nonsending) (
          _ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>
        ) async throws -> Return
    ) async throws -> Return {
      try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }

    private static func lookupResult(
      _ secret: Data?, key: String, credential: Credential, type: ConfigType
    ) throws(ConfigLookupError) -> LookupResult {
      guard let secret else { return LookupResult(encodedKey: key, value: nil) }
      let content = try convert(secret, to: type, key: key, credential: credential)
      return LookupResult(encodedKey: key, value: ConfigValue(content, isSecret: true))
    }

    private static func convert(
      _ secret: Data, to type: ConfigType, key: String, credential: Credential
    ) throws(ConfigLookupError) -> ConfigContent {
      switch type {
      case .bytes: return .bytes(Array(secret))
      case .byteChunkArray: return .byteChunkArray([Array(secret)])
      default: break
      }
      guard let text = String(validating: secret, as: UTF8.self) else {
        throw .credentialUnavailable(key: key, credential: credential, error: .notText)
      }
      let items = text.split(separator: ",").map(trimmed)
      let converted: ConfigContent? =
        switch type {
        case .int: Int(text).map(ConfigContent.int)
        case .double: Double(text).map(ConfigContent.double)
        case .bool: bool(text).map(ConfigContent.bool)
        case .stringArray: .stringArray(items)
        case .intArray: all(items, Int.init).map(ConfigContent.intArray)
        case .doubleArray: all(items, Double.init).map(ConfigContent.doubleArray)
        case .boolArray: all(items, bool).map(ConfigContent.boolArray)
        default: .string(text)
        }
      guard let converted else {
        throw .notConvertible(key: key, holding: "a secret", to: type, in: "\(credential)")
      }
      return converted
    }

    /// `true`/`false`, `yes`/`no` (in any case), `1`/`0`, as `EnvironmentVariablesProvider` reads booleans.
    private static func bool(_ text: String) -> Bool? {
      switch text.lowercased() {
      case "true", "yes", "1": true
      case "false", "no", "0": false
      default: nil
      }
    }

    private static func all<Element>(_ items: [String], _ convert: (String) -> Element?) -> [Element]? {
      var converted: [Element] = []
      for item in items {
        guard let element = convert(item) else { return nil }
        converted.append(element)
      }
      return converted
    }

    private static func trimmed(_ item: Substring) -> String {
      String(item.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
  }
#endif
