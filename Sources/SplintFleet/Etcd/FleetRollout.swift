#if SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// Where a change to a suite stands across the machines that follow it, from what each machine's follower reports
  /// (``FleetReport``): which machines hold a revision, which are behind, which left a value out or cannot write
  /// their copy, and which are gone.
  public struct FleetRollout: Sendable, Hashable {
    /// One machine that follows the suite, or followed it.
    public struct Machine: Sendable, Hashable {
      /// Where the machine stands.
      public enum State: String, Sendable, Hashable, Codable {
        /// Alive, and its copy holds the revision.
        case holding
        /// Alive, and its copy does not hold the revision yet (or it has not reported the suite yet).
        case behind
        /// Alive, and it left a key out, or cannot write its copy (``FleetReport/hasProblem``).
        case problem
        /// Its follower was stopped (SIGTERM): its report says what it held last.
        case stopped
        /// Its follower is no longer alive, and was not stopped: it died, or is cut off from the cluster.
        case gone
      }

      /// The machine's name.
      public let name: String
      /// Where it stands.
      public let state: State
      /// Its report of the suite; nil when it has not reported the suite yet.
      public let report: FleetReport?

      /// Whether the machine follows the suite now: ``State/holding``, ``State/behind`` or ``State/problem``.
      public var isFollowing: Bool { state == .holding || state == .behind || state == .problem }
    }

    /// The suite.
    public let suite: String
    /// The revision the machines are measured against: the one asked for, or the cluster's when the rollout was read.
    public let revision: Int64
    /// Every machine that follows the suite, or has reported it, sorted by name.
    public let machines: [Machine]

    /// The machines that follow the suite now.
    public var following: [Machine] { machines.filter(\.isFollowing) }
    /// The machines in `state`.
    public func machines(_ state: Machine.State) -> [Machine] { machines.filter { $0.state == state } }
    /// The rollout on the machines that carry `label` alone (as their reports say: ``FleetReport/labels``).
    public func carrying(_ label: String) -> FleetRollout {
      FleetRollout(
        suite: suite, revision: revision, machines: machines.filter { $0.report?.labels.contains(label) == true })
    }

    /// Whether every machine that follows the suite holds the revision, with none left out or failing.
    public var isComplete: Bool { following.allSatisfy { $0.state == .holding } }

    /// What a suite held at a revision, as far as telling whether it changed since an earlier one goes: how many keys,
    /// and the latest revision one of them was put at (0: none).
    struct SuiteState: Sendable, Hashable {
      let count: Int
      let latest: Int64
    }

    /// Whether `report` says its machine holds `revision`, where the suite held `state`: its copy is as of that
    /// revision or a later one, or the suite did not change between the copy's revision and it (see
    /// ``FleetReport/keys``).
    static func holds(_ report: FleetReport, _ revision: Int64, _ state: SuiteState?) -> Bool {
      if report.revision >= revision { return true }
      guard let state, let keys = report.keys else { return false }
      return keys == state.count && state.latest <= report.revision
    }

    /// Where `suite` stands as of `revision`, where it held `state`, on the machines `records` (each machine's keys
    /// under the machines' prefix, by key: `<machine>/alive` and `<machine>/reports/<suite>`).
    static func classify(
      suite: String, revision: Int64, state suiteState: SuiteState?, records: [(key: String, value: [UInt8])]
    ) -> FleetRollout {
      var alive: [String: FleetPresence] = [:]
      var reports: [String: FleetReport] = [:]
      for (key, value) in records {
        let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { continue }
        if parts[1] == "alive", let presence = FleetPresence.decode(value) {
          alive[parts[0]] = presence
        } else if parts[1] == "reports/" + suite, let report = FleetReport.decode(value), report.machine == parts[0],
          report.suite == suite
        {
          reports[parts[0]] = report
        }
      }
      var names = Set(reports.keys)
      for (name, presence) in alive where presence.suites.contains(suite) { names.insert(name) }
      let machines = names.sorted().map { name -> Machine in
        let report = reports[name]
        let state: Machine.State
        if alive[name]?.suites.contains(suite) == true {
          if report?.hasProblem == true {
            state = .problem
          } else if let report, report.stopped == nil, holds(report, revision, suiteState) {
            state = .holding
          } else {
            state = .behind
          }
        } else {
          state = report?.stopped != nil ? .stopped : .gone
        }
        return Machine(name: name, state: state, report: report)
      }
      return FleetRollout(suite: suite, revision: revision, machines: machines)
    }
  }

  extension EtcdCluster {
    /// Where `suite` stands on the machines that follow it, as of `revision` (the cluster's revision now unless
    /// given): one consistent read of every machine's presence and report.
    ///
    /// - Throws: A ``FleetError``: the cluster unreachable, a refused password, a role that may not read the
    ///   machines' keys (`/splint.machines/`), a suite that is not a name.
    public func rollout(suite: String, revision: Int64? = nil) async throws(FleetError) -> FleetRollout {
      try await rollout(suite: suite, revision: revision, pageSize: 1_000)
    }

    /// ``rollout(suite:revision:)``, reading the machines' keys `pageSize` at a time.
    func rollout(suite: String, revision: Int64?, pageSize: Int64) async throws(FleetError) -> FleetRollout {
      let gateway = try EtcdGateway(cluster: self)
      let suitePrefix = try prefix(ofSuite: suite)
      let prefix = Array(try layout.machinesPrefix.utf8)
      var records: [(key: String, value: [UInt8])] = []
      var start = prefix
      var at: Int64?
      // In pages (of 1,000 keys), each read at the revision of the first, so that the whole is one state.
      while true {
        let request = EtcdRangeRequest(
          key: EtcdBytes(start), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)), limit: pageSize,
          revision: at)
        let (page, endpoint) = try await gateway.call("/v3/kv/range", request, as: EtcdRangeResponse.self)
        guard let pageRevision = page.header.revision?.revision else {
          let reason = "its answer names no revision"  // coverage:ignore — a lying member
          let server = gateway.endpoints[endpoint]  // coverage:ignore — a lying member
          throw FleetError(.invalidResponse(server: server, reason: reason))  // coverage:ignore — a lying member
        }
        at = at ?? pageRevision
        let kvs = page.kvs ?? []
        for pair in kvs {
          records.append(
            (String(decoding: pair.key.bytes.dropFirst(prefix.count), as: UTF8.self), pair.value?.bytes ?? []))
        }
        guard page.more == true, let last = kvs.last?.key.bytes, !last.lexicographicallyPrecedes(start) else { break }
        start = last + [0]
      }
      let target = revision ?? at ?? 0
      let state = await suiteState(prefix: suitePrefix, at: target, gateway: gateway)
      return FleetRollout.classify(suite: suite, revision: target, state: state, records: records)
    }

    /// What the suite under `prefix` held at `revision`: its count of keys and the revision of its latest put, from
    /// one keys-only range sorted by modification revision; nil when the cluster no longer knows (compacted) or not
    /// yet (a future revision), or cannot be read.
    private func suiteState(
      prefix: [UInt8], at revision: Int64, gateway: EtcdGateway
    ) async -> FleetRollout.SuiteState? {
      var request = EtcdRangeRequest(
        key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)), limit: 1, keysOnly: true,
        revision: revision)
      (request.sortOrder, request.sortTarget) = ("DESCEND", "MOD")
      guard let response = try? await gateway.call("/v3/kv/range", request, as: EtcdRangeResponse.self).response
      else { return nil }
      let latest = response.kvs?.first?.modRevision?.revision ?? 0
      return FleetRollout.SuiteState(count: Int(response.count?.value ?? 0), latest: latest)
    }

    /// Waits until every machine that follows `suite` holds `revision` (the cluster's revision as the wait starts
    /// unless given), and at least `expect` machines follow it: the rollout then. A quiet suite counts as held at
    /// once: a machine whose copy holds the suite as of an earlier revision holds `revision` too when the suite did
    /// not change between (``FleetReport/keys``).
    ///
    /// - Throws: ``FleetError/Code/rolloutFailed`` at once when a machine that follows the suite leaves a key out or
    ///   cannot write its copy; ``FleetError/Code/timedOut`` when `timeout` passes first, naming the machines behind
    ///   (or saying how few follow the suite); a ``FleetError`` when the cluster cannot be read.
    public func waitForRollout(
      suite: String, revision: Int64? = nil, timeout: Duration = .seconds(60), expect: Int = 1
    ) async throws(FleetError) -> FleetRollout {
      let deadline = ContinuousClock.now + timeout
      var target = revision
      var pause = Duration.milliseconds(100)
      while true {
        let rollout = try await self.rollout(suite: suite, revision: target)
        target = rollout.revision
        let problems = rollout.machines(.problem)
        if !problems.isEmpty {
          throw FleetError(.rolloutFailed(suite: suite, machines: problems.map { Self.problemText($0) }))
        }
        let following = rollout.following.count
        if rollout.isComplete, following >= max(1, expect) { return rollout }
        guard ContinuousClock.now < deadline else {
          let behind = rollout.machines(.behind).map { machine in
            "\(machine.name) (at revision \(machine.report?.revision ?? 0))"
          }
          throw FleetError(
            .rolloutIncomplete(
              suite: suite, revision: rollout.revision, following: following, expected: max(1, expect),
              behind: behind, after: timeout))
        }
        let nap = min(pause, deadline - ContinuousClock.now)
        guard (try? await Task.sleep(for: nap)) != nil else { throw FleetError(.cancelled) }
        pause = min(pause * 2, .seconds(1))
      }
    }  // coverage:ignore — the loop above returns or throws

    /// What a machine with a problem left out or refused, or why it cannot write its copy.
    private static func problemText(_ machine: FleetRollout.Machine) -> String {
      guard let report = machine.report else { return machine.name }  // coverage:ignore — a problem is reported
      if let failure = report.copyFailure { return "\(machine.name): \(failure)" }
      func listed(_ reasons: [String: String]) -> String {
        reasons.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
      }
      let more = report.skippedMore > 0 ? " and \(report.skippedMore) more" : ""
      let skipped = report.skipped.isEmpty && more.isEmpty ? [] : ["left out \(listed(report.skipped))\(more)"]
      let rejected =
        report.rejected.isEmpty ? [] : ["refused \(listed(report.rejected)), keeping the last good values"]
      return "\(machine.name) \((skipped + rejected).joined(separator: "; "))"
    }
  }
#endif
