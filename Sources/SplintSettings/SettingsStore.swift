import SplintSystemCalls

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
///
/// A store may have system layers below the user's file: read-only files that an administrator or a distribution
/// package fills with defaults for every user (``systemFileURLs``, found for a suite as the XDG Base Directory
/// specification says, in `$XDG_CONFIG_DIRS`). A ``Setting`` reads the user's value, else the first system file's,
/// else its default in code; ``value(forKey:)`` and ``origin(ofKey:)`` say the same. Every write, reset and import
/// changes the user's file only, and ``keys`` and ``values`` are the user's file's. System files are watched as
/// the user's is, but never written, and nothing is ever made beside them or in their directories.
///
/// Between the two sit the fleet's values, where a machine follows a fleet (SplintFleet's follower keeps a copy of
/// an etcd cluster's values for the suite on each machine: ``fleetCopyURLs``). They are central defaults: the
/// user's file overrides them, and they override the system files, except for keys the fleet enforces, which a
/// system copy places above the user's file (writing one fails with ``SettingsError/enforcedByFleet(key:copy:)``).
/// The SettingsForAFleet guide has the whole picture.
public final class SettingsStore: Sendable {
  /// The user's file, which every write changes.
  let file: SettingsFile
  /// Every file the store reads, in the order their values win, and what decides which one a key's value comes
  /// from.
  let layers: SettingsLayers

  /// The store for this program: the suite named after the executable.
  public static let standard = SettingsStore(suite: ProcessInfo.processInfo.processName)

  /// The store for a suite: `$XDG_CONFIG_HOME/<suite>/settings.json`, or `~/.config/<suite>/settings.json` when
  /// `XDG_CONFIG_HOME` is unset or not an absolute path (as the XDG specification says), with the fleet's copies of
  /// ``fleetCopyURLs(forSuite:)`` and the system-wide defaults of ``systemFileURLs(forSuite:)`` below it. A
  /// command-line tool and a daemon of the same user share settings by naming the same suite.
  ///
  /// - Parameters:
  ///   - suite: A directory name such as `com.example.sync`: not blank, no `/` and no control character (such as a
  ///     newline), not `.` or `..`. A name that comes from outside the program (a command-line option) is checked
  ///     first with ``fileURL(forSuite:)``.
  ///   - migrations: Changes to the settings' shape since the program's first release, oldest first: the file is
  ///     brought to the newest before this returns (see ``SettingsMigration``).
  ///   - options: Limits on what the store reads and how long it waits (see ``Options``).
  public convenience init(suite: String, migrations: [SettingsMigration] = [], options: Options = Options()) {
    do {
      self.init(
        fileURL: try Self.fileURL(forSuite: suite), systemFiles: try Self.systemFileURLs(forSuite: suite),
        fleetCopies: try Self.fleetCopyURLs(forSuite: suite), migrations: migrations, options: options)
    } catch {
      preconditionFailure(error.description)  // coverage:ignore — a trapping process writes no coverage profile
    }
  }

