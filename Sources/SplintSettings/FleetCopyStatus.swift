#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

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
  /// Keys whose value in the cluster the follower refused (not JSON, too large, or refused by the suite's schema), and
  /// why: the copy keeps each one's last good value, which programs go on reading, until the cluster holds a value it
  /// can take (or none).
  public let rejectedKeys: [String: String]
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
  /// The machine the follower reports as to the cluster (what SplintFleet's `fleet rollout` lists); nil when it
  /// does not report.
  public let machine: String?
  /// Why the follower cannot report to the cluster, in words, while it cannot (it follows all the same).
  public let reportingFailure: String?
  /// The machine's labels (`canary`, `host:web-07`), sorted: the labels whose values the copy holds where they win
  /// over the suite's value for every machine. Empty in a copy written before followers had labels.
  public let labels: [String]
  /// The label that gave each key's value, for the keys whose value a label gives on this machine.
  public let labelledKeys: [String: String]
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
    rejectedKeys = metadata.rejected
    state = metadata.state
    since = metadata.since
    reason = metadata.reason
    follower = "\(metadata.user) on \(metadata.host), process \(metadata.processID)"
    written = metadata.written
    machine = metadata.machine
    reportingFailure = metadata.reportingFailure
    labels = (metadata.labels ?? []).sorted()
    labelledKeys = metadata.origins
    self.isFollowed = isFollowed
    self.lastSeen = lastSeen
    self.isTrusted = isTrusted
  }
}
