import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// `SettingsMigration`: versioned changes to the settings' shape, on real files, with other processes.
@Suite struct MigrationTests {
  let scratch = Scratch()

  /// A file from before any migration, as a person wrote it (`1.50` must stay `1.50`).
  static let version0 = #"{"interval": 30, "fast": true, "legacy": "x", "other": 1.50}"#

  /// Three migrations of the kinds the helpers make, each counting its runs in `runs`.
  static func migrations(counting runs: Shared<[Int]>) -> [SettingsMigration] {
    let rename = SettingsMigration.renameKey("interval", to: "syncInterval", version: 1)
    let convert = SettingsMigration.convertValue(of: "fast", version: 2) { (fast: Bool) in fast ? "fast" : "thorough" }
    let remove = SettingsMigration.removeKey("legacy", version: 3)
    return [rename, convert, remove].map { migration in
      SettingsMigration(version: migration.version) { settings in
        runs.value.withLock { $0.append(migration.version) }
        try migration.body(&settings)
      }
    }
  }

  @Test("pending migrations run in order, once, as one write and one change; the file keeps what they don't touch")
  func pendingMigrationsRunOnceAsOneWrite() async throws {
    let url = scratch.url("settings.json")
    try Self.version0.write(to: url, atomically: true, encoding: .utf8)
    let observer = SettingsStore(fileURL: url)
    let changes = observer.changes()
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(runs.value.withLock { $0 } == [1, 2, 3])
    #expect(store.writeCount == 1)
    #expect(await take(1, from: changes) == [["interval", "syncInterval", "fast", "legacy"]])
    #expect(store.text == #"{"fast": "fast", "other": 1.50, "syncInterval": 30, "$version": 3}"#)
    #expect(store.schemaVersion == 3)
    #expect(store.fileError == nil)
    // Opened again, here or anew, the file is at the migrations' version: nothing runs, nothing is written.
    _ = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(runs.value.withLock { $0 } == [1, 2, 3])
    #expect(store.writeCount == 1)
  }

  @Test("a file at an intermediate version gets only the migrations it has not had")
  func onlyTheMissingMigrationsRun() throws {
    let url = scratch.url("settings.json")
    try #"{"$version": 2, "fast": true, "legacy": "x"}"#.write(to: url, atomically: true, encoding: .utf8)
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(runs.value.withLock { $0 } == [3])
    #expect(store.values == ["fast": .bool(true)], "migration 2 did not run again")
    #expect(store.schemaVersion == 3)
  }

