#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A JSON settings file, shared with every other `SettingsStore` and ``Setting`` on it in this process, and with
/// every process that opens the same file.
///
/// ```swift
/// let store = SettingsStore(suite: "com.example.sync")   // ~/.config/com.example.sync/settings.json
/// let interval = Setting("interval", default: 30, store: store)
///
/// // A change made by a command-line tool reaches a daemon's Settings as soon as it is written:
/// try store.update { settings in settings[interval] += 10 }
/// ```
///
/// Writes take an exclusive `flock` on `settings.json.lock`, re-read the file under the lock, change only their
/// keys, and replace the file atomically and durably, so that concurrent writers in several processes lose
/// nothing and a crash never leaves a torn file. Keys this process does not use stay exactly as they were. Files
/// are created with mode 0600 in directories with mode 0700.
///
/// The file is watched, with inotify (one instance per process) or by polling where inotify is unavailable, from
/// the moment something may wait for a change: ``changes()``, ``errors()``, or a ``Setting`` on it that is read or
/// observed. Until then a store runs nothing in the background (no thread, no inotify instance), and each read
/// (``value(forKey:)``, ``values``, ``keys``, ``fileError``) looks at the file first, so that it sees what the file
/// holds now: a command-line tool's one-shot read or write costs no more than the read or write itself.
public final class SettingsStore: Sendable {
  let file: SettingsFile

  /// The store for this program: the suite named after the executable.
  public static let standard = SettingsStore(suite: ProcessInfo.processInfo.processName)

  /// The store for a suite: `$XDG_CONFIG_HOME/<suite>/settings.json`, or `~/.config/<suite>/settings.json` when
  /// `XDG_CONFIG_HOME` is unset or not an absolute path (as the XDG specification says). A command-line tool and a
  /// daemon of the same user share settings by naming the same suite.
  ///
  /// - Parameters:
  ///   - suite: A directory name such as `com.example.sync`: not empty, no `/`, not `.` or `..`. A name that comes
  ///     from outside the program (a command-line option) is checked first with ``fileURL(forSuite:)``.
  ///   - migrations: Changes to the settings' shape since the program's first release, oldest first: the file is
  ///     brought to the newest before this returns (see ``SettingsMigration``).
  public convenience init(suite: String, migrations: [SettingsMigration] = []) {
    do {
      self.init(fileURL: try Self.fileURL(forSuite: suite), migrations: migrations)
    } catch {
      preconditionFailure(error.description)  // coverage:ignore — a trapping process writes no coverage profile
    }
  }

  /// The settings file of `suite`, as ``init(suite:migrations:)`` finds it.
  ///
  /// - Throws: ``SettingsError/invalidSuiteName(_:)`` when `suite` is not a plain directory name.
  public static func fileURL(forSuite suite: String) throws(SettingsError) -> URL {
    guard !suite.isEmpty, !suite.contains("/"), suite != ".", suite != "..", !suite.contains("\0") else {
      throw .invalidSuiteName(suite)
    }
    return configurationDirectory().appendingPathComponent(suite).appendingPathComponent("settings.json")
  }

  /// The store for the settings file at `fileURL`, for system daemons (whose home is elsewhere) and tests. The file
  /// need not exist; a symlink is followed for writes and stays a symlink.
  ///
  /// - Parameters:
  ///   - fileURL: The settings file.
  ///   - migrations: Changes to the settings' shape since the program's first release, oldest first: the file is
  ///     brought to the newest before this returns (see ``SettingsMigration``). Versions start at 1 and rise.
  public init(fileURL: URL, migrations: [SettingsMigration] = []) {
    file = SettingsFile.shared(for: fileURL)
    self.migrations = migrations
    file.migrate(migrations)
  }

  /// A store whose writes skip fsync: still atomic (a reader sees the whole old or the whole new file), but a power
  /// loss may undo them. For `script/bench`, which measures what durability costs; not public API.
  package init(fileURL: URL, syncsToDisk: Bool) {
    file = SettingsFile.shared(for: fileURL, syncsToDisk: syncsToDisk)
    migrations = []
  }

  /// The migrations the store was opened with, oldest first.
  let migrations: [SettingsMigration]

  /// The schema version the file records under the reserved key `"$version"`: the version of the last
  /// ``SettingsMigration`` it has had, 0 before any. Nil when `"$version"` holds something that is not a version.
  public var schemaVersion: Int? { file.schemaVersion }

  /// The settings file.
  public var fileURL: URL { file.url }

  /// What is wrong with the settings file now, if anything: ``SettingsError/corruptFile(_:reason:)`` or
  /// ``SettingsError/unreadableFile(_:reason:)``, else what keeps it from the version of the store's migrations
  /// (``SettingsError/newerVersion(_:version:known:)``, ``SettingsError/migrationFailed(_:version:reason:)``). Nil
  /// when the file is fine or does not exist. While the file has a problem, the last good values stay in use.
  public var fileError: SettingsError? { file.problem }

