#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One change to the shape of a program's settings, made once to every settings file that predates it.
///
/// A store opened with migrations brings its file to the newest version they know before it returns:
///
/// ```swift
/// let store = SettingsStore(
///   suite: "com.example.sync",
///   migrations: [
///     .renameKey("interval", to: "syncInterval", version: 1),
///     .convertValue(of: "mode", version: 2) { (fast: Bool) in fast ? "fast" : "thorough" },
///     .removeKey("legacyServer", version: 3),
///   ])
/// ```
///
/// The file records its version under the reserved key `"$version"` (0, or absent, before the first migration).
/// The migrations it has not had run in order, under the file's lock, as one write and one change, in whichever
/// process opens the file first; the others find it migrated. A migration that throws, or a process killed during
/// one, leaves the file as it was, at its old version, and the program reads the settings as they are. A file at a
/// newer version than the program knows is read as it is, never migrated back, and reported as
/// ``SettingsError/newerVersion(_:version:known:)``.
///
/// Give each migration the next version, and never change or remove one that has shipped: a file migrated by it
/// records that it was.
public struct SettingsMigration: Sendable {
  /// The version the file is at once this migration has run: 1 for the first, and higher for each later one.
  public let version: Int
  /// The change, on the file's content.
  let body: @Sendable (inout SettingsTransaction) throws -> Void

  /// A migration that runs `body` on the file's settings, as ``SettingsStore/update(_:)`` runs its body: read and
  /// change them by key.
  ///
  /// ```swift
  /// SettingsMigration(version: 4) { settings in
  ///   if case .int(let minutes)? = settings["timeoutMinutes"] {
  ///     settings["timeout"] = .int(minutes * 60)
  ///     settings["timeoutMinutes"] = nil
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - version: The version the file is at once this migration has run: 1 for the first, and higher for each
  ///     later one.
  ///   - body: The change. What it throws fails the migration: the file stays as it was.
  public init(version: Int, _ body: @escaping @Sendable (inout SettingsTransaction) throws -> Void) {
    self.version = version
    self.body = body
  }

  /// Moves `key`'s value to `newKey`. When the file holds no `key`, nothing changes; when it holds both, `newKey`'s
  /// value stays and `key` is removed.
  public static func renameKey(_ key: String, to newKey: String, version: Int) -> SettingsMigration {
    SettingsMigration(version: version) { settings in
      guard let value = settings[key] else { return }
      if settings[newKey] == nil { settings[newKey] = value }
      settings[key] = nil
    }
  }

  /// Removes `key`.
  public static func removeKey(_ key: String, version: Int) -> SettingsMigration {
    SettingsMigration(version: version) { settings in settings[key] = nil }
  }

  /// Replaces `key`'s stored value with what `convert` makes of it (removing the key when it returns nil). Nothing
  /// changes when the file holds no `key`.
  ///
  /// - Parameters:
  ///   - key: The key whose value changes shape.
  ///   - version: The version the file is at once this migration has run.
  ///   - convert: Called with the stored value. What it throws fails the migration.
  public static func convertValue(
    of key: String, version: Int, _ convert: @escaping @Sendable (JSONValue) throws -> JSONValue?
  ) -> SettingsMigration {
    SettingsMigration(version: version) { settings in
      guard let value = settings[key] else { return }
      settings[key] = try convert(value)
    }
  }

  /// Replaces `key`'s value, when it is an `Old`, with the `New` that `convert` makes of it. A value that is not an
  /// `Old` (one already in the new shape, written by a tool that knows no migrations) stays as it is.
  ///
  /// ```swift
  /// .convertValue(of: "mode", version: 2) { (fast: Bool) in fast ? "fast" : "thorough" }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The key whose value changes type.
  ///   - version: The version the file is at once this migration has run.
  ///   - convert: Called with the stored value. What it throws fails the migration.
  public static func convertValue<Old: SettingValue, New: SettingValue>(
    of key: String, version: Int, _ convert: @escaping @Sendable (Old) throws -> New
  ) -> SettingsMigration {
    SettingsMigration(version: version) { settings in
      guard let stored = settings[key], let old = try? Old(jsonValue: stored) else { return }
      settings[key] = try convert(old).jsonValue()
    }
  }

  /// Whether `migrations` can be run in order: versions from 1, each higher than the one before.
  static func areOrdered(_ migrations: [SettingsMigration]) -> Bool {
    (migrations.first?.version ?? 1) >= 1
      && zip(migrations, migrations.dropFirst()).allSatisfy { $0.version < $1.version }
  }

  /// Runs the migrations newer than the document's version, in order, on the document, and records the last one's
  /// version. The document is changed only when all of them succeed.
  ///
  /// - Parameter url: The file the document is (or goes to), for errors.
  /// - Throws: ``SettingsError/migrationFailed(_:version:reason:)`` naming the migration that failed (or, for a
  ///   `"$version"` that is not a version, the newest).
  static func run(
    _ migrations: [SettingsMigration], on document: inout SettingsDocument, url: URL
  ) throws(SettingsError) {
    guard let target = migrations.last?.version else { return }
    guard let version = document.schemaVersion else {
      throw .migrationFailed(url, version: target, reason: SettingsDocument.notAVersion(document.versionValue))
    }
    guard version < target else { return }
    var settings = SettingsTransaction(document: document)
    for migration in migrations where migration.version > version {
      do {
        try migration.body(&settings)
      } catch {
        throw .migrationFailed(url, version: migration.version, reason: "\(error)")
      }
      if let invalid = settings.invalid {
        throw .migrationFailed(url, version: migration.version, reason: invalid.description)
      }
    }
    settings.document.schemaVersion = target
    document = settings.document
  }
}