  @Test("\"$version\" is no setting: not among keys or values, not to be set, kept by resets")
  func theVersionIsNotASetting() throws {
    let url = scratch.url("settings.json")
    try #"{"a": 1, "$version": 3}"#.write(to: url, atomically: true, encoding: .utf8)
    let store = SettingsStore(fileURL: url)
    #expect(store.keys == ["a"])
    #expect(store.values == ["a": .int(1)])
    #expect(store.value(forKey: "$version") == nil)
    #expect(Setting("$version", default: 0, store: store).value == 0)
    #expect(throws: SettingsError.reservedKey("$version")) { try store.set(.int(4), forKey: "$version") }
    #expect(throws: SettingsError.reservedKey("$version")) { try store.removeValue(forKey: "$version") }
    #expect(throws: SettingsError.reservedKey("$version")) {
      try store.update { settings in
        settings["b"] = .int(2)
        settings["$version"] = .int(9)
      }
    }
    #expect(store.writeCount == 0)
    #expect(try store.reset(keys: ["$version"]) == [])
    #expect(try store.resetAll() == ["a"])
    #expect(store.text == #"{"$version": 3}"#)
    #expect(store.schemaVersion == 3)
  }

  @Test("a file that does not exist is not made at opening; the first write records the version")
  func aNewFileRecordsTheVersionWhenWritten() throws {
    let url = scratch.url("new", "settings.json")
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(!FileManager.default.fileExists(atPath: url.path))
    #expect(store.schemaVersion == 0)
    #expect(store.fileError == nil)
    try store.set(.int(60), forKey: "syncInterval")
    #expect(store.text == "{\n  \"syncInterval\": 60,\n  \"$version\": 3\n}\n")
    _ = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(runs.value.withLock { $0 }.isEmpty, "a file made in the new shape is never migrated")
  }

  @Test("a file newer than the program knows is read as it is, reported, and never migrated or rewritten")
  func aNewerFileIsReadAndReported() async throws {
    let url = scratch.url("settings.json")
    let text = #"{"$version": 9, "syncInterval": "PT1M", "legacy": "kept"}"#
    try text.write(to: url, atomically: true, encoding: .utf8)
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    let newer = SettingsError.newerVersion(url, version: 9, known: 3)
    #expect(store.fileError == newer)
    #expect(await take(1, from: store.errors()) == [newer])
    #expect(newer.description.contains("is at version 9, and this program knows versions up to 3"))
    #expect(runs.value.withLock { $0 }.isEmpty)
    #expect(store.value(forKey: "syncInterval") == .string("PT1M"))
    #expect(store.text == text)
    // A write still goes to the file, as it is: the version stays the newer one.
    try store.set(.int(1), forKey: "b")
    #expect(store.schemaVersion == 9)
    #expect(store.fileError == newer)
  }

  @Test("a migration that throws leaves the file untouched and is reported; a later successful one clears it")
  func aFailingMigrationChangesNothing() async throws {
    let url = scratch.url("settings.json")
    try Self.version0.write(to: url, atomically: true, encoding: .utf8)
    let identity = FileIO.identity(url.path)
    struct Offline: Error, CustomStringConvertible { var description: String { "the server is offline" } }
    let failing = [
      SettingsMigration.renameKey("interval", to: "syncInterval", version: 1),
      SettingsMigration(version: 2) { _ in throw Offline() },
    ]
    let store = SettingsStore(fileURL: url, migrations: failing)
    let failure = SettingsError.migrationFailed(url, version: 2, reason: "the server is offline")
    #expect(store.fileError == failure)
    #expect(await take(1, from: store.errors()) == [failure])
    #expect(failure.description.contains("The file is untouched"))
    #expect(store.text == Self.version0)
    #expect(FileIO.identity(url.path) == identity)
    #expect(store.value(forKey: "interval") == .int(30), "the program runs on the old values")
    #expect(store.schemaVersion == 0)
    let errors = store.errors()
    let runs = Shared<[Int]>([])
    _ = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(runs.value.withLock { $0 } == [1, 2, 3])
    #expect(store.fileError == nil)
    #expect(store.schemaVersion == 3)
    #expect(await collect(errors, within: 0.3) { _ in false } == [failure], "the failure was heard, and nothing since")
  }

  @Test(arguments: [
    (#"{"$version": "2", "a": 1}"#, #"its "$version" is "2", not a version number"#),
    (#"{"$version": -1, "a": 1}"#, #"its "$version" is -1, not a version number"#),
    (#"{"$version": 1.5, "a": 1}"#, #"its "$version" is 1.5, not a version number"#),
  ])
  func aVersionThatIsNotOneIsReportedAndNothingRuns(text: String, reason: String) throws {
    let url = scratch.url("settings.json")
    try text.write(to: url, atomically: true, encoding: .utf8)
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(store.fileError?.code == .migrationFailed)
    #expect(store.schemaVersion == nil)
    #expect(runs.value.withLock { $0 }.isEmpty)
    #expect(store.text == text)
    #expect(throws: SettingsError.migrationFailed(url, version: 3, reason: reason)) {
      var document = try SettingsDocument(parsing: Array(text.utf8))
      try SettingsMigration.run(Self.migrations(counting: runs), on: &document, url: url)
    }
  }

  @Test("a corrupt file is left to its own report: no migration runs on it")
  func aCorruptFileIsNotMigrated() throws {
    let url = scratch.url("settings.json")
    try "{oops".write(to: url, atomically: true, encoding: .utf8)
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    #expect(store.fileError?.code == .corruptFile)
    #expect(runs.value.withLock { $0 }.isEmpty)
    #expect(store.text == "{oops")
  }

  @Test("the helpers: rename keeps a newer key, a JSON conversion may remove, a typed one leaves other shapes")
  func theHelpersDoWhatTheySay() throws {
    let url = scratch.url("settings.json")
    try #"{"old": 1, "new": 2, "gone": "x", "seconds": "90s", "minutes": 3, "drop": 1}"#
      .write(to: url, atomically: true, encoding: .utf8)
    let store = SettingsStore(
      fileURL: url,
      migrations: [
        .renameKey("old", to: "new", version: 1),
        .renameKey("absent", to: "nowhere", version: 2),
        .removeKey("gone", version: 3),
        .convertValue(of: "seconds", version: 4) { (seconds: Int) in "\(seconds)s" },
        .convertValue(of: "minutes", version: 5) { (minutes: Int) in minutes * 60 },
        .convertValue(of: "drop", version: 6) { _ in nil },
        .convertValue(of: "missing", version: 7) { _ in .int(1) },
      ])
    #expect(store.fileError == nil)
    #expect(store.values == ["new": .int(2), "seconds": .string("90s"), "minutes": .int(180)])
    #expect(store.schemaVersion == 7)
  }

  @Test("a migration that sets what cannot be stored fails, and names why")
  func aMigrationWithAnUnstorableValueFails() throws {
    let url = scratch.url("settings.json")
    try #"{"a": 1}"#.write(to: url, atomically: true, encoding: .utf8)
    let store = SettingsStore(
      fileURL: url, migrations: [SettingsMigration(version: 1) { $0["a"] = .double(.nan) }])
    #expect(
      store.fileError
        == .migrationFailed(
          url, version: 1,
          reason: SettingsError.unencodableValue(key: "a", reason: "JSON has no NaN or infinity").description))
    #expect(store.text == #"{"a": 1}"#)
  }

  // MARK: - Import and export

  @Test("an export that records an older version is migrated on import; a newer file refuses it")
  func importMigratesAnOlderExport() throws {
    let url = scratch.url("settings.json")
    let runs = Shared<[Int]>([])
    let store = SettingsStore(fileURL: url, migrations: Self.migrations(counting: runs))
    try store.set(.int(5), forKey: "syncInterval")
    try store.importSettings(from: Data(#"{"$version": 1, "syncInterval": 60, "fast": false}"#.utf8))
    #expect(runs.value.withLock { $0 } == [2, 3])
    #expect(store.values == ["syncInterval": .int(60), "fast": .string("thorough")])
    #expect(store.schemaVersion == 3)
    let newer = Data(#"{"$version": 4, "syncInterval": 1}"#.utf8)
    #expect(throws: SettingsError.versionMismatch(url, imported: 4, file: 3)) { try store.importSettings(from: newer) }
    #expect(store.values == ["syncInterval": .int(60), "fast": .string("thorough")])
  }

  @Test("without migrations, a versioned import goes only into a file at its version, an empty one, or replacing")
  func importChecksTheVersion() throws {
    let url = scratch.url("settings.json")
    let store = SettingsStore(fileURL: url)
    try store.importSettings(from: Data(#"{"$version": 2, "a": 1}"#.utf8))
    #expect(store.text == "{\n  \"$version\": 2,\n  \"a\": 1\n}\n", "an empty file takes the import's version")
    try store.importSettings(from: Data(#"{"$version": 2, "b": 2}"#.utf8))
    let older = Data(#"{"$version": 1, "c": 3}"#.utf8)
    let mismatch = SettingsError.versionMismatch(url, imported: 1, file: 2)
    #expect(throws: mismatch) { try store.importSettings(from: older) }
    #expect(mismatch.description.contains("nothing was written"))
    #expect(store.values == ["a": .int(1), "b": .int(2)])
    try store.importSettings(from: Data(#"{"c": 3}"#.utf8))
    #expect(store.schemaVersion == 2, "an import without a version is taken as it is")
    try store.importSettings(from: older, replacing: true)
    #expect(store.values == ["c": .int(3)])
    #expect(store.schemaVersion == 1)
    #expect(throws: SettingsError.invalidJSON(reason: #""$version" is "1", not a version number"#)) {
      try store.importSettings(from: Data(#"{"$version": "1"}"#.utf8))
    }
  }

  // MARK: - Other processes

  @Test("six processes opening an old file at once run each migration exactly once")
  func concurrentOpenersMigrateOnce() async throws {
    let file = scratch.url("settings.json")
    try #"{"interval": 30, "legacy": "x", "other": 1}"#.write(to: file, atomically: true, encoding: .utf8)
    let log = scratch.url("log").path
    let openers = try await (0..<6).asyncMap { _ in try await startProbe("migrate", file.path, log) }
    for opener in openers {
      let output = await opener.wait()
      #expect(output.status == 0, "\(output)")
      #expect(output.lines == ["version 3", "problem none", #"period="30s""#])
    }
    let runs = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    #expect(runs.map { $0.split(separator: " ").last ?? "" } == ["1", "2", "3"])
    #expect(Set(runs.map { $0.split(separator: " ").first ?? "" }).count == 1, "one process ran them all")
    #expect(
      try String(contentsOf: file, encoding: .utf8)
        == #"{"other": 1, "period": "30s", "$version": 3}"#)
  }

  @Test("SIGKILL in the middle of a migration leaves the old file intact, and the next opener migrates it")
  func aKillDuringAMigrationLeavesTheFile() async throws {
    let file = scratch.url("settings.json")
    let text = #"{"interval": 30, "legacy": "x"}"#
    try text.write(to: file, atomically: true, encoding: .utf8)
    let log = scratch.url("log").path
    let slow = try await startProbe("migrate", file.path, log, "slow", bounded: false)
    #expect(await eventually { slow.stdoutSoFar.contains("migrating") })
    slow.send(SIGKILL)
    #expect(await slow.wait().status == 128 + SIGKILL)
    #expect(try String(contentsOf: file, encoding: .utf8) == text)
    let next = try await probe("migrate", file.path, log)
    #expect(next.lines == ["version 3", "problem none", #"period="30s""#])
    #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 5)
  }

  @Test("a migration failing in another process leaves the file as it was, and says why")
  func aFailureInAnotherProcess() async throws {
    let file = scratch.url("settings.json")
    let text = #"{"interval": 30}"#
    try text.write(to: file, atomically: true, encoding: .utf8)
    let output = try await probe("migrate", file.path, scratch.url("log").path, "fail")
    #expect(output.lines.first == "version 0")
    #expect(
      output.lines.dropFirst().first?.hasPrefix(
        "problem Migrating the settings file \(file.path) to version 2 failed: "
          + "no network to look the new value up.") == true, "\(output)")
    #expect(output.lines.last == "period=absent")
    #expect(try String(contentsOf: file, encoding: .utf8) == text)
  }

  @Test("a running Setting on a renamed key hears the migrated value when another process migrates")
  func aRunningSettingHearsTheMigration() async throws {
    let file = scratch.url("settings.json")
    try #"{"interval": 45}"#.write(to: file, atomically: true, encoding: .utf8)
    let period = Setting<JSONValue?>("period", default: nil, store: SettingsStore(fileURL: file))
    let updates = period.updates()
    let migrated = try await probe("migrate", file.path, scratch.url("log").path)
    #expect(migrated.status == 0)
    // Only the newest value waits in an update stream: the first, nil, may have made way for the migrated one.
    let seen = await collect(updates) { $0 == .string("45s") }
    #expect(seen.last == .string("45s"))
    #expect(seen.allSatisfy { $0 == nil || $0 == .string("45s") }, "one change, with no half-migrated value: \(seen)")
  }
}