  /// The keys the file holds, in file order: not `"$version"`, which records the settings' schema version
  /// (``schemaVersion``).
  public var keys: [String] { file.keys }

  /// Every key's value (not `"$version"`'s: see ``keys``). Keys are ``JSONKey``s, which tell apart keys that Swift
  /// strings would take for one ("é" written as one scalar, or as "e" and a combining accent), as the file and every
  /// other JSON tool do.
  public var values: [JSONKey: JSONValue] { file.values }

  /// The value stored for `key`, or nil.
  public func value(forKey key: String) -> JSONValue? {
    file[key]
  }

  /// Stores `value` for `key`, with one write.
  ///
  /// - Throws: ``SettingsError/unencodableValue(key:reason:)`` for a value with NaN or infinity, and
  ///   ``SettingsError/writeFailed(_:reason:)``. Nothing is changed then.
  public func set(_ value: JSONValue, forKey key: String) throws(SettingsError) {
    try edit { $0[key] = value }
  }

  /// Removes `key`, so that settings on it read their defaults.
  ///
  /// - Throws: ``SettingsError/writeFailed(_:reason:)``; nothing is changed then.
  public func removeValue(forKey key: String) throws(SettingsError) {
    try edit { $0[key] = nil }
  }

  /// Changes several keys at once: `body` sees the file's current content under the file's lock, and what it
  /// changes is written with one write and announced as one change. Use it for read-modify-write across
  /// processes, such as counters, which plain assignments would race on.
  ///
  /// ```swift
  /// try store.update { settings in
  ///   settings[launches] += 1
  ///   settings["lastLaunch"] = .string("2026-11-22")
  /// }
  /// ```
  ///
  /// - Throws: What `body` throws (nothing is written then), ``SettingsError/unencodableValue(key:reason:)``, or
  ///   ``SettingsError/writeFailed(_:reason:)``.
  /// - Returns: What `body` returns.
  public func update<T: Sendable>(_ body: (inout SettingsTransaction) throws -> T) throws -> T {
    try file.write(
      { (document: inout SettingsDocument) throws -> T in
        var settings = SettingsTransaction(document: document)
        let result = try body(&settings)
        try commit(settings, to: &document)
        return result
      }, failed: { $0 })
  }

  // MARK: - Reset, import

  /// Removes `keys` from the file, with one write and one change, so that settings on them read their defaults.
  /// Keys that are not set are passed over; when none is set, nothing is written.
  ///
  /// ```swift
  /// let removed = try store.reset(keys: ["interval", "mode"])
  /// ```
  ///
  /// - Returns: The keys that were set and are removed now, in the order given (each once).
  /// - Throws: ``SettingsError/writeFailed(_:reason:)``; nothing is changed then.
  @discardableResult
  public func reset(keys: [String]) throws(SettingsError) -> [String] {
    try edit { settings in
      var removed: [String] = []
      var seen = Set<JSONKey>()
      for key in keys where seen.insert(JSONKey(key)).inserted && settings[key] != nil {
        settings[key] = nil
        removed.append(key)
      }
      return removed
    }
  }

  /// Removes every key this store's file holds, with one write and one change, so that every setting on it reads
  /// its default.
  ///
  /// Only this file changes: it holds what the user set. Values that do not come from it, a ``Setting``'s default
  /// in code, stay as they are.
  ///
  /// - Returns: The keys removed, in file order; empty when the file held none (nothing is written then).
  /// - Throws: ``SettingsError/writeFailed(_:reason:)``; nothing is changed then.
  @discardableResult
  public func resetAll() throws(SettingsError) -> [String] {
    try edit { settings in
      let removed = settings.keys
      for key in removed { settings[key] = nil }
      return removed
    }
  }

  /// Imports settings given as a JSON object (such as ``SettingsStore/values`` of another store, or a file that
  /// `splintctl export` wrote), in one transaction: the text is checked whole before anything is written, and the
  /// settings are written with one write, under the file's lock, and announced as one change.
  ///
  /// Merging (the default) sets each key the object holds, and keeps the file's other keys as they are. Replacing
  /// also removes the keys the object does not hold, so that the file ends with exactly the object's settings.
  /// Either way a key is set as a whole (an object value replaces the stored one, it is not merged into it), a key
  /// whose value is already the same stays exactly as it was, and when nothing changes nothing is written.
  ///
  /// An object that records a schema version (`"$version"`, as `splintctl export` writes it) is brought to the
  /// version of the store's migrations first, as a file would be; then its version must be the file's, unless the
  /// file holds no settings or is replaced (it takes the object's version then). An object without one is taken
  /// as it is.
  ///
  /// ```swift
  /// try store.importSettings(from: Data(contentsOf: backup))                  // merge
  /// try store.importSettings(from: Data(contentsOf: backup), replacing: true) // the backup, exactly
  /// ```
  ///
  /// - Parameters:
  ///   - json: UTF-8 text holding one JSON object (a byte order mark before it is skipped).
  ///   - replacing: Whether keys the object does not hold are removed.
  /// - Throws: ``SettingsError/invalidJSON(reason:)`` when the text is not JSON, or not an object, with the line
  ///   and column where it goes wrong; ``SettingsError/versionMismatch(_:imported:file:)``,
  ///   ``SettingsError/migrationFailed(_:version:reason:)``, ``SettingsError/writeFailed(_:reason:)``. Nothing is
  ///   changed then.
  public func importSettings(from json: Data, replacing: Bool = false) throws(SettingsError) {
    let members: [(key: String, value: JSONValue)]
    do throws(JSONSyntaxError) {
      members = try JSONParser.object(from: Array(json))
    } catch {
      throw .invalidJSON(reason: error.description)
    }
    try importMembers(members, replacing: replacing)
  }

