#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// A follower against a 3-member etcd cluster whose members die, stop and come back, as members of a real cluster
  /// do: changes go on flowing, nothing goes backwards, and a lost cluster is told, within the bounds the follower
  /// promises (10 s to tell a loss, 10 s for changes to flow again).
  @Suite(.serialized, .startsServers) struct ClusterTests {
    /// Sets `key` to 1, 2, … `count` through the cluster's API, each a put of its own, going on past a member that
    /// fails (the client moves to the next).
    func count(_ key: String, to count: Int, in cluster: EtcdCluster, from start: Int = 1) async throws {
      var value = start
      while value <= count {
        do throws(FleetError) {
          try await cluster.setValue(jsonText: String(value), forKey: key, suite: "app")
          value += 1
        } catch {
          guard error.isTransient else { throw error }
          try await Task.sleep(for: .milliseconds(50))
        }
      }
    }

    @Test("the leader killed, then another member, while changes flow: two machines end on the final value, in order")
    func membersDie() async throws {
      let (etcd, cluster) = try await startCluster(size: 3)
      let machines = [Machine(cluster: cluster), Machine(cluster: cluster)]
      for machine in machines { try machine.start() }
      let settings = machines.map { Setting("counter", default: 0, store: $0.store()) }
      let watching = settings.map { setting in Task { await collect(setting.updates(), within: 120) { $0 == 300 } } }
      let writing = Task { try await count("counter", to: 300, in: cluster) }
      // The leader dies while values flow; once another leads, the first comes back and the new leader dies too.
      try await Task.sleep(for: .milliseconds(300))
      let first = try #require(await etcd.leader())
      await etcd.kill(first)
      try await etcd.waitForLeader()
      try await Task.sleep(for: .milliseconds(300))
      try await etcd.start(first)
      try await etcd.waitForLeader()
      let second = try #require(await etcd.leader())
      await etcd.kill(second)
      try await etcd.waitForLeader()
      try await writing.value
      for (index, watch) in watching.enumerated() {
        let seen = await watch.value
        #expect(seen.last == 300, "machine \(index) ended on \(seen.last ?? -1): \(machines[index].events)")
        #expect(seen == seen.sorted(), "machine \(index) saw a value go backwards: \(seen)")
        #expect(Set(seen).count == seen.count, "machine \(index) saw a value twice: \(seen)")
      }
    }

    @Test("a stopped member (SIGSTOP), whose kernel still accepts connections, is left within 10 seconds")
    func memberStops() async throws {
      let (etcd, cluster) = try await startCluster(size: 3)
      let machine = Machine(cluster: cluster)
      try machine.start()
      try await etcd.put("/splint/app/mode", #""before""#)
      #expect(await machine.waitFor("mode", "before"))
      // The member the follower watches: the one its last "following" line names. The copy can hold the value before
      // that line is told (a first read writes it, and the line follows once the watch has started), so wait for it.
      let told = await eventually { machine.events.contains { $0.hasPrefix("following") } }
      #expect(told, "the follower told no member it follows: \(machine.events)")
      let following = machine.events.filter { $0.hasPrefix("following") }.last ?? ""
      let watched = try #require(etcd.members.first { following.contains($0.endpoint) })
      etcd.pause(watched)
      let started = ContinuousClock.now
      let others = etcd.members.filter { $0.name != watched.name }.map(\.endpoint)
      // Written to the other two, as an operator would: again until they have elected a leader, if they must.
      var written = false
      while !written, ContinuousClock.now - started < .seconds(20) {
        written = (try? await etcd.etcdctl(["put", "/splint/app/mode", #""after""#], endpoints: others)) != nil
      }
      #expect(written, "the two members left took no write for 20 s")
      #expect(await machine.waitFor("mode", "after", within: 30))
      let took = ContinuousClock.now - started
      #expect(took < .seconds(10), "the change arrived after \(took): \(machine.events)")
      #expect(machine.store().fleetStatus.first?.state == .following)
      etcd.resume(watched)
    }

    @Test("the whole cluster stopped: the copy keeps its values and tells the loss; back, changes flow again")
    func clusterStops() async throws {
      let (etcd, cluster) = try await startCluster(size: 3)
      let machine = Machine(cluster: cluster)
      try machine.start()
      try await etcd.put("/splint/app/interval", "60")
      #expect(await machine.waitFor("interval", 60))
      let store = machine.store()
      let errors = store.errors()
      let stopped = ContinuousClock.now
      await etcd.stopAll()
      let told = await collect(errors, within: 30) { $0.code == .fleetUnreachable }
      #expect(told.last?.code == .fleetUnreachable, "\(told)")
      #expect(ContinuousClock.now - stopped < .seconds(10), "the loss was told after \(ContinuousClock.now - stopped)")
      withExtendedLifetime(store) {}

      // Every process restarts meanwhile (a reboot): the values are served, and the staleness told.
      await machine.stop()
      try machine.start()
      let restarted = machine.store()
      #expect(restarted.value(forKey: "interval") == 60)
      let stale = await collect(restarted.errors(), within: 30) { $0.code == .fleetUnreachable }
      #expect(stale.last?.code == .fleetUnreachable, "\(stale)")
      withExtendedLifetime(restarted) {}

      // The cluster comes back: without restarting anything, changes flow again within 10 seconds.
      try await etcd.restartAll()
      try await etcd.put("/splint/app/interval", "90")
      let back = ContinuousClock.now
      #expect(await machine.waitFor("interval", 90, within: 30))
      #expect(ContinuousClock.now - back < .seconds(10), "changes flowed again after \(ContinuousClock.now - back)")
      #expect(await eventually { machine.store().fleetStatus.first?.state == .following })
    }

    @Test(
      "every member stopped (SIGTERM, then SIGKILL) and started again, 20 times: the follower takes each next change")
    func wholeClusterRestarted() async throws {
      let (etcd, cluster) = try await startCluster(size: 3)
      let machine = Machine(
        cluster: cluster,
        options: FleetFollower.Options(
          checkInterval: .milliseconds(500), maximumReconnectDelay: .milliseconds(300), syncDelay: .milliseconds(100)))
      try machine.start()
      try await etcd.put("/splint/app/round", "0")
      #expect(await machine.waitFor("round", 0))
      for round in 1...20 {
        // The members go one after another, as a rolling restart or a shutdown does; the last has no quorum left.
        for member in etcd.members { await etcd.terminate(member, grace: .milliseconds(500)) }
        #expect(await machine.ending(within: 0.01) == nil, "the follower ended in round \(round)")
        try await etcd.restartAll()
        try await count("round", to: round, in: cluster, from: round)
        #expect(await machine.waitFor("round", .int(round), within: 30), "round \(round): \(machine.events.suffix(6))")
      }
      #expect(await machine.ending(within: 0.01) == nil)
      #expect(machine.events.filter { $0.hasPrefix("following") }.count >= 20)
      #expect(await machine.stop() == nil)
    }

    @Test("quorum lost (two of three members killed): the member left is not followed as if all were well")
    func quorumLost() async throws {
      let (etcd, cluster) = try await startCluster(size: 3)
      let machine = Machine(cluster: cluster)
      try machine.start()
      try await etcd.put("/splint/app/interval", "60")
      #expect(await machine.waitFor("interval", 60))
      let store = machine.store()
      let errors = store.errors()
      let lost = ContinuousClock.now
      for member in etcd.members.dropFirst() { await etcd.kill(member) }
      let told = await collect(errors, within: 30) { $0.code == .fleetUnreachable }
      #expect(told.last?.code == .fleetUnreachable, "\(machine.events)")
      #expect(ContinuousClock.now - lost < .seconds(10), "the loss was told after \(ContinuousClock.now - lost)")
      withExtendedLifetime(store) {}
      for member in etcd.members.dropFirst() { try await etcd.start(member) }
      try await etcd.waitForLeader()
      try await etcd.put("/splint/app/interval", "90")
      #expect(await machine.waitFor("interval", 90, within: 30))
    }
  }
#endif
