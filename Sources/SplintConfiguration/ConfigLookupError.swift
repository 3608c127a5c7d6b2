#if SplintConfiguration
  import Configuration
  public import SplintSecrets

  /// Why ``SettingsProvider`` or ``SecretsProvider`` could not answer a key, with what to do about it.
  ///
  /// A `ConfigReader` hands it on as it is: the non-throwing reads (`config.string(forKey:default:)`) report it to the
  /// reader's access reporter and return the default, the `required…` reads throw it.
  ///
  /// ```swift
  /// do {
  ///   let token = try await config.fetchRequiredString(forKey: "api.token", isSecret: true)
  /// } catch let error as ConfigLookupError where error.code == .credentialUnavailable {
  ///   print(error)  // says which secret, and how to make it readable (unlock the keyring, ...)
  /// }
  /// ```
  ///
  /// No description ever contains a value: neither a secret nor a setting (a setting may be secret too).
  public struct ConfigLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; compare with the static members and keep a `default`, more may come.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
      /// The code's name, such as `notConvertible`.
      public let description: String

      /// The value exists but is not of the type asked for, and does not convert to it.
      public static let notConvertible = Code(description: "notConvertible")
      /// The value is one swift-configuration has no type for: an array mixing types, or holding objects, arrays or
      /// nulls.
      public static let unsupportedValue = Code(description: "unsupportedValue")
      /// The credential behind a secret could not be read (a locked keyring, no Secret Service): see
      /// ``ConfigLookupError/credentialError``.
      public static let credentialUnavailable = Code(description: "credentialUnavailable")
    }

    /// The kind of failure.
    public let code: Code
    /// The key, dot-separated, as the provider looked it up (`server.port`).
    public let key: String
    /// What reading the credential threw, for ``Code/credentialUnavailable``.
    public let credentialError: CredentialError?
    /// A full sentence: which key, where, what is wrong and what to do.
    public let description: String

    static func notConvertible(key: String, holding kind: String, to type: ConfigType, in place: String) -> Self {
      Self(
        code: .notConvertible, key: key, credentialError: nil,
        description: """
          \(place) holds \(kind) for '\(key)', which does not convert to \(type.rawValue). Store a value of that type \
          there, or read the key as the type it holds.
          """)
    }

    static func unsupportedValue(key: String, reason: String, in place: String) -> Self {
      Self(
        code: .unsupportedValue, key: key, credentialError: nil,
        description: """
          \(place) holds \(reason) for '\(key)', which swift-configuration has no type for: its arrays hold strings \
          only, or numbers and booleans only. Change the value, or read it with SettingsStore.value(forKey:).
          """)
    }

    static func credentialUnavailable(key: String, credential: Credential, error: CredentialError) -> Self {
      Self(
        code: .credentialUnavailable, key: key, credentialError: error,
        description: "The secret for '\(key)', \(credential), could not be read: \(error)")
    }
  }
#endif