  /// Imports settings, in one transaction, as ``importSettings(from:replacing:)`` imports a JSON object's: merged
  /// into the file's, or replacing them.
  ///
  /// ```swift
  /// try copy.importSettings(original.values, replacing: true)
  /// ```
  ///
  /// - Parameters:
  ///   - settings: Each key's value. New keys go after the file's in key order.
  ///   - replacing: Whether keys `settings` does not hold are removed.
  /// - Throws: ``SettingsError/unencodableValue(key:reason:)`` for a value with NaN or infinity, the errors of
  ///   ``importSettings(from:replacing:)``. Nothing is changed then.
  public func importSettings(_ settings: [JSONKey: JSONValue], replacing: Bool = false) throws(SettingsError) {
    try importMembers(settings.sorted { $0.key < $1.key }.map { ($0.key.text, $0.value) }, replacing: replacing)
  }

  /// Sets each member's key, and with `replacing` removes the others, in one write; a `"$version"` member is the
  /// members' schema version.
  private func importMembers(_ given: [(key: String, value: JSONValue)], replacing: Bool) throws(SettingsError) {
    var imported = SettingsDocument()
    for (key, value) in given { imported[key] = value }
    // Without "$version", the keys are taken as they are: hand-written JSON, or an export from before migrations.
    var version: Int?
    if let recorded = imported.versionValue {
      guard imported.schemaVersion != nil else {
        throw .invalidJSON(reason: "\"\(SettingsDocument.versionKey)\" is \(recorded), not a version number")
      }
      try SettingsMigration.run(migrations, on: &imported, url: fileURL)
      version = imported.schemaVersion
    }
    let members = imported.keys.compactMap { key in imported[key].map { (key, $0) } }
    try file.write(
      { (document: inout SettingsDocument) throws(SettingsError) in
        var settings = SettingsTransaction(document: document)
        if let version, document.schemaVersion != version {
          guard document.keys.isEmpty || replacing else {
            throw .versionMismatch(fileURL, imported: version, file: document.schemaVersion ?? -1)
          }
          settings.document.schemaVersion = version
        }
        if replacing {
          let kept = Set(members.map { JSONKey($0.0) })
          for key in settings.keys where !kept.contains(JSONKey(key)) { settings[key] = nil }
        }
        for (key, value) in members where settings[key] != value { settings[key] = value }
        try commit(settings, to: &document)
      }, failed: { $0 })
  }

  /// ``update(_:)`` for the store's own changes, which throw only `SettingsError`.
  @discardableResult
  private func edit<T: Sendable>(_ body: (inout SettingsTransaction) -> T) throws(SettingsError) -> T {
    try file.write(
      { (document: inout SettingsDocument) throws(SettingsError) -> T in
        var settings = SettingsTransaction(document: document)
        let result = body(&settings)
        try commit(settings, to: &document)
        return result
      }, failed: { $0 })
  }

  /// Keeps a transaction's changes, unless it holds a value that cannot be stored.
  private func commit(_ settings: SettingsTransaction, to document: inout SettingsDocument) throws(SettingsError) {
    if let invalid = settings.invalid {
      file.report(invalid)
      throw invalid
    }
    document = settings.document
  }

  /// The keys that change, one element per change (a batch update is one), whether the change was made here or in
  /// another process.
  public func changes() -> AsyncStream<Set<JSONKey>> {
    file.changes()
  }

  /// Every error: files that are not JSON or cannot be read, stored values that do not decode, values that cannot be
  /// stored, writes that fail. A new stream starts with the file's current problem, if it has one.
  public func errors() -> AsyncStream<SettingsError> {
    file.errors()
  }

  /// `$XDG_CONFIG_HOME`, or `~/.config` when it is unset or relative.
  static func configurationDirectory() -> URL {
    if let configured = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"], configured.hasPrefix("/") {
      return URL(fileURLWithPath: configured, isDirectory: true)
    }
    return URL(fileURLWithPath: FileIO.homeDirectory(), isDirectory: true).appendingPathComponent(".config")
  }
}
