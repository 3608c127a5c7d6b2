import Glibc
import SplintSystemCalls

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
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

  // MARK: - What a copy says of itself

  /// The `"$fleet"` member: where the values come from and how the follower fares. Written by the follower, read by
  /// every store.
  package struct Metadata: Sendable, Hashable {
    /// The engine the values come from: "etcd".
    package var engine: String
    /// The cluster's identity (etcd's cluster ID): a restored or rebuilt cluster has another, and its revisions
    /// start again.
    package var cluster: String
    /// The revision of the cluster the values are as of.
    package var revision: Int64
    /// The addresses the follower reaches the cluster at.
    package var endpoints: [String]
    /// The key prefix the suite's values are under, in the cluster.
    package var prefix: String
    /// Keys the cluster holds under the prefix that are not in the copy, and why (not JSON, too large, reserved).
    package var skipped: [String: String]
    /// How many more keys are left out than `skipped` lists (it lists a bounded number).
    package var skippedMore: Int
    /// The follower's host name, process ID and user.
    package var host: String
    package var processID: Int32
    package var user: String
    /// What the follower is doing: following, unreachable (the cluster is lost), stopped (it ended).
    package var state: FleetCopyStatus.State
    /// Since when it has been in that state.
    package var since: Date
    /// Why it is unreachable, in words.
    package var reason: String?
    /// When the copy was last written.
    package var written: Date

    package init(
      engine: String, cluster: String, revision: Int64, endpoints: [String], prefix: String,
      skipped: [String: String] = [:], skippedMore: Int = 0, state: FleetCopyStatus.State, since: Date,
      reason: String? = nil,
      written: Date = Date()
    ) {
      self.engine = engine
      self.cluster = cluster
      self.revision = revision
      self.endpoints = endpoints
      self.prefix = prefix
      self.skipped = skipped
      self.skippedMore = skippedMore
      host = ProcessInfo.processInfo.hostName
      processID = getpid()
      user = Users.name(geteuid())
      self.state = state
      self.since = since
      self.reason = reason
      self.written = written
    }

    /// The member's JSON.
    package var json: JSONValue {
      var object: [JSONKey: JSONValue] = [
        "engine": .string(engine), "cluster": .string(cluster), "revision": .int(Int(revision)),
        "endpoints": .array(endpoints.map(JSONValue.string)), "prefix": .string(prefix),
        "host": .string(host), "pid": .int(Int(processID)), "user": .string(user),
        "state": .string(state.rawValue), "since": .string(Self.format(since)),
        "written": .string(Self.format(written)),
      ]
      if !skipped.isEmpty {
        object["skipped"] = .object(Dictionary(uniqueKeysWithValues: skipped.map { (JSONKey($0), .string($1)) }))
      }
      if skippedMore > 0 { object["skippedMore"] = .int(skippedMore) }
      if let reason { object["reason"] = .string(reason) }
      return .object(object)
    }

    /// What a copy's member holds, or nil when it is not a description of a copy (a copy written by hand, or by
    /// something else).
    package init?(_ json: JSONValue?) {
      guard case .object(let object)? = json, case .string(let engine)? = object["engine"],
        case .string(let cluster)? = object["cluster"], case .int(let revision)? = object["revision"],
        case .string(let stateName)? = object["state"], let state = FleetCopyStatus.State(rawValue: stateName),
        case .string(let sinceText)? = object["since"], let since = Self.parse(sinceText)
      else { return nil }
      self.engine = engine
      self.cluster = cluster
      self.revision = Int64(revision)
      self.state = state
      self.since = since
      if case .array(let endpoints)? = object["endpoints"] {
        self.endpoints = endpoints.compactMap { if case .string(let text) = $0 { text } else { nil } }
      } else {
        endpoints = []
      }
      if case .string(let prefix)? = object["prefix"] { self.prefix = prefix } else { prefix = "" }
      if case .object(let skipped)? = object["skipped"] {
        self.skipped = Dictionary(
          skipped.compactMap { key, value in if case .string(let text) = value { (key.text, text) } else { nil } },
          uniquingKeysWith: { first, _ in first })
      } else {
        skipped = [:]
      }
      if case .int(let more)? = object["skippedMore"] { skippedMore = max(more, 0) } else { skippedMore = 0 }
      if case .string(let host)? = object["host"] { self.host = host } else { host = "" }
      if case .int(let processID)? = object["pid"] {
        self.processID = Int32(clamping: processID)
      } else {
        processID = 0
      }
      if case .string(let user)? = object["user"] { self.user = user } else { user = "" }
      if case .string(let reason)? = object["reason"] { self.reason = reason } else { reason = nil }
      if case .string(let text)? = object["written"], let written = Self.parse(text) {
        self.written = written
      } else {
        written = since
      }
    }

    private static func format(_ date: Date) -> String {
      date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    private static func parse(_ text: String) -> Date? {
      (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
        ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
  }

  /// A fleet's value, as a cluster holds it: one JSON value (strict JSON: no comments, no trailing commas), and its
  /// text when the value would not write it back the same (a number with more digits than a `Double` keeps); or
  /// why it is not JSON.
  ///
  /// - Throws: ``SettingsError/invalidJSON(reason:)``, with the line and column where it goes wrong.
  package static func parseValue(_ bytes: [UInt8]) throws(SettingsError) -> (value: JSONValue, text: String?) {
    let parsed: (value: JSONValue, exact: Bool)
    do throws(JSONSyntaxError) {
      parsed = try JSONParser.valueAndExactness(from: bytes)
    } catch {
      throw .invalidJSON(reason: error.description)
    }
    guard !parsed.exact else { return (parsed.value, nil) }
    let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    let trimmed = bytes.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
    return (parsed.value, String(decoding: trimmed, as: UTF8.self))
  }

  /// The keys a copy's `"$enforced"` member names; empty for anything but an array of strings.
  static func enforcedKeys(_ json: JSONValue?) -> Set<JSONKey> {
    guard case .array(let keys)? = json else { return [] }
    return Set(keys.compactMap { if case .string(let key) = $0 { JSONKey(key) } else { nil } })
  }

  // MARK: - Trust

  /// What a judgement of a copy's trust found (``trust(ofCopyAt:readAs:)``).
  enum Trust: Equatable {
    /// The copy may enforce keys.
    case trusted
    /// It may not, for this reason (a phrase: "its directory /x belongs to user 1000 (alice), not root").
    case untrusted(String)
    /// The file at the copy's path is no longer the one whose content is in use: judged again once that is read.
    case replaced
  }

  /// Who may have written a system copy: root, and the follower's system user.
  private static func mayWriteSystemCopies(_ user: uid_t) -> Bool { user == 0 || user == systemUserID }

  /// "root", or "root or splint-fleet" where the system has that user.
  private static var systemOwners: String { systemUserID == nil ? "root" : "root or \(systemUser)" }

  /// Whether the copy at `path`, whose content in use was read from the file `identity` names, may enforce keys:
  /// only a file that no user but root and the follower's system user can have written, as it was read.
  ///
  /// The copy's directory is found as every file of the module is (`PathWalk`, under `OwnershipRules`), from the
  /// root, one component at a time on descriptors, and every step on the way must be one that no one else can
  /// change: each directory and link belongs to root or the system user, and a directory others may write has the
  /// sticky bit (as `/tmp`: no one else can move root's things in it). The copy's own directory may be written by
  /// its owner alone. The copy is then looked at in that directory by its own name, without following a link (a
  /// follower writes the file itself there): a regular file of root or the system user that neither group nor
  /// others may write, judged with `fstat` on the descriptor that names it, and only if it is the very file
  /// (device, inode, owner, size and times) whose content is in use; otherwise ``Trust/replaced``.
  static func trust(ofCopyAt path: String, readAs identity: FileIdentity) -> Trust {
    let (directoryPath, name) = (FileIO.directory(of: path), FileIO.name(of: path))
    var rules = TrustRules()
    let directory: (descriptor: Descriptor, status: stat)
    do throws(FileSystemError) {
      let root = try Descriptor.root()
      let rootStatus = try root.status(path: "/")
      if !mayWriteSystemCopies(rootStatus.st_uid) || rootStatus.othersMayWrite {
        return .untrusted("/ may be changed by others than \(systemOwners)")  // coverage:ignore — a broken system
      }
      guard let found = try PathWalk.walk(directoryPath, from: root, at: "", rules: &rules).file else {
        return .untrusted("its directory \(directoryPath) cannot be found")  // coverage:ignore — read a moment ago
      }
      directory = found
    } catch {
      switch error {
      case .refused(_, let reason): return .untrusted(reason)
      // Root walks any directory; a name missing on the way ends the walk as refused or not found.
      case .system(let error):
        let reason = String(cString: strerror(error.code))  // coverage:ignore — an I/O error on the way
        return .untrusted("\(directoryPath) cannot be looked at (\(reason))")  // coverage:ignore — an I/O error
      }
    }
    guard directory.status.type == S_IFDIR else { return .untrusted("\(directoryPath) is not a directory") }
    // Its owner was judged by TrustRules as the walk entered it (root or splint-fleet); what is left is its mode.
    guard !directory.status.othersMayWrite else {
      return .untrusted(
        "its directory \(directoryPath) may be written by others than its owner (mode \(directory.status.modeText))")
    }
    let status: stat
    do throws(FileSystemError) {
      status = try directory.descriptor.open(name, LinuxFlags.openPath | O_NOFOLLOW, path: path).status(path: path)
    } catch {
      return .replaced  // coverage:ignore — the copy removed between its read and this look: a race
    }
    guard FileIdentity(status) == identity else { return .replaced }
    guard status.type != S_IFLNK else {
      return .untrusted("it is a symbolic link, not the file a follower writes in \(directoryPath)")
    }
    guard status.type == S_IFREG else { return .untrusted("it is not a regular file") }
    guard mayWriteSystemCopies(status.st_uid) else {
      return .untrusted("it belongs to \(Users.name(status.st_uid)), not \(systemOwners)")
    }
    guard status.st_mode & 0o022 == 0 else {
      return .untrusted("it may be written by others than its owner (mode \(status.modeText))")
    }
    return .trusted
  }

  /// The rules of the walk to a copy's directory when its trust is judged: `OwnershipRules` (which every look-up
  /// follows), and then nothing on the way that anyone but root and the system user could change.
  struct TrustRules: PathRules {
    private var ownership = OwnershipRules(makesDirectories: false)

    mutating func enter(
      _ child: stat, at path: String, in directory: stat, at directoryPath: String
    ) throws(FileSystemError) {
      try ownership.enter(child, at: path, in: directory, at: directoryPath)
      if directory.othersMayWrite, directory.st_mode & S_ISVTX == 0 {
        throw .refused(
          path: path,
          reason:
            "\(directoryPath), on the way to it, may be written by others than its owner (mode \(directory.modeText))")
      }
      guard FleetCopy.mayWriteSystemCopies(child.st_uid) else {
        let what = child.type == S_IFLNK ? "the symbolic link \(path)" : path
        throw .refused(
          path: path,
          reason: "\(what), on the way to it, belongs to \(Users.name(child.st_uid)), not \(FleetCopy.systemOwners)")
      }
    }

    // A link on the way to the copy's directory, and a link's "..": not tested (the tests use real directories).
    mutating func follow(  // coverage:ignore — a link on the way
      _ link: stat, at path: String, to target: String  // coverage:ignore — a link on the way
    ) throws(FileSystemError) {  // coverage:ignore — a link on the way
      try ownership.follow(link, at: path, to: target)  // coverage:ignore — a link on the way
    }  // coverage:ignore — a link on the way

    func ascend(  // coverage:ignore — a link's ".."
      from directory: stat, at path: String, to parent: stat  // coverage:ignore — a link's ".."
    ) throws(FileSystemError) {  // coverage:ignore — a link's ".."
      try ownership.ascend(from: directory, at: path, to: parent)  // coverage:ignore — a link's ".."
    }  // coverage:ignore — a link's ".."
  }
}

/// What a machine's copy of a fleet's settings says of itself, as `splintctl fleet status` shows it: where the
/// values come from, as of which revision, how its follower fares, and what it enforces.
///
/// ```swift
/// for copy in SettingsStore(suite: "com.example.sync").fleetStatus {
///   print(copy.url.path, copy.revision, copy.state, copy.isFollowed ? "followed" : "no follower")
/// }
/// ```
public struct FleetCopyStatus: Sendable, Hashable {
  /// What a copy's follower was doing when it last wrote.
  public enum State: String, Sendable, Hashable {
    /// It follows the cluster: every change arrives as it is made.
    case following
    /// It has lost the cluster (every member unreachable, or without a leader), and keeps trying: the values are the
    /// last it had.
    case unreachable
    /// It ended (stopped on purpose): the values are the last it had.
    case stopped
  }

  /// The copy.
  public let url: URL
  /// The engine the values come from ("etcd").
  public let engine: String
  /// The cluster's identity (etcd's cluster ID).
  public let cluster: String
  /// The cluster's revision the values are as of.
  public let revision: Int64
  /// The addresses the follower reaches the cluster at.
  public let endpoints: [String]
  /// The key prefix of the suite's values in the cluster.
  public let prefix: String
  /// The settings the copy holds, sorted.
  public let keys: [String]
  /// The keys the fleet marks as enforced, sorted; they are enforced only when ``isTrusted``.
  public let enforcedKeys: [String]
  /// Keys under the prefix that the copy leaves out, and why (not JSON, too large, reserved): at most a hundred,
  /// each name cut to a line's length, with control characters escaped.
  public let skippedKeys: [String: String]
  /// How many more keys the copy leaves out than ``skippedKeys`` lists.
  public let moreSkippedKeys: Int
  /// What the follower was doing when it last wrote, and since when.
  public let state: State
  /// Since when the follower has been in ``state``.
  public let since: Date
  /// Why it is ``State/unreachable``, in words.
  public let reason: String?
  /// The follower's host, process ID and user, as it recorded them.
  public let follower: String
  /// When the copy was last written.
  public let written: Date
  /// Whether a follower process holds the copy now. False when its follower ended or died: the values are the
  /// last it wrote.
  public let isFollowed: Bool
  /// When a follower was last seen keeping the copy: while one does, within a few seconds of now (it says so at
  /// every check of SplintFleet's `FleetFollower`); once it stopped, when it stopped; once it died, its last sign
  /// of life.
  public let lastSeen: Date
  /// Whether the copy may enforce keys: a system copy that only root and the follower's system user can have
  /// written.
  public let isTrusted: Bool

  package init(
    url: URL, metadata: FleetCopy.Metadata, keys: [String], enforcedKeys: [String], isFollowed: Bool,
    lastSeen: Date, isTrusted: Bool
  ) {
    self.url = url
    engine = metadata.engine
    cluster = metadata.cluster
    revision = metadata.revision
    endpoints = metadata.endpoints
    prefix = metadata.prefix
    self.keys = keys.sorted()
    self.enforcedKeys = enforcedKeys.sorted()
    skippedKeys = metadata.skipped
    moreSkippedKeys = metadata.skippedMore
    state = metadata.state
    since = metadata.since
    reason = metadata.reason
    follower = "\(metadata.user) on \(metadata.host), process \(metadata.processID)"
    written = metadata.written
    self.isFollowed = isFollowed
    self.lastSeen = lastSeen
    self.isTrusted = isTrusted
  }
}

extension String {
  /// The text with every character that a terminal or a log acts on written out as `\u{1B}`: the C0 controls (but
  /// for line feeds and tabs, with `keepingLines`), DEL, the C1 controls, and the bidirectional overrides and
  /// isolates that reorder what is shown. Text from a server or from another user, safe to print, log, or keep in a
  /// copy, and still saying what was received.
  package func escapingControlCharacters(keepingLines: Bool = false) -> String {
    guard
      unicodeScalars.contains(where: { Self.isEscaped($0, keepingLines: keepingLines) })
    else { return self }
    var escaped = ""
    for scalar in unicodeScalars {
      if Self.isEscaped(scalar, keepingLines: keepingLines) {
        escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      } else {
        escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// The text escaped (``escapingControlCharacters(keepingLines:)``), and cut to at most `limit` characters, with
  /// "…" where it is cut, in the middle (its end often tells two long names apart): a name or a message from a
  /// server, however long it was sent, for a line of a log.
  package func shown(limit: Int = 200) -> String {
    let escaped = escapingControlCharacters()
    guard escaped.count > limit else { return escaped }
    return String(escaped.prefix(limit - limit / 3)) + "…" + String(escaped.suffix(limit / 3))
  }

  private static func isEscaped(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
    switch scalar.value {
    case 0x0A, 0x09: !keepingLines
    case 0x00..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