  /// The settings file of `suite`, as ``init(suite:migrations:options:)`` finds it.
  ///
  /// - Throws: ``SettingsError/invalidSuiteName(_:)`` when `suite` is not a plain directory name.
  public static func fileURL(forSuite suite: String) throws(SettingsError) -> URL {
    // Not blank, and no control character (a NUL, a newline): a directory name a person can see and type.
    guard !suite.allSatisfy(\.isWhitespace), !suite.contains("/"), suite != ".", suite != "..",
      !suite.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      throw .invalidSuiteName(suite)
    }
    return configurationDirectory().appendingPathComponent(suite).appendingPathComponent("settings.json")
  }

  /// The system-wide defaults of `suite`, first wins: `<dir>/<suite>/settings.json` for each directory of
  /// `$XDG_CONFIG_DIRS` in order, or `/etc/xdg/<suite>/settings.json` when it is unset or empty. Entries that are
  /// empty or not absolute paths are passed over, as the XDG Base Directory specification says, and a directory
  /// named twice counts once. The files need not exist.
  ///
  /// - Throws: ``SettingsError/invalidSuiteName(_:)`` when `suite` is not a plain directory name.
  public static func systemFileURLs(forSuite suite: String) throws(SettingsError) -> [URL] {
    _ = try fileURL(forSuite: suite)
    var directories = (ProcessInfo.processInfo.environment["XDG_CONFIG_DIRS"] ?? "")
      .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    if directories.isEmpty { directories = ["/etc/xdg"] }
    var seen = Set<String>()
    return directories.compactMap { directory in
      let url = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(suite)
        .appendingPathComponent("settings.json").standardizedFileURL
      return seen.insert(url.path).inserted ? url : nil
    }
  }

  /// Where a machine's copies of the fleet's values for `suite` are, first wins: `$SPLINT_FLEET_DIRECTORY/<suite>.json`
  /// alone when that variable holds an absolute path; otherwise this user's own copy,
  /// `$XDG_STATE_HOME/splint-fleet/<suite>.json` (`~/.local/state/splint-fleet/<suite>.json` when it is unset or not
  /// absolute), then the system's, `/var/lib/splint-fleet/<suite>.json`, which the shipped `splint-fleet` service
  /// keeps. The files need not exist: a store reads them once a follower makes them.
  ///
  /// - Throws: ``SettingsError/invalidSuiteName(_:)`` when `suite` is not a plain directory name.
  public static func fleetCopyURLs(forSuite suite: String) throws(SettingsError) -> [URL] {
    _ = try fileURL(forSuite: suite)
    return FleetCopy.urls(forSuite: suite)
  }

  /// The store for the settings file at `fileURL`, for system daemons (whose home is elsewhere) and tests. The file
  /// need not exist; a symlink is followed for writes and stays a symlink.
  ///
  /// - Parameters:
  ///   - fileURL: The user's settings file, which every write changes.
  ///   - systemFiles: Read-only layers below it, first wins (see ``systemFileURLs``); none unless given. A file
  ///     that is `fileURL` itself, or given twice, counts once.
  ///   - fleetCopies: The fleet's copies, between the user's file and the system files, first wins (see
  ///     ``fleetCopyURLs``); none unless given.
  ///   - migrations: Changes to the settings' shape since the program's first release, oldest first: the user's
  ///     file is brought to the newest before this returns (see ``SettingsMigration``). Versions start at 1 and
  ///     rise. System files are never migrated.
  ///   - options: Limits on what the store reads and how long it waits (see ``Options``).
  public init(
    fileURL: URL, systemFiles: [URL] = [], fleetCopies: [URL] = [], migrations: [SettingsMigration] = [],
    options: Options = Options()
  ) {
    let file = SettingsFile.shared(for: fileURL, options: options)
    var fleetLayers: [FleetLayer] = []
    for url in fleetCopies {
      let layer = FleetLayer.shared(for: url, options: options)
      if layer.file !== file, !fleetLayers.contains(where: { $0 === layer }) { fleetLayers.append(layer) }
    }
    self.file = file
    layers = SettingsLayers(
      user: file, copies: fleetLayers,
      system: Self.layers(systemFiles, below: file, options: options)
        .filter { system in !fleetLayers.contains { $0.file === system } })
    self.migrations = migrations
    file.migrate(migrations)
  }

  /// The store for the settings file at `path`, as ``init(fileURL:systemFiles:fleetCopies:migrations:options:)``
  /// makes it with neither layers nor migrations, without Foundation's URL until it is asked for: for `splintctl --file`, whose
  /// reads of one key pay for every instruction.
  package init(filePath path: String) {
    file = SettingsFile.shared(forPath: FileIO.standardized(path))
    layers = SettingsLayers(user: file, copies: [], system: [])
    migrations = []
  }

  /// A store whose writes skip fsync: still atomic (a reader sees the whole old or the whole new file), but a power
  /// loss may undo them. For `script/bench`, which measures what durability costs; not public API.
  package init(fileURL: URL, systemFiles: [URL] = [], syncsToDisk: Bool) {
    file = SettingsFile.shared(for: fileURL, syncsToDisk: syncsToDisk)
    layers = SettingsLayers(user: file, copies: [], system: Self.layers(systemFiles, below: file, options: Options()))
    migrations = []
  }

  /// The files of `urls`, each once, and none that is `file`.
  private static func layers(_ urls: [URL], below file: SettingsFile, options: Options) -> [SettingsFile] {
    var layers: [SettingsFile] = []
    for url in urls {
      let layer = SettingsFile.shared(for: url, asSystemLayer: true, options: options)
      if layer !== file, !layers.contains(where: { $0 === layer }) { layers.append(layer) }
    }
    return layers
  }

  /// The migrations the store was opened with, oldest first.
  let migrations: [SettingsMigration]

  /// The schema version the user's file records under the reserved key `"$version"`: the version of the last
  /// ``SettingsMigration`` it has had, 0 before any. Nil when `"$version"` holds something that is not a version.
  public var schemaVersion: Int? { file.schemaVersion }

  /// The user's settings file: the one every write changes.
  public var fileURL: URL { file.url }

  /// Why changes to the file would be found by polling, judged by the file systems its names lead to alone (whether
  /// this process has inotify left is known only once it watches, which ``errors()`` then tells); nil where inotify
  /// sees every change. For `splintctl path`, which starts no watcher.
  package var unwatchableFileSystem: String? {
    FileIO.namesAlong(file.path).firstNonNil { UnwatchableFileSystem.of(FileIO.directory(of: $0)) }?.description
  }

  /// The system layers below the user's file, first wins: read, watched, never written.
  public var systemFileURLs: [URL] { layers.system.map(\.url) }

  /// The system layers' files (for tests).
  var systemFiles: [SettingsFile] { layers.system }

  /// The fleet's copies this store reads, between the user's file and the system files, first wins: read,
  /// watched, never written by a store (a follower writes them).
  public var fleetCopyURLs: [URL] { layers.copies.map(\.url) }

  /// What each of the fleet's copies that exists says of itself: the cluster and revision its values are from, how
  /// its follower fares, what it enforces (as `splintctl fleet status` shows it).
  public var fleetStatus: [FleetCopyStatus] { layers.copies.compactMap(\.status) }

  /// The value a fleet copy enforces for `key`, and the copy, or nil when no copy enforces it.
  package func enforcedValue(forKey key: String) -> (value: JSONValue, copy: URL)? {
    layers.enforcement(of: key).map { ($0.value, layers.copies[$0.copy].url) }
  }

  /// What is wrong with the settings files now, if anything: ``SettingsError/corruptFile(_:reason:)`` or
  /// ``SettingsError/unreadableFile(_:reason:)``, the user's file's problem, else what keeps the user's file from
  /// the version of the store's migrations (``SettingsError/newerVersion(_:version:known:)``,
  /// ``SettingsError/migrationFailed(_:version:reason:)``), else the first system file's problem. Nil when every
  /// file is fine or does not exist. While a file has a problem, its last good values stay in use (none, for a
  /// system file that never was good): a broken system file is skipped, never written.
  public var fileError: SettingsError? {
    file.problem ?? layers.copies.firstNonNil(\.file.problem) ?? layers.system.firstNonNil(\.problem)
  }

  /// The keys the user's file holds, in file order: not `"$version"`, which records the settings' schema version
  /// (``schemaVersion``), nor `"$schema"`, which tells editors where the file's JSON Schema is (`splintctl schema`
  /// sets it). System layers' keys are not among them: these are what export, reset and import work on.
  public var keys: [String] { file.keys }

  /// Every key's value in the user's file (not `"$version"`'s or `"$schema"`'s, and not system layers' values, which
  /// ``value(forKey:)`` finds). Keys are ``JSONKey``s, which tell apart keys that Swift strings would take for one
  /// ("é" written as one scalar, or as "e" and a combining accent), as the file and every other JSON tool do.
  public var values: [JSONKey: JSONValue] { file.values }

  /// The value in effect for `key`: the fleet's when a system copy enforces it; else the user's file's, else the
  /// first fleet copy's that holds it, else the first system file's, else nil (a ``Setting`` then reads its
  /// default).
  public func value(forKey key: String) -> JSONValue? {
    layers.value(of: key)
  }

  /// ``value(forKey:)`` as JSON text, pretty (as ``JSONValue/prettyDescription`` writes it), but with every number a
  /// `Double` would round written as the file has it, digit for digit; nil when no file holds `key`. For `splintctl
  /// get`, which prints what is stored. Not to be called from inside an update's body.
  package func exactText(forKey key: String) -> String? {
    layers.resolve(key).map { Self.exactText(of: $0.value, forKey: key, in: $0.file, indent: "") }
  }

  /// The user's settings (``values``), and with `version` the schema version the file records (when above 0), as
  /// one JSON object with sorted keys, numbers as the file has them (see ``exactText(forKey:)``). For
  /// `splintctl list` and `export`.
  package func exactText(version: Bool) -> String {
    var members = values.sorted { $0.key < $1.key }.map { key, value in
      (key.text, Self.exactText(of: value, forKey: key.text, in: file, indent: "  "))
    }
    if version, let schemaVersion, schemaVersion > 0 {
      members.append((SettingsDocument.versionKey, "\(schemaVersion)"))
      members.sort { JSONKey($0.0) < JSONKey($1.0) }
    }
    guard !members.isEmpty else { return "{}" }
    return "{\n"
      + members.map { key, text in "  \(JSONValue.string(key).description): \(text)" }.joined(separator: ",\n") + "\n}"
  }

  /// `value`, which `layer` holds for `key`, as ``exactText(forKey:)`` writes it: from the file's text for it, or
  /// (when this process set it since) from the value itself.
  private static func exactText(
    of value: JSONValue, forKey key: String, in layer: SettingsFile, indent: String
  ) -> String {
    let indent = Array(indent.utf8)
    if let stored = layer.storedText(forKey: key),
      let text = try? JSONParser.exactText(of: Array(stored.utf8), format: .pretty, indent: indent)
    {
      return text
    }
    var output: [UInt8] = []
    value.write(to: &output, format: .pretty, indent: indent)
    return String(decoding: output, as: UTF8.self)
  }

  /// Which file ``value(forKey:)`` takes `key`'s value from, or nil when no file holds it (a ``Setting`` reads its
  /// default then).
  ///
  /// ```swift
  /// switch store.origin(ofKey: "interval") {
  /// case .user(let url)?: print("set by the user in \(url.path)")
  /// case .fleet(let url, let label)?: print("the fleet's (\(label ?? "every machine")), from \(url.path)")
  /// case .system(let url)?: print("a default for every user, from \(url.path)")
  /// case nil: print("the program's default")
  /// }
  /// ```
  public func origin(ofKey key: String) -> SettingsOrigin? {
    guard let source = layers.resolve(key) else { return nil }
    if case .copy(let index) = source.place, let label = layers.copies[index].label(ofKey: key) {
      return .fleet(layers.copies[index].url, label: label)
    }
    return source.origin
  }

  /// Stores `value` for `key`, with one write.
  ///
  /// - Throws: ``SettingsError/unencodableValue(key:reason:)`` for a value with NaN or infinity, and
  ///   ``SettingsError/writeFailed(_:reason:)``. Nothing is changed then.
  public func set(_ value: JSONValue, forKey key: String) throws(SettingsError) {
    try edit { $0[key] = value }
  }

  /// Writes a setting's value under `key`, or removes the key for an `Optional` that is nil (see ``Setting/save(_:)``).
  func save<Value: SettingValue>(_ value: Value, forKey key: String) throws(SettingsError) {
    let json: JSONValue?
    do {
      json = try value.storedJSON()
    } catch {
      let failure = SettingsError.unencodableValue(key: key, reason: "\(error)")
      file.report(failure)
      throw failure
    }
    guard let json else { return try removeValue(forKey: key) }
    try set(json, forKey: key)
  }

  /// Removes `key` from the user's file, so that settings on it read the system value, or else their defaults.
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
  /// - Throws: What `body` throws (nothing is written then), ``SettingsError/unencodableValue(key:reason:)``,
  ///   ``SettingsError/undecodableValue(key:expected:reason:)`` when `body` read a stored value through a ``Setting``
  ///   or a ``SettingKey`` that does not decode (nothing is written then either: the default it read in its place
  ///   must not be stored as if it were the value), or ``SettingsError/writeFailed(_:reason:)``.
  /// - Returns: What `body` returns.
  public func update<T: Sendable>(_ body: (inout SettingsTransaction) throws -> T) throws -> T {
    try transact(body, failed: { $0 })
  }

  // MARK: - Reset, import

  /// Removes `keys` from the user's file, with one write and one change, so that settings on them read the system
  /// value, or else their defaults. Keys that are not set are passed over; when none is set, nothing is written.
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

  /// Removes every key the user's file holds, with one write and one change, so that every setting on it reads the
  /// system value, or else its default.
  ///
  /// Only this file changes: it holds what the user set. Values that do not come from it, a system file's or a
  /// ``Setting``'s default in code, stay as they are, and settings read them from now on.
  ///
  /// This is also the way to start over from a file that is not JSON (``SettingsError/corruptFile(_:reason:)``),
  /// which every other write refuses: the bad file is kept beside the new, empty one as
  /// `settings.json.corrupt-<UTC time>`, so that nothing of it is lost.
  ///
  /// - Returns: The keys removed, in file order; empty when the file held none (nothing is written then, unless it
  ///   was not JSON).
  /// - Throws: ``SettingsError/writeFailed(_:reason:)``; nothing is changed then.
  @discardableResult
  public func resetAll() throws(SettingsError) -> [String] {
    try edit(repairing: true) { settings in
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
    try transact(
      { (settings: inout SettingsTransaction) throws(SettingsError) in
        if let version, settings.document.schemaVersion != version {
          guard settings.keys.isEmpty || replacing else {
            throw .versionMismatch(fileURL, imported: version, file: settings.document.schemaVersion ?? -1)
          }
          settings.document.schemaVersion = version
        }
        if replacing {
          let kept = Set(members.map { JSONKey($0.0) })
          for key in settings.keys where !kept.contains(JSONKey(key)) { settings[key] = nil }
        }
        for (key, value) in members where settings[key] != value { settings[key] = value }
      }, failed: { $0 })
  }

  /// ``update(_:)`` for the store's own changes, which throw only `SettingsError`.
  @discardableResult
  private func edit<T: Sendable>(
    repairing: Bool = false, _ body: (inout SettingsTransaction) -> T
  ) throws(SettingsError) -> T {
    try transact(
      repairing: repairing, { (settings: inout SettingsTransaction) throws(SettingsError) in body(&settings) },
      failed: { $0 })
  }

  /// One transaction on the user's file: `body` changes its content under the file's lock, and its changes are
  /// written unless it throws, holds a value that cannot be stored, or read a stored value that does not decode.
  ///
  /// - Parameters:
  ///   - repairing: Whether a file that is not JSON is set aside and replaced (see ``SettingsFile/write``).
  ///   - failed: The caller's error for a `SettingsError`.
  private func transact<T: Sendable, E: Error>(
    repairing: Bool = false, _ body: (inout SettingsTransaction) throws(E) -> T, failed: (SettingsError) -> E
  ) throws(E) -> T {
    // The other layers are brought up to date before the write takes the user file's lock: inside, a transaction
    // reads them from memory, and takes no other file's lock.
    for layer in layers.files.dropFirst() { layer.refreshUnlessWatched() }
    let enforced = layers.enforcedKeys()
    return try file.write(
      { (document: inout SettingsDocument) throws(E) -> T in
        var settings = SettingsTransaction(document: document, store: self, enforced: enforced)
        let result = try body(&settings)
        if let failure = settings.failure {
          file.report(failure)
          throw failed(failure)
        }
        document = settings.document
        return result
      }, failed: failed, repairing: repairing)
  }

  /// The keys whose value may have changed, one element per change (a batch update is one), whether the change was
  /// made here or in another process, in the user's file, a fleet copy or a system file. A change to a key that a
  /// file above holds is not announced: it changes nothing anyone reads (but a key a fleet copy enforces is, and a
  /// user's change of it is not); nor is a change of what a copy enforces that leaves every value in effect as it was.
  /// When an element arrives, every ``Setting`` of the store already reads the change it announces, all of its keys at
  /// once.
  public func changes() -> AsyncStream<Set<JSONKey>> {
    startWatching()
    let (stream, continuation) = AsyncStream.makeStream(of: Set<JSONKey>.self)
    let stop = layers.tellChanges(to: continuation)
    continuation.onTermination = { _ in stop() }
    return stream
  }

  /// Every error: files that are not JSON or cannot be read (the user's, a fleet copy, or a system file), stored
  /// values that do not decode, values that cannot be stored, writes that fail; and for a fleet copy, a follower
  /// that has lost its cluster (``SettingsError/fleetUnreachable(_:since:reason:)``) or that no longer runs
  /// (``SettingsError/noFleetFollower(_:since:)``), told as it happens. A new stream starts with each file's current
  /// problem, if it has one.
  public func errors() -> AsyncStream<SettingsError> {
    startWatching()
    let (stream, continuation) = AsyncStream.makeStream(of: SettingsError.self)
    let telling = layers.files.map { ($0, $0.tellErrors(to: continuation)) }
    for problem in layers.copies.flatMap(\.problems) { continuation.yield(problem) }
    continuation.onTermination = { _ in
      for (file, id) in telling { file.stopTelling(id) }
    }
    return stream
  }

  /// Starts watching the user's file and every system file (whose directories are never made by watching: a
  /// missing one is waited for).
  ///
  /// - Returns: Whether the files are watched now; false only inside an update's body of the user's file on this
  ///   thread, where the system files are left alone too (the next read or observation starts them).
  @discardableResult
  func startWatching() -> Bool {
    guard file.startWatching() else { return false }
    for copy in layers.copies {
      copy.file.startWatching()
      copy.startWatching()
    }
    for layer in layers.system { layer.startWatching() }
    return true
  }

  /// `$XDG_CONFIG_HOME`, or `~/.config` when it is unset or relative.
  static func configurationDirectory() -> URL {
    if let configured = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"], configured.hasPrefix("/") {
      return URL(fileURLWithPath: configured, isDirectory: true)
    }
    return URL(fileURLWithPath: FileIO.homeDirectory(), isDirectory: true).appendingPathComponent(".config")
  }
}

