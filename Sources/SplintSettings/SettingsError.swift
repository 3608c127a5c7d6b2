public import Foundation

/// What went wrong with a setting or its file, and what to do about it.
///
/// A ``SettingsStore`` reports every error through ``SettingsStore/errors()``; the throwing calls
/// (``Setting/save(_:)``, ``SettingsStore/update(_:)`` and friends) also throw the error of their own write.
/// Nothing is ever lost to an error: a bad file is kept, a value that cannot be decoded stays in the file, and a
/// failed write leaves the file and the in-memory values as they were.
public enum SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The settings file is not a JSON object. The last good content stays in use, and the next write keeps the bad
  /// file beside the new one as `settings.json.corrupt-<UTC time>`.
  case corruptFile(URL, reason: String)
  /// The settings file exists but cannot be read.
  case unreadableFile(URL, reason: String)
  /// A stored value is not what a setting expects. It stays in the file untouched, and the setting keeps its
  /// current value.
  case undecodableValue(key: String, expected: String, reason: String)
  /// A value cannot be written as JSON, such as a `Double` that is NaN or infinite. Nothing was written.
  case unencodableValue(key: String, reason: String)
  /// Writing the settings file failed. The file and the values in memory are as they were.
  case writeFailed(URL, reason: String)
  /// The settings file (after following symlinks) is not a regular file but `kind`: a directory, a FIFO, a socket
  /// or a device. It is neither read nor written, and nothing on disk is changed.
  case notARegularFile(URL, kind: String)
  /// Text meant to be JSON is not.
  case invalidJSON(reason: String)
  /// A suite name that is not a plain directory name.
  case invalidSuiteName(String)

  /// What happened and what to do, in full sentences.
  public var description: String {
    switch self {
    case .corruptFile(let url, let reason):
      return """
        The settings file \(url.path) is not a JSON object (\(reason)). The last good settings stay in use. \
        Fix the file, or delete it to start over; the next change saves the bad file beside it as \
        \(url.lastPathComponent).corrupt-<time> and writes a clean one.
        """
    case .unreadableFile(let url, let reason):
      return """
        The settings file \(url.path) cannot be read (\(reason)). The last good settings stay in use. \
        Check the file's owner and permissions (it should belong to this user, mode 0600).
        """
    case .undecodableValue(let key, let expected, let reason):
      return """
        The stored value of "\(key)" is not \(expected) (\(reason)). It stays in the file untouched and the \
        setting keeps its current value. Correct it in the file, or assign a new value to replace it.
        """
    case .unencodableValue(let key, let reason):
      return "The value for \"\(key)\" cannot be stored as JSON (\(reason)). Nothing was written."
    case .writeFailed(let url, let reason):
      return """
        Could not write the settings file \(url.path): \(reason). The file and the values in memory are as they \
        were.
        """
    case .notARegularFile(let url, let kind):
      return """
        The settings file \(url.path) is \(kind), not a regular file, so it is neither read nor written, and \
        nothing on disk was changed. Point the store at a regular file, or remove what is at that path (or \
        re-point the symlink) so that a new file can be made there.
        """
    case .invalidJSON(let reason):
      return "The text is not valid JSON: \(reason)."
    case .invalidSuiteName(let suite):
      return """
        "\(suite)" cannot name a settings suite: use a plain directory name such as com.example.app \
        (not empty, no "/", not "." or "..").
        """
    }
  }
}
