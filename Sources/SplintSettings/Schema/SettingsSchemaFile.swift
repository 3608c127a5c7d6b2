#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// The schema file beside a settings file, which editors find through the settings file's `"$schema"` member:
/// what `splintctl schema` writes.
extension SettingsStore {
  /// The largest schema file read, in bytes.
  package static let maximumSchemaFileSize = 4 << 20

  /// Where the settings file's schema goes: beside it, `settings.schema.json` for `settings.json` (`NAME.schema.json`
  /// for `NAME.json`, `NAME.schema.json` for a name without `.json`).
  package var schemaFileURL: URL {
    let name = fileURL.lastPathComponent
    let stem = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
    return fileURL.deletingLastPathComponent().appendingPathComponent(stem + ".schema.json")
  }

  /// What the settings file's `"$schema"` holds to point at ``schemaFileURL``: a path relative to the file
  /// (`./settings.schema.json`), which VS Code resolves from the file's own directory, and which stays right when the
  /// directory is copied to another machine or another home.
  package var schemaReference: String { "./" + schemaFileURL.lastPathComponent }

  /// The schema file's bytes, or nil when there is none; read as a settings file is, never through a link or a
  /// directory another user could change.
  ///
  /// - Throws: ``SettingsError/unreadableFile(_:reason:)`` and the other errors of a read, about the schema file.
  package func readSchemaFile() throws(SettingsError) -> [UInt8]? {
    let path = schemaFileURL.path
    do throws(FileIOError) {
      switch try FileIO.read(path, unless: [], limit: Self.maximumSchemaFileSize) {
      case .contents(let bytes, _): return bytes
      case .absent, .unchanged: return nil
      }
    } catch {
      throw SettingsFile.shared(forPath: path).settingsError(error) { url, reason, _ in
        .unreadableFile(url, reason: reason)
      }
    }
  }

  /// Writes `schema` (unless nil) as the schema file, replacing it whole and atomically, and makes the settings
  /// file's `"$schema"` ``schemaReference``; both under the settings file's lock, the settings file changed only in
  /// that member (comments and all stay).
  ///
  /// - Returns: What `"$schema"` held before (nil when it held nothing).
  /// - Throws: ``SettingsError/writeFailed(_:reason:)`` and the other errors of a write (a settings file that is not
  ///   JSON: ``SettingsError/corruptFile(_:reason:)``). When the schema file could not be written, nothing was.
  @discardableResult
  package func installSchema(_ schema: [UInt8]?) throws(SettingsError) -> JSONValue? {
    let reference = JSONValue.string(schemaReference)
    let schemaPath = schemaFileURL.path
    return try file.write(
      { (document: inout SettingsDocument) throws(SettingsError) -> JSONValue? in
        if let schema {
          do throws(FileIOError) {
            let location = try FileIO.locate(schemaPath, makingDirectories: true)
            let existing = try FileIO.open(location, checkingWriteAccess: true)
            let ownership = try FileIO.replacementOwnership(of: existing, in: location)
            _ = try FileIO.replace(in: location, with: schema, ownership: ownership)
          } catch {
            throw SettingsFile.shared(forPath: schemaPath).settingsError(
              error, otherwise: SettingsError.writeFailed(_:reason:remedy:))
          }
        }
        let before = document.schemaReference
        document.schemaReference = reference
        return before
      }, failed: { $0 })
  }
}
