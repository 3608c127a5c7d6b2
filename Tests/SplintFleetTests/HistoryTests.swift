#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// A fleet change's history, its author and the way back, against a real etcd with authentication on: records
  /// written with each change, merged with etcd's own history, past its compaction; diffs and rollbacks that apply
  /// whole or not at all.
  @Suite(.startsServers) struct HistoryTests {
    typealias KeyChange = EtcdCluster.KeyChange

    @Test(
      "history: each change with its author, one made with etcdctl as not recorded; after a compaction, the records")
    func history() async throws {
      let (etcd, alice, bob) = try await startAuthenticatedCluster()
      let started = Date()
      let first = try await alice.setValue(jsonText: "60", forKey: "interval", suite: "app")
      let second = try await bob.setValue(jsonText: #""fast""#, forKey: "mode", suite: "app")
      try await etcd.put("/splint/app/interval", "90", user: "root:rootpw")
      let around = try await etcd.revision()
      let enforced = try await alice.setEnforced(true, forKey: "mode", suite: "app")
      let removed = try await bob.removeValue(forKey: "mode", suite: "app")
      // A key made and removed again around splintctl, after every other change: etcd's history has both.
      try await etcd.put("/splint/app/brief", "1", user: "root:rootpw")
      try await etcd.etcdctl(["del", "/splint/app/brief"], user: "root:rootpw")
      let gone = try await etcd.revision()

      let history = try await alice.history(suite: "app")
      #expect(history.compactedRevision == 0)
      #expect(history.recordsBegin == nil)
      #expect(history.revision == gone)
      #expect(
        history.changes.map(\.revision)
          == [gone, gone - 1, removed.revision, enforced.revision, around, second.revision, first.revision])
      #expect(
        history.changes.map { $0.author?.etcdUser ?? "not recorded" } == [
          "not recorded", "not recorded", "bob", "alice", "not recorded", "bob", "alice",
        ])
      #expect(
        history.changes.map(\.keys) == [
          [KeyChange(key: "brief", oldValue: "1", newValue: nil)],
          [KeyChange(key: "brief", oldValue: nil, newValue: "1")],
          [KeyChange(key: "mode", oldValue: #""fast""#, newValue: nil)],
          [KeyChange(key: "$enforced", oldValue: nil, newValue: #"["mode"]"#)],
          [KeyChange(key: "interval", oldValue: "60", newValue: "90")],
          [KeyChange(key: "mode", oldValue: nil, newValue: #""fast""#)],
          [KeyChange(key: "interval", oldValue: nil, newValue: "60")],
        ])
      let author = try #require(history.changes[2].author)
      #expect(author.command == "test as bob")
      #expect(!author.user.isEmpty && !author.host.isEmpty)
      #expect(author.time >= started.addingTimeInterval(-1) && author.time <= Date())

      // The reader may read the settings but not their records: refused, typed.
      var reader = alice
      reader.user = "reader"
      reader.password = try password("readpw", for: "reader")
      await #expect(throws: FleetError.self) { try await reader.history(suite: "app") }

      // Compacted: etcd's history of the changes before is gone, the records are not.
      let compacted = try await etcd.compact(user: "root:rootpw")
      try await etcd.put("/splint/app/later", "1", user: "root:rootpw")
      let later = try await etcd.revision()
      let after = try await bob.history(suite: "app")
      #expect(after.compactedRevision == compacted)
      #expect(
        after.changes.map(\.revision) == [later, removed.revision, enforced.revision, second.revision, first.revision])
      #expect(after.changes.map { $0.author?.etcdUser } == [nil, "bob", "alice", "bob", "alice"])
      #expect(after.changes[0].keys == [KeyChange(key: "later", oldValue: nil, newValue: "1")])
      #expect(after.changes[1].keys == history.changes[2].keys)

      // One key's changes, and the newest alone.
      let interval = try await bob.history(suite: "app", key: "interval")
      #expect(interval.changes.map(\.revision) == [first.revision])
      let newest = try await bob.history(suite: "app", limit: 2)
      #expect(newest.changes.map(\.revision) == [later, removed.revision])
    }

    @Test("rollback to before a compaction: values and $enforced restored, a key made since removed, recorded")
    func rollbackBeforeCompaction() async throws {
      let (etcd, alice, bob) = try await startAuthenticatedCluster()
      try await alice.setValues([("interval", "60"), ("mode", #""fast""#)], suite: "app")
      let point = try await alice.setEnforced(true, forKey: "mode", suite: "app").revision
      try await bob.setValue(jsonText: "30", forKey: "interval", suite: "app")
      try await bob.setValue(jsonText: "1", forKey: "extra", suite: "app")
      try await alice.setEnforced(false, forKey: "mode", suite: "app")
      try await alice.setEnforced(true, forKey: "interval", suite: "app")
      let compacted = try await etcd.compact(user: "root:rootpw")

      let diff = try await alice.diff(suite: "app", to: point)
      #expect(diff.isRebuiltFromRecords)
      #expect(diff.fromRevision == compacted && diff.toRevision == point)
      #expect(
        diff.differences == [
          KeyChange(key: "$enforced", oldValue: #"["interval"]"#, newValue: #"["mode"]"#),
          KeyChange(key: "extra", oldValue: "1", newValue: nil),
          KeyChange(key: "interval", oldValue: "30", newValue: "60"),
        ])
      let written = try await bob.apply(diff)
      #expect(written.changed)
      #expect(
        try await alice.storedValues(suite: "app").map { "\($0.key)=\($0.text)" } == ["interval=60", #"mode="fast""#])
      #expect(try await alice.enforcedKeys(suite: "app") == ["mode"])
      let recorded = try await alice.history(suite: "app", limit: 1).changes.first
      #expect(recorded?.revision == written.revision)
      #expect(recorded?.author?.etcdUser == "bob")
      #expect(recorded?.keys == diff.differences)

      // Back to a point etcd still holds (the compacted revision itself): read, not rebuilt; and a diff between two
      // revisions.
      let forward = try await alice.diff(suite: "app", to: compacted)
      #expect(!forward.isRebuiltFromRecords)
      #expect(forward.differences.map(\.key) == ["$enforced", "extra", "interval"])
      let between = try await alice.diff(suite: "app", from: compacted, to: written.revision)
      #expect(between.differences == diff.differences)
      #expect(try await alice.diff(suite: "app", to: written.revision).differences.isEmpty)
      // Nothing to roll back changes nothing.
      let none = try await alice.apply(try await alice.diff(suite: "app", to: written.revision))
      #expect(!none.changed && none.revision == written.revision)
      // A diff between two past revisions starts from no state of now: it cannot be applied.
      await #expect(throws: FleetError.self) { try await alice.apply(between) }
      // Revisions the cluster has not reached.
      for revision: Int64 in [0, written.revision + 1] {
        let error = await #expect(throws: FleetError.self) { try await alice.diff(suite: "app", to: revision) }
        #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
      }
    }

    @Test("a rollback fails, changing nothing, when a key changed, was removed or was made after its diff")
    func rollbackConflicts() async throws {
      let (etcd, alice, _) = try await startAuthenticatedCluster()
      try await alice.setValues([("interval", "60"), ("mode", #""fast""#)], suite: "app")
      let point = try await etcd.revision()
      try await alice.setValue(jsonText: "30", forKey: "interval", suite: "app")
      let meanwhile: [(String, [String])] = [
        ("mode", ["put", "/splint/app/mode", #""slow""#]),
        ("mode (removed since)", ["del", "/splint/app/mode"]),
        ("other (made since)", ["put", "/splint/app/other", "1"]),
      ]
      for (named, command) in meanwhile {
        let diff = try await alice.diff(suite: "app", to: point)
        #expect(!diff.differences.isEmpty)
        try await etcd.etcdctl(command, user: "root:rootpw")
        let during = try await etcd.revision()
        do {
          try await alice.apply(diff)
          Issue.record("a rollback applied over \(command)")
        } catch {
          #expect(error.code == .conflict, "\(error)")
          #expect(error.summary.hasPrefix("\(named) changed"), "\(error)")
        }
        #expect(try await etcd.revision() == during, "a refused rollback wrote something")
      }
      // Made again from now, it applies.
      try await alice.apply(try await alice.diff(suite: "app", to: point))
      #expect(
        try await alice.storedValues(suite: "app").map { "\($0.key)=\($0.text)" } == ["interval=60", #"mode="fast""#])
    }

    @Test("a suite too large for one transaction is refused with the numbers, never split")
    func tooLarge() async throws {
      let (etcd, cluster) = try await startCluster()
      let empty = try await etcd.revision()
      try await cluster.setValues((0..<100).map { ("k\($0)", "1") }, suite: "app")
      try await cluster.setValues((100..<129).map { ("k\($0)", "1") }, suite: "app")
      let diff = try await cluster.diff(suite: "app", to: empty)
      #expect(diff.differences.count == 129)
      let before = try await etcd.revision()
      func refusal(_ cluster: EtcdCluster) async -> FleetError? {
        await #expect(throws: FleetError.self) { try await cluster.apply(diff) }
      }
      // A comparison of each key, of the range and of the record's key; an operation of each key and the record.
      let error = await refusal(cluster)
      #expect(error?.code == .transactionTooLarge)
      #expect(error?.summary.contains("of 131 comparisons and 130 operations") == true, "\(String(describing: error))")
      #expect(error?.summary.contains("at most 128 of each (--max-txn-ops)") == true)
      // The cluster's own limit, below the one given: the same refusal.
      var generous = cluster
      generous.maximumTransactionOperations = 1000
      #expect(await refusal(generous)?.code == .transactionTooLarge)
      var small = cluster
      small.maximumRequestSize = 1000
      #expect(await refusal(small)?.summary.contains("1000 bytes (--max-request-bytes)") == true)
      #expect(try await etcd.revision() == before, "a refused change wrote something")
      // setValues is bound by the same limits.
      let many = await #expect(throws: FleetError.self) {
        try await cluster.setValues((0..<128).map { ("m\($0)", "1") }, suite: "app")
      }
      #expect(many?.code == .transactionTooLarge)
      #expect(try await cluster.storedValues(suite: "app").count == 129)
    }

    @Test("the records keep the newest: by count, and by age; a key where they are that is none is named")
    func recordBound() async throws {
      let (etcd, base) = try await startCluster()
      var cluster = base
      cluster.recording = EtcdCluster.Recording(command: "bound", limit: 3)
      var writes: [EtcdCluster.Write] = []
      for value in 1...5 { writes.append(try await cluster.setValue(jsonText: "\(value)", forKey: "n", suite: "app")) }
      func recordKeys() async throws -> [String] {
        try await etcd.etcdctl(["get", "/splint.history/app/", "--prefix", "--keys-only"])
          .split(separator: "\n").map { String($0.dropFirst("/splint.history/app/".count)) }
      }
      #expect(try await recordKeys() == (3...5).map { String(format: "%020d", $0) })
      let history = try await cluster.history(suite: "app")
      #expect(history.recordsBegin == writes[2].revision)
      #expect(history.changes.map { $0.author?.command } == ["bound", "bound", "bound", nil, nil])

      // A record older than the age bound goes when the next change is recorded (an old one, written here).
      let old = #"{"changes":[],"command":"old","host":"h","time":"2001-01-01T00:00:00.000Z","user":"u","version":1}"#
      try await etcd.put("/splint.history/app/00000000000000000002", old)
      var aged = base
      aged.recording = EtcdCluster.Recording(command: "aged", limit: nil, maximumAge: .seconds(3600))
      try await aged.setValue(jsonText: "6", forKey: "n", suite: "app")
      #expect(try await recordKeys() == (3...6).map { String(format: "%020d", $0) })
      // A writer with a larger bound finds nothing past it to remove.
      var larger = base
      larger.recording = EtcdCluster.Recording(command: "larger", limit: 5)
      try await larger.setValue(jsonText: "6", forKey: "n", suite: "app")
      #expect(try await recordKeys() == (3...7).map { String(format: "%020d", $0) })
      // Every record read is older than the age bound: each goes.
      try await etcd.put("/splint.history/aged/00000000000000000001", old)
      try await aged.setValue(jsonText: "1", forKey: "n", suite: "aged")
      let agedKeys = try await etcd.etcdctl(["get", "/splint.history/aged/", "--prefix", "--keys-only"])
      #expect(agedKeys.split(separator: "\n") == ["/splint.history/aged/00000000000000000002"])
      // Not recorded at all: no record, and the history says so.
      var unrecorded = base
      unrecorded.recording = nil
      let plain = try await unrecorded.setValue(jsonText: "7", forKey: "n", suite: "app")
      #expect(try await recordKeys().count == 5)
      #expect(try await cluster.history(suite: "app", limit: 1).changes.first?.revision == plain.revision)
      #expect(try await cluster.history(suite: "app", limit: 1).changes.first?.author == nil)

      // A key where the records are kept that is not one is named, and nothing is written.
      try await etcd.put("/splint.history/app/9", "x")
      let error = await #expect(throws: FleetError.self) {
        try await cluster.setValue(jsonText: "8", forKey: "n", suite: "app")
      }
      #expect(error?.description.contains(#""/splint.history/app/9" is not a record"#) == true)
      // A prefix that does not end with "/" has no place for records outside every suite.
      var bare = base
      bare.prefix = "/splint"
      #expect(
        await #expect(throws: FleetError.self) { try await bare.setValue(jsonText: "1", forKey: "n", suite: "app") }?
          .code == .invalidConfiguration)
    }
    @Test("a state before the compaction that the records cannot rebuild is refused, saying why")
    func revisionNotKept() async throws {
      let (etcd, base) = try await startCluster()
      // Records dropped past the bound: the oldest kept is younger than the point.
      var bounded = base
      bounded.recording = EtcdCluster.Recording(command: "bound", limit: 2)
      let dropped = try await bounded.setValue(jsonText: "1", forKey: "n", suite: "a").revision
      for value in 2...4 { try await bounded.setValue(jsonText: "\(value)", forKey: "n", suite: "a") }
      // A key changed around splintctl between two recorded changes: the records do not follow from each other.
      let between = try await base.setValue(jsonText: "1", forKey: "m", suite: "b").revision
      try await base.setValue(jsonText: "2", forKey: "m", suite: "b")
      try await etcd.put("/splint/b/m", "3")
      try await base.setValue(jsonText: "4", forKey: "m", suite: "b")
      // A key whose last change has no record.
      let unrecorded = try await base.setValue(jsonText: "1", forKey: "k", suite: "c").revision
      try await etcd.put("/splint/c/k", "2")
      let around = try await etcd.revision()
      let compacted = try await etcd.compact()

      let reasons = [
        ("a", dropped, "the records kept begin at revision"),
        ("b", between, "m was changed around splintctl after revision"),
        ("c", unrecorded, "k was changed at revision \(around) with no record"),
      ]
      for (suite, revision, reason) in reasons {
        let error = await #expect(throws: FleetError.self) { try await base.diff(suite: suite, to: revision) }
        #expect(error?.code == .revisionNotKept, "\(String(describing: error))")
        #expect(error?.summary.contains("etcd's history before revision \(compacted) is compacted") == true)
        #expect(error?.summary.contains(reason) == true, "\(String(describing: error))")
      }
      #expect(try await etcd.revision() == compacted, "a refused diff wrote something")
    }
    @Test("writers racing on one key: each write lands, read again when another came between, and is recorded once")
    func racingWriters() async throws {
      let (etcd, alice, bob) = try await startAuthenticatedCluster()
      let writes = try await withThrowingTaskGroup(of: EtcdCluster.Write.self) { group in
        for index in 0..<16 {
          let writer = index.isMultiple(of: 2) ? alice : bob
          group.addTask { try await writer.setValue(jsonText: "\(index)", forKey: "n", suite: "app") }
        }
        return try await group.reduce(into: [EtcdCluster.Write]()) { $0.append($1) }
      }
      let history = try await alice.history(suite: "app")
      #expect(history.changes.map(\.revision) == writes.map(\.revision).sorted(by: >))
      #expect(history.changes.allSatisfy { $0.author != nil })
      // Each record's old value is what the one before wrote: none was recorded against a value read before it.
      let oldest = Array(history.changes.reversed())
      for (before, after) in zip(oldest, oldest.dropFirst()) {
        #expect(after.keys.first?.oldValue == before.keys.first?.newValue, "\(before) then \(after)")
      }
      #expect(Set(oldest.compactMap { $0.keys.first?.newValue }) == Set((0..<16).map { "\($0)" }))
      #expect(try await etcd.revision() == writes.map(\.revision).max(), "a write went unreported")
    }
  }
#endif
