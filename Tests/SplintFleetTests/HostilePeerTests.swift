#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// A follower against a hostile or failing etcd member (TestSupport's `FakeEtcd`, written for these tests; the real
  /// etcd tests stay as they are): a stream that never ends, keys and values past every limit, revisions no cluster
  /// has, escape sequences, and every error etcd's gateway gives, each a left-out key or a typed error told once, and
  /// never a crash, a hang, a default, or an end.
  @Suite(.startsServers, .timeLimit(.minutes(3))) struct HostilePeerTests {
    let scratch = Scratch()

    /// The resident memory of process `pid`, in bytes (0 once it is gone).
    func residentBytes(of pid: Int32) -> Int {
      let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
      let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
      return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    @Test("an endless stream of changes, faster than copies are written: the follower's memory stays bounded")
    func endlessStream() async throws {
      let fake = try await FakeEtcd.start("endless")
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
      let follower = try await Programs.start(
        [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", fake.endpoint],
        environment: environment, seconds: nil)
      defer { follower.kill() }
      let store = SettingsStore(
        fileURL: scratch.url("home", "settings.json"), fleetCopies: [scratch.url("fleet", "app.json")])
      func revision() -> Int64 { store.fleetStatus.first?.revision ?? 0 }
      #expect(await eventually { revision() > 200 }, "\(fake.lines)")
      let (first, started) = (revision(), ContinuousClock.now)
      var peak = residentBytes(of: follower.pid)
      let warm = peak
      while ContinuousClock.now - started < .seconds(6) {
        peak = max(peak, residentBytes(of: follower.pid))
        try await Task.sleep(for: .milliseconds(50))
      }
      let taken = revision() - first
      let sent = fake.lines.last { $0.hasPrefix("sent ") }.flatMap { Int($0.dropFirst(5)) } ?? 0
      print(
        "endless stream: \(sent >> 20) MB sent, \(taken) changes taken in 6 s; follower RSS \(warm >> 20) MB warm, "
          + "\(peak >> 20) MB at most")
      #expect(taken > 100, "it went on taking changes")
      #expect(sent > (Int(taken) - 200) * 16384, "each change is 16 KiB: \(sent) bytes sent")
      #expect(peak < 128 << 20, "RSS at most \(peak >> 20) MB")
      #expect(peak - warm < 32 << 20, "RSS grew by \((peak - warm) >> 20) MB while the stream went on")
      follower.send(SIGTERM)
      #expect(await follower.wait().status == 0)
    }

    @Test("keys and values past every limit, control characters, a value no answer can hold: left out and named")
    func oversized() async throws {
      let longName = String(repeating: "n", count: 1 << 20)
      var keys = (0..<5).map { FakeEtcd.Key("/splint/app/\(longName)\($0)", "1") }
      keys += (0..<120).map { FakeEtcd.Key("/splint/app/\(String(repeating: "m", count: 2000))\($0)", "1") }
      keys += (0..<10).map { FakeEtcd.Key("/splint/app/s\($0)", "\($0)") }
      // Larger than any one answer may be, once in base64 (8 MiB).
      keys.append(
        FakeEtcd.Key(Array("/splint/app/big".utf8), [0x22] + [UInt8](repeating: 0x78, count: 6_500_000) + [0x22]))
      keys.append(FakeEtcd.Key("/splint/app/\u{1B}[31mred\u{1B}[0m", "\u{1B}]0;owned\u{07}"))
      let fake = try await FakeEtcd.start("store", keys: keys)
      let machine = Machine(cluster: EtcdCluster(endpoints: [fake.endpoint], requestTimeout: .seconds(10)))
      try machine.start()
      #expect(await eventually(within: 60) { machine.store().fleetStatus.first?.keys.count == 10 }, "\(machine.events)")
      let status = try #require(machine.store().fleetStatus.first)
      #expect(status.keys == (0..<10).map { "s\($0)" })
      #expect(machine.store().value(forKey: "s3") == 3)
      #expect(status.skippedKeys.count == 100 && status.moreSkippedKeys == 27, "\(status.skippedKeys.count)")
      #expect(status.skippedKeys.keys.allSatisfy { $0.count <= 101 }, "names cut")
      #expect(status.skippedKeys.keys.contains { $0.hasPrefix("mmm") && $0.hasSuffix("m119") }, "cut in the middle")
      #expect(
        status.skippedKeys["big"]?.contains("larger than one answer") == true, "\(status.skippedKeys["big"] ?? "")")
      let red = status.skippedKeys["\\u{1B}[31mred\\u{1B}[0m"]
      #expect(red?.hasPrefix("not JSON") == true, "\(status.skippedKeys.keys.filter { $0.hasPrefix("\\") })")
      // The copy holds the small keys and a bounded list of what is left out: not 20 MB of names.
      let size = try FileManager.default.attributesOfItem(atPath: machine.copy().path)[.size] as? Int ?? 0
      #expect(size < 64 << 10, "the copy holds \(size) bytes")
      let copy = try Data(contentsOf: machine.copy())
      #expect(!copy.contains(0x1B), "no escape character in the copy")
      // The log: each line short, escaped, and the keys past the first hundred counted, not told one by one.
      #expect(machine.events.allSatisfy { $0.count < 1000 && !$0.unicodeScalars.contains("\u{1B}") })
      #expect(
        machine.events.contains("27 more keys left out or refused (not told one by one)"), "\(machine.events.suffix(3))"
      )
      #expect(await machine.stop() == nil)
    }

    @Test("every error etcd's gateway gives, and lies, from a member in front of a real one: followed all along")
    func everyError() async throws {
      let (etcd, _) = try await startCluster()
      try await etcd.put("/splint/app/n", "0")
      let faults = FakeEtcd.gatewayFaults
      let fake = try await FakeEtcd.start("proxy", upstream: etcd.endpoints[0], faults: faults)
      let machine = Machine(
        cluster: EtcdCluster(endpoints: [fake.endpoint], requestTimeout: .seconds(2)),
        options: FleetFollower.Options(
          checkInterval: .milliseconds(300), maximumReconnectDelay: .milliseconds(200), syncDelay: .milliseconds(100)))
      try machine.start()
      // A change at a time, each taken before the next, until every fault was answered, and one more after.
      var value = 0
      while fake.lines.count(where: { $0.hasPrefix("fault ") }) < faults.count, value < 3 * faults.count {
        value += 1
        try await etcd.put("/splint/app/n", String(value))
        let taken = await machine.waitFor("n", .int(value))
        #expect(taken, "change \(value): \(fake.lines.suffix(3)) \(machine.events.suffix(8))")
        #expect(await machine.ending(within: 0.01) == nil, "the follower ended")
        if !taken { break }
      }
      #expect(fake.lines.count(where: { $0.hasPrefix("fault ") }) == faults.count, "\(fake.lines)")
      try await etcd.put("/splint/app/n", "-1")
      #expect(await machine.waitFor("n", -1))
      // A whole read may bring the value before the watch that follows it starts: the state is written then.
      #expect(await eventually { machine.store().fleetStatus.first?.state == .following })
      let status = try #require(machine.store().fleetStatus.first)
      #expect(status.keys == ["n"], "no lie taken: \(status.keys)")
      #expect(status.revision < 1000)
      let lost = machine.events.filter { $0.hasPrefix("lost: ") }
      #expect(!lost.isEmpty && lost.count <= faults.count, "\(lost.count) lines")
      // A loss is told once, and again only when its kind changes, or after the follower followed again.
      var lastLost: String?
      for event in machine.events {
        if event.hasPrefix("following ") { lastLost = nil }
        guard event.hasPrefix("lost: ") else { continue }
        #expect(event != lastLost, "told twice in one loss: \(event)")
        lastLost = event
      }
      #expect(
        machine.events.allSatisfy { !$0.unicodeScalars.contains("\u{1B}") && !$0.unicodeScalars.contains("\u{07}") })
      #expect(machine.events.contains { $0.contains("\\u{1B}[31mred") }, "escaped, not dropped")
      #expect(!(try Data(contentsOf: machine.copy())).contains(0x1B))
      #expect(await machine.stop() == nil)
    }

    @Test("a member that refuses the user, or its permission: the follower ends, exit status 78, saying why")
    func configurationToFix() async throws {
      let (etcd, _) = try await startCluster()
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
      for (fault, words) in [("grpc-7", "does not let this user"), ("grpc-16", "refused the user")] {
        let fake = try await FakeEtcd.start("proxy", upstream: etcd.endpoints[0], faults: [fault])
        let follow = try await Programs.run(
          [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", fake.endpoint],
          environment: environment, seconds: 60)
        #expect(follow.status == 78, "\(follow)")
        #expect(follow.stderr.contains(words) && !follow.stderr.contains("\u{1B}"), "\(follow.stderr)")
      }
    }
  }
#endif
