#if SplintConfiguration
  public import Configuration
  public import SplintSettings
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A settings file as a swift-configuration provider, live: a change made by any process, or by hand in an
  /// editor, reaches `ConfigReader` watches as soon as inotify reports it, with no polling.
  ///
  /// ```swift
  /// let settings = SettingsProvider(store: SettingsStore(suite: "com.example.sync"))
  /// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), settings])
  /// let port = config.int(forKey: "server.port", default: 8080)
  /// ```
  ///
  /// Keys and values map as ``SettingsSnapshot`` describes (as swift-configuration's own `JSONSnapshot` maps
  /// them). Reads answer from memory: the provider starts the store's watcher, which keeps the store's values up to
  /// date. `fetchValue` answers the same (the watcher has the file's newest content already). `watchValue` and
  /// `watchSnapshot` yield the current value first, then each change, keeping only the newest when the reader falls
  /// behind; they stop watching when the task that watches is cancelled.
  ///
  /// When the file breaks (a half-finished hand edit, bad JSON), the last good values stay in use and
  /// ``description`` names the problem; `errors()` on ``store`` reports each one. The store's
  /// migrations run before the provider reads, and the reserved `"$version"` key is not a setting.
  public final class SettingsProvider: ConfigProvider, Sendable, CustomStringConvertible {
    /// The settings file the provider reads.
    public let store: SettingsStore
    /// `SettingsProvider[<path of the settings file>]`.
    public let providerName: String
    private let bytesDecoder: any ConfigBytesFromStringDecoder
    private let secretsSpecifier: SecretsSpecifier<String, JSONValue>
    /// The watches whose relay task is still running (for tests: it must come back to 0 when they end).
    private let relays = Atomic<Int>(0)

    /// A provider over `store`, which it starts watching.
    ///
    /// - Parameters:
    ///   - store: The settings file, such as `SettingsStore(suite: "com.example.sync")`.
    ///   - bytesDecoder: How a string setting becomes bytes, for `bytes` and `byteChunkArray` reads: base64 unless
    ///     you pass `.hex`.
    ///   - secretsSpecifier: Which settings are secret, so that access logs print `<REDACTED>` for them: none by
    ///     default. Keys are dot-separated (`database.password`). Keep real secrets in a ``SecretsProvider``.
    public init(
      store: SettingsStore, bytesDecoder: some ConfigBytesFromStringDecoder = .base64,
      secretsSpecifier: SecretsSpecifier<String, JSONValue> = .none
    ) {
      self.store = store
      self.providerName = "SettingsProvider[\(store.fileURL.path)]"
      self.bytesDecoder = bytesDecoder
      self.secretsSpecifier = secretsSpecifier
      // The store starts watching with its first stream of changes; this one is dropped at once, the watcher stays.
      _ = store.changes()
    }

    /// `SettingsProvider[<path>]`, and what is wrong with the file, if anything, while the last good values serve.
    public var description: String {
      guard let problem = store.fileError else { return providerName }
      return "\(providerName) (serving the last good values: \(problem))"
    }

    /// The settings now.
    public func snapshot() -> any ConfigSnapshot { currentSnapshot() }

    /// The value for `key` converted to `type`, from memory.
    ///
    /// - Throws: ``ConfigLookupError``, as ``SettingsSnapshot/value(forKey:type:)`` throws it.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
      try currentSnapshot().value(forKey: key, type: type)
    }

    /// The same as ``value(forKey:type:)``: the watcher keeps memory as new as the file.
    ///
    /// - Throws: ``ConfigLookupError``, as ``SettingsSnapshot/value(forKey:type:)`` throws it.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
      try value(forKey: key, type: type)
    }

    /// Watches `key`: the current value first, then the value after each change that alters it.
    ///
    /// - Parameters:
    ///   - key: The key to watch.
    ///   - type: The type to convert its value to; a value that does not convert arrives as a failure.
    ///   - updatesHandler: Reads the updates; watching ends when it returns.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
      forKey key: AbsoluteConfigKey, type: ConfigType,
      updatesHandler:
        nonisolated(nonsending) (
          _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
        ) async throws -> Return
    ) async throws -> Return {
      let encodedKey = SettingsSnapshot.encode(key)
      // A change to a member the key may be found under: its first components, or the whole key.
      let concerns: @Sendable (Set<JSONKey>) -> Bool = { keys in
        keys.contains { $0.text == encodedKey || encodedKey.hasPrefix($0.text + ".") }
      }
      return try await watch(concerns: concerns, state: { $0.lookup(key, type) }, element: { $0.mapError(\.self) }) {
        try await updatesHandler(ConfigUpdatesAsyncSequence($0))
      }
    }

    /// Watches the settings: the current snapshot first, then one after each change.
    ///
    /// - Parameter updatesHandler: Reads the snapshots; watching ends when it returns.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
      updatesHandler:
        nonisolated(nonsending) (
          _ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>
        ) async throws -> Return
    ) async throws -> Return {
      try await watch(
        concerns: { _ in true }, state: { EveryChange(snapshot: $0) }, element: { $0.snapshot as any ConfigSnapshot }
      ) {
        try await updatesHandler(ConfigUpdatesAsyncSequence($0))
      }
    }

    /// How many watches are running now (for tests).
    package var runningWatches: Int { relays.load(ordering: .acquiring) }

    private func currentSnapshot() -> SettingsSnapshot {
      SettingsSnapshot(
        providerName: providerName, values: store.values, layers: Layers(store: store), file: store.fileURL.path,
        bytesDecoder: bytesDecoder, secretsSpecifier: secretsSpecifier)
    }

    /// Runs `body` with a stream that starts with the current state's element and gets a new element each time a
    /// change that `concerns` it alters the state; only the newest waits while `body` is busy. The relay task that
    /// feeds the stream ends, and with it the store's stream of changes, when `body` returns or throws.
    nonisolated(nonsending) private func watch<State: Equatable & Sendable, Element: Sendable, Return: ~Copyable>(
      concerns: @escaping @Sendable (Set<JSONKey>) -> Bool,
      state: @escaping @Sendable (SettingsSnapshot) -> State,
      element: @escaping @Sendable (State) -> Element,
      body: nonisolated(nonsending) (AsyncStream<Element>) async throws -> Return
    ) async throws -> Return {
      // Subscribed before the first state is taken, so that no change slips between the two.
      let changes = store.changes()
      let (updates, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1))
      let first = state(currentSnapshot())
      continuation.yield(element(first))
      relays.add(1, ordering: .relaxed)
      let relay = Task {
        var last = first
        for await keys in changes where concerns(keys) {
          let now = state(currentSnapshot())
          guard now != last else { continue }
          last = now
          continuation.yield(element(now))
        }
        continuation.finish()
        relays.subtract(1, ordering: .releasing)
      }
      defer { relay.cancel() }
      return try await body(updates)
    }
  }

  /// A snapshot as a watch's state, unequal to every other: a snapshot watch yields at every change, since a change
  /// to a system-wide file need not show in the user's file's values.
  private struct EveryChange: Equatable, Sendable {
    let snapshot: SettingsSnapshot
    static func == (_: Self, _: Self) -> Bool { false }
  }
#endif
