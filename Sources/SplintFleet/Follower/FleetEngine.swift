#if SplintFleet
  /// What a ``FleetFollower`` needs of the store a fleet keeps its settings in: a consistent read of a range of keys
  /// with the revision it is as of, a check that a member can still serve (so that a silent watch can be told from a
  /// quiet one), and an ordered, gap-free stream of changes from a revision on. etcd is the one engine built; another
  /// (Consul, PostgreSQL's LISTEN) would implement this and nothing else.
  protocol FleetEngine: Sendable {
    /// The engine's name, as a copy records it: "etcd".
    var name: String { get }
    /// The addresses of the members, as a copy records them.
    var endpoints: [String] { get }

    /// Every key from `key` up to (not including) `rangeEnd`, with the cluster's identity and the revision the read
    /// is as of, read from any member that can serve it (which answered: `member`).
    func read(from key: [UInt8], to rangeEnd: [UInt8]) async throws(FleetError) -> FleetSnapshot

    /// Whether `member` can still serve, with a read that needs its cluster's quorum, within `timeout`: the cluster's
    /// identity and current revision.
    func check(
      member: Int, from key: [UInt8], to rangeEnd: [UInt8], timeout: Duration
    ) async throws(FleetError)
      -> FleetRevision

    /// The changes from `revision` on (inclusive) to keys in the range, from `member`, as they are made.
    func changes(
      from revision: Int64, key: [UInt8], rangeEnd: [UInt8], member: Int
    ) async throws(FleetError) -> AsyncThrowingStream<FleetChange, any Error>

    /// Leaves `member` for the next one: it failed while being watched.
    func avoid(member: Int)
  }

  /// Where a cluster is at: its identity and a revision.
  struct FleetRevision: Sendable, Hashable {
    let cluster: String
    let revision: Int64
  }

  /// A consistent read of a range of keys.
  struct FleetSnapshot: Sendable {
    let at: FleetRevision
    /// The member that answered.
    let member: Int
    let pairs: [(key: [UInt8], value: [UInt8], revision: Int64)]
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
  }

  /// One key's change.
  struct FleetEvent: Sendable {
    let key: [UInt8]
    /// The new value; nil when the key was deleted.
    let value: [UInt8]?
    let revision: Int64
  }
#endif
