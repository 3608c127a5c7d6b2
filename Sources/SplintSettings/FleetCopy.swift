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
      skipped: [String: String] = [:], state: FleetCopyStatus.State, since: Date, reason: String? = nil,
      written: Date = Date()
    ) {
      self.engine = engine
      self.cluster = cluster
      self.revision = revision
      self.endpoints = endpoints
      self.prefix = prefix
      self.skipped = skipped
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

  /// What a `"$enforced"` member lists: the keys of the settings the fleet enforces, and what is wrong with the
  /// rest. The one reading of it, for the follower that copies it from a cluster, every store that reads a copy, and
  /// the operator's commands: an entry that is not a key is told, never passed over in silence.
  package struct EnforcedKeys: Sendable, Hashable {
    /// The keys listed, each once, in key order.
    package let keys: [String]
    /// What is wrong with the member, in words: it is not an array, or entries of it are not keys (not a string,
    /// empty, or reserved); nil when nothing is.
    package let problem: String?

    /// What the member `json` lists; none when there is no member.
    package init(_ json: JSONValue?) {
      guard let json else {
        self.init(keys: [], problem: nil)
        return
      }
      guard case .array(let entries) = json else {
        self.init(keys: [], problem: "it is not an array of keys")
        return
      }
      var keys = Set<JSONKey>()
      var others: [String] = []
      for entry in entries {
        if case .string(let key) = entry, !key.isEmpty, !FleetCopy.isReserved(key) {
          keys.insert(JSONKey(key))
        } else {
          others.append(entry.description)
        }
      }
      self.init(
        keys: keys.sorted().map(\.text),
        problem: others.isEmpty
          ? nil
          : "\(others.count == 1 ? "its entry" : "its entries") \(others.joined(separator: ", ")) "
            + "\(others.count == 1 ? "is" : "are") not the key of a setting (a string, not empty, without a leading $)")
    }

    /// What the member lists, as a cluster holds it: JSON text.
    package init(_ bytes: [UInt8]) {
      let value: JSONValue
      do {
        value = try FleetCopy.parseValue(bytes).value
      } catch {
        self.init(keys: [], problem: "it is not an array of keys (\(error.summary))")
        return
      }
      self.init(value)
    }

    private init(keys: [String], problem: String?) {
      self.keys = keys
      self.problem = problem
    }

    /// Whether `key` is among the keys listed.
    package func contains(_ key: JSONKey) -> Bool { keys.contains { JSONKey($0) == key } }
  }

  // MARK: - Trust

  /// Whether the copy at `path` may enforce keys: only one that no user but root and the follower's system user can
  /// have written. Nil when it may; otherwise why not, in words.
  ///
  /// Every directory above the copy's belongs to root and is not writable by others (or, like `/tmp`, has the sticky
  /// bit, so that no one else can move root's directory in it); the copy's directory, and the copy, belong to root
  /// or the system user, and neither is writable by group or others; the copy is a regular file with one link.
  /// Looked at from the path as it resolves now, with `lstat`: no one but those two can change any name on the way,
  /// so what is judged is what was read.
  static func trustProblem(ofCopyAt path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return "it cannot be found (\(String(cString: strerror(errno))))" }
    let real = String(cString: resolved)
    free(resolved)
    let trusted: (uid_t) -> Bool = { $0 == 0 || $0 == systemUserID }
    let owners = systemUserID == nil ? "root" : "root or \(systemUser)"
    var components = real.split(separator: "/").map(String.init)
    let name = components.removeLast()
    var directory = ""
    for (index, component) in ([""] + components).enumerated() {
      directory = index == 0 ? "/" : (directory == "/" ? "/\(component)" : "\(directory)/\(component)")
      var status = stat()
      guard lstat(directory, &status) == 0 else { return "\(directory) cannot be looked at" }
      let isCopyDirectory = index == components.count
      let writableByOthers = status.st_mode & 0o022 != 0
      if isCopyDirectory {
        guard trusted(status.st_uid) else {
          return "its directory \(directory) belongs to \(Users.name(status.st_uid)), not \(owners)"
        }
        guard !writableByOthers else { return "its directory \(directory) may be written by others than its owner" }
      } else {
        guard status.st_uid == 0 else {
          return "\(directory), above it, belongs to \(Users.name(status.st_uid)), not root"
        }
        guard !writableByOthers || status.st_mode & S_ISVTX != 0 else {
          return "\(directory), above it, may be written by others than root"
        }
      }
    }
    var status = stat()
    guard lstat(real, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
    guard trusted(status.st_uid) else { return "it belongs to \(Users.name(status.st_uid)), not \(owners)" }
    guard status.st_mode & 0o022 == 0 else { return "it may be written by others than its owner" }
    guard status.st_nlink == 1 else { return "it has \(status.st_nlink) links" }
    _ = name
    return nil
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
  /// Keys under the prefix that the copy leaves out, and why (not JSON, too large, reserved).
  public let skippedKeys: [String: String]
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
  /// Whether the copy may enforce keys: a system copy that only root and the follower's system user can have
  /// written.
  public let isTrusted: Bool

  package init(
    url: URL, metadata: FleetCopy.Metadata, keys: [String], enforcedKeys: [String], isFollowed: Bool, isTrusted: Bool
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
    state = metadata.state
    since = metadata.since
    reason = metadata.reason
    follower = "\(metadata.user) on \(metadata.host), process \(metadata.processID)"
    written = metadata.written
    self.isFollowed = isFollowed
    self.isTrusted = isTrusted
  }
}
