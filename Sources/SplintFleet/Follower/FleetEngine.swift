#if SplintFleet
  /// What a ``FleetFollower`` needs of the store a fleet keeps its settings in: where the cluster is (its identity and
  /// revision), a consistent read of a range of keys at a revision, in parts of bounded size, a check that a member
  /// can still serve (so that a silent watch can be told from a quiet one), and an ordered, gap-free sequence of
  /// changes from a revision on, read as the follower takes them. etcd is the one engine built; another (Consul,
  /// PostgreSQL's LISTEN) would implement this and nothing else.
  protocol FleetEngine: Sendable {
    /// The engine's name, as a copy records it: "etcd".
    var name: String { get }
    /// The addresses of the members, as a copy records them.
    var endpoints: [String] { get }

    /// The cluster's identity and revision now, from any member that can serve (which answered: `member`), with a
    /// read of the keys from `key` up to (not including) `rangeEnd` that carries no value.
    func position(from key: [UInt8], to rangeEnd: [UInt8]) async throws(FleetError) -> (at: FleetRevision, member: Int)

    /// Every key from `key` up to `rangeEnd` as they were at `at`, read from `member` in parts, each given to `take`
    /// before the next is read: however many keys and values there are, the read holds one part at a time. With
    /// `keysOnly`, the keys and their revisions alone (each value empty).
    func read(
      from key: [UInt8], to rangeEnd: [UInt8], at: FleetRevision, member: Int, keysOnly: Bool,
      into take: ([FleetPair]) async -> Void
    ) async throws(FleetError)

    /// Whether `member` can still serve, with a read that needs its cluster's quorum, within `timeout`: the cluster's
    /// identity and current revision.
    func check(
      member: Int, from key: [UInt8], to rangeEnd: [UInt8], timeout: Duration
    ) async throws(FleetError)
      -> FleetRevision

    /// The changes from `revision` on (inclusive) to keys in the range, from `member`, read from it as they are
    /// taken: a member that sends faster than they are taken waits.
    func changes(
      from revision: Int64, key: [UInt8], rangeEnd: [UInt8], member: Int
    ) async throws(FleetError) -> any AsyncSequence<FleetChange, any Error> & Sendable

    /// Leaves `member` for the next one: it failed while being watched.
    func avoid(member: Int)
  }

  /// Where a cluster is at: its identity and a revision.
  struct FleetRevision: Sendable, Hashable {
    let cluster: String
    let revision: Int64
  }

  /// A key as a whole read found it.
  struct FleetPair: Sendable {
    let key: [UInt8]
    /// Its value; nil when it is too large to be read at all (larger than one answer of the engine may be).
    let value: [UInt8]?
    let revision: Int64
  }

  /// What a watch tells.
  enum FleetChange: Sendable {
    /// The watch runs, from the cluster's revision given.
    case started(FleetRevision)
    /// Changes made at one or more revisions, all of each revision, in order; the cluster is at `at` after them.
    case changed(at: FleetRevision, events: [FleetEvent])
    /// Nothing changed up to `at` (a progress notification).
    case progress(FleetRevision)
    /// The revision asked for is compacted away: read the whole range again.
    case compacted(Int64)
    /// Changes too large to be read came (more than a line of a watch may hold): read the whole range again,
    /// in bounded parts.
    case overflowed(limit: Int)
  }

  /// One key's change.
  struct FleetEvent: Sendable {
    let key: [UInt8]
    /// The new value; nil when the key was deleted.
    let value: [UInt8]?
    let revision: Int64
  }
#endif
