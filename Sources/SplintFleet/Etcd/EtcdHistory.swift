#if SplintFleet
  import SplintSettings
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  extension EtcdCluster {
    /// One change of a suite: the keys one revision changed, and who changed them.
    public struct Change: Sendable, Hashable {
      /// The cluster's revision the change was made at.
      public let revision: Int64
      /// Who made it, when and with what, from its record; nil for a change made around splintctl (with etcdctl,
      /// say, or a writer whose ``EtcdCluster/recording`` is nil), which has none.
      public let author: Author?
      /// The keys it changed, sorted, with their texts before and after.
      public let keys: [KeyChange]

      package init(revision: Int64, author: Author?, keys: [KeyChange]) {
        self.revision = revision
        self.author = author
        self.keys = keys
      }
    }

    /// A suite's changes, newest first: what the records of changes made through splintctl (or this API) say,
    /// merged with what etcd's own history still holds, which also shows the changes made around splintctl.
    public struct History: Sendable, Hashable {
      /// The suite.
      public let suite: String
      /// The cluster's revision the history is as of.
      public let revision: Int64
      /// Where etcd's own history ends: etcd holds every change after this revision (0 when it was never
      /// compacted), and none before it, where only recorded changes show.
      public let compactedRevision: Int64
      /// Where the records kept begin, when older ones were dropped (``Recording/limit``,
      /// ``Recording/maximumAge``): the revision of the oldest kept. A change before it has no record, whoever
      /// made it. Nil when no record was ever dropped.
      public let recordsBegin: Int64?
      /// The changes, newest first.
      public let changes: [Change]
    }

    /// What differs between two states of a suite, key by key: what ``diff(suite:from:to:)`` finds, and what
    /// ``apply(_:)`` makes true.
    public struct Diff: Sendable, Hashable {
      /// The suite.
      public let suite: String
      /// The revision of the state the differences start from: the cluster's revision it was read at, for the
      /// state now.
      public let fromRevision: Int64
      /// The revision of the state they lead to; nil for a change not made yet (a dry run of a write).
      public let toRevision: Int64?
      /// The keys that differ, sorted: each with its text in the first state (``KeyChange/oldValue``) and in the
      /// second (``KeyChange/newValue``), nil where the state does not hold the key.
      public let differences: [KeyChange]
      /// Whether a state is older than etcd's compacted revision, and was therefore rebuilt from the records of
      /// changes, which know only the changes made through splintctl.
      public let isRebuiltFromRecords: Bool
      /// The first state as it was read, when it is the state now: what ``apply(_:)`` compares.
      let reading: Reading?
    }

    // MARK: - History

    /// The changes of `suite`, newest first: every change etcd still holds (after its compacted revision), with its
    /// ``Author`` where it was recorded and none where it was made around splintctl, and the recorded changes
    /// before it.
    ///
    /// ```swift
    /// for change in try await cluster.history(suite: "com.example.sync", limit: 10).changes {
    ///   let who = change.author.map { "\($0.user)@\($0.host)" } ?? "not recorded"
    ///   print(change.revision, who, change.keys.map(\.key))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - suite: The suite, as `SettingsStore(suite:)` names it.
    ///   - key: Only the changes of this key, and only it in them.
    ///   - limit: At most this many changes, the newest.
    /// - Throws: A ``FleetError``: the cluster unreachable, a role that may not read the suite or its records.
    public func history(suite: String, key: String? = nil, limit: Int? = nil) async throws(FleetError) -> History {
      let gateway = try EtcdGateway(cluster: self)
      let prefix = try prefix(ofSuite: suite)
      let (start, end) = try recordRange(suite: suite)
      for _ in 1...3 {
        let (revision, results) = try await read(
          [
            EtcdRangeRequest(key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix))),
            EtcdRangeRequest(key: EtcdBytes(start), rangeEnd: EtcdBytes(end)),
          ], gateway: gateway)
        let state = Self.stored(results[0], prefix: prefix)
        let records = Self.records(results[1])
        // Nil when etcd compacted its history past the state read meanwhile: read again.
        guard
          let (compacted, changes) = try await etcdChanges(
            prefix: prefix, upTo: revision, state: state, recorded: Set(records.keys), gateway: gateway)
        else { continue }
        var merged = changes.map { revision, keys in
          Change(revision: revision, author: records[revision]?.author, keys: keys.sorted { $0.key < $1.key })
        }
        for (revision, record) in records where changes[revision] == nil {
          merged.append(Change(revision: revision, author: record.author, keys: record.changes))
        }
        if let key {
          merged = merged.compactMap { change in
            let keys = change.keys.filter { $0.key == key }
            return keys.isEmpty ? nil : Change(revision: change.revision, author: change.author, keys: keys)
          }
        }
        merged.sort { $0.revision > $1.revision }
        let oldest = results[1].first
        let dropped =
          oldest.flatMap { FleetLayout.sequence(ofKey: $0.key.bytes, prefix: start) }.map { $0 > 1 } ?? false
        return History(
          suite: suite, revision: revision, compactedRevision: compacted,
          recordsBegin: dropped ? oldest?.createRevision?.value : nil,
          changes: limit.map { Array(merged.prefix(max($0, 0))) } ?? merged)
      }
      throw FleetError(.conflict(key: "etcd's compacted revision"))  // coverage:ignore — three compactions in a row
    }

    /// The keys of `pairs`, read under `prefix`, as the suite's keys.
    static func stored(_ pairs: [EtcdKeyValue], prefix: [UInt8]) -> [String: Stored] {
      var values: [String: Stored] = [:]
      for pair in pairs {
        let key = String(decoding: pair.key.bytes.dropFirst(prefix.count), as: UTF8.self)
        values[key] = Stored(text: text(pair.value), modRevision: pair.modRevision?.value ?? 0)
      }
      return values
    }

    /// The records of `pairs`, by the revision of their change: a record that was changed after it was written
    /// (its modification revision is not its creation's), or is not one, is left out.
    static func records(_ pairs: [EtcdKeyValue]) -> [Int64: ChangeRecord] {
      var records: [Int64: ChangeRecord] = [:]
      for pair in pairs {
        guard let created = pair.createRevision?.value, created == pair.modRevision?.value,
          let record = ChangeRecord(json: pair.value?.bytes ?? [])
        else { continue }
        records[created] = record
      }
      return records
    }

    /// etcd's own history of the suite under `prefix` up to `revision`, where its keys' modification revisions were
    /// `state`'s and changes were recorded at `recorded`: its compacted revision, and the keys each revision after
    /// it changed; nil when it compacted past `revision` meanwhile.
    ///
    /// A watch from the revision after the compacted one, with each key's value before, reads every change; it ends
    /// once the changes read leave the keys as `state` has them. etcd sends a watch that catches up the changes up
    /// to its revision then in one response (of at most 1,000 revisions), so that the changes of keys made and
    /// removed again after the last change `state` shows come with it. Only when nothing shows a change since the
    /// compacted revision (no key's revision, no removed key, no record) is no response waited for: keys made and
    /// removed again around splintctl, with no other change since, would then not show.
    func etcdChanges(
      prefix: [UInt8], upTo revision: Int64, state: [String: Stored], recorded: Set<Int64>, gateway: EtcdGateway
    ) async throws(FleetError) -> (compacted: Int64, changes: [Int64: [KeyChange]])? {
      let target = state.mapValues(\.modRevision)
      var compacted: Int64 = 0
      var base: [String: Int64] = [:]
      // A read as of revision 1 tells whether etcd compacted; a watch from it then says up to which revision.
      var mustWatch = try await isCompacted(before: 1, prefix: prefix, gateway: gateway)
      while true {
        let changed = recorded.contains { $0 > compacted && $0 <= revision }
        if base == target, !mustWatch, !changed { return (compacted, [:]) }
        let reader = try await watch(
          from: compacted + 1, prefix: prefix, gateway: gateway,
          reader: HistoryReader(prefix: prefix, upTo: revision, target: target, current: base))
        guard let at = reader.compactedAt else { return (compacted, reader.changes) }
        guard at <= revision else { return nil }
        // What etcd holds from `at` on: the keys as they were then, and the changes after.
        compacted = at
        do {
          let (_, results) = try await read(
            [
              EtcdRangeRequest(
                key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)), keysOnly: true,
                revision: at)
            ], gateway: gateway)
          base = Self.stored(results[0], prefix: prefix).mapValues(\.modRevision)
        } catch  where error.isCompaction {
          return nil  // coverage:ignore — compacted again between the watch and this read
        }
        mustWatch = false
      }
    }  // coverage:ignore — the end of an endless loop, left only by a return

    /// Whether etcd compacted its history past `revision`: a read of the suite's keys as of it is refused.
    func isCompacted(before revision: Int64, prefix: [UInt8], gateway: EtcdGateway) async throws(FleetError) -> Bool {
      do {
        _ = try await gateway.call(
          "/v3/kv/range",
          EtcdRangeRequest(
            key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)), countOnly: true,
            revision: revision), as: EtcdRangeResponse.self)
        return false
      } catch  where error.isCompaction {
        return true
      }
    }

    /// Reads a watch of the suite under `prefix` from `revision`, with each key's value before, into `reader`,
    /// until it has read what it needs: the reader then. The watch is on the endpoint that answered last.
    ///
    /// - Throws: ``FleetError/Code/timedOut`` when the member sends nothing for ``requestTimeout``.
    func watch(
      from revision: Int64, prefix: [UInt8], gateway: EtcdGateway, reader: HistoryReader
    ) async throws(FleetError) -> HistoryReader {
      let endpoint = gateway.preferredEndpoint
      let server = gateway.endpoints[endpoint]
      let lines = try await gateway.watch(
        from: revision, key: prefix, rangeEnd: EtcdGateway.rangeEnd(ofPrefix: prefix), on: endpoint, prevKV: true)
      let ticks = Ticks()
      let timeout = requestTimeout
      let user = user
      do {
        return try await withThrowingTaskGroup(of: HistoryReader.self) { group in
          group.addTask {
            var reader = reader
            for try await line in lines {
              ticks.count.add(1, ordering: .relaxed)
              if try reader.take(line, server: server, user: user) { return reader }
            }
            throw FleetError(.unreachable(["\(server): the watch ended"]))  // coverage:ignore — a member stopped
          }
          group.addTask {
            // Fails the reading when a whole timeout passes without a line.
            var seen = -1
            while ticks.count.load(ordering: .relaxed) != seen {
              seen = ticks.count.load(ordering: .relaxed)
              try await Task.sleep(for: timeout)
            }  // coverage:ignore — left only when a member stops sending
            throw FleetError(.timedOut(server: server, after: timeout))  // coverage:ignore — a member gone silent
          }
          defer { group.cancelAll() }
          guard let first = try await group.next() else {
            throw FleetError(.cancelled)  // coverage:ignore — the group holds two tasks, so it answers
          }
          return first
        }
      } catch {
        throw Self.watchFailure(error, timeout: timeout)  // coverage:ignore — a watch that failed once started
      }  // coverage:ignore — the end of the failure above, which throws
    }

    /// What a watch's failure stands for: a ``FleetError`` as it is, a transport's error as the gateway tells it.
    static func watchFailure(_ error: any Error, timeout: Duration) -> FleetError {
      switch error {
      case let error as FleetError: error
      case let error as FleetTransportError: FleetError(transport: error, timeout: timeout)
      default: FleetError(.cancelled)
      }
    }

    // MARK: - Diff and roll back

    /// What differs between `suite` at revision `from` (now, for nil) and at revision `to`, key by key, `$enforced`
    /// included: what ``apply(_:)`` changes, for a diff from now, to put every key of the suite back as it was at
    /// `to`.
    ///
    /// ```swift
    /// let diff = try await cluster.diff(suite: "com.example.sync", to: 812)
    /// for change in diff.differences { print(change.key, change.oldValue ?? "-", "->", change.newValue ?? "-") }
    /// try await cluster.apply(diff)  // fails, changing nothing, if any key changed since the diff was made
    /// ```
    ///
    /// A state etcd still holds is read as of its revision; an older one (before etcd's compacted revision) is
    /// rebuilt from the suite as it was then and the records of the changes since, which know only the changes
    /// made through splintctl (``Diff/isRebuiltFromRecords``).
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a revision the cluster has not reached,
    ///   ``FleetError/Code/revisionNotKept`` for a state that is not known any more (compacted, and the records do
    ///   not reach it, or a change made around splintctl since), and the cluster's errors.
    public func diff(suite: String, from: Int64? = nil, to: Int64) async throws(FleetError) -> Diff {
      let gateway = try EtcdGateway(cluster: self)
      let prefix = try prefix(ofSuite: suite)
      let (revision, results) = try await read(
        [EtcdRangeRequest(key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)))],
        gateway: gateway)
      let now = Reading(keys: nil, revision: revision, values: Self.stored(results[0], prefix: prefix))
      for asked in [from, to].compactMap(\.self) where asked < 1 || asked > revision {
        throw FleetError(
          .invalidConfiguration("revision \(asked) is not one of the cluster's: it is at revision \(revision)."))
      }
      let first = try await state(of: suite, at: from ?? revision, now: now, gateway: gateway)
      let second = try await state(of: suite, at: to, now: now, gateway: gateway)
      return Diff(
        suite: suite, fromRevision: from ?? revision, toRevision: to,
        differences: Self.differences(from: first.texts, to: second.texts),
        isRebuiltFromRecords: first.rebuilt || second.rebuilt, reading: (from ?? revision) == revision ? now : nil)
    }

    /// What writing `values` in `suite` would change, key by key, without writing anything: a dry run of
    /// ``setValues(_:suite:)`` (a nil text: of ``removeValue(forKey:suite:)``). ``apply(_:)`` writes it, if none
    /// of the keys changed meanwhile.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` for a text that is not JSON, ``FleetError/Code/reservedKey``,
    ///   ``FleetError/Code/schemaViolation`` for a value the suite's schema refuses (as the write would), and the
    ///   cluster's errors.
    public func diff(
      settingValues values: [(key: String, jsonText: String?)], suite: String
    ) async throws(FleetError)
      -> Diff
    {
      try await diff(settingValues: values, suite: suite, label: nil)
    }

    /// What writing `values` in `suite` for the machines that carry `label` would change, as
    /// ``diff(settingValues:suite:)`` says for every machine (each key of the diff is the label's:
    /// `$for/<label>/<key>`); with `label` nil, that diff.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, and the errors of
    ///   ``diff(settingValues:suite:)``.
    public func diff(
      settingValues values: [(key: String, jsonText: String?)], suite: String, label: String?
    ) async throws(FleetError) -> Diff {
      var planned: [String: String?] = [:]
      for (key, text) in values {
        _ = try self.key(key, suite: suite)
        if let text { try Self.requireJSON(text, key: key) }
        planned[
          try label.map { label throws(FleetError) in try FleetLabels.key(key, label: FleetLabels.checked(label)) }
            ?? key] = .some(text)
      }
      let gateway = try EtcdGateway(cluster: self)
      let prefix = try prefix(ofSuite: suite)
      let keys = planned.keys.sorted()
      // The schema is read with the keys: a write it refuses is refused here as it would be written.
      let (revision, results) = try await read(
        keyRanges(keys + [FleetCopy.schemaKey], prefix: prefix, besides: 0), gateway: gateway)
      let stored = Self.stored(results.flatMap(\.self), prefix: prefix)
      try checkSchema(planned, on: stored, suite: suite)
      let reading = Reading(keys: keys, revision: revision, values: stored.only(keys))
      let current = reading.values.mapValues(\.text)
      var next = current
      for (key, text) in planned { next[key] = text }
      return Diff(
        suite: suite, fromRevision: revision, toRevision: nil, differences: Self.differences(from: current, to: next),
        isRebuiltFromRecords: false, reading: reading)
    }

    /// Makes `diff` true: every key that differs takes its text in the second state (or is removed), in one
    /// transaction that fails if any key the diff read changed since it was read (for a diff of a whole suite,
    /// also if a key was made since); recorded as one change (see ``recording``).
    ///
    /// - Returns: The revision it was made at; ``Write/changed`` is false, and nothing was written, for a diff of
    ///   no differences.
    /// - Throws: ``FleetError/Code/conflict`` when a key changed since the diff was made (nothing was changed: make
    ///   the diff again), ``FleetError/Code/transactionTooLarge`` for a suite too large for one transaction
    ///   (nothing is split), ``FleetError/Code/invalidConfiguration`` for a diff that does not start from the state
    ///   then, and the cluster's errors.
    @discardableResult
    public func apply(_ diff: Diff) async throws(FleetError) -> Write {
      guard let reading = diff.reading else {
        throw FleetError(
          .invalidConfiguration(
            "a diff from revision \(diff.fromRevision) does not start from the suite as it is: make it from now."))
      }
      guard !diff.differences.isEmpty else {
        return Write(revision: reading.revision, changed: false, previousValue: nil)
      }
      let gateway = try EtcdGateway(cluster: self)
      let (_, sequence) = try await read(keys: [], suite: diff.suite, gateway: gateway)
      var changes: [String: String?] = [:]
      for difference in diff.differences { changes[difference.key] = .some(difference.newValue) }
      try checkSchema(changes, on: reading.values, suite: diff.suite)
      let what =
        diff.toRevision.map { "Rolling \(diff.suite) back to revision \($0)" } ?? "Changing \(diff.suite)"
      guard
        let revision = try await write(
          changes, on: reading, suite: diff.suite, sequence: sequence, gateway: gateway, what: what)
      else {
        throw FleetError(.conflict(key: try await changedKeys(since: reading, suite: diff.suite, gateway: gateway)))
      }
      return Write(revision: revision, changed: true, previousValue: nil)
    }

    /// The keys of `suite` that differ from `reading` now, in words: `interval, mode (made since)`.
    private func changedKeys(
      since reading: Reading, suite: String, gateway: EtcdGateway
    ) async throws(FleetError) -> String {
      let prefix = try prefix(ofSuite: suite)
      let (_, results) = try await read(keyRanges(reading.keys, prefix: prefix, besides: 0), gateway: gateway)
      let read = Self.stored(results.flatMap(\.self), prefix: prefix)
      let now = (reading.keys.map { read.only($0) } ?? read).mapValues(\.modRevision)
      let then = reading.values.mapValues(\.modRevision)
      let keys = Set(now.keys).union(then.keys).sorted().compactMap { key -> String? in
        switch (then[key], now[key]) {
        case (nil, nil): nil  // coverage:ignore — a key of neither state is not among these
        case (nil, _): "\(key) (made since)"
        case (_, nil): "\(key) (removed since)"
        case (let before?, let after?): before == after ? nil : key
        }
      }
      return keys.isEmpty ? "the suite" : keys.joined(separator: ", ")
    }

    /// The keys whose texts differ between `first` and `second`, sorted.
    private static func differences(from first: [String: String], to second: [String: String]) -> [KeyChange] {
      Set(first.keys).union(second.keys).sorted().compactMap { key in
        first[key] == second[key] ? nil : KeyChange(key: key, oldValue: first[key], newValue: second[key])
      }
    }

    /// The texts of `suite`'s keys at `revision` (`now` is the state at its own revision), and whether they were
    /// rebuilt from the records (etcd compacted its history past `revision`).
    private func state(
      of suite: String, at revision: Int64, now: Reading, gateway: EtcdGateway
    ) async throws(FleetError) -> (texts: [String: String], rebuilt: Bool) {
      guard revision != now.revision else { return (now.values.mapValues(\.text), false) }
      let prefix = try prefix(ofSuite: suite)
      let whole = EtcdRangeRequest(
        key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)), revision: revision)
      do {
        let (_, results) = try await read([whole], gateway: gateway)
        return (Self.stored(results[0], prefix: prefix).mapValues(\.text), false)
      } catch  where error.isCompaction {
        return (try await rebuilt(suite, at: revision, gateway: gateway), true)
      }
    }

    /// `suite`'s keys at `revision`, before etcd's compacted revision: the keys at the compacted revision, with the
    /// recorded changes since undone, newest first.
    ///
    /// - Throws: ``FleetError/Code/revisionNotKept`` when that is not what the suite held: records older than the
    ///   ones kept were dropped, or a key was changed around splintctl meanwhile (its last change, or a record that
    ///   does not follow from the one before).
    private func rebuilt(
      _ suite: String, at revision: Int64, gateway: EtcdGateway
    ) async throws(FleetError)
      -> [String: String]
    {
      let prefix = try prefix(ofSuite: suite)
      let (start, end) = try recordRange(suite: suite)
      for _ in 1...3 {
        let watched = try await watch(
          from: 1, prefix: prefix, gateway: gateway,
          reader: HistoryReader(prefix: prefix, upTo: revision, target: [:], current: ["": 0]))
        guard let compacted = watched.compactedAt else {
          continue  // coverage:ignore — called once a read found it compacted, so the watch says where
        }
        let results: [[EtcdKeyValue]]
        do {
          results = try await read(
            [
              EtcdRangeRequest(
                key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)),
                revision: compacted),
              EtcdRangeRequest(key: EtcdBytes(start), rangeEnd: EtcdBytes(end)),
            ], gateway: gateway
          ).results
        } catch  where error.isCompaction {
          continue  // coverage:ignore — compacted again between the watch and this read
        }
        var state = Self.stored(results[0], prefix: prefix)
        let records = Self.records(results[1]).filter { $0.key > revision && $0.key <= compacted }
        func notKept(_ reason: String) -> FleetError {
          FleetError(.revisionNotKept(suite: suite, revision: revision, reason: reason))
        }
        let etcdEnds = "etcd's history before revision \(compacted) is compacted"
        if let oldest = results[1].first, let number = FleetLayout.sequence(ofKey: oldest.key.bytes, prefix: start),
          number > 1, let created = oldest.createRevision?.value, created > revision + 1
        {
          throw notKept("\(etcdEnds), and the records kept begin at revision \(created) (older ones were dropped)")
        }
        for (key, stored) in state.sorted(by: { $0.key < $1.key })
        where stored.modRevision > revision
          && records[stored.modRevision]?.changes.contains(where: { $0.key == key }) != true
        {
          throw notKept("\(etcdEnds), and \(key) was changed at revision \(stored.modRevision) with no record")
        }
        for (recorded, record) in records.sorted(by: { $0.key > $1.key }) {
          for change in record.changes {
            guard state[change.key]?.text == change.newValue else {
              throw notKept(
                "\(etcdEnds), and \(change.key) was changed around splintctl after revision \(recorded), with no record"
              )
            }
            state[change.key] = change.oldValue.map { Stored(text: $0, modRevision: 0) }
          }
        }
        return state.mapValues(\.text)
      }
      throw FleetError(.conflict(key: "etcd's compacted revision"))  // coverage:ignore — three compactions in a row
    }
  }

  /// How many lines a watch has given: what tells its reading from a member that stopped sending.
  private final class Ticks: Sendable {
    let count = Atomic<Int>(0)
  }

  /// What a watch of a suite's history reads: the changes up to a revision, until the keys are as they were then;
  /// or the revision etcd compacted its history at, when it cancels the watch for it.
  struct HistoryReader: Sendable {
    let prefix: [UInt8]
    /// The revision the history is read up to: later changes are passed over.
    let upTo: Int64
    /// Each key's modification revision at ``upTo``.
    let target: [String: Int64]
    /// Each key's modification revision as the changes read so far leave it.
    var current: [String: Int64]
    /// The keys each revision changed.
    var changes: [Int64: [EtcdCluster.KeyChange]] = [:]
    /// etcd's compacted revision, when it cancelled the watch for starting before it.
    var compactedAt: Int64?

    init(prefix: [UInt8], upTo: Int64, target: [String: Int64], current: [String: Int64]) {
      self.prefix = prefix
      self.upTo = upTo
      self.target = target
      self.current = current
    }

    /// Takes one line of the watch: whether it has read what it needs.
    ///
    /// - Throws: The error a failure the member sends stands for, and ``FleetError/Code/invalidResponse`` for what
    ///   etcd does not send.
    mutating func take(_ line: [UInt8], server: String, user: String?) throws(FleetError) -> Bool {
      guard !line.isEmpty else { return false }
      guard let decoded = try? JSONDecoder().decode(EtcdWatchLine.self, from: Data(line)) else {
        throw FleetError(.invalidResponse(server: server, reason: "a line of its watch is not etcd's"))
      }
      if let failure = decoded.error { throw FleetError(failure: failure, server: server, user: user) }
      guard let result = decoded.result else {
        throw FleetError(.invalidResponse(server: server, reason: "a line of its watch holds no result"))
      }
      if let compacted = result.compactRevision?.value, compacted > 0 {
        compactedAt = compacted
        return true
      }
      if result.canceled == true {
        throw FleetError(.rejected(server: server, message: result.cancelReason ?? "it cancelled the watch"))
      }
      var passed = false
      for event in result.events ?? [] {
        let revision = event.kv.modRevision?.value ?? 0
        guard revision <= upTo else {
          passed = true
          continue
        }
        let key = String(decoding: event.kv.key.bytes.dropFirst(prefix.count), as: UTF8.self)
        let old = event.prevKV.map { EtcdCluster.text($0.value) }
        let new = event.isDeletion ? nil : EtcdCluster.text(event.kv.value)
        changes[revision, default: []].append(.init(key: key, oldValue: old, newValue: new))
        current[key] = event.isDeletion ? nil : revision
      }
      guard current == target else {
        // Every change up to `upTo` came before a later one: the keys should be as they were then.
        if passed {
          throw FleetError(.invalidResponse(server: server, reason: "its watch left out changes of the suite"))
        }
        return false
      }
      return true
    }
  }

  extension FleetError {
    /// Whether the cluster refused a read as of a revision it compacted its history past.
    var isCompaction: Bool {
      if case .rejected(_, let message) = situation { return message.contains("compacted") }
      return false
    }
  }
#endif
