#if SplintFleet
  import Foundation
  import Synchronization
  import TestSupport
  import Testing
  @testable import SplintFleet
  import SplintSettings

  @Suite struct MachineNameTests {
    let scratch = Scratch()

    @Test("a machine's name is its host name and an ID derived from its machine ID as systemd derives it")
    func derivedAsSystemdDoes() async throws {
      // `systemd-id128 machine-id --app-specific=5960032c2be54a3d914a0c0e65093eb9` on a machine whose
      // /etc/machine-id is 3d1219c7c4c5404aaa1f6d2a48adfda4 (Debian 12's systemd 252) printed this.
      let file = scratch.url("machine-id")
      try Data("3d1219c7c4c5404aaa1f6d2a48adfda4\n".utf8).write(to: file)
      let identity = FleetMachine.appSpecificID(machineID: try FleetMachine.machineID(path: file.path))
      #expect(identity == "de230db1cd19462db347798a7176200d")
      #expect(FleetMachine.derivedName(hostName: "web-07.example.com", identity: identity) == "web-07-de230db1")
      // This machine's, where systemd can say it.
      if (try? FleetMachine.machineID()) != nil,
        let systemd = try? await Programs.run(
          ["systemd-id128", "machine-id", "--app-specific=5960032c2be54a3d914a0c0e65093eb9"]), systemd.status == 0
      {
        let current = try FleetMachine.current
        #expect(current.identity == systemd.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(current.name.hasSuffix("-" + current.identity.prefix(8)))
      }
    }

    @Test("a host name that is no name, and names given, are made or refused")
    func names() throws {
      #expect(FleetMachine.derivedName(hostName: "", identity: "0123456789") == "machine-01234567")
      #expect(FleetMachine.derivedName(hostName: "-_x y+z", identity: "abcdef0123") == "x-y-z-abcdef01")
      #expect(
        FleetMachine.derivedName(hostName: String(repeating: "h", count: 100), identity: "01234567")
          == String(repeating: "h", count: 63) + "-01234567")
      #expect(try FleetMachine(name: "web_07.eu-1").name == "web_07.eu-1")
      #expect("\(try FleetMachine(name: "web_07.eu-1"))" == "web_07.eu-1")
      for bad in ["", ".hidden", "-flag", "a/b", "a b", "é", String(repeating: "a", count: 129)] {
        #expect(throws: FleetError.self, "\(bad)") { try FleetMachine(name: bad) }
      }
    }

    @Test("a machine ID that is missing, empty, not hex or all zeros is refused, saying to name the machine")
    func machineIDs() throws {
      for (name, text) in [
        ("empty", ""), ("short", "3d1219c7\n"), ("not hex", String(repeating: "g", count: 32) + "\n"),
        ("zeros", String(repeating: "0", count: 32) + "\n"), ("long", String(repeating: "a", count: 40)),
        ("uninitialized", "uninitialized\n"),
      ] {
        let file = scratch.url(name)
        try Data(text.utf8).write(to: file)
        #expect(
          throws: FleetError.self, "\(name)",
          performing: { try FleetMachine.machineID(path: file.path) })
      }
      do {
        _ = try FleetMachine.machineID(path: scratch.url("absent").path)
        Issue.record("an absent machine ID was read")
      } catch {
        #expect(error.code == .invalidConfiguration && error.description.contains("--machine NAME"))
      }
    }
  }

  @Suite struct ReportFormatTests {
    @Test("a report is read back as written, and one whose time is not the package's form is no report")
    func readBack() throws {
      let report = FleetReport(
        machine: "web-07", suite: "app", cluster: "c1", revision: 42, keys: 3, since: Date(timeIntervalSince1970: 1),
        clockOffset: -0.5, skipped: [:], skippedMore: 0, rejected: ["mode": "not JSON (...)"], copyFailure: nil,
        pid: 7, version: "1.0.0", stopped: nil)
      let text = String(decoding: report.json, as: UTF8.self)
      #expect(FleetReport.decode(report.json) == report, "\(text)")
      #expect(report.hasProblem, "a value refused is a problem of the machine's")
      let since = try #require(text.range(of: "1970-01-01T00:00:01.000Z"), "\(text)")
      #expect(FleetReport.decode(Array(text.replacingCharacters(in: since, with: "yesterday").utf8)) == nil)
    }

    @Test("a report of an older follower, which refused nothing, has no rejected keys and no problem")
    func olderReport() throws {
      let older = #"""
        {"clockOffset":0,"keys":2,"machine":"web-07","pid":7,"revision":42,"since":"1970-01-01T00:00:01.000Z",\#
        "skipped":{},"skippedMore":0,"suite":"app","version":"0.9.0"}
        """#
      let report = try #require(FleetReport.decode(Array(older.utf8)))
      #expect(report.rejected.isEmpty && !report.hasProblem && report.cluster == nil && report.stopped == nil)
      #expect(report.revision == 42 && report.keys == 2 && report.version == "0.9.0")
    }
  }

  @Suite struct ClockTests {
    @Test("a member's Date header is read in HTTP's one form, and nothing else is taken for a time")
    func dateHeader() {
      #expect(
        FleetHTTPResponse.date(header: "Sun, 29 Nov 2026 03:55:07 GMT") == Date(timeIntervalSince1970: 1_795_924_507))
      #expect(FleetHTTPResponse.date(header: "Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
      #expect(
        FleetHTTPResponse.date(header: "Tue, 29 Feb 2028 23:59:60 GMT") == Date(timeIntervalSince1970: 1_835_481_600))
      for text in [
        "", "Sunday, 29-Nov-26 03:55:07 GMT", "Sun Nov 29 03:55:07 2026", "Sun, 29 Nov 2026 03:55:07 UTC",
        "Sun, 29 Foo 2026 03:55:07 GMT", "Sun, 32 Nov 2026 03:55:07 GMT", "Sun, 29 Nov 2026 25:55:07 GMT",
        "Sun, 9 Nov 2026 03:55:07 GMT", "Sun,  29 Nov 2026 03:55:07 GMT", "Sun, 29 Nov 2026 03:55 GMT",
        "Sun, 31 Nov 2026 03:55:07 GMT", "Sun, 29 Feb 2026 03:55:07 GMT", "Sun, 29 Nov 2026 03:5:007 GMT",
        "Sun, +9 Nov 2026 03:55:07 GMT",
      ] {
        #expect(FleetHTTPResponse.date(header: text) == nil, "\(text)")
      }
    }
  }

  @Suite(.startsServers) struct ReportTests {
    /// The reports the cluster holds of `suite`, by machine.
    func reports(_ etcd: LocalEtcd, suite: String = "app") async throws -> [String: FleetReport] {
      let output = try await etcd.etcdctl(["get", "--prefix", "/splint.machines/", "--print-value-only"])
      var reports: [String: FleetReport] = [:]
      for line in output.split(separator: "\n") {
        guard let report = FleetReport.decode(Array(line.utf8)), report.suite == suite else { continue }
        reports[report.machine] = report
      }
      return reports
    }

    /// Puts `value` at `key`: the revision of the put (the cluster's own may be later: followers' reports).
    func put(_ etcd: LocalEtcd, _ key: String, _ value: String) async throws -> Int64 {
      let output = try await etcd.etcdctl(["put", "-w", "json", key, "--", value])
      let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
      return ((json?["header"] as? [String: Any])?["revision"] as? NSNumber)?.int64Value ?? 0
    }

    /// Whether every report of `suite` says its copy holds `revision`, within 30 seconds.
    func allHold(_ revision: Int64, machines: Int, in etcd: LocalEtcd) async -> Bool {
      await eventually {
        let held = (try? await reports(etcd)) ?? [:]
        return held.count == machines && held.values.allSatisfy { $0.revision >= revision }
      }
    }

    /// The presences the cluster holds, by machine.
    func presences(_ etcd: LocalEtcd) async throws -> [String] {
      let output = try await etcd.etcdctl(["get", "--prefix", "/splint.machines/", "--keys-only"])
      return output.split(separator: "\n").filter { $0.hasSuffix("/alive") }.map {
        String($0.dropFirst("/splint.machines/".count).dropLast("/alive".count))
      }
    }

    @Test("each follower reports the revision its copy holds and what it left out, and gives its name up when stopped")
    func followersReport() async throws {
      let (etcd, cluster) = try await startCluster()
      var revision = try await put(etcd, "/splint/app/interval", "60")
      let options = FleetFollower.Options(presenceTimeToLive: .seconds(5))
      let first = Machine(cluster: cluster, machine: "first", options: options)
      let second = Machine(cluster: cluster, machine: "second", options: options)
      try first.start()
      try second.start()
      #expect(await first.waitFor("interval", 60))
      #expect(await second.waitFor("interval", 60))
      #expect(await allHold(revision, machines: 2, in: etcd), "\(first.events) \(second.events)")
      #expect(try await presences(etcd).sorted() == ["first", "second"])
      var held = try await reports(etcd)
      #expect(held["first"]?.cluster != nil && held["first"]?.hasProblem == false)
      #expect(held["second"]?.pid == getpid() && held["second"]?.version == SplintVersion.current)
      // The members run on this machine, by its clock: no offset but the Date header's second.
      #expect(abs(held["first"]?.clockOffset ?? 99) <= 1, "\(String(describing: held["first"]))")
      // Told once the copy records it, which may come after the first report is put.
      #expect(await eventually { first.events.contains("reporting to the cluster as the machine first") })

      // A value that is not JSON is left out, and each report says so.
      revision = try await put(etcd, "/splint/app/mode", "fast")
      #expect(await allHold(revision, machines: 2, in: etcd))
      held = try await reports(etcd)
      #expect(held["first"]?.skipped["mode"]?.contains("not JSON") == true, "\(held)")
      #expect(held["second"]?.hasProblem == true)
      // A good value, then a bad one: each machine keeps the good one, and its report says it refused the bad one.
      revision = try await put(etcd, "/splint/app/mode", #""fast""#)
      #expect(await allHold(revision, machines: 2, in: etcd))
      revision = try await put(etcd, "/splint/app/mode", "fast")
      #expect(await allHold(revision, machines: 2, in: etcd))
      held = try await reports(etcd)
      #expect(held["first"]?.rejected["mode"]?.hasPrefix("not JSON") == true, "\(held)")
      #expect(held["second"]?.skipped.isEmpty == true && held["second"]?.hasProblem == true, "\(held)")
      #expect(first.store().value(forKey: "mode") == "fast")
      do {
        _ = try await cluster.waitForRollout(suite: "app", revision: revision, timeout: .seconds(30))
        Issue.record("a wait for a value refused returned")
      } catch {
        #expect(
          error.code == .rolloutFailed && error.description.contains(" refused mode (not JSON")
            && error.description.contains("keeping the last good values"), "\(error)")
      }

      // A second follower claiming a name a live follower holds is refused, and follows all the same.
      let twin = Machine(cluster: cluster, machine: "first", options: options)
      try twin.start()
      #expect(await twin.waitFor("interval", 60))
      #expect(
        await eventually { twin.events.contains { $0.contains("reports as the machine first") } }, "\(twin.events)")
      await twin.stop()

      // Stopped, a follower says so in its reports and gives its name up.
      await second.stop()
      held = try await reports(etcd)
      #expect(held["second"]?.stopped != nil && held["first"]?.stopped == nil)
      #expect(try await presences(etcd) == ["first"])
      await first.stop()
      await etcd.stopAll()
    }

    @Test("a follower that may not report goes on following, and says why once")
    func withoutPermission() async throws {
      let etcd = try await LocalEtcd.start(size: 1)
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.enableAuthentication(user: "reader", password: "readpw", readOnly: "/splint/")
      var reader = EtcdCluster(endpoints: etcd.endpoints, requestTimeout: .seconds(3))
      reader.user = "reader"
      reader.password = try password("readpw", for: "reader")
      let machine = Machine(cluster: reader, machine: "reader")
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      #expect(await eventually { machine.events.contains { $0.hasPrefix("cannot report") } }, "\(machine.events)")
      try await etcd.put("/splint/app/interval", "61", user: "root:rootpw")
      #expect(await machine.waitFor("interval", 61))
      #expect(machine.events.filter { $0.hasPrefix("cannot report") }.count == 1, "\(machine.events)")
      await machine.stop()
      await etcd.stopAll()
    }

    @Test("a follower whose reports have no keys (a prefix without /) follows, and says why it cannot report")
    func unkeyedReports() async throws {
      let (etcd, cluster) = try await startCluster()
      var layout = cluster
      layout.prefix = "/cfg"
      _ = try await put(etcd, "/cfgapp/interval", "60")
      let machine = Machine(cluster: layout, machine: "unkeyed")
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      let said = { machine.events.contains { $0.hasPrefix("cannot report") && $0.contains("does not end with") } }
      #expect(await eventually { said() }, "\(machine.events)")
      await machine.stop()
      await etcd.stopAll()
    }

    @Test("a presence whose lease the cluster lost (revoked, or expired while the follower was away) is claimed again")
    func presenceClaimedAgain() async throws {
      let (etcd, cluster) = try await startCluster()
      _ = try await put(etcd, "/splint/app/interval", "60")
      // Kept alive every second (a third of its 3 s).
      let machine = Machine(
        cluster: cluster, machine: "lost", options: FleetFollower.Options(presenceTimeToLive: .seconds(3)))
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      func lease() async throws -> Int64? {
        let output = try await etcd.etcdctl(["get", "/splint.machines/lost/alive", "-w", "json"])
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        return ((json?["kvs"] as? [[String: Any]])?.first?["lease"] as? NSNumber)?.int64Value
      }
      #expect(await eventually { (try? await lease()) != nil })
      let first = try #require(try await lease())
      _ = try await etcd.etcdctl(["lease", "revoke", String(first, radix: 16)])
      #expect(await eventually { (try? await lease()).flatMap { $0 }.map { $0 != first } ?? false })
      #expect(try await presences(etcd) == ["lost"])
      await machine.stop()
      await etcd.stopAll()
    }

    @Test(
      "wait returns once every machine that follows holds the change; a quiet suite counts as held; rollout says where each is"
    )
    func waitAndRollout() async throws {
      let (etcd, cluster) = try await startCluster()
      _ = try await put(etcd, "/splint/app/interval", "60")
      // Checks every half second: a quiet suite is confirmed held within one.
      let options = FleetFollower.Options(checkInterval: .milliseconds(500))
      let machines = ["a", "b", "c"].map { Machine(cluster: cluster, machine: $0, options: options) }
      for machine in machines { try machine.start() }
      for machine in machines { #expect(await machine.waitFor("interval", 60)) }
      // A change, waited for by its own revision.
      let revision = try await put(etcd, "/splint/app/interval", "61")
      let rollout = try await cluster.waitForRollout(suite: "app", revision: revision, timeout: .seconds(30), expect: 3)
      #expect(rollout.machines.map(\.name) == ["a", "b", "c"] && rollout.isComplete)
      // Read in pages, the machines' keys make the same rollout (one state: each page read at the first's revision).
      let paged = try await cluster.rollout(suite: "app", revision: revision, pageSize: 2)
      #expect(paged.machines.map(\.name) == ["a", "b", "c"] && paged.isComplete, "\(paged)")
      // A wait cancelled ends at once, saying so.
      let cancelled = Task { try await cluster.waitForRollout(suite: "nobody", timeout: .seconds(60)) }
      cancelled.cancel()
      let ended = await #expect(throws: FleetError.self) { try await cancelled.value }
      #expect(ended?.code == .cancelled, "\(String(describing: ended))")
      for machine in machines { #expect(machine.store("app").value(forKey: "interval") == 61) }
      // Nothing changes: the cluster's revision now (which the followers' own reports moved on) is held all the same.
      let quiet = try await cluster.waitForRollout(suite: "app", timeout: .seconds(30), expect: 3)
      #expect(quiet.revision > revision && quiet.machines(.holding).count == 3)
      // Reports are written when the suite changes, not as the cluster's revision moves on (which reports move):
      // quiet, the cluster stays at its revision while the followers check it, twice or more.
      let still = try await etcd.revision()
      let seen = try #require(machines[0].store("app").fleetStatus.first?.lastSeen)
      #expect(
        await eventually { (machines[0].store("app").fleetStatus.first?.lastSeen ?? seen) > seen + 1.2 },
        "the follower's heartbeat did not move")
      #expect(try await etcd.revision() == still, "a report was written while nothing changed")
      // A machine stopped is stopped, not behind; the others still hold.
      await machines[2].stop()
      let after = try await cluster.rollout(suite: "app")
      #expect(after.machines(.stopped).map(\.name) == ["c"], "\(after)")
      #expect(after.following.map(\.name) == ["a", "b"])
      // Fewer than expected follow: incomplete, at the timeout.
      do {
        _ = try await cluster.waitForRollout(suite: "app", timeout: .seconds(1), expect: 3)
        Issue.record("a wait for three machines returned with two")
      } catch {
        #expect(error.code == .rolloutIncomplete && error.description.contains("fewer than the 3 expected"))
      }
      // A suite nobody follows never passes.
      do {
        _ = try await cluster.waitForRollout(suite: "nobody", timeout: .milliseconds(300))
        Issue.record("a wait for a suite nobody follows returned")
      } catch {
        #expect(error.code == .rolloutIncomplete)
      }
      // A value the machines leave out fails the wait at once, naming those that reported it so far (one at least:
      // which, and how many, depends on which followers were quickest).
      let bad = try await put(etcd, "/splint/app/mode", "fast")
      let started = ContinuousClock.now
      do {
        _ = try await cluster.waitForRollout(suite: "app", revision: bad, timeout: .seconds(60))
        Issue.record("a wait for a value left out returned")
      } catch {
        #expect(error.code == .rolloutFailed && error.description.contains(" left out mode (not JSON"), "\(error)")
      }
      #expect(ContinuousClock.now - started < .seconds(30))
      for machine in machines { await machine.stop() }
      await etcd.stopAll()
    }

    @Test(
      "a write that waits names a stopped follower's machine, rollout shows it behind, gone, back; a name taken over")
    func behindFromTheCommandLine() async throws {
      let (etcd, _) = try await startCluster()
      _ = try await put(etcd, "/splint/app/interval", "60")
      let scratch = Scratch()
      // y's presence lives 6 s after its follower was last heard; x's, 15 s.
      func start(_ name: String) async throws -> RunningProgram {
        var environment = ProcessInfo.processInfo.environment
        environment["SPLINT_FLEET_DIRECTORY"] = scratch.url(name).path
        return try await Programs.start(
          [
            Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", etcd.endpoints[0],
            "--machine", name,
          ] + (name == "y" ? ["--presence-ttl", "6"] : []), environment: environment, seconds: nil)
      }
      var followers = [try await start("x"), try await start("y")]
      defer { for follower in followers { follower.kill() } }
      let splintctl = [Programs.helper("splintctl"), "fleet"]
      let endpoints = ["--suite", "app", "--endpoints", etcd.endpoints[0]]
      var waited = try await Programs.run(splintctl + ["wait"] + endpoints + ["--expect", "2", "--timeout", "30"])
      #expect(waited.status == 0, "\(waited)")
      #expect(waited.stdout.contains("2 of 2 machines following it hold it"), "\(waited.stdout)")
      // A write that waits (--wait) returns once both hold it, telling so on standard error.
      let set = try await Programs.run(splintctl + ["set"] + endpoints + ["mode", "1", "--wait", "30"])
      #expect(set.status == 0 && set.stdout.contains("written at revision"), "\(set)")
      #expect(set.stderr.contains("2 of 2 machines following it hold it"), "\(set.stderr)")
      followers[1].pause()
      let behind = try await Programs.run(
        splintctl + ["set"] + endpoints + ["interval", "61", "--wait", "2", "--json"])
      #expect(behind.status == 1 && behind.stderr.contains("y (at revision"), "\(behind)")
      let written = try JSONSerialization.jsonObject(with: Data(behind.stdout.utf8)) as? [String: Any]
      let revision = try #require((written?["revision"] as? NSNumber)?.int64Value, "\(behind.stdout)")
      let rollout = try await Programs.run(
        splintctl + ["rollout"] + endpoints + ["--revision", String(revision), "--json"])
      #expect(rollout.status == 1)
      let parsed = try JSONSerialization.jsonObject(with: Data(rollout.stdout.utf8)) as? [String: Any]
      let states = (parsed?["machines"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "") \($0["state"] ?? "")" }
      #expect(states == ["x holding", "y behind"], "\(rollout.stdout)")
      // Its lease expires while it is stopped: gone, what it held last still shown.
      // A gone machine is not waited for: the rollout of the live ones is whole.
      var gone: ProgramOutput?
      #expect(
        await eventually {
          gone = try? await Programs.run(splintctl + ["rollout"] + endpoints + ["--revision", String(revision)])
          return gone?.lines.contains { $0.hasPrefix("gone: y, at revision ") } == true
        }, "\(String(describing: gone))")
      #expect(gone?.status == 0 && gone?.lines.first?.hasSuffix("1 of 1 machines following it hold it") == true)
      followers[1].send(SIGCONT)
      waited = try await Programs.run(
        splintctl + ["wait"] + endpoints + ["--revision", String(revision), "--timeout", "30"])
      #expect(waited.status == 0, "\(waited)")

      // Killed, x leaves its presence until its lease expires; started again under its name, it takes the name over
      // at once (the process that held it is gone), while that lease still lives.
      func presenceLease() async throws -> Int64? {
        let output = try await etcd.etcdctl(["get", "-w", "json", "/splint.machines/x/alive"])
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        return ((json?["kvs"] as? [[String: Any]])?.first?["lease"] as? NSNumber)?.int64Value
      }
      let killed = try #require(try await presenceLease())
      followers[0].send(SIGKILL)
      await followers[0].wait()
      followers[0] = try await start("x")
      #expect(await eventually { (try? await presenceLease()).map { $0 != killed } == true })
      let old = try await etcd.etcdctl(["lease", "timetolive", String(UInt64(bitPattern: killed), radix: 16)])
      #expect(old.contains("remaining(") && !old.contains("expired"), "\(old)")
      waited = try await Programs.run(splintctl + ["wait"] + endpoints + ["--expect", "2", "--timeout", "30"])
      #expect(waited.status == 0, "\(waited)")
      await etcd.stopAll()
    }
  }
#endif
