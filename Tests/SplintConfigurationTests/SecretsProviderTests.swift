#if SplintConfiguration
  import Configuration
  import ConfigurationTesting
  import Foundation
  import SplintConfiguration
  import SplintSecrets
  import SplintSettings
  import TestSupport
  import Synchronization
  import Testing

  @Suite struct SecretsProviderTests {
    let store = InMemoryCredentialStore()

    /// Credentials holding ProviderCompatTest's required data, as text (bytes as bytes), in `store`.
    static func compatibilityCredentials(service: String, store: any CredentialStore) throws -> [String: Credential] {
      let texts = [
        "string": "Hello", "other.string": "Other Hello", "int": "42", "other.int": "24", "double": "3.14",
        "other.double": "2.72", "bool": "true", "other.bool": "false", "stringy.array": "Hello, World",
        "other.stringy.array": "Hello,Swift", "inty.array": "42,24", "other.inty.array": "16, 32",
        "doubly.array": "3.14,2.72", "other.doubly.array": "0.9,1.8", "booly.array": "true,false",
        "other.booly.array": "no,yes,1", "bytes": "magic", "other.bytes": "magic2", "byteChunky.array": "magic",
        "other.byteChunky.array": "magic2",
      ]
      var credentials: [String: Credential] = [:]
      for (key, text) in texts {
        let credential = Credential(service: service, account: key, store: store)
        try credential.save(text)
        credentials[key] = credential
      }
      return credentials
    }

    /// A secret is one value: bytes are the secret as stored, and a byte chunk array holds it as its one chunk, as
    /// swift-configuration's DirectoryFilesProvider reads a file (its own compatibility test overrides the same two
    /// keys).
    static let compatibilityOverrides: [String: ConfigContent] = [
      "byteChunky.array": .byteChunkArray([Array("magic".utf8)]),
      "other.byteChunky.array": .byteChunkArray([Array("magic2".utf8)]),
    ]

    @Test func passesSwiftConfigurationsProviderCompatibilityTest() async throws {
      let provider = SecretsProvider(try Self.compatibilityCredentials(service: "compat", store: store))
      try await ProviderCompatTest(provider: provider, configuration: .init(overrides: Self.compatibilityOverrides))
        .runTest()
    }

    @Test(TestKeyring.required) func passesTheCompatibilityTestAgainstTheSecretService() async throws {
      let service = TestKeyring.uniqueService()
      let credentials = try Self.compatibilityCredentials(service: service, store: DefaultCredentialStore.shared)
      defer { for credential in credentials.values { try? credential.delete() } }
      try await ProviderCompatTest(
        provider: SecretsProvider(credentials), configuration: .init(overrides: Self.compatibilityOverrides)
      )
      .runTest()
    }

    @Test func everyValueIsSecretAndNeverPrintedByTheReaderOrTheProvider() async throws {
      let token = Credential(service: "api.example.com", account: "daemon", store: store)
      try await token.save("tok-3141592653")
      let provider = SecretsProvider(["api.token": token])
      let reporter = RecordingReporter()
      let config = ConfigReader(provider: provider, accessReporter: reporter)
      #expect(config.string(forKey: "api.token") == "tok-3141592653")
      #expect(try await config.fetchRequiredString(forKey: "api.token") == "tok-3141592653")
      #expect(try provider.value(forKey: ["api", "token"], type: .string).value?.isSecret == true)
      #expect(reporter.events.withLock { $0.count } == 2)
      #expect(reporter.text.contains("<REDACTED>"))
      #expect(!reporter.text.contains("3141592653"))
      #expect(!"\(provider)".contains("3141592653"))
      #expect("\(provider)" == #"SecretsProvider[1 credentials: api.token=\#(token)]"#)
      #expect(provider.providerName == "SecretsProvider")
    }

    @Test(
      "the secret's text converts as EnvironmentVariablesProvider converts a variable",
      arguments: [
        ("8443", ConfigType.int, ConfigContent.int(8443)),
        ("0.25", .double, .double(0.25)),
        ("YES", .bool, .bool(true)),
        ("0", .bool, .bool(false)),
        ("a, b ,c", .stringArray, .stringArray(["a", "b", "c"])),
        ("", .stringArray, .stringArray([])),
        ("1,2", .intArray, .intArray([1, 2])),
        ("1,2.5", .doubleArray, .doubleArray([1, 2.5])),
        ("true,no", .boolArray, .boolArray([true, false])),
        (" spaced ", .string, .string(" spaced ")),
      ])
    func conversion(secret: String, type: ConfigType, expected: ConfigContent) throws {
      let credential = Credential(service: "conversion", account: "a", store: store)
      try credential.save(secret)
      let value = try SecretsProvider(["a": credential]).value(forKey: ["a"], type: type).value
      #expect(value == ConfigValue(expected, isSecret: true))
    }

    @Test(
      "a secret that is not a value of the type asked throws notConvertible, never showing it",
      arguments: [
        (ConfigType.int, "s3cret"), (.double, "s3cret"), (.bool, "s3cret"), (.intArray, "1,s3cret"),
        (.doubleArray, "s3cret"), (.boolArray, "yes,s3cret"),
      ])
    func notConvertible(type: ConfigType, secret: String) throws {
      let credential = Credential(service: "conversion", account: "a", store: store)
      try credential.save(secret)
      let error = #expect(throws: ConfigLookupError.self) {
        try SecretsProvider(["db.port": credential]).value(forKey: ["db", "port"], type: type)
      }
      #expect(error?.code == .notConvertible)
      #expect(error?.key == "db.port")
      #expect(error?.description.contains("\(credential) holds a secret for 'db.port'") == true)
      #expect(error?.description.contains("s3cret") == false)
    }

    @Test func binarySecretsReadAsBytesAndNotAsText() async throws {
      let credential = Credential(service: "binary", account: "key", store: store)
      try await credential.save(Data([0xff, 0x00, 0x7f]))
      let provider = SecretsProvider(["key": credential])
      #expect(try provider.value(forKey: ["key"], type: .bytes).value?.content == .bytes([0xff, 0x00, 0x7f]))
      let error = await #expect(throws: ConfigLookupError.self) {
        try await provider.fetchValue(forKey: ["key"], type: .string)
      }
      #expect(error?.code == .credentialUnavailable)
      #expect(error?.credentialError == .notText)
    }

    @Test func keysWithoutACredentialAndCredentialsWithNothingStoredAreAbsent() async throws {
      let provider = SecretsProvider(["empty": Credential(service: "nothing", account: "here", store: store)])
      #expect(try provider.value(forKey: ["empty"], type: .string) == LookupResult(encodedKey: "empty", value: nil))
      #expect(try await provider.fetchValue(forKey: ["empty"], type: .string).value == nil)
      #expect(try provider.value(forKey: ["other"], type: .string) == LookupResult(encodedKey: "other", value: nil))
      #expect(try await provider.fetchValue(forKey: ["other"], type: .int).value == nil)
      // So a layer below answers, or the default.
      let config = ConfigReader(providers: [provider, InMemoryProvider(values: ["empty": "below"])])
      #expect(config.string(forKey: "empty") == "below")
    }

    @Test func aCredentialThatCannotBeReadIsALookupErrorWithTheRemedy() async throws {
      let credential = Credential(service: "api.example.com", account: "daemon", store: LockedStore())
      let provider = SecretsProvider(["api.token": credential])
      for error in [
        #expect(throws: ConfigLookupError.self) { try provider.value(forKey: ["api", "token"], type: .string) },
        await #expect(throws: ConfigLookupError.self) {
          try await provider.fetchValue(forKey: ["api", "token"], type: .string)
        },
      ] {
        #expect(error?.code == .credentialUnavailable)
        #expect(error?.credentialError == .locked)
        #expect(
          error?.description
            == "The secret for 'api.token', \(credential), could not be read: \(CredentialError.locked)")
      }
      // A reader hands it on: `required` reads throw it, the others report it and take the default.
      let reporter = RecordingReporter()
      let config = ConfigReader(provider: provider, accessReporter: reporter)
      #expect(config.string(forKey: "api.token", default: "none") == "none")
      let reported = reporter.events.withLock { $0.first?.providerResults.first }
      #expect(reported?.providerName == "SecretsProvider")
      #expect(throws: ConfigLookupError.self) { try reported?.result.get() }
      await #expect(throws: ConfigLookupError.self) { try await config.fetchRequiredString(forKey: "api.token") }
    }

    @Test func aSnapshotHoldsNoSecretAndReadsWhenAsked() throws {
      let credential = Credential(service: "rotating", account: "a", store: store)
      try credential.save("first")
      let snapshot = SecretsProvider(["a": credential]).snapshot()
      try credential.save("second")
      #expect(try snapshot.value(forKey: ["a"], type: .string).value?.content == .string("second"))
      #expect(snapshot.providerName == "SecretsProvider")
    }

    @Test func aWatchYieldsTheSecretAsItIsWhenItStarts() async throws {
      let credential = Credential(service: "watched", account: "a", store: store)
      try await credential.save("value")
      let provider = SecretsProvider(["a": credential])
      let first = try await provider.watchValue(forKey: ["a"], type: .string) { updates in
        var iterator = updates.makeAsyncIterator()
        return try await iterator.next()?.get()
      }
      #expect(first?.value == ConfigValue(.string("value"), isSecret: true))
      let snapshotValue = try await provider.watchSnapshot { updates in
        var iterator = updates.makeAsyncIterator()
        return try await iterator.next()?.value(forKey: ["a"], type: .string)
      }
      #expect(snapshotValue?.value?.content == .string("value"))
    }

    @Test func layeredUnderEnvironmentVariablesAndSettings() throws {
      let scratch = Scratch()
      let settings = SettingsProvider(store: try scratch.store(#"{"api": {"url": "https://api.example.com"}}"#))
      let token = Credential(service: "api.example.com", account: "daemon", store: store)
      try token.save("from-keyring")
      let secrets = SecretsProvider(["api.token": token])
      let environment = EnvironmentVariablesProvider(environmentVariables: ["API_URL": "http://localhost:8080"])
      let config = ConfigReader(providers: [environment, settings, secrets])
      #expect(config.string(forKey: "api.url") == "http://localhost:8080")
      #expect(config.string(forKey: "api.token", isSecret: true) == "from-keyring")
      let overridden = ConfigReader(providers: [
        EnvironmentVariablesProvider(environmentVariables: ["API_TOKEN": "from-env"]), settings, secrets,
      ])
      #expect(overridden.string(forKey: "api.token", isSecret: true) == "from-env")
    }
  }

  /// A store whose keyring is locked.
  private final class LockedStore: CredentialStore {
    func readSecret(for credential: Credential) throws(CredentialError) -> Data? { throw .locked }
    func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError)
    { throw .locked }
    func deleteSecret(for credential: Credential) throws(CredentialError) { throw .locked }
    func accounts(service: String) throws(CredentialError) -> [String] { throw .locked }
    func availability() -> CredentialAvailability { .available }
  }
#endif
