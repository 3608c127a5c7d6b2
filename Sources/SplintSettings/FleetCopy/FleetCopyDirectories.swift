import Glibc
import SplintSystemCalls

#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// Where a machine's copies of a fleet's settings are, what a copy says of itself, and whether it may enforce keys.
///
/// A copy is a settings file of its own, `<directory>/<suite>.json`, which one follower per machine (SplintFleet's,
/// `splintctl fleet follow`) keeps equal to the fleet's values, and which every ``SettingsStore`` of the suite reads
/// as a layer: below the user's own file, above the system-wide defaults. Its settings are members as in any
/// settings file; two reserved members describe it: `"$fleet"` (where the values come from, up to which revision,
/// and the follower's state) and `"$enforced"` (the keys the fleet enforces, above the user's file). Keys that
/// start with `$` are never settings of the fleet.
package enum FleetCopy {
  /// The environment variable that names the one directory copies are in, for followers and readers alike
  /// (containers, tests): an absolute path; any other value is ignored.
  package static let environmentVariable = "SPLINT_FLEET_DIRECTORY"
  /// Where the system follower (`splint-fleet.service`, or any follower run by root or its system user) keeps the
  /// copies that every user's programs read.
  package static let systemDirectory = "/var/lib/splint-fleet"
  /// The system user the shipped unit runs the follower as: a system copy may be its, or root's.
  package static let systemUser = "splint-fleet"
  /// The reserved member that describes the copy (``Metadata``).
  package static let metadataKey = "$fleet"
  /// The reserved member that lists the keys the fleet enforces.
  package static let enforcedKey = "$enforced"
  /// The reserved key of a suite, in a cluster, that holds the JSON Schema its values are held to (a copy keeps it in
  /// its ``metadataKey`` member, not as a member of its own: a settings file's `"$schema"` is an editor's).
  package static let schemaKey = "$schema"
  /// The reserved key of a suite, in a cluster, that lists its labels in the order their values win (after the
  /// machine's own host label, which always wins first).
  package static let labelsKey = "$labels"
  /// What the cluster's keys of a label's values start with, in a suite: `$for/<label>/<key>` holds the value of
  /// `<key>` on the machines that carry `<label>`. A copy holds only the values of its machine's labels, resolved.
  package static let labelValuePrefix = "$for/"

  /// Whether `key` is reserved: it starts with `$`. A copy keeps its own members under such keys (``metadataKey``,
  /// ``enforcedKey``), so a fleet never holds one as a setting: a cluster refuses to store one, a follower leaves one
  /// out, and no store reads one from a copy (a user's file and the system files may hold one, such as
  /// `"$version"`).
  package static func isReserved(_ key: some StringProtocol) -> Bool { key.hasPrefix("$") }

  /// The copies a store of `suite` reads, first wins: the one in `$SPLINT_FLEET_DIRECTORY` alone when that is set;
  /// else this user's own (`$XDG_STATE_HOME/splint-fleet`, or `~/.local/state/splint-fleet`), then the system's
  /// (`/var/lib/splint-fleet`). None of them need exist.
  static func urls(forSuite suite: String) -> [URL] {
    directories().map { $0.appendingPathComponent("\(suite).json") }
  }

  /// The directories copies are read from, first wins.
  static func directories() -> [URL] {
    if let configured = configuredDirectory() { return [configured] }
    return [userDirectory(), URL(fileURLWithPath: systemDirectory, isDirectory: true)]
  }

  /// Where a follower run by this process's user writes: `$SPLINT_FLEET_DIRECTORY` when set; the system directory
  /// for root and the follower's system user; this user's own state directory for anyone else.
  package static func followerDirectory() -> URL {
    if let configured = configuredDirectory() { return configured }
    return writesSystemCopies ? URL(fileURLWithPath: systemDirectory, isDirectory: true) : userDirectory()
  }

  /// Whether this process's copies are the machine's, for every user to read (root, or the follower's system user):
  /// they are made readable by all, and may enforce keys.
  package static var writesSystemCopies: Bool {
    let user = geteuid()
    return user == 0 || user == systemUserID
  }

  private static func configuredDirectory() -> URL? {
    guard let configured = SystemCall.environment(environmentVariable), configured.hasPrefix("/") else { return nil }
    return URL(fileURLWithPath: configured, isDirectory: true).standardizedFileURL
  }

  /// `$XDG_STATE_HOME/splint-fleet`, or `~/.local/state/splint-fleet` when it is unset or relative: state, not
  /// configuration, so that dotfile sync does not carry one machine's copy to another.
  private static func userDirectory() -> URL {
    let state =
      if let configured = SystemCall.environment("XDG_STATE_HOME"), configured.hasPrefix("/") {
        URL(fileURLWithPath: configured, isDirectory: true)
      } else {
        URL(fileURLWithPath: FileIO.homeDirectory(), isDirectory: true).appendingPathComponent(".local/state")
      }
    return state.appendingPathComponent("splint-fleet", isDirectory: true)
  }

  /// This user's own copy directory, `$XDG_STATE_HOME/splint-fleet`, as a path without `.`, `..` or doubled slashes.
  static var userDirectoryPath: String { FileIO.standardized(userDirectory().path) }

  /// Whether `path` (absolute, standardized) is a copy in this user's own copy directory, which a user's follower
  /// writes: never a system copy, whoever owns it (a root process whose `HOME` or `XDG_STATE_HOME` names someone
  /// else's directory reads a copy there as that user's). Not when that directory is the system's.
  static func isUsersOwnCopy(_ path: String) -> Bool {
    let directory = FileIO.directory(of: path)
    return directory == userDirectoryPath && directory != systemDirectory
  }

  /// The user ID of ``systemUser``, or nil where the system has no such user.
  static let systemUserID = Users.id(named: systemUser)
}
