#if SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A follower's copies, one per suite, and what it knows of each: the values it took from the cluster, as of
  /// which revision, and the follower's state, which every copy records. Each change reaches a copy in one write.
  actor FleetCopies {
    /// One suite's copy as the follower holds it.
    struct Copy {
      let suite: String
      let writer: FleetCopyWriter
      /// The cluster's key prefix of the suite's settings.
      let prefix: [UInt8]
      /// The cluster and revision the values are as of; nil before the first read.
      var at: FleetRevision?
      /// Each setting's value, its text when the value would write it otherwise, and its size in the cluster.
      var values: [String: (value: JSONValue, text: String?, size: Int)] = [:]
      /// The keys the fleet enforces.
      var enforced: [String] = []
      /// Keys left out, and why.
      var skipped: [String: String] = [:]
      /// Whether the copy on disk lags behind (a write failed, or there are changes to write).
      var unwritten = false

      /// The bytes the copy's settings take, as the cluster holds them.
      var size: Int { values.reduce(0) { $0 + $1.key.utf8.count + $1.value.size } }
    }

    private var copies: [Copy]
    private let engine: String
    private let endpoints: [String]
    private let options: FleetFollower.Options
    private let report: @Sendable (FleetFollower.Event) -> Void
    /// What every copy records of the follower.
    private var state: FleetCopyStatus.State = .following
    private var since = Date()
    private var reason: String?
    /// Whether a sync of the copies is due (within ``FleetFollower/Options/syncDelay``).
    private var syncScheduled = false

    init(
      copies: [Copy], engine: String, endpoints: [String], options: FleetFollower.Options,
      report: @escaping @Sendable (FleetFollower.Event) -> Void
    ) {
      self.copies = copies
      self.engine = engine
      self.endpoints = endpoints
      self.options = options
      self.report = report
    }

    /// Takes up what the copies on disk hold (from a follower before this one): their values and revisions, so that
    /// a follower that restarts resumes where the last one stopped, without reading everything again.
    func load() {
      for index in copies.indices {
        let current = copies[index].writer.current
        guard let metadata = current.metadata, metadata.engine == engine else { continue }
        copies[index].at = FleetRevision(cluster: metadata.cluster, revision: metadata.revision)
        copies[index].skipped = metadata.skipped
        copies[index].enforced = current.enforced
        for (key, value) in current.values {
          let text = value.description
          copies[index].values[key] = (value, nil, text.utf8.count)
        }
      }
    }

    /// Whether the copies must be read again whole before the cluster, as it is `now`, is watched: one has never
    /// been read, or is of another cluster (a restored or rebuilt one), or of a later revision than the cluster's
    /// (a cluster restored from an older snapshot).
    func needsFullRead(_ now: FleetRevision) -> Bool {
      copies.contains { copy in
        guard let at = copy.at else { return true }
        return at.cluster != now.cluster || at.revision > now.revision
      }
    }

    /// The revision every copy is up to date with: a watch resumes after it.
    var heldRevision: Int64 { copies.map { $0.at?.revision ?? 0 }.min() ?? 0 }

    /// Replaces every copy's values with a whole read's: keys deleted meanwhile disappear.
    func replace(with snapshot: FleetSnapshot) {
      for index in copies.indices {
        var copy = copies[index]
        let before = (copy.values.mapValues(\.value), copy.enforced)
        copy.values = [:]
        copy.enforced = []
        copy.skipped = [:]
        for pair in snapshot.pairs where pair.key.starts(with: copy.prefix) {
          take(FleetEvent(key: pair.key, value: pair.value, revision: pair.revision), into: &copy)
        }
        copy.at = snapshot.at
        copy.unwritten = true
        let changed = before.0 != copy.values.mapValues(\.value) || before.1 != copy.enforced
        copies[index] = copy
        if changed { report(.changed(suite: copy.suite, revision: snapshot.at.revision)) }
      }
      writeUnwritten()
    }

    /// Applies a watch's changes, each to the copy of its suite, once: a change at a revision a copy has already is
    /// not applied again. Each copy that changed is written once, with all of them.
    func apply(_ events: [FleetEvent], at: FleetRevision) {
      for index in copies.indices {
        var copy = copies[index]
        let held = copy.at?.revision ?? 0
        var changed = false
        for event in events where event.revision > held && event.key.starts(with: copy.prefix) {
          take(event, into: &copy)
          changed = true
        }
        copy.at = FleetRevision(cluster: at.cluster, revision: max(held, at.revision))
        if changed {
          copy.unwritten = true
          report(.changed(suite: copy.suite, revision: at.revision))
        }
        copies[index] = copy
      }
      writeUnwritten()
    }

    /// Takes the cluster's revision from a progress notification: nothing changed up to it.
    func progress(_ at: FleetRevision) {
      for index in copies.indices where (copies[index].at?.revision ?? 0) < at.revision {
        copies[index].at = at
      }
    }

    /// One key's change, into its suite's copy: a setting (if it is JSON, not reserved, and fits), or what the
    /// fleet enforces.
    private func take(_ event: FleetEvent, into copy: inout Copy) {
      let name = event.key.dropFirst(copy.prefix.count)
      guard let key = String(validating: name, as: UTF8.self), !key.isEmpty else {
        let shown = String(decoding: name, as: UTF8.self)
        skip(shown, FleetError(.invalidConfiguration("the key is not UTF-8 text, as settings keys are.")), in: &copy)
        return
      }
      copy.values[key] = nil
      copy.skipped[key] = nil
      guard let value = event.value else {
        if key == FleetCopy.enforcedKey { copy.enforced = [] }
        return
      }
      if key == FleetCopy.enforcedKey {
        // The keys it lists are enforced; what is not a key is left out, and told.
        let enforced = FleetCopy.EnforcedKeys(value)
        if let problem = enforced.problem { skip(key, FleetError(.notJSON(key: key, reason: problem)), in: &copy) }
        copy.enforced = enforced.keys
        return
      }
      guard !FleetCopy.isReserved(key) else { return skip(key, FleetError(.reservedKey(key)), in: &copy) }
      guard value.count <= options.maximumValueSize else {
        return skip(
          key, FleetError(.valueTooLarge(key: key, size: value.count, limit: options.maximumValueSize)), in: &copy)
      }
      let parsed: (value: JSONValue, text: String?)
      do {
        parsed = try FleetCopy.parseValue(value)
      } catch {
        return skip(key, FleetError(.notJSON(key: key, reason: FleetError.jsonReason(error))), in: &copy)
      }
      let size = copy.size + key.utf8.count + value.count
      guard size <= options.maximumCopySize else {
        return skip(
          key, FleetError(.copyTooLarge(suite: copy.suite, size: size, limit: options.maximumCopySize)), in: &copy)
      }
      copy.values[key] = (parsed.value, parsed.text, value.count)
    }

    /// Leaves `key` out of the copy, recording why, and tells it.
    private func skip(_ key: String, _ error: FleetError, in copy: inout Copy) {
      copy.values[key] = nil
      copy.skipped[key] = error.skipReason
      report(.skipped(suite: copy.suite, key: key, error))
    }

    /// Records what the follower does now in every copy (one write each, only when it changes).
    func record(_ state: FleetCopyStatus.State, reason: String? = nil, since: Date = Date()) {
      guard state != self.state || reason != self.reason else { return }
      self.state = state
      self.since = since
      self.reason = reason
      for index in copies.indices where copies[index].at != nil { copies[index].unwritten = true }
      writeUnwritten()
    }

    /// How many times the follower has started a watch: a loss told after one started would be stale.
    private(set) var connections = 0

    /// Records that a watch runs: the follower follows.
    func connected() {
      connections += 1
      record(.following)
    }

    /// Records that the cluster is lost, since `since`, unless a watch has started since the follower counted
    /// `connections`; whether it recorded it.
    func recordUnreachable(unlessConnectedSince connections: Int, reason: String, since: Date) -> Bool {
      guard connections == self.connections else { return false }
      record(.unreachable, reason: reason, since: since)
      return true
    }

    /// Writes every copy that lags behind, and makes it durable within ``FleetFollower/Options/syncDelay``.
    func writeUnwritten() {
      for index in copies.indices where copies[index].unwritten {
        let copy = copies[index]
        guard let at = copy.at else { continue }
        let metadata = FleetCopy.Metadata(
          engine: engine, cluster: at.cluster, revision: at.revision, endpoints: endpoints,
          prefix: String(decoding: copy.prefix, as: UTF8.self), skipped: copy.skipped, state: state, since: since,
          reason: reason)
        let values = copy.values.sorted { $0.key < $1.key }.map {
          (key: $0.key, value: $0.value.value, text: $0.value.text)
        }
        do {
          try copy.writer.write(values: values, enforced: copy.enforced, metadata: metadata)
          copies[index].unwritten = false
        } catch {
          report(.copyFailed(suite: copy.suite, FleetError(.copyFailed(error))))
        }
      }
      scheduleSync()
    }

    /// Makes the copies durable within the sync delay: one fsync of each for however many writes came meanwhile.
    private func scheduleSync() {
      guard !syncScheduled else { return }
      syncScheduled = true
      let delay = options.syncDelay
      Task {
        try? await Task.sleep(for: delay)
        self.sync()
      }
    }

    /// Makes every copy's last write durable now; writes again any copy whose write failed.
    func sync() {
      syncScheduled = false
      if copies.contains(where: \.unwritten) { writeUnwritten() }
      for copy in copies {
        do {
          try copy.writer.sync()
        } catch {
          report(.copyFailed(suite: copy.suite, FleetError(.copyFailed(error))))
        }
      }
    }

    /// Records that the follower stopped, makes the copies durable, and gives their locks up.
    func stop(reason: String?) {
      record(.stopped, reason: reason)
      sync()
      for copy in copies { copy.writer.release() }
    }
  }
#endif
