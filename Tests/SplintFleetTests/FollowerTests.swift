#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import Synchronization
  import TestSupport
  import Testing

  /// A follower against a real etcd (Debian's, started on loopback ports of the test's own): what reaches the
  /// machine's copy, what is left out, and how it resumes.
  @Suite(.startsServers) struct FollowerTests {
    @Test("a put reaches the copy; a value that is not JSON is left out and told, the other keys kept")
    func follows() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.put("/splint/app/mode", "fast")
      try await etcd.put("/splint/other/interval", "1")
      let machine = Machine(cluster: cluster)
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      let store = machine.store()
      #expect(store.value(forKey: "mode") == nil)
      let status = try #require(store.fleetStatus.first)
      #expect(status.skippedKeys["mode"]?.hasPrefix("not JSON") == true, "\(status.skippedKeys)")
      #expect(status.keys == ["interval"])
      #expect(machine.events.contains { $0.contains("mode left out") })

      // A Setting of a program on the machine hears each change.
      let interval = Setting("interval", default: 0, store: store)
      let values = interval.updates()
      try await etcd.put("/splint/app/interval", "90")
      let seen = await collect(values) { $0 == 90 }
      #expect(seen.last == 90 && seen.allSatisfy { $0 == 60 || $0 == 90 }, "\(seen)")
      // The bad value fixed: it is taken; deleted: it is gone.
      try await etcd.put("/splint/app/mode", #""fast""#)
      #expect(await machine.waitFor("mode", "fast"))
      #expect(machine.store().fleetStatus.first?.skippedKeys.isEmpty == true)
      try await etcd.etcdctl(["del", "/splint/app/mode"])
      #expect(await machine.waitFor("mode", nil))
      #expect(await machine.stop() == nil)
      #expect(machine.store().fleetStatus.first?.state == .stopped)
      #expect(machine.store().fleetStatus.first?.isFollowed == false)
    }

    @Test("a value refused keeps the last good one, past a restart and a compaction; a good value or deletion applies")
    func lastGood() async throws {
      let (etcd, cluster) = try await startCluster()
      let machine = Machine(cluster: cluster, options: FleetFollower.Options(maximumValueSize: 100))
      try await etcd.put("/splint/app/mode", #""fast""#)
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.put("/splint/app/$enforced", #"["mode"]"#)
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      func status() -> FleetCopyStatus? { machine.store().fleetStatus.first }
      func refused() -> [String] { status()?.rejectedKeys.keys.sorted() ?? [] }
      let program = machine.store()
      // What a program on the machine hears of mode, from now on.
      let heard = Mutex<[String]>([])
      let modes = Setting("mode", default: "none", store: program).updates(initial: false)
      let listening = Task { for await mode in modes { heard.withLock { $0.append(mode) } } }
      defer { listening.cancel() }

      // Not JSON, too large, and an $enforced that lists no key: each keeps what the machine had.
      try await etcd.put("/splint/app/mode", "fast")
      try await etcd.put("/splint/app/interval", String(repeating: "1", count: 200))
      try await etcd.put("/splint/app/$enforced", "mode")
      #expect(await eventually { refused() == ["$enforced", "interval", "mode"] }, "\(machine.events)")
      let reasons = try #require(status()?.rejectedKeys)
      #expect(reasons["mode"]?.hasPrefix("not JSON (") == true, "\(reasons)")
      #expect(reasons["interval"]?.hasPrefix("200 bytes, more than the 100") == true, "\(reasons)")
      #expect(reasons["$enforced"]?.contains("not an array of keys") == true, "\(reasons)")
      #expect(status()?.skippedKeys.isEmpty == true && status()?.enforcedKeys == ["mode"], "kept, not left out")
      // A program running, and one started afterwards, read the last good values; the running one heard no change.
      #expect(program.value(forKey: "mode") == "fast" && machine.store().value(forKey: "interval") == 60)
      #expect(machine.events.contains { $0.hasPrefix("app: mode refused, its last good value kept: ") })

      // Across a restart (the copy's list of refused keys is taken up again) and a whole read after a compaction
      // past the follower's revision (the values it refuses keep those it held).
      await machine.stop()
      try machine.start()
      try await etcd.put("/splint/app/other", "1")
      #expect(await machine.waitFor("other", 1))
      #expect(refused() == ["$enforced", "interval", "mode"])
      await machine.stop()
      try await etcd.put("/splint/app/other", "2")
      try await etcd.compact()
      try machine.start()
      #expect(await machine.waitFor("other", 2))
      #expect(machine.events.contains { $0.contains("compacted its history") }, "\(machine.events)")
      #expect(refused() == ["$enforced", "interval", "mode"], "\(machine.events)")
      #expect(machine.store().value(forKey: "mode") == "fast" && machine.store().value(forKey: "interval") == 60)
      #expect(status()?.enforcedKeys == ["mode"])

      // The next good value applies, and a deletion deletes.
      try await etcd.put("/splint/app/mode", #""slow""#)
      #expect(await machine.waitFor("mode", "slow"))
      #expect(await eventually { !heard.withLock { $0 }.isEmpty })
      #expect(heard.withLock { $0 } == ["slow"], "a refused value is no change: \(heard.withLock { $0 })")
      try await etcd.etcdctl(["del", "/splint/app/interval"])
      #expect(await machine.waitFor("interval", nil))
      try await etcd.put("/splint/app/$enforced", "[]")
      #expect(await eventually { status()?.enforcedKeys == [] })
      #expect(refused().isEmpty && status()?.skippedKeys.isEmpty == true, "\(String(describing: status()))")
      await machine.stop()
    }

    @Test("a transaction that writes several keys reaches a copy whole, in one write")
    func transactions() async throws {
      let (etcd, cluster) = try await startCluster()
      let machine = Machine(cluster: cluster)
      try machine.start()
      #expect(await eventually { machine.store().fleetStatus.first?.state == .following })
      let store = machine.store()
      let changes = store.changes()
      // No comparisons, three puts on success, none on failure: etcdctl txn reads them as blocks ended by a blank line.
      let transaction = "\nput /splint/app/a \"1\"\nput /splint/app/b \"2\"\nput /splint/app/c \"3\"\n\n\n"
      let output = try await Programs.run(
        ["etcdctl", "--endpoints", etcd.endpoints[0], "txn"], input: Data(transaction.utf8),
        environment: ["ETCDCTL_API": "3", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"])
      #expect(output.stdout.hasPrefix("SUCCESS"), "\(output)")
      let seen = await collect(changes) { _ in true }
      #expect(seen == [["a", "b", "c"]], "one change, with every key of the transaction")
      #expect(store.value(forKey: "c") == 3)
      // The same through the API, which refuses the whole transaction for one value that is not JSON.
      let again = store.changes()
      try await cluster.setValues([("a", "10"), ("b", #""twenty""#)], suite: "app")
      #expect(await collect(again) { _ in true } == [["a", "b"]])
      #expect(store.value(forKey: "b") == "twenty")
      await #expect(throws: FleetError.self) {
        try await cluster.setValues([("a", "11"), ("b", "oops")], suite: "app")
      }
      await #expect(throws: FleetError.self) { try await cluster.setValues([("$a", "1")], suite: "app") }
      try await cluster.setValues([], suite: "app")
      #expect(try await cluster.storedValue(forKey: "a", suite: "app") == "10")
    }

    @Test("a follower resumes at the revision its copy holds; after a compaction past it, it reads everything again")
    func resumesAndCompacts() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/keep", "1")
      try await etcd.put("/splint/app/gone", "1")
      let machine = Machine(cluster: cluster)
      try machine.start()
      #expect(await machine.waitFor("gone", 1))
      await machine.stop()
      // While no follower runs: a change, then a change and a deletion compacted away.
      try await etcd.put("/splint/app/keep", "2")
      try machine.start()
      #expect(await machine.waitFor("keep", 2))
      #expect(machine.events.filter { $0.hasPrefix("reading every key:") }.count == 1)
      await machine.stop()
      try await etcd.put("/splint/app/keep", "3")
      try await etcd.etcdctl(["del", "/splint/app/gone"])
      try await etcd.put("/splint/app/new", "1")
      try await etcd.compact()
      try machine.start()
      #expect(await machine.waitFor("keep", 3))
      #expect(await machine.waitFor("gone", nil))
      #expect(await machine.waitFor("new", 1))
      #expect(machine.events.contains { $0.contains("compacted its history") })
    }

    @Test("a quiet suite's copy keeps up with the cluster (progress notifications): after a compaction, it resumes")
    func progress() async throws {
      let etcd = try await LocalEtcd.start(size: 1, flags: ["--experimental-watch-progress-notify-interval=200ms"])
      let cluster = EtcdCluster(endpoints: etcd.endpoints, requestTimeout: .seconds(3))
      try await etcd.put("/splint/app/a", "1")
      // Without reports, which would move the cluster's revision on past the copy's when the follower stops.
      let machine = Machine(cluster: cluster, options: FleetFollower.Options(reports: false))
      try machine.start()
      #expect(await machine.waitFor("a", 1))
      // Other keys change: the cluster's revision moves on, the suite's keys do not.
      for value in 1...5 { try await etcd.put("/splint/other/x", String(value)) }
      let revision = try await etcd.revision()
      try await Task.sleep(for: .seconds(1.5))  // several progress notifications
      await machine.stop()
      #expect(machine.store().fleetStatus.first?.revision == revision, "the copy is as of the cluster's revision")
      // History compacted up to that revision: a copy as of an older one would have to be read whole again.
      try await etcd.compact()
      try machine.start()
      try await etcd.put("/splint/app/a", "2")
      #expect(await machine.waitFor("a", 2))
      #expect(machine.events.filter { $0.hasPrefix("reading every key:") }.count == 1, "\(machine.events)")
      await machine.stop()
      await etcd.stopAll()
    }

    @Test("a copy that cannot be written is told, and written once it can be")
    func copyFails() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/a", "1")
      // Not reporting: a report's state changing writes the copies too, which would add failures to count.
      let machine = Machine(cluster: cluster, options: FleetFollower.Options(syncDelay: .seconds(2), reports: false))
      try machine.start()
      #expect(await machine.waitFor("a", 1))
      let failed = { machine.events.filter { $0.hasPrefix("app: The machine's copy could not be written") }.count }
      // A directory where the copy was: the follower's next write cannot replace it.
      try FileManager.default.removeItem(at: machine.copy())
      try FileManager.default.createDirectory(at: machine.copy(), withIntermediateDirectories: false)
      try await etcd.put("/splint/app/a", "2")
      #expect(await eventually { failed() == 1 }, "\(machine.events)")
      try FileManager.default.removeItem(at: machine.copy())
      #expect(await machine.waitFor("a", 2), "written again at the next sync")
      // Written, then taken away before it was made durable: the sync fails, and says so.
      try await etcd.put("/splint/app/a", "3")
      #expect(await machine.waitFor("a", 3))
      try FileManager.default.removeItem(at: machine.copy())
      try FileManager.default.createDirectory(at: machine.copy(), withIntermediateDirectories: false)
      #expect(await eventually { failed() == 2 }, "\(machine.events)")
      try FileManager.default.removeItem(at: machine.copy())
      await machine.stop()
      // A directory of copies that cannot be made: the follower ends at once, saying so.
      let blocked = machine.scratch.url("a-file")
      try Data().write(to: blocked)
      let nowhere = try FleetFollower(
        suites: ["app"], cluster: cluster, directory: blocked.appendingPathComponent("fleet"))
      do {
        try await nowhere.run()
        Issue.record("a follower ran without a copy")
      } catch {
        #expect(error.code == .copyFailed, "\(error)")
      }
    }

    @Test("a restored or rebuilt cluster (another cluster ID, revisions starting again) replaces the copy")
    func rebuiltCluster() async throws {
      let (etcd, cluster) = try await startCluster()
      for value in 1...20 { try await etcd.put("/splint/app/counter", String(value)) }
      try await etcd.put("/splint/app/old", "1")
      try await etcd.put("/splint/app/mode", #""fast""#)
      let machine = Machine(cluster: cluster)
      try machine.start()
      #expect(await machine.waitFor("counter", 20))
      #expect(await machine.waitFor("mode", "fast"))
      let before = try #require(machine.store().fleetStatus.first)
      try await etcd.rebuild()
      // The new cluster's value refused keeps nothing of the old cluster's: the key is left out.
      try await etcd.put("/splint/app/mode", "fast")
      try await etcd.put("/splint/app/counter", "1")
      #expect(await machine.waitFor("counter", 1, within: 60))
      #expect(await machine.waitFor("old", nil))
      #expect(await machine.waitFor("mode", nil))
      #expect(machine.store().fleetStatus.first?.skippedKeys["mode"]?.hasPrefix("not JSON") == true)
      let after = try #require(machine.store().fleetStatus.first)
      #expect(after.cluster != before.cluster, "\(machine.events)")
      #expect(after.revision < before.revision)
    }

    @Test("one watch follows several suites, each into its own copy")
    func severalSuites() async throws {
      let (etcd, cluster) = try await startCluster()
      let machine = Machine(following: ["alpha", "beta"], cluster: cluster)
      try machine.start()
      try await etcd.put("/splint/alpha/x", "1")
      try await etcd.put("/splint/alphabet/x", "9")
      try await etcd.put("/splint/beta/x", "2")
      #expect(await machine.waitFor("x", 1, suite: "alpha"))
      #expect(await machine.waitFor("x", 2, suite: "beta"))
      try await etcd.put("/splint/alpha/x", "3")
      #expect(await machine.waitFor("x", 3, suite: "alpha"))
      #expect(machine.store("beta").value(forKey: "x") == 2)
      #expect(!FileManager.default.fileExists(atPath: machine.copy("alphabet").path))
    }

    @Test("two followers of one copy do not fight: the second waits, and takes over when the first ends")
    func twoFollowers() async throws {
      let (etcd, cluster) = try await startCluster()
      let machine = Machine(cluster: cluster)
      try machine.start()
      try await etcd.put("/splint/app/a", "1")
      #expect(await machine.waitFor("a", 1))
      let told = Mutex<[String]>([])
      let second = try FleetFollower(suites: ["app"], cluster: cluster, directory: machine.directory) { event in
        told.withLock { $0.append(event.description) }
      }
      let waiting = Task { try await second.run() }
      #expect(
        await eventually { told.withLock { $0 } == ["another follower keeps the copies of app: waiting to take over"] })
      // A third, stopped while it waits, ends quietly, and leaves the copy to the first.
      let third = try FleetFollower(suites: ["app"], cluster: cluster, directory: machine.directory)
      let given = Task { try await third.run() }
      try await Task.sleep(for: .milliseconds(300))
      given.cancel()
      try await given.value
      let holder = try #require(machine.store().fleetStatus.first?.follower)
      #expect(holder.contains("process \(getpid())"))
      await machine.stop()
      try await etcd.put("/splint/app/a", "2")
      #expect(await machine.waitFor("a", 2))
      #expect(machine.store().fleetStatus.first?.state == .following)
      waiting.cancel()
      try await waiting.value
    }

    @Test(
      "a suite of 20 values of 1.2 MB and 500 small keys: read in bounded parts, the small keys copied, the large named"
    )
    func largeSuite() async throws {
      let (etcd, cluster) = try await startCluster()
      let large = "\"" + String(repeating: "x", count: 1_200_000) + "\""
      // Stored between the small keys, so that no part of the read is free of them; put without a record of the
      // change (which would hold the value a second time, past etcd's 1.5 MiB request), as etcdctl puts them.
      var unrecorded = cluster
      unrecorded.recording = nil
      for index in 0..<20 {
        try await unrecorded.setValue(jsonText: large, forKey: "k\(index * 25)-large", suite: "app")
      }
      for batch in 0..<5 {
        try await cluster.setValues((0..<100).map { ("k\(batch * 100 + $0)", String($0)) }, suite: "app")
      }
      let machine = Machine(cluster: cluster)
      try machine.start()
      #expect(
        await eventually(within: 60) { machine.store().fleetStatus.first?.keys.count == 500 }, "\(machine.events)")
      let status = try #require(machine.store().fleetStatus.first)
      #expect(status.skippedKeys.count == 20 && status.moreSkippedKeys == 0)
      #expect(
        status.skippedKeys.allSatisfy { $0.key.hasSuffix("-large") && $0.value.hasPrefix("1200002 bytes, more than") },
        "\(status.skippedKeys)")
      #expect(machine.store().value(forKey: "k499") == 99)
      #expect(
        !machine.events.contains { $0.hasPrefix("lost") }, "read whole, with no answer too large: \(machine.events)")
      // A change after it: the watch goes on from the read's revision.
      try await etcd.put("/splint/app/k0", "7")
      #expect(await machine.waitFor("k0", 7))
    }

    @Test("keys that cannot be settings are left out: reserved, too large, past the copy's size; keys not UTF-8")
    func limits() async throws {
      let (etcd, cluster) = try await startCluster()
      let options = FleetFollower.Options(maximumValueSize: 100, maximumCopySize: 300)
      let machine = Machine(cluster: cluster, options: options)
      try await etcd.put("/splint/app/$other", "1")
      try await etcd.put("/splint/app/big", "\"" + String(repeating: "x", count: 200) + "\"")
      for index in 0..<8 {
        try await etcd.put("/splint/app/k\(index)", "\"" + String(repeating: "y", count: 50) + "\"")
      }
      // A key etcd holds as bytes that are not UTF-8 (etcdctl passes its argument's bytes as they are).
      let notText = try await Programs.run(
        bytes: [Array("etcdctl".utf8), Array("--endpoints=\(etcd.endpoints[0])".utf8), Array("put".utf8)]
          + [Array("/splint/app/bad-".utf8) + [0xFF], Array("1".utf8)])
      #expect(notText.status == 0, "\(notText)")
      try machine.start()
      // The copy's 300 bytes hold what it lists as left out too ($other, bad-, big: about 170 bytes, first in etcd's
      // order), so two of the small keys fit, and the six after them are left out.
      #expect(await eventually { machine.store().fleetStatus.first?.keys == ["k0", "k1"] })
      let skipped = try #require(machine.store().fleetStatus.first?.skippedKeys)
      #expect(skipped["$other"]?.contains("reserved") == true)
      #expect(skipped["big"]?.contains("more than the 100") == true)
      #expect(
        Set(skipped.filter { $0.value.contains("more than its 300") }.keys) == Set((2..<8).map { "k\($0)" }),
        "\(skipped)")
      #expect(skipped["bad-\u{FFFD}"]?.contains("not UTF-8") == true, "\(skipped)")
      // What the fleet enforces must be an array of keys: anything else is refused, the keys enforced before kept,
      // and told; never good on the machine, it is left out.
      try await etcd.put("/splint/app/$enforced", #""k0""#)
      #expect(await eventually { machine.store().fleetStatus.first?.skippedKeys["$enforced"] != nil })
      #expect(machine.store().fleetStatus.first?.enforcedKeys == [])
      try await etcd.put("/splint/app/$enforced", #"["k0"]"#)
      #expect(await eventually { machine.store().fleetStatus.first?.enforcedKeys == ["k0"] })
      try await etcd.put("/splint/app/$enforced", #""k0""#)
      #expect(await eventually { machine.store().fleetStatus.first?.rejectedKeys["$enforced"] != nil })
      #expect(machine.store().fleetStatus.first?.enforcedKeys == ["k0"])
      let told = try #require(machine.store().fleetStatus.first?.rejectedKeys["$enforced"])
      #expect(told.contains("not an array of keys"), "\(told)")
      // An operator's command does not write over it either.
      do {
        try await cluster.setEnforced(true, forKey: "k1", suite: "app")
        Issue.record("a $enforced that is not an array was written over")
      } catch {
        #expect(error.code == .notJSON && error.description.contains("not an array of keys"), "\(error)")
      }
    }

    @Test(
      "entries of $enforced that are not keys are left out and told, the keys it lists enforced; enforce refuses them")
    func enforcedEntries() async throws {
      let (etcd, cluster) = try await startCluster()
      let machine = Machine(cluster: cluster)
      try await etcd.put("/splint/app/k0", "1")
      try await etcd.put("/splint/app/$enforced", #"["k0", 5, "", "$fleet", "k0"]"#)
      try machine.start()
      #expect(await eventually { machine.store().fleetStatus.first?.enforcedKeys == ["k0"] })
      let told = try #require(machine.store().fleetStatus.first?.skippedKeys["$enforced"])
      #expect(told.contains(#"its entries 5, "", "$fleet" are not the key of a setting"#), "\(told)")
      #expect(machine.events.contains { $0.contains("$enforced") }, "\(machine.events)")
      // An operator's command does not write over them: it says what they are.
      do {
        try await cluster.setEnforced(true, forKey: "k1", suite: "app")
        Issue.record("entries that are not keys were written over")
      } catch {
        #expect(error.code == .notJSON && error.description.contains(#"5, "", "$fleet""#), "\(error)")
      }
      // Fixed: the keys are enforced, and nothing is left out any more.
      try await etcd.put("/splint/app/$enforced", #"["k0", "k1"]"#)
      #expect(await eventually { machine.store().fleetStatus.first?.enforcedKeys == ["k0", "k1"] })
      #expect(machine.store().fleetStatus.first?.skippedKeys["$enforced"] == nil)
      await machine.stop()
    }
  }
#endif
