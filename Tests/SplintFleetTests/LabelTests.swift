#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// A suite's values for some machines first: labels (`$for/<label>/<key>`), the order they win in (`$labels`),
  /// and a host label for one machine, resolved by each machine's follower into a copy that holds its own values
  /// alone.
  @Suite(.startsServers) struct FleetLabelTests {
    /// A machine following app with `labels`.
    static func machine(_ cluster: EtcdCluster, _ labels: [String]) -> Machine {
      Machine(cluster: cluster, options: FleetFollower.Options(labels: labels))
    }

    @Test("three machines labelled canary, canary and eu, and none: each takes its labels' values in the suite's order")
    func resolved() async throws {
      let (etcd, cluster) = try await startCluster()
      try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "app")
      try await cluster.setValue(jsonText: #""plain""#, forKey: "mode", suite: "app")
      try await cluster.setLabels(["canary", "eu"], suite: "app")
      #expect(try await cluster.labels(suite: "app") == ["host:*", "canary", "eu"])
      let machines = [
        Self.machine(cluster, ["canary"]), Self.machine(cluster, ["canary", "eu"]), Self.machine(cluster, []),
      ]
      for machine in machines { try machine.start() }
      func values(_ key: String) -> [JSONValue?] { machines.map { $0.store().value(forKey: key) } }
      #expect(await eventually { values("interval") == [60, 60, 60] })

      // A canary value: on canary machines alone, which name the label it came from.
      try await cluster.setValue(jsonText: "30", forKey: "interval", suite: "app", label: "canary")
      try await cluster.setValue(jsonText: #""canary-mode-7""#, forKey: "mode", suite: "app", label: "canary")
      #expect(await eventually { values("interval") == [30, 30, 60] && values("mode")[0] == "canary-mode-7" })
      #expect(machines[0].store().origin(ofKey: "interval") == .fleet(machines[0].copy(), label: "canary"))
      #expect(machines[2].store().origin(ofKey: "interval") == .fleet(machines[2].copy()))
      #expect(machines[1].store().fleetStatus.first?.labelledKeys["interval"] == "canary")
      // The copy of the machine without the label holds no trace of its values.
      let plain = try String(contentsOf: machines[2].copy(), encoding: .utf8)
      #expect(!plain.contains("canary-mode-7"), "\(plain)")

      // Two labels set one key: the order says which wins; changed, the machines follow it.
      try await cluster.setValue(jsonText: "45", forKey: "interval", suite: "app", label: "eu")
      #expect(await eventually { values("interval") == [30, 30, 60] })
      let reordered = try await cluster.setLabels(["eu", "canary"], suite: "app")
      #expect(reordered.previousValue == JSONValue.array(["host:*", "canary", "eu"].map(JSONValue.string)).description)
      #expect(await eventually { values("interval") == [30, 45, 60] })
      #expect(machines[1].store().origin(ofKey: "interval") == .fleet(machines[1].copy(), label: "eu"))

      // A host label: one machine alone, first whatever the order.
      let host = "host:" + machines[2].name
      try await cluster.setValue(jsonText: "10", forKey: "interval", suite: "app", label: host)
      try await cluster.setValue(jsonText: "11", forKey: "interval", suite: "app", label: "host:" + machines[1].name)
      #expect(await eventually { values("interval") == [30, 11, 10] })
      #expect(machines[2].store().origin(ofKey: "interval") == .fleet(machines[2].copy(), label: host))

      // A label the order does not name is refused; put around splintctl, it gives no machine a value.
      await #expect(throws: FleetError.self) {
        try await cluster.setValue(jsonText: "5", forKey: "interval", suite: "app", label: "beta")
      }
      try await cluster.setLabels(["eu"], suite: "app")
      #expect(await eventually { values("interval") == [60, 11, 10] && values("mode")[0] == "plain" })
      try await etcd.put("/splint/app/$for/canary/retries", "3")
      // A key put after it, which every machine holds once it has taken the put before it.
      try await cluster.setValue(jsonText: "1", forKey: "seen", suite: "app")
      #expect(await eventually { values("seen") == [1, 1, 1] })
      #expect(values("retries") == [nil, nil, nil])
      try await cluster.setLabels(["eu", "canary"], suite: "app")
      #expect(await eventually { values("retries") == [3, 3, nil] && values("interval") == [30, 11, 10] })

      // Enforced, a label's value is the one enforced.
      try await cluster.setEnforced(true, forKey: "interval", suite: "app")
      #expect(await eventually { machines[0].store().fleetStatus.first?.enforcedKeys == ["interval"] })
      #expect(throws: SettingsError.self) { try machines[0].store().set(99, forKey: "interval") }
      #expect(values("interval")[0] == 30)

      // Removed for the label: its machines take the next label's value, or the suite's.
      try await cluster.removeValue(forKey: "interval", suite: "app", label: "host:" + machines[1].name)
      try await cluster.removeValue(forKey: "interval", suite: "app", label: "canary")
      #expect(await eventually { values("interval") == [60, 45, 10] })
      #expect(machines[0].store().origin(ofKey: "interval") == .fleet(machines[0].copy()))
      // Changed for every machine, a key a label gives elsewhere changes where it does not.
      try await cluster.setValue(jsonText: "70", forKey: "interval", suite: "app")
      #expect(await eventually { values("interval") == [70, 45, 10] })

      // Restarted, a follower holds its labels' values again (it reads every key: they are not on disk).
      await machines[1].stop()
      try machines[1].start()
      try await cluster.removeValue(forKey: "interval", suite: "app", label: "eu")
      #expect(await eventually { values("interval") == [70, 70, 10] })
      #expect(machines[1].events.contains { $0.contains("values of this machine's labels") })

      // The reports say which machines carry a label.
      #expect(
        await eventually {
          (try? await cluster.rollout(suite: "app").carrying("canary").following.map(\.name))
            == [machines[0].name, machines[1].name].sorted()
        })
      // Promoted: every machine takes the label's values, and the label holds them no more.
      let (written, promoted) = try await cluster.promote(suite: "app", label: "canary")
      #expect(written.changed && promoted == ["mode", "retries"])
      #expect(await eventually { values("mode") == ["canary-mode-7", "canary-mode-7", "canary-mode-7"] })
      #expect(values("retries") == [3, 3, 3])
      #expect(try await cluster.storedValues(suite: "app", label: "canary").isEmpty)
      // Machine 0 held the value already, from the label: its origin changes once it takes the promotion.
      #expect(await eventually { machines[0].store().origin(ofKey: "mode") == .fleet(machines[0].copy()) })
      #expect(try await cluster.promote(suite: "app", label: "canary").write.changed == false)
      await #expect(throws: FleetError.self) { try await cluster.promote(suite: "app", label: "eu", keys: ["mode"]) }
      #expect(try await cluster.history(suite: "app", limit: 1).changes.first?.keys.count == 4)
      for machine in machines { await machine.stop() }
    }

    @Test(
      "a label's value the schema refuses keeps the last good value on its machines; bad keys and orders are refused")
    func refused() async throws {
      let (etcd, cluster) = try await startCluster()
      try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "app")
      try await cluster.setSchema(
        jsonText: #"{"properties": {"interval": {"type": "integer", "maximum": 300}}}"#, suite: "app")
      try await cluster.setLabels(["canary"], suite: "app")
      let machines = [Self.machine(cluster, ["canary"]), Self.machine(cluster, [])]
      for machine in machines { try machine.start() }
      func values() -> [JSONValue?] { machines.map { $0.store().value(forKey: "interval") } }
      // Written through splintctl's writes, checked as the key's value.
      await #expect(throws: FleetError.self) {
        try await cluster.setValue(jsonText: "600", forKey: "interval", suite: "app", label: "canary")
      }
      try await cluster.setValue(jsonText: "30", forKey: "interval", suite: "app", label: "canary")
      #expect(await eventually { values() == [30, 60] })
      // Put around them: refused on the canary machine, which keeps 30.
      try await etcd.put("/splint/app/$for/canary/interval", "600")
      #expect(
        await eventually {
          machines[0].store().fleetStatus.first?.rejectedKeys["interval"]?.contains("at most 300") == true
        })
      #expect(values() == [30, 60])
      #expect(machines[0].store().origin(ofKey: "interval") == .fleet(machines[0].copy(), label: "canary"))
      // A label's value too large for a value, and a label's key that is reserved: refused, and left out.
      try await etcd.put("/splint/app/$for/canary/interval", String(repeating: "1", count: 70_000))
      #expect(
        await eventually {
          machines[0].store().fleetStatus.first?.rejectedKeys["interval"]?.contains("70000 bytes") == true
        })
      try await etcd.put("/splint/app/$for/canary/$x", "1")
      #expect(
        await eventually { machines[0].store().fleetStatus.first?.skippedKeys["$for/canary/$x"] != nil })
      // An order that is not one: refused, the last good one kept.
      try await etcd.put("/splint/app/$labels", #"["canary", "no label"]"#)
      #expect(
        await eventually {
          machines[0].store().fleetStatus.first?.rejectedKeys["$labels"]?.contains("no label") == true
        })
      try await etcd.put("/splint/app/$for/canary/interval", "40")
      #expect(await eventually { values() == [40, 60] })
      // The machine without the label refused the order too, and nothing else (the waits above were machine 0's).
      #expect(await eventually { Self.refusedKeys(machines[1]) == ["$labels"] }, "\(Self.refusedKeys(machines[1]))")
      // Labels that are not labels are refused by the writes, and by the follower.
      await #expect(throws: FleetError.self) { try await cluster.setLabels(["a b"], suite: "app") }
      await #expect(throws: FleetError.self) { try await cluster.setLabels(["eu", "eu"], suite: "app") }
      await #expect(throws: FleetError.self) {
        try await cluster.setValue(jsonText: "1", forKey: "interval", suite: "app", label: "host:")
      }
      #expect(throws: FleetError.self) {
        try FleetFollower(suites: ["app"], cluster: cluster, options: FleetFollower.Options(labels: ["host:x"]))
      }
      #expect(throws: FleetError.self) {
        try FleetFollower(suites: ["app"], cluster: cluster, options: FleetFollower.Options(labels: [".x"]))
      }
      #expect(try await cluster.diff(settingValues: [("interval", "50")], suite: "app").differences.count == 1)

      // Orders that are not JSON, or not an array: refused. Removed: no label gives a value.
      for text in ["fast", #"{"canary": 1}"#] {
        try await etcd.put("/splint/app/$labels", text)
        #expect(
          await eventually {
            machines[0].store().fleetStatus.first?.rejectedKeys["$labels"]?.contains(
              text == "fast" ? "not JSON" : "not an array")
              == true
          })
      }
      try await etcd.etcdctl(["del", "/splint/app/$labels"])
      #expect(await eventually { values() == [60, 60] })
      // A label's value over a value the machine refused: the machine reads every key again (the refused value is
      // not in its copy, and applies again without the label).
      try await etcd.put("/splint/app/interval", "900")
      #expect(await eventually { Self.refusedKeys(machines[1]) == ["interval"] })
      try await etcd.put("/splint/app/$for/host:\(machines[1].name)/interval", "20")
      // The value applies as the watch brings it, before the whole read it asks for is told and made: wait for both.
      #expect(
        await eventually { machines[1].events.contains { $0.contains("came over a value the copy refused") } },
        "\(machines[1].events)")
      #expect(await eventually { values() == [60, 20] && Self.refusedKeys(machines[1]).isEmpty })
      for machine in machines { await machine.stop() }
    }

    /// The keys `machine` refused, sorted.
    static func refusedKeys(_ machine: Machine) -> [String] {
      machine.store().fleetStatus.first?.rejectedKeys.keys.sorted() ?? []
    }

    @Test("a label's values count in the copy's size: past it, a label's value is refused and the last good one kept")
    func copySize() async throws {
      let (etcd, cluster) = try await startCluster()
      try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "app")
      try await cluster.setLabels(["canary"], suite: "app")
      let machine = Machine(cluster: cluster, options: FleetFollower.Options(maximumCopySize: 300, labels: ["canary"]))
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      try await etcd.put("/splint/app/$for/canary/interval", "\"" + String(repeating: "x", count: 400) + "\"")
      #expect(
        await eventually {
          machine.store().fleetStatus.first?.rejectedKeys["interval"]?.contains("more than its 300") == true
        })
      #expect(machine.store().value(forKey: "interval") == 60)
      await machine.stop()
    }

    @Test(
      "fleet labels set and get, fleet set and delete --for, follow --label and get --origin, as an operator runs them")
    func commands() async throws {
      let (etcd, _) = try await startCluster()
      let scratch = Scratch()
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
      environment["XDG_CONFIG_HOME"] = scratch.url("home").path
      environment["XDG_CONFIG_DIRS"] = scratch.url("xdg").path
      let endpoints = ["--suite", "app", "--endpoints", etcd.endpoints.joined(separator: ",")]
      func splintctl(_ arguments: String...) async throws -> ProgramOutput {
        try await Programs.run([Programs.helper("splintctl")] + arguments, environment: environment)
      }
      @discardableResult func fleet(_ arguments: String...) async throws -> ProgramOutput {
        try await Programs.run(
          [Programs.helper("splintctl"), "fleet"] + arguments + endpoints, environment: environment)
      }
      #expect(try await fleet("labels", "get").status == 1)
      let unknown = try await fleet("set", "--for", "canary", "interval", "30")
      #expect(unknown.status == 65 && unknown.stderr.contains("fleet labels set --suite app"), "\(unknown)")
      let labels = try await fleet("labels", "set", "canary", "eu")
      #expect(labels.stdout.hasPrefix("the labels of app are host:*, canary, eu, at revision"), "\(labels)")
      #expect(try await fleet("labels", "get").lines == ["host:*", "canary", "eu"])
      #expect(try await fleet("labels", "set", "canary", "eu").stdout.contains("already"))
      #expect(try await fleet("labels", "set", "a b").status == 64)
      try await fleet("set", "interval", "60")
      let set = try await fleet("set", "--for", "canary", "interval", "30")
      #expect(set.stdout.hasPrefix("interval = 30 in app for canary, written at revision"), "\(set)")
      let dry = try await fleet("set", "--for", "canary", "interval", "20", "--dry-run")
      #expect(dry.stdout.contains("$for/canary/interval: 30 -> 20"), "\(dry)")

      let follower = try await Programs.start(
        [Programs.helper("splintctl"), "fleet", "follow", "--label", "canary", "--machine", "cli-1"] + endpoints,
        environment: environment, seconds: 120)
      defer { follower.kill() }
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "30\n" })
      let origin = try await splintctl("get", "--suite", "app", "interval", "--origin")
      #expect(origin.lines.last == "fleet \(scratch.url("fleet").path)/app.json, for the label canary", "\(origin)")
      try await fleet("set", "--for", "host:cli-1", "interval", "10")
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "10\n" })
      let removed = try await fleet("delete", "--for", "host:cli-1", "interval")
      #expect(removed.stdout.hasPrefix("interval removed from app for host:cli-1 at revision"), "\(removed)")
      #expect(try await fleet("delete", "--for", "host:cli-1", "interval").stdout.contains("holds no interval for"))
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "30\n" })
      let status = try await splintctl("fleet", "status", "--suite", "app")
      #expect(status.stdout.contains("labels: canary, host:cli-1 (values: interval for canary)\n"), "\(status)")
      #expect(try await fleet("list", "--for", "canary").lines == ["interval 30"])
      // The machine's report follows its copy: the rollout says it holds the suite once the report is written.
      var rollout: ProgramOutput?
      #expect(
        await eventually {
          rollout = try? await fleet("rollout", "--label", "canary")
          return rollout?.lines.first?.hasSuffix(": 1 of 1 machines with the label canary following it hold it")
            == true
        }, "\(String(describing: rollout))")
      #expect(
        try await fleet("rollout", "--label", "eu").lines.first?.hasSuffix(
          ": 0 of 0 machines with the label eu following it hold it") == true)
      let counted = try await fleet("set", "--for", "canary", "mode", "fast", "--string")
      #expect(counted.lines.last == "1 machine following app carries canary", "\(counted)")
      let countedJSON = try await fleet("set", "--for", "canary", "mode", "slow", "--string", "--json")
      #expect(countedJSON.stdout.contains(#""label":"canary","machines":1,"new":false"#), "\(countedJSON)")
      // A label left out of the order with values still held: said, with what to do.
      try await fleet("set", "--for", "eu", "interval", "5")
      let dropped = try await fleet("labels", "set", "canary")
      #expect(
        dropped.lines.last?.hasPrefix("eu still holds a value (interval), which no machine takes while the order")
          == true
          && dropped.stdout.contains("fleet promote --suite app --from eu"), "\(dropped)")
      #expect(try await fleet("labels", "set", "canary").lines.count == 1, "nothing left out this time")
      let promoted = try await fleet("promote", "--from", "canary")
      #expect(
        promoted.stdout.hasPrefix("interval, mode of canary promoted to every machine of app, at revision"),
        "\(promoted)")
      #expect(try await fleet("get", "interval").stdout == "30\n")
      #expect(try await fleet("promote", "--from", "canary").stdout.hasPrefix("canary holds no value in app: nothing"))
      #expect(try await fleet("promote", "--from", "canary", "nope").status == 64)
      follower.kill()
      #expect(
        try await Programs.run(
          [Programs.helper("splintctl"), "fleet", "follow", "--label", "host:x"] + endpoints, environment: environment
        ).status == 64)
    }
  }
#endif
