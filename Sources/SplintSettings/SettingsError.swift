#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// What went wrong with a setting or its file, and what to do about it.
///
/// A ``SettingsStore`` reports every error through ``SettingsStore/errors()``; the throwing calls
/// (``Setting/save(_:)``, ``SettingsStore/update(_:)`` and friends) also throw the error of their own write.
/// Nothing is ever lost to an error: a bad file is kept, a value that cannot be decoded stays in the file, and a
/// failed write leaves the file and the in-memory values as they were.
///
/// A struct rather than an enum, so that a new situation can come in a minor release without breaking anyone's
/// `switch`: compare an error's ``code`` with ``Code``'s (`error.code == .corruptFile`), and keep a `default`.
///
/// Each error says what happened in ``summary`` (one sentence) and what to do in ``remedy``; ``description`` is
/// both on one line, for logs. (A new situation is a case of `Situation`, a ``Code``, and its words in one switch.)
public struct SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The situations there are now, for this package's own exhaustive switches (such as `splintctl`'s exit
  /// statuses). Users see ``code``, which can grow.
  package enum Situation: Sendable, Hashable {
    case corruptFile(URL, reason: String)
    case unreadableFile(URL, reason: String)
    /// A system layer's ``corruptFile``: the same code, another remedy (it is never written).
    case corruptSystemFile(URL, reason: String)
    /// A system layer's ``unreadableFile``.
    case unreadableSystemFile(URL, reason: String)
    case undecodableValue(key: String, expected: String, reason: String)
    case unencodableValue(key: String, reason: String)
    /// With what to do for the cause, if there is more to say than the reason does.
    case writeFailed(URL, reason: String, remedy: String?)
    case notARegularFile(URL, kind: String)
    case invalidJSON(reason: String)
    case invalidSuiteName(String)
    case reservedKey(String)
    case newerVersion(URL, version: Int, known: Int)
    case migrationFailed(URL, version: Int, reason: String)
    case versionMismatch(URL, imported: Int, file: Int)
    case unsafePath(URL, reason: String)
    case fileTooLarge(URL, size: Int64, limit: Int)
    case lockTimeout(URL, lockFile: URL, waited: Duration)
    case watchedByPolling(URL, interval: Duration, reason: String)
    case enforcedByFleet(key: String, copy: URL)
    case fleetUnreachable(URL, since: Date, reason: String)
    case noFleetFollower(URL, since: Date?)
    case untrustedFleetCopy(URL, reason: String)
    case invalidEnforcement(URL, reason: String)
  }

  /// The situation, with its details.
  package let situation: Situation

  package init(_ situation: Situation) { self.situation = situation }

  /// Which kind of failure an error is, whatever its details. New codes may come in minor releases.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as its static member is spelled.
    public let description: String

    private init(_ name: String) { description = name }

    /// See ``SettingsError/corruptFile(_:reason:)``.
    public static let corruptFile = Code("corruptFile")
    /// See ``SettingsError/unreadableFile(_:reason:)``.
    public static let unreadableFile = Code("unreadableFile")
    /// See ``SettingsError/undecodableValue(key:expected:reason:)``.
    public static let undecodableValue = Code("undecodableValue")
    /// See ``SettingsError/unencodableValue(key:reason:)``.
    public static let unencodableValue = Code("unencodableValue")
    /// See ``SettingsError/writeFailed(_:reason:)``.
    public static let writeFailed = Code("writeFailed")
    /// See ``SettingsError/notARegularFile(_:kind:)``.
    public static let notARegularFile = Code("notARegularFile")
    /// See ``SettingsError/invalidJSON(reason:)``.
    public static let invalidJSON = Code("invalidJSON")
    /// See ``SettingsError/invalidSuiteName(_:)``.
    public static let invalidSuiteName = Code("invalidSuiteName")
    /// See ``SettingsError/reservedKey(_:)``.
    public static let reservedKey = Code("reservedKey")
    /// See ``SettingsError/newerVersion(_:version:known:)``.
    public static let newerVersion = Code("newerVersion")
    /// See ``SettingsError/migrationFailed(_:version:reason:)``.
    public static let migrationFailed = Code("migrationFailed")
    /// See ``SettingsError/versionMismatch(_:imported:file:)``.
    public static let versionMismatch = Code("versionMismatch")
    /// See ``SettingsError/unsafePath(_:reason:)``.
    public static let unsafePath = Code("unsafePath")
    /// See ``SettingsError/fileTooLarge(_:size:limit:)``.
    public static let fileTooLarge = Code("fileTooLarge")
    /// See ``SettingsError/lockTimeout(_:lockFile:waited:)``.
    public static let lockTimeout = Code("lockTimeout")
    /// See ``SettingsError/watchedByPolling(_:interval:reason:)``.
    public static let watchedByPolling = Code("watchedByPolling")
    /// See ``SettingsError/enforcedByFleet(key:copy:)``.
    public static let enforcedByFleet = Code("enforcedByFleet")
    /// See ``SettingsError/fleetUnreachable(_:since:reason:)``.
    public static let fleetUnreachable = Code("fleetUnreachable")
    /// See ``SettingsError/noFleetFollower(_:since:)``.
    public static let noFleetFollower = Code("noFleetFollower")
    /// See ``SettingsError/untrustedFleetCopy(_:reason:)``.
    public static let untrustedFleetCopy = Code("untrustedFleetCopy")
    /// See ``SettingsError/invalidEnforcement(_:reason:)``.
    public static let invalidEnforcement = Code("invalidEnforcement")
  }

  /// Which kind of failure this is.
  public var code: Code {
    switch situation {
    case .corruptFile, .corruptSystemFile: .corruptFile
    case .unreadableFile, .unreadableSystemFile: .unreadableFile
    case .undecodableValue: .undecodableValue
    case .unencodableValue: .unencodableValue
    case .writeFailed: .writeFailed
    case .notARegularFile: .notARegularFile
    case .invalidJSON: .invalidJSON
    case .invalidSuiteName: .invalidSuiteName
    case .reservedKey: .reservedKey
    case .newerVersion: .newerVersion
    case .migrationFailed: .migrationFailed
    case .versionMismatch: .versionMismatch
    case .unsafePath: .unsafePath
    case .fileTooLarge: .fileTooLarge
    case .lockTimeout: .lockTimeout
    case .watchedByPolling: .watchedByPolling
    case .enforcedByFleet: .enforcedByFleet
    case .fleetUnreachable: .fleetUnreachable
    case .noFleetFollower: .noFleetFollower
    case .untrustedFleetCopy: .untrustedFleetCopy
    case .invalidEnforcement: .invalidEnforcement
    }
  }

  /// The settings file the error is about, if it is about one.
  public var url: URL? {
    switch situation {
    case .corruptFile(let url, _), .unreadableFile(let url, _), .corruptSystemFile(let url, _),
      .unreadableSystemFile(let url, _), .writeFailed(let url, _, _), .notARegularFile(let url, _),
      .newerVersion(let url, _, _), .migrationFailed(let url, _, _), .versionMismatch(let url, _, _),
      .unsafePath(let url, _), .fileTooLarge(let url, _, _), .lockTimeout(let url, _, _),
      .watchedByPolling(let url, _, _), .enforcedByFleet(_, let url), .fleetUnreachable(let url, _, _),
      .noFleetFollower(let url, _), .untrustedFleetCopy(let url, _), .invalidEnforcement(let url, _):
      url
    case .undecodableValue, .unencodableValue, .invalidJSON, .invalidSuiteName, .reservedKey:
      nil
    }
  }

  /// The key the error is about, if it is about one.
  public var key: String? {
    switch situation {
    case .undecodableValue(let key, _, _), .unencodableValue(let key, _), .reservedKey(let key),
      .enforcedByFleet(let key, _):
      key
    case .corruptFile, .unreadableFile, .corruptSystemFile, .unreadableSystemFile, .writeFailed, .notARegularFile,
      .invalidJSON, .invalidSuiteName, .newerVersion, .migrationFailed, .versionMismatch, .unsafePath, .fileTooLarge,
      .lockTimeout, .watchedByPolling, .fleetUnreachable, .noFleetFollower, .untrustedFleetCopy, .invalidEnforcement:
      nil
    }
  }

  /// The settings file is not a JSON object. Settings keep what the process last read from it (or read their
  /// defaults, if it read none), and every write to it fails with this error, so that a typo costs no other setting;
  /// ``SettingsStore/resetAll()`` starts over on purpose, keeping the bad file beside the new one as
  /// `settings.json.corrupt-<UTC time>`. For a store's system file (which is never written) the error has this code
  /// too, and a description that says so.
  public static func corruptFile(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.corruptFile(url, reason: reason))
  }

  /// The settings file exists but cannot be read. For a store's system file the error has this code too, and a
  /// description that says what its administrator should do.
  public static func unreadableFile(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.unreadableFile(url, reason: reason))
  }

  /// A store's system file is not a JSON object: ``Code/corruptFile``, with the remedy for a file that is never
  /// written.
  package static func corruptSystemFile(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.corruptSystemFile(url, reason: reason))
  }

  /// A store's system file cannot be read: ``Code/unreadableFile``, with the remedy for a system file.
  package static func unreadableSystemFile(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.unreadableSystemFile(url, reason: reason))
  }

  /// A stored value is not what a setting expects. It stays in the file untouched, and the setting keeps its
  /// current value.
  public static func undecodableValue(key: String, expected: String, reason: String) -> SettingsError {
    SettingsError(.undecodableValue(key: key, expected: expected, reason: reason))
  }

  /// A value cannot be written as JSON, such as a `Double` that is NaN or infinite. Nothing was written.
  public static func unencodableValue(key: String, reason: String) -> SettingsError {
    SettingsError(.unencodableValue(key: key, reason: reason))
  }

  /// Writing the settings file failed. The file and the values in memory are as they were.
  public static func writeFailed(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.writeFailed(url, reason: reason, remedy: nil))
  }

  /// ``writeFailed(_:reason:)``, with what to do about its cause (a full disk, a read-only directory).
  package static func writeFailed(_ url: URL, reason: String, remedy: String?) -> SettingsError {
    SettingsError(.writeFailed(url, reason: reason, remedy: remedy))
  }

  /// The settings file (after following symlinks) is not a regular file but `kind`: a directory, a FIFO, a socket
  /// or a device. It is neither read nor written, and nothing on disk is changed.
  public static func notARegularFile(_ url: URL, kind: String) -> SettingsError {
    SettingsError(.notARegularFile(url, kind: kind))
  }

  /// Text meant to be JSON is not.
  public static func invalidJSON(reason: String) -> SettingsError { SettingsError(.invalidJSON(reason: reason)) }

  /// A suite name that is not a plain directory name.
  public static func invalidSuiteName(_ suite: String) -> SettingsError { SettingsError(.invalidSuiteName(suite)) }

  /// `key` is reserved: `"$version"` records the settings' schema version, which only ``SettingsMigration``s
  /// change; `"$schema"` tells editors where the file's JSON Schema is, which `splintctl schema` sets. Nothing was
  /// written.
  public static func reservedKey(_ key: String) -> SettingsError { SettingsError(.reservedKey(key)) }

  /// The settings file records schema `version`, newer than the newest ``SettingsMigration`` this program knows
  /// (`known`): a newer release of the program has migrated it. No migration runs and none is written back; the
  /// values are read as they are.
  public static func newerVersion(_ url: URL, version: Int, known: Int) -> SettingsError {
    SettingsError(.newerVersion(url, version: version, known: known))
  }

  /// Migrating the settings file to schema `version` failed: a migration threw, or the file's `"$version"` is not a
  /// version. The file is untouched, and its settings are read as they are.
  public static func migrationFailed(_ url: URL, version: Int, reason: String) -> SettingsError {
    SettingsError(.migrationFailed(url, version: version, reason: reason))
  }

  /// Settings to import record schema version `imported`, and the file holding settings records another, `file`:
  /// their keys may not mean the same. Nothing was written.
  public static func versionMismatch(_ url: URL, imported: Int, file: Int) -> SettingsError {
    SettingsError(.versionMismatch(url, imported: imported, file: file))
  }

  /// The path to the settings file leads somewhere this process must not go: a link or directory of another user
  /// leads to a file that is not theirs (root's, this process's user's, a third user's), or it is another user's
  /// name in a directory anyone may write, such as `/tmp`. `reason` names what was found, whose it is, and the
  /// rule. Nothing was read or written. See "Files that belong to someone else" in the SharingAPreference guide.
  public static func unsafePath(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.unsafePath(url, reason: reason))
  }

  /// The settings file holds `size` bytes, more than the store's
  /// ``SettingsStore/Options/maximumFileSize`` (`limit`). It was not read (nothing was allocated for it) and is left
  /// as it is; the last good settings stay in use, and writes to it fail.
  public static func fileTooLarge(_ url: URL, size: Int64, limit: Int) -> SettingsError {
    SettingsError(.fileTooLarge(url, size: size, limit: limit))
  }

  /// Another process held the settings file's lock, `lockFile`, for the whole of the store's
  /// ``SettingsStore/Options/lockTimeout`` (`waited`). Nothing was written.
  public static func lockTimeout(_ url: URL, lockFile: URL, waited: Duration) -> SettingsError {
    SettingsError(.lockTimeout(url, lockFile: lockFile, waited: waited))
  }

  /// Not a failure, but what a program following the file should know: changes other processes make to it are found
  /// by looking at it every `interval` (``SettingsStore/Options/pollInterval``), for `reason`, so they arrive up to
  /// that much later than through inotify. Either inotify cannot serve this process (its user's limit of instances,
  /// or of watches, is used up), or the file is on a file system where inotify does not see every change (NFS, SMB,
  /// 9p, FUSE, ...: changes made on another machine, or beneath the mount). Told once, through
  /// ``SettingsStore/errors()``, when it starts; a new stream hears it first while it lasts. See "Network home
  /// directories" in the SharingAPreference guide.
  public static func watchedByPolling(_ url: URL, interval: Duration, reason: String) -> SettingsError {
    SettingsError(.watchedByPolling(url, interval: interval, reason: reason))
  }

  /// `key` is enforced by the fleet (its machine copy, `copy`, marks it so): a local value would not be used, so
  /// none is written. Change it in the fleet (`splintctl fleet set`, or `etcdctl put`), or have it un-enforced there.
  public static func enforcedByFleet(key: String, copy: URL) -> SettingsError {
    SettingsError(.enforcedByFleet(key: key, copy: copy))
  }

  /// The follower that keeps the fleet copy `url` up to date has not reached its cluster `since` then, for `reason`:
  /// the copy's values are the last it had, and changes made in the fleet meanwhile have not arrived. They do once
  /// the follower reaches the cluster again, which it keeps trying.
  public static func fleetUnreachable(_ url: URL, since: Date, reason: String) -> SettingsError {
    SettingsError(.fleetUnreachable(url, since: since, reason: reason))
  }

  /// No follower keeps the fleet copy `url` up to date, since the time given when the copy records it: its values
  /// are the last a follower wrote, and changes made in the fleet do not arrive until one runs again.
  public static func noFleetFollower(_ url: URL, since: Date?) -> SettingsError {
    SettingsError(.noFleetFollower(url, since: since))
  }

  /// The fleet copy `url` marks keys as enforced, but it is not a copy that may enforce anything (`reason` says
  /// why: its owner, its mode, a directory on its way): its values are used as fleet values, below the user's own,
  /// and its marks are ignored.
  public static func untrustedFleetCopy(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.untrustedFleetCopy(url, reason: reason))
  }

  /// The fleet copy `url` lists in `"$enforced"` what is not the key of a setting (`reason` says what): an entry
  /// that is not a string, is empty, or starts with `$`, or a member that is not an array. Those entries are
  /// ignored, and the keys it lists are enforced. A follower never writes such a list (it tells of the cluster's):
  /// the copy was written by something else.
  public static func invalidEnforcement(_ url: URL, reason: String) -> SettingsError {
    SettingsError(.invalidEnforcement(url, reason: reason))
  }

  /// What happened, in a sentence: the first thing to show (`splintctl` prints it on the first line).
  public var summary: String { words.summary }

  /// What to do about it, in full sentences, and what became of the file and the values meanwhile; nil when there is
  /// nothing to do.
  public var remedy: String? { words.remedy }

  /// ``summary`` and ``remedy``, on one line, as a daemon logs it.
  public var description: String { [summary, remedy].compactMap(\.self).joined(separator: " ") }

  /// Each situation's words: the one place a new situation's go (with its ``Situation`` case and its ``Code``).
  private var words: (summary: String, remedy: String?) {
    switch situation {
    case .corruptFile(let url, let reason):
      return (
        "The settings file \(url.path) is not a JSON object (\(reason)).",
        """
        It is not used, and it is not written until it is fixed: settings keep what this program last read from it, \
        or their defaults if it read none. Fix the file, or start over on purpose with `splintctl reset --all` \
        (SettingsStore.resetAll()), which keeps the bad file beside it as \(url.lastPathComponent).corrupt-<time>.
        """
      )
    case .unreadableFile(let url, let reason):
      return (
        "The settings file \(url.path) cannot be read: \(reason).",
        """
        Settings keep what this program last read from it, or their defaults if it read none. Check the file's owner \
        and permissions (it should belong to this user, mode 0600).
        """
      )
    case .corruptSystemFile(let url, let reason):
      return (
        "The system settings file \(url.path) is not a JSON object (\(reason)).",
        """
        It is skipped (its last good settings stay in use, none if it never was good) and never written. Whoever \
        installed it, an administrator or a distribution package, should fix it; the user's own settings apply \
        meanwhile.
        """
      )
    case .unreadableSystemFile(let url, let reason):
      return (
        "The system settings file \(url.path) cannot be read: \(reason).",
        """
        It is skipped: its last good settings stay in use (none, if it never was read). Its administrator should \
        make it readable by every user (mode 0644, in directories every user may enter).
        """
      )
    case .undecodableValue(let key, let expected, let reason):
      return (
        "The stored value of \"\(key)\" is not \(expected) (\(reason)).",
        """
        It stays in the file untouched, and the setting keeps its current value. Correct it in the file, or assign \
        a new value to replace it.
        """
      )
    case .unencodableValue(let key, let reason):
      return ("The value for \"\(key)\" cannot be stored as JSON (\(reason)).", "Nothing was written.")
    case .writeFailed(let url, let reason, let remedy):
      return (
        "Could not write the settings file \(url.path): \(reason).",
        "The file and the values in memory are as they were." + (remedy.map { " " + $0 } ?? "")
      )
    case .notARegularFile(let url, let kind):
      return (
        "The settings file \(url.path) is \(kind), not a regular file.",
        """
        It is neither read nor written, and nothing on disk was changed. Point the store at a regular file, or \
        remove what is at that path (or re-point the symlink) so that a new file can be made there.
        """
      )
    case .invalidJSON(let reason):
      return ("The text is not valid JSON: \(reason).", nil)
    case .invalidSuiteName(let suite):
      return (
        "\(Self.quoted(suite)) cannot name a settings suite.",
        """
        Use a plain directory name such as com.example.app: not empty or blank, no "/" and no control characters \
        such as a newline, not "." or "..".
        """
      )
    case .reservedKey(let key) where key == SettingsDocument.schemaKey:
      return (
        "\"\(key)\" is reserved: it tells editors where the settings' JSON Schema is.",
        "Set it with `splintctl schema`, which writes the schema beside the file. Nothing was written."
      )
    case .reservedKey(let key):
      return (
        "\"\(key)\" is reserved: it records the settings' schema version, which only migrations change.",
        "Use another key. Nothing was written."
      )
    case .newerVersion(let url, let version, let known):
      return (
        "The settings file \(url.path) is at version \(version), and this program knows versions up to \(known).",
        """
        A newer release of it has changed the settings' shape; they are read as they are and not migrated back. \
        Update this program, or restore a backup of the settings made for this version.
        """
      )
    case .migrationFailed(let url, let version, let reason):
      return (
        "Migrating the settings file \(url.path) to version \(version) failed: \(reason).",
        """
        The file is untouched and its settings are read as they are; the migration runs again when the program \
        next opens the file. Fix what the reason names (in the file, or in the migration).
        """
      )
    case .versionMismatch(let url, let imported, let file):
      return (
        "The settings to import are at version \(imported), and \(url.path) is at version \(file).",
        """
        Their keys may not mean the same, so nothing was written. Import them with the program itself, whose \
        migrations can bring them to its version, or into a file at version \(imported).
        """
      )
    case .unsafePath(let url, let reason):
      return (
        "The settings file \(url.path) is not used: \(reason).",
        """
        Nothing was read or written. "Files that belong to someone else" in the SharingAPreference guide has the \
        rules.
        """
      )
    case .fileTooLarge(let url, let size, let limit):
      return (
        "The settings file \(url.path) holds \(size) bytes, more than the \(limit) a settings file may have here.",
        """
        It is not read, and it is left as it is. Make it smaller, or give the store a larger maximumFileSize \
        (SettingsStore.Options).
        """
      )
    case .lockTimeout(let url, let lockFile, let waited):
      return (
        """
        Could not write the settings file \(url.path): another process has held its lock, \(lockFile.path), for \
        \(waited.secondsText).
        """,
        "Nothing was written. Find it with `fuser -v \(lockFile.path)`, or try again later."
      )
    case .watchedByPolling(let url, let interval, let reason):
      return (
        """
        Changes other programs make to the settings file \(url.path) are found by looking at it every \
        \(interval.secondsText), so they may take that long to arrive: \(reason).
        """,
        reason.contains("fs.inotify")
          ? "Raise the limit (`sysctl` it, or a file in /etc/sysctl.d) or end programs that hold many." : nil
      )
    case .enforcedByFleet(let key, let copy):
      return (
        "\"\(key)\" is enforced by the fleet (\(copy.path)), so a value set here would not be used.",
        """
        Nothing was written. Change it in the fleet with `splintctl fleet set`, or ask its operators to stop \
        enforcing it.
        """
      )
    case .fleetUnreachable(let url, let since, let reason):
      return (
        "The fleet's settings in \(url.path) are those of \(since.timestampText): its cluster is lost (\(reason)).",
        "They stay in use, and changes arrive once the follower reaches the cluster again; check the cluster, or `splintctl fleet status`."
      )
    case .noFleetFollower(let url, let since):
      return (
        "No follower keeps the fleet's settings in \(url.path) up to date\(since.map { " since \($0.timestampText)" } ?? "").",
        "They are the last it wrote. Start one: `systemctl start splint-fleet`, or `splintctl fleet follow`."
      )
    case .untrustedFleetCopy(let url, let reason):
      return (
        "The fleet copy \(url.path) marks keys as enforced, but only a system copy may (\(reason)).",
        """
        Its values are used below the user's own, and nothing is enforced. "Enforced keys" in the SettingsForAFleet \
        guide says which copies may.
        """
      )
    case .invalidEnforcement(let url, let reason):
      return (
        "The fleet copy \(url.path) lists in \"$enforced\" what is not the key of a setting: \(reason).",
        """
        That is ignored, and the keys it lists are enforced. A follower never writes such a list: fix whatever wrote \
        this copy, or let `splintctl fleet follow` keep it.
        """
      )
    }
  }

  /// `text` in quotes, with a newline or another control character in it shown escaped, as JSON writes it.
  private static func quoted(_ text: String) -> String { JSONValue.string(text).description }
}

extension Duration {
  /// The duration in seconds, as a sentence says it: "5 seconds", "0.3 seconds".
  fileprivate var secondsText: String {
    let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
    if seconds == 1 { return "1 second" }
    return seconds == seconds.rounded() ? "\(Int(seconds)) seconds" : "\(seconds) seconds"
  }
}
