#if SplintFleet
  import Glibc
  import SplintSettings

  #if canImport(FoundationEssentials)
    public import FoundationEssentials
  #else
    public import Foundation
  #endif

  /// What one machine's follower reports of one suite: the revision its copy holds, what it left out, and whether it
  /// can write the copy. Each follower keeps its reports in the cluster, at
  /// `/splint.machines/<machine>/reports/<suite>` (for the prefix `/splint/`), beside the settings and outside every
  /// follower's watch.
  public struct FleetReport: Sendable, Hashable, Codable {
    /// The machine's name (see ``FleetMachine``).
    public let machine: String
    /// The suite.
    public let suite: String
    /// The cluster the copy's values are from (etcd's cluster ID); nil before the first read is written.
    public let cluster: String?
    /// The revision as of which the machine's copy holds the suite (0 before the first read is written): it holds a
    /// change made at revision R once this is R or later. Written when the suite changes, not as the cluster's
    /// revision moves on: a suite quiet since holds later revisions too (see ``keys``).
    public let revision: Int64
    /// How many keys the suite had in the cluster as of ``revision`` (those left out too); nil when the follower does
    /// not know. With it a quiet suite is known held: when the suite has as many keys at a later revision R, and none
    /// of them was put after ``revision``, nothing of it changed between (a key put, deleted, or deleted and put again
    /// would show in the one or the other), and the machine holds R too.
    public let keys: Int?
    /// When the copy came to hold ``revision``, by the machine's clock.
    public let since: Date
    /// The machine's clock minus the cluster's, in seconds, to about half a second (from the `Date` header of the
    /// member that last answered the follower): ``since`` minus it is the time by the cluster's clock. Nil when no
    /// member's answer had one.
    public let clockOffset: Double?
    /// The keys left out of the copy, and why (at most 100, each name cut to a line's length).
    public let skipped: [String: String]
    /// How many more keys were left out than ``skipped`` lists.
    public let skippedMore: Int
    /// The keys whose value in the cluster the machine refused (not JSON, too large, or refused by the suite's
    /// schema), and why: its copy keeps each one's last good value.
    public let rejected: [String: String]
    /// Why the copy could not be written, when its last write failed: the machine's programs read older values.
    public let copyFailure: String?
    /// The follower's process ID, on its machine.
    public let pid: Int32
    /// The version of Splint the follower runs.
    public let version: String
    /// When the follower stopped (SIGTERM, or its task cancelled); nil while it runs, or when it died (its lease
    /// then expires, and the machine is gone).
    public let stopped: Date?
    /// The machine's labels, sorted (its host label, `host:<machine>`, among them): those whose values the copy
    /// takes first. Empty in a report of an older follower.
    public let labels: [String]

    /// Whether the machine leaves out, refuses or fails to write something: ``skipped``, ``skippedMore``,
    /// ``rejected`` or ``copyFailure``.
    public var hasProblem: Bool { !skipped.isEmpty || skippedMore > 0 || !rejected.isEmpty || copyFailure != nil }

    package init(
      machine: String, suite: String, cluster: String?, revision: Int64, keys: Int?, since: Date,
      clockOffset: Double?, skipped: [String: String], skippedMore: Int, rejected: [String: String],
      copyFailure: String?, pid: Int32, version: String, stopped: Date?, labels: [String] = []
    ) {
      self.machine = machine
      self.suite = suite
      self.cluster = cluster
      self.revision = revision
      self.keys = keys
      self.since = since
      self.clockOffset = clockOffset
      self.skipped = skipped
      self.skippedMore = skippedMore
      self.rejected = rejected
      self.copyFailure = copyFailure
      self.pid = pid
      self.version = version
      self.stopped = stopped
      self.labels = labels
    }

    private enum CodingKeys: String, CodingKey {
      case machine, suite, cluster, revision, keys, since, clockOffset, skipped, skippedMore, rejected, copyFailure
      case pid, version, stopped, labels
    }

    /// Reads a report as the cluster keeps it; one written by an older follower, which refused nothing and had no
    /// labels, has no ``rejected`` and no ``labels``.
    public init(from decoder: any Decoder) throws {
      let fields = try decoder.container(keyedBy: CodingKeys.self)
      machine = try fields.decode(String.self, forKey: .machine)
      suite = try fields.decode(String.self, forKey: .suite)
      cluster = try fields.decodeIfPresent(String.self, forKey: .cluster)
      revision = try fields.decode(Int64.self, forKey: .revision)
      keys = try fields.decodeIfPresent(Int.self, forKey: .keys)
      since = try fields.decode(Date.self, forKey: .since)
      clockOffset = try fields.decodeIfPresent(Double.self, forKey: .clockOffset)
      skipped = try fields.decode([String: String].self, forKey: .skipped)
      skippedMore = try fields.decode(Int.self, forKey: .skippedMore)
      rejected = try fields.decodeIfPresent([String: String].self, forKey: .rejected) ?? [:]
      copyFailure = try fields.decodeIfPresent(String.self, forKey: .copyFailure)
      pid = try fields.decode(Int32.self, forKey: .pid)
      version = try fields.decode(String.self, forKey: .version)
      stopped = try fields.decodeIfPresent(Date.self, forKey: .stopped)
      labels = try fields.decodeIfPresent([String].self, forKey: .labels) ?? []
    }

    /// The report as the cluster keeps it (see ``MachineKeyJSON``).
    var json: [UInt8] { MachineKeyJSON.encode(self) }

    /// The report a cluster keeps as `bytes`; nil for what is not one.
    static func decode(_ bytes: [UInt8]) -> FleetReport? { MachineKeyJSON.decode(bytes) }
  }

  /// How a machine's keys (its reports and its presence) are written: JSON with sorted keys, each time in the one form
  /// the package writes times in for machines to read (`Date.isoTimestamp`, to the millisecond).
  enum MachineKeyJSON {
    static func encode(_ value: some Encodable) -> [UInt8] {
      let encoder = JSONEncoder()
      encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(date.isoTimestamp)
      }
      encoder.outputFormatting = .sortedKeys
      // Strings, numbers and times always encode.
      return (try? Array(encoder.encode(value))) ?? []
    }

    static func decode<Value: Decodable>(_ bytes: [UInt8]) -> Value? {
      let decoder = JSONDecoder()
      decoder.dateDecodingStrategy = .custom { decoder in
        let container = try decoder.singleValueContainer()
        guard let date = Date.parseISOTimestamp(try container.decode(String.self)) else {
          throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time")
        }
        return date
      }
      return try? decoder.decode(Value.self, from: Data(bytes))
    }
  }

  /// What the key that says a machine is alive holds: which machine, boot and process holds the name, on a lease the
  /// follower keeps alive.
  struct FleetPresence: Sendable, Hashable, Codable {
    /// The machine's identity (see ``FleetMachine``), its host name, this boot's ID and the follower's process.
    let identity: String
    let host: String
    let boot: String
    let pid: Int32
    /// When the follower claimed the name, and the suites it follows.
    let started: Date
    let suites: [String]

    var json: [UInt8] { MachineKeyJSON.encode(self) }

    static func decode(_ bytes: [UInt8]) -> FleetPresence? { MachineKeyJSON.decode(bytes) }

    /// Whether this claim is stale, seen from the machine `identity` that booted as `boot`: it is this machine's,
    /// from an earlier boot, or from a process of this boot that is gone.
    func isStale(identity: String, boot: String) -> Bool {
      guard !identity.isEmpty, identity == self.identity else { return false }
      return boot != self.boot || (kill(pid, 0) != 0 && errno == ESRCH)
    }
  }
#endif