extension SettingsStore {
  /// Limits a store keeps to, so that whoever controls its files (another user, on a shared machine) cannot make
  /// a program read without end or wait forever.
  ///
  /// ```swift
  /// let store = SettingsStore(
  ///   fileURL: URL(fileURLWithPath: "/var/lib/example-sync/settings.json"),
  ///   options: .init(maximumFileSize: 1 << 20, lockTimeout: .seconds(2)))
  /// ```
  ///
  /// Stores on the same file in one process share it: it keeps the largest size and the longest wait any of them
  /// gives.
  public struct Options: Sendable, Hashable {
    /// The largest settings file read, in bytes: 64 MiB unless set. A larger file is reported as
    /// ``SettingsError/fileTooLarge(_:size:limit:)`` (its size is looked at before anything is allocated) and left
    /// as it is; writes to it fail with that error.
    public var maximumFileSize: Int

    /// How long a write waits for another process that holds the file's lock: 5 seconds unless set. After that it
    /// fails with ``SettingsError/lockTimeout(_:lockFile:waited:)``, and writes nothing.
    public var lockTimeout: Duration

    /// How often the file is looked at for changes other processes made, where inotify does not see them all: 1
    /// second unless set (a millisecond at least). That is on NFS, SMB, 9p, FUSE and other file systems whose files
    /// change on other machines or beneath the mount, and where this process has no inotify instance or watch left;
    /// ``SettingsStore/errors()`` says so (``SettingsError/watchedByPolling(_:interval:reason:)``). Elsewhere inotify
    /// alone is used, and this costs nothing. Stores on one file use the shortest interval any of them sets.
    public var pollInterval: Duration

    /// Limits of `maximumFileSize` bytes and a wait of `lockTimeout`; polling every `pollInterval` where inotify
    /// does not see every change.
    public init(
      maximumFileSize: Int = 64 << 20, lockTimeout: Duration = .seconds(5), pollInterval: Duration = .seconds(1)
    ) {
      self.maximumFileSize = maximumFileSize
      self.lockTimeout = lockTimeout
      self.pollInterval = pollInterval
    }
  }
}
