#if SplintFleet
  import SplintSettings
  import Synchronization

  #if canImport(FoundationEssentials)
    public import FoundationEssentials
  #else
    public import Foundation
  #endif

  /// Follows a fleet's settings in an etcd cluster into this machine's copies, one per suite, which every
  /// `SettingsStore` of those suites reads: a change in the cluster reaches every process on the machine through
  /// one watch, and the copies keep the last values while the cluster is away, also across a reboot.
  ///
  /// One follower per machine is enough: `splintctl fleet follow` in the shipped `splint-fleet.service`, or a
  /// program's own, run from its start-up:
  ///
  /// ```swift
  /// let follower = try FleetFollower(
  ///   suites: ["com.example.sync"],
  ///   cluster: EtcdCluster(endpoints: ["https://10.0.0.1:2379", "https://10.0.0.2:2379"]))
  /// let following = Task { try await follower.run() }  // until cancelled
  /// ```
  ///
  /// It reads the suites' keys once, then watches them (one watch for all its suites) from the revision it holds,
  /// so that no change is missed or applied twice, and each transaction reaches a copy whole, in one atomic write.
  /// It checks every few seconds that the member it watches can still serve (a member that lost its quorum, or
  /// stopped, keeps a watch open and silent), moves to another member when one fails, and records in the copies
  /// when the whole cluster is lost, and since when (`SettingsStore.errors()` tells every reader). Reconnecting
  /// waits at most five seconds, with jitter. After a compaction past the revision it holds, or with a cluster that
  /// was restored or rebuilt (another cluster ID), it reads everything again, and keys deleted meanwhile disappear.
  ///
  /// Two followers of one copy never fight: the second waits, and takes over when the first ends or dies.
  public final class FleetFollower: Sendable {
    /// Limits a follower keeps to, and how often it checks the member it watches.
    public struct Options: Sendable, Hashable {
      /// The largest value a copy takes, in bytes: 64 KiB unless set. A larger one is left out and reported.
      public var maximumValueSize: Int
      /// The most a suite's copy takes in all, in bytes of keys and values: 4 MiB unless set. Keys past it are left
      /// out and reported.
      public var maximumCopySize: Int
      /// How often the watched member is checked, with a read that needs its quorum, and how long that read may
      /// take: 3 seconds unless set. A lost cluster is told within about three times this.
      public var checkInterval: Duration
      /// The longest wait between two attempts to reach the cluster: 5 seconds unless set (attempts start at once,
      /// then wait 0.1 s, doubling, each with jitter).
      public var maximumReconnectDelay: Duration
      /// How soon a change written to a copy is made durable (fsync): within 1 second unless set. Writes in between
      /// are atomic, and a busy cluster costs one fsync a second, not one a change.
      public var syncDelay: Duration
      /// Whether the follower reports to the cluster what each copy holds, as its machine (``FleetReport``): true
      /// unless set.
      public var reports: Bool
      /// How long the cluster holds the machine's presence after the follower was last heard (its lease's time to
      /// live, in whole seconds, at least 2): 15 seconds unless set. A follower that died, or was cut off, is gone
      /// after it; a new leader extends it by its election timeout.
      public var presenceTimeToLive: Duration
      /// Where the follower keeps a metrics file for node_exporter's textfile collector (a `.prom` file in its
      /// `--collector.textfile.directory`): what each copy holds, and whether the follower follows and reports, in
      /// Prometheus's text format, rewritten whole when it changes (within ``checkInterval``). Its directory must
      /// exist. None unless set.
      public var metricsFile: URL?
      /// The machine's labels (`canary`, `eu`): the follower takes a suite's values for them over its values for
      /// every machine, in the suite's order of labels (see `EtcdCluster.setLabels(_:suite:)`). The machine also
      /// carries its host label, `host:<machine>`, always first. None unless set.
      public var labels: [String]

      /// The defaults, or the limits given.
      public init(
        maximumValueSize: Int = 64 << 10, maximumCopySize: Int = 4 << 20, checkInterval: Duration = .seconds(3),
        maximumReconnectDelay: Duration = .seconds(5), syncDelay: Duration = .seconds(1), reports: Bool = true,
        presenceTimeToLive: Duration = .seconds(15), metricsFile: URL? = nil, labels: [String] = []
      ) {
        self.maximumValueSize = maximumValueSize
        self.maximumCopySize = maximumCopySize
        self.checkInterval = checkInterval
        self.maximumReconnectDelay = maximumReconnectDelay
        self.syncDelay = syncDelay
        self.reports = reports
        self.presenceTimeToLive = presenceTimeToLive
        self.metricsFile = metricsFile
        self.labels = labels
      }
    }

    /// What a follower tells as it goes: a log line each (``description``).
    public enum Event: Sendable, CustomStringConvertible {
      /// Another follower keeps a copy of these suites: this one waits, and takes over when it ends.
      case waiting(suites: [String])
      /// The follower watches the cluster (`cluster`, at `revision`) through the member at `endpoint`.
      case following(endpoint: String, cluster: String, revision: Int64)
      /// Every key is read, for `reason` (the first read on a machine, another cluster, a compaction).
      case reread(reason: String)
      /// A suite's copy changed, as of `revision`.
      case changed(suite: String, revision: Int64)
      /// A key of a suite is left out of its copy: `error` says why.
      case skipped(suite: String, key: String, FleetError)
      /// The value a key of a suite has in the cluster is refused (`error` says why): the copy keeps the key's last
      /// good value.
      case rejected(suite: String, key: String, FleetError)
      /// A whole read left out or refused `count` more keys than it told one by one.
      case skippedMore(count: Int)
      /// The follower lost its member or the cluster, and tries again: `error` says why. Told once, and again only
      /// when what the follower finds changes.
      case lost(FleetError)
      /// The copies record that the cluster is lost, since the time given.
      case unreachable(since: Date)
      /// A copy could not be written; it is written again at the next change, or within a second.
      case copyFailed(suite: String, FleetError)
      /// The follower reports what its copies hold to the cluster, as the machine `machine`.
      case reporting(machine: String)
      /// The follower cannot report (`error` says why), and goes on following: told once until reporting works
      /// again, or fails otherwise.
      case reportingFailed(FleetError)
      /// The metrics file (``Options/metricsFile``) cannot be written, for `reason`; following goes on. Told once
      /// until it is written again.
      case metricsFailed(String)

      /// The event as a log line.
      public var description: String {
        switch self {
        case .waiting(let suites):
          "another follower keeps the copies of \(suites.joined(separator: ", ")): waiting to take over"
        case .following(let endpoint, let cluster, let revision):
          "following etcd cluster \(cluster) through \(endpoint), at revision \(revision)"
        case .reread(let reason): "reading every key: \(reason)"
        case .changed(let suite, let revision): "\(suite): changed at revision \(revision)"
        case .skipped(let suite, let key, let error): "\(suite): \(key.shown()) left out: \(error)"
        case .rejected(let suite, let key, let error):
          "\(suite): \(key.shown()) refused, its last good value kept: \(error)"
        case .skippedMore(let count): "\(count) more keys left out or refused (not told one by one)"
        case .lost(let error): "lost: \(error)"
        case .unreachable(let since):
          "the cluster is unreachable since \(since.timestampText); the copies keep their values"
        case .copyFailed(let suite, let error): "\(suite): \(error)"
        case .reporting(let machine): "reporting to the cluster as the machine \(machine)"
        case .reportingFailed(let error): "cannot report to the cluster (following goes on): \(error)"
        case .metricsFailed(let reason): "cannot keep the metrics file (following goes on): \(reason)"
        }
      }
    }

    /// The suites followed.
    public let suites: [String]
    /// Where their copies are.
    public let copyURLs: [URL]
    private let engine: any FleetEngine
    private let options: Options
    private let report: @Sendable (Event) -> Void
    private let writers: [FleetCopyWriter]
    /// The key range one watch covers: from the first suite's prefix to past the last's.
    private let range: (key: [UInt8], end: [UInt8])
    private let prefixes: [[UInt8]]
    /// What reports the copies to the cluster; nil when the options say not to, or the machine has no name.
    private let reporter: FleetReporter?
    /// Why the follower cannot report, found as it was made (a machine without a machine ID, and no name given).
    private let reporterProblem: FleetError?
    /// The metrics file's writer, when the options name one.
    private let metrics: FleetMetrics?
    /// The machine's labels: the options', and its host label (when it has a name).
    let labels: Set<String>

    /// A follower of `suites` in `cluster`, writing their copies in `directory`.
    ///
    /// - Parameters:
    ///   - suites: The suites to follow (as `SettingsStore(suite:)` names them); each once.
    ///   - cluster: The etcd cluster, and how to reach it.
    ///   - directory: Where the copies are: by default where `SettingsStore(suite:)` looks for them
    ///     (`$SPLINT_FLEET_DIRECTORY`; `/var/lib/splint-fleet` for root and the `splint-fleet` user; this user's
    ///     `$XDG_STATE_HOME/splint-fleet` otherwise).
    ///   - machine: The machine the follower reports as: ``FleetMachine/current`` unless given.
    ///   - options: Limits and timings.
    ///   - events: Called with each event, on the follower's task: for a log.
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for no suite, a suite that is not a name, a label that is
    ///   not one (or a host label: the machine carries its own), an endpoint that is not a URL, or TLS files that
    ///   cannot be used; ``FleetError/Code/insecureEndpoint``.
    public init(
      suites: [String], cluster: EtcdCluster, directory: URL? = nil, machine: FleetMachine? = nil,
      options: Options = Options(), events: (@Sendable (Event) -> Void)? = nil
    ) throws(FleetError) {
      let suites = Array(Set(suites)).sorted()
      guard !suites.isEmpty else { throw FleetError(.invalidConfiguration("no suite is given to follow (--suite).")) }
      var labels = Set<String>()
      for label in options.labels {
        guard !label.hasPrefix(FleetLabels.hostPrefix) else {
          throw FleetError(
            .invalidConfiguration(
              "\(label.shown()) is a host label: a machine carries its own (host:<machine>) alone; give another name."))
        }
        labels.insert(try FleetLabels.checked(label))
      }
      if let named = machine ?? (try? FleetMachine.current) { labels.insert(FleetLabels.host(named)) }
      self.labels = labels
      let gateway = try EtcdGateway(cluster: cluster)
      prefixes = try suites.map { suite throws(FleetError) in try cluster.prefix(ofSuite: suite) }
      self.suites = suites
      let directory = directory ?? FleetCopy.followerDirectory()
      copyURLs = suites.map { directory.appendingPathComponent("\($0).json") }
      writers = copyURLs.map { FleetCopyWriter(url: $0) }
      engine = EtcdEngine(gateway: gateway)
      self.options = options
      let told = events ?? { _ in }
      report = told
      // One watch for every suite: the range from the first prefix to past the last (keys of suites not followed
      // that fall between are passed over).
      range = (prefixes[0], EtcdGateway.rangeEnd(ofPrefix: prefixes[prefixes.count - 1]))
      var problem: FleetError?
      var reporter: FleetReporter?
      if options.reports {
        do throws(FleetError) {
          let named: FleetMachine
          if let machine { named = machine } else { named = try FleetMachine.current }
          reporter = try FleetReporter(
            gateway: gateway, machine: named, suites: suites, timeToLive: options.presenceTimeToLive, report: told)
        } catch {
          problem = error
        }
      }
      (self.reporter, reporterProblem) = (reporter, problem)
      metrics = options.metricsFile.map { url in
        FleetMetrics(url: url, machine: reporter?.machine.name ?? machine?.name, report: told)
      }
    }

    /// Follows the cluster until the task is cancelled: then records in the copies that the follower stopped, and
    /// gives them up to the next follower. Whatever a member answers (it is down, slow, starting, stopping, without a
    /// leader, compacting, or answers what etcd does not) is waited for, or another member tried, never an end.
    ///
    /// - Throws: ``FleetError`` for a configuration the operator must fix, which waiting does not mend: a refused
    ///   password (``FleetError/Code/authenticationFailed``), one that cannot be read
    ///   (``FleetError/Code/noPassword``), a role that may not read the keys
    ///   (``FleetError/Code/permissionDenied``), a copy that cannot be written. The copies record the reason, and
    ///   keep their values.
    public func run() async throws(FleetError) {
      guard try await takeOver() else { return }
      let copies = FleetCopies(
        copies: zip(suites, zip(writers, prefixes)).map { .init(suite: $0, writer: $1.0, prefix: $1.1) },
        engine: engine.name, endpoints: engine.endpoints, options: options, labels: labels, report: report)
      await copies.load()
      if let reporterProblem {
        await copies.recordReporting(machine: nil, failure: reporterProblem.description)
        report(.reportingFailed(reporterProblem))
      }
      let reporting = Task { [reporter] in await reporter?.run(copies: copies) }
      await metrics?.update(copies: copies, reporter: reporter)
      // Readers see when the follower was last there, whatever the cluster does; the metrics file what it holds.
      let interval = options.checkInterval
      let heartbeat = Task { [metrics, reporter] in
        while (try? await Task.sleep(for: interval)) != nil {
          await copies.heartbeat()
          await metrics?.update(copies: copies, reporter: reporter)
        }
      }
      var failure: FleetError?
      do throws(FleetError) {
        try await follow(into: copies)
      } catch {
        failure = error
      }
      heartbeat.cancel()
      reporting.cancel()
      await reporting.value
      // A metrics update under way ends before the last one, which says that the follower stopped, is written.
      await heartbeat.value
      let stopped = failure.flatMap { $0.code == .cancelled ? nil : $0 }
      await copies.stop(reason: stopped?.description)
      if let reporter {
        // The cluster is told that the follower stopped, within a moment: it may be away.
        let held = await copies.held
        let telling = Task { await reporter.stop(holding: held) }
        let bound = Task {
          try? await Task.sleep(for: .seconds(2))
          telling.cancel()
        }
        await telling.value
        bound.cancel()
      }
      await metrics?.update(copies: copies, reporter: reporter)
      if let stopped { throw stopped }
    }

    /// Takes every copy's follower lock, waiting (and telling so, once) while another follower holds one; false when
    /// cancelled meanwhile.
    private func takeOver() async throws(FleetError) -> Bool {
      var told = false
      while !Task.isCancelled {
        var all = true
        for writer in writers {
          do {
            all = try writer.takeOver() && all
          } catch {
            throw FleetError(.copyFailed(error))
          }
        }
        if all { return true }
        if !told { report(.waiting(suites: suites)) }
        told = true
        try? await Task.sleep(for: .seconds(1))
      }
      for writer in writers { writer.release() }
      return false
    }

    /// Reads, watches, and reconnects, until cancelled or a configuration the operator must fix.
    private func follow(into copies: FleetCopies) async throws(FleetError) {
      var attempts = 0
      var lostSince: Date?
      /// What kind of loss the follower last told (the cluster away, without a leader, answering what etcd does not):
      /// told again only when that changes, not for each way a connection fails while a member goes down (the
      /// stream cut, the connection reset, then refused).
      var told: FleetError.Code?
      var reporting: Task<Void, Never>?
      defer { reporting?.cancel() }
      /// Why the next connection reads every key, and how many times in a row a watch ended so without a change.
      var reread: (reason: String?, times: Int) = (nil, 0)
      while !Task.isCancelled {
        let started = Started()
        do throws(FleetError) {
          // Returns after a compaction past the revision held, or changes too large to read: read everything again.
          let reason = try await watch(into: copies, started: started, reread: reread.reason)
          reread = (reason, started.applied ? 1 : reread.times + 1)
          // A member that makes the follower read everything again and again, without a change between, is given
          // the pause of a failed attempt: whatever it sends, the follower does not spin.
          if reread.times > 1 { try? await Task.sleep(for: reconnectDelay(attempt: reread.times)) }
          continue
        } catch  where error.stopsFollower {
          throw error
        } catch {
          if started.value {
            // It followed for a while: this is a new loss, told from the start.
            (attempts, lostSince, told) = (0, nil, nil)
            reporting?.cancel()
          }
          if error.code != told { report(.lost(error)) }
          told = error.code
          if lostSince == nil {
            let since = Date()
            lostSince = since
            // Unless the follower is back within a check interval, the copies say the cluster is lost.
            let delay = options.checkInterval
            let report = report
            let connections = await copies.connections
            reporting = Task {
              try? await Task.sleep(for: delay)
              guard !Task.isCancelled,
                await copies.recordUnreachable(
                  unlessConnectedSince: connections, reason: error.description, since: since)
              else { return }
              report(.unreachable(since: since))
            }
          }
          attempts += 1
          try? await Task.sleep(for: reconnectDelay(attempt: attempts))
        }
      }
    }

    /// Whether a watch started, and applied a change: set by the task that reads it, read once it ended.
    private final class Started: Sendable {
      private let started = Atomic(false)
      private let changed = Atomic(false)
      var value: Bool { started.load(ordering: .relaxed) }
      var applied: Bool { changed.load(ordering: .relaxed) }
      func set() { started.store(true, ordering: .relaxed) }
      func setApplied() { changed.store(true, ordering: .relaxed) }
    }

    /// How long to wait before attempt `attempt` (1 after the first failure): none for the first, then 0.1 s doubling,
    /// at most ``Options/maximumReconnectDelay``, each between half and all of it (jitter: a cluster that comes back
    /// is not met by every follower at once).
    private func reconnectDelay(attempt: Int) -> Duration {
      guard attempt > 1 else { return .zero }
      let ceiling =
        Double(options.maximumReconnectDelay.components.seconds)
        + Double(options.maximumReconnectDelay.components.attoseconds) / 1e18
      let delay = min(ceiling, 0.1 * Double(1 << min(attempt - 2, 20)))
      return .milliseconds(Int(delay * Double.random(in: 0.5...1.0) * 1000))
    }

    /// One connection: where the cluster is, a whole read when the copies need one (or `reread` says why), then the
    /// watch from the revision held, with a check of the member every ``Options/checkInterval``, until it fails
    /// (thrown), or reports a compaction or changes too large to read (returned: why to read everything again).
    ///
    /// The watch's changes are read from the member one at a time, as each is applied (and the member's checks run
    /// beside, in a task of their own): a member that sends faster than the copies are written waits, and what the
    /// follower holds meanwhile is bounded.
    private func watch(
      into copies: FleetCopies, started: Started, reread: String?
    ) async throws(FleetError) -> String? {
      let (at, member) = try await engine.position(from: range.key, to: range.end)
      if let reason = await copies.fullReadReason(at) ?? reread {
        report(.reread(reason: reason))
        try await read(at: at, member: member, into: copies)
      } else if let held = await copies.keysUnknown {
        await readKeys(at: FleetRevision(cluster: at.cluster, revision: held), member: member, into: copies)
      }
      let start = await copies.heldRevision + 1
      let changes = try await engine.changes(from: start, key: range.key, rangeEnd: range.end, member: member)
      do {
        return try await withThrowingTaskGroup(of: String?.self) { group in
          group.addTask { try await self.apply(changes, member: member, into: copies, started: started) }
          group.addTask {
            try await self.check(member: member)
            return nil  // coverage:ignore — checks end only by throwing
          }
          defer { group.cancelAll() }
          return try await group.next() ?? nil
        }
      } catch {
        engine.avoid(member: member)
        throw (error as? FleetError) ?? FleetError(.unreachable(["\(engine.endpoints[member]): \(error)"]))
      }
    }

    /// Reads every key of the suites as of `at`, from `member`, part after part, into the copies, which it replaces
    /// once the read is whole (a read that fails leaves them as they were).
    private func read(at: FleetRevision, member: Int, into copies: FleetCopies) async throws(FleetError) {
      await copies.startReading(at: at)
      do {
        try await engine.read(from: range.key, to: range.end, at: at, member: member, keysOnly: false) {
          await copies.take($0)
        }
      } catch {
        await copies.finishReading(keeping: false)
        throw error
      }
      await copies.finishReading()
    }

    /// Reads the keys of the range alone, as of `at` (the revision the copies hold), from `member`: a follower that
    /// resumed from its copies on disk knows their values, not which keys the range holds at which revisions, which
    /// tells a quiet suite (see `FleetCopies.Held.keys`). A read that fails leaves them unknown until the next
    /// connection (past a compaction, the watch fails too, and everything is read again).
    private func readKeys(at: FleetRevision, member: Int, into copies: FleetCopies) async {
      await copies.startReadingKeys()
      do throws(FleetError) {
        try await engine.read(from: range.key, to: range.end, at: at, member: member, keysOnly: true) {
          await copies.takeKeys($0)
        }
        await copies.finishReadingKeys()
      } catch {
        await copies.finishReadingKeys(keeping: false)
      }
    }

    /// Applies the watch's changes, one at a time as they are read; returns why the copies must be read whole
    /// again, when they must; throws when the watch fails.
    private func apply(
      _ changes: any AsyncSequence<FleetChange, any Error> & Sendable, member: Int, into copies: FleetCopies,
      started: Started
    ) async throws -> String? {
      for try await change in changes {
        switch change {
        case .started(let at):
          started.set()
          await copies.connected()
          report(.following(endpoint: engine.endpoints[member], cluster: at.cluster, revision: at.revision))
        case .changed(let at, let events):
          started.setApplied()
          if let reason = await copies.apply(events, at: at) { return reason }
        case .progress(let at):
          started.setApplied()
          await copies.progress(at)
        case .compacted(let revision):
          return "the cluster compacted its history past revision \(revision), which the copies hold"
        case .overflowed(let limit):
          let size = "\(limit) bytes"  // coverage:ignore — a 16 MiB line
          return "a change larger than a line of the watch may be (\(size)) came"  // coverage:ignore — a 16 MiB line
        }
      }
      return nil  // coverage:ignore — a watch's changes end only by throwing, or with a reason to read
    }

    /// Checks `member` every check interval, until a check fails (thrown) or the task is cancelled.
    private func check(member: Int) async throws {
      let interval = options.checkInterval
      while true {
        try await Task.sleep(for: interval)
        _ = try await engine.check(member: member, from: range.key, to: range.end, timeout: interval)
      }
    }  // coverage:ignore — the end of an endless loop, left only by a throw
  }
#endif
