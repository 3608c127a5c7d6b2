#if SplintFleet
  import Foundation
  import TestSupport
  import Testing
  @testable import SplintFleet
  import SplintSettings

  /// The follower's metrics file, as node_exporter's textfile collector reads it.
  @Suite(.startsServers) struct MetricsTests {
    /// The samples of the file at `url`, by name with labels ("splint_fleet_revision{suite=\"app\"}"): none while
    /// there is no file.
    func samples(_ url: URL) -> [String: String] {
      guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
      var samples: [String: String] = [:]
      for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        samples[String(line[..<space])] = String(line[line.index(after: space)...])
      }
      return samples
    }

    @Test("a follower keeps a metrics file of what each copy holds, and whether it follows and reports, as it changes")
    func followed() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.put("/splint/app/bad", "{not JSON")
      let scratch = Scratch()
      let metrics = scratch.url("textfile", "splint-fleet.prom")
      let machine = Machine(
        cluster: cluster, machine: "web-1",
        options: FleetFollower.Options(checkInterval: .milliseconds(200), metricsFile: metrics))
      try machine.start()
      #expect(await machine.waitFor("interval", 60))

      // Its directory missing, the follower follows, and says so once; made, the file follows.
      #expect(
        await eventually { machine.events.contains { $0.hasPrefix("cannot keep the metrics file") } },
        "\(machine.events)")
      #expect(machine.events.filter { $0.hasPrefix("cannot keep the metrics file") }.count == 1)
      #expect(machine.events.contains { $0.contains("is missing") }, "\(machine.events)")
      try FileManager.default.createDirectory(
        at: metrics.deletingLastPathComponent(), withIntermediateDirectories: true)
      let app = "{suite=\"app\"}"
      #expect(
        await eventually {
          let now = samples(metrics)
          return now["splint_fleet_reporting"] == "1" && now["splint_fleet_keys" + app] == "2"
        }, "\(samples(metrics))")
      let first = samples(metrics)
      #expect(first["splint_fleet_following"] == "1" && first["splint_fleet_skipped_keys" + app] == "1", "\(first)")
      #expect(first["splint_fleet_copy_failed" + app] == "0", "\(first)")
      #expect(first["splint_fleet_info{machine=\"web-1\",version=\"\(SplintVersion.current)\"}"] == "1", "\(first)")
      let since = Double(first["splint_fleet_state_since_seconds"] ?? "") ?? 0
      #expect(abs(since - Date().timeIntervalSince1970) < 600, "\(first)")

      // A change: the revision it took.
      let before = try await etcd.revision()
      try await etcd.put("/splint/app/interval", "61")
      #expect(
        await eventually { (Int64(samples(metrics)["splint_fleet_revision" + app] ?? "") ?? 0) > before },
        "\(samples(metrics)), \(before)")

      // Removed (by an operator, a clean-up), it is written again.
      try FileManager.default.removeItem(at: metrics)
      #expect(await eventually { samples(metrics)["splint_fleet_following"] == "1" }, "removed, it stayed away")

      // Stopped, it says so.
      await machine.stop()
      let stopped = samples(metrics)
      #expect(stopped["splint_fleet_following"] == "0" && stopped["splint_fleet_reporting"] == "0", "\(stopped)")
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: metrics.deletingLastPathComponent().path)
          == ["splint-fleet.prom"])
      await etcd.stopAll()
    }

    @Test("a label's value is escaped as the text format asks")
    func labels() {
      #expect(FleetMetrics.label(#"a\b"c"# + "\nd") == #"a\\b\"c\nd"#)
      let text = String(
        decoding: FleetMetrics.render(held: [], following: false, since: Date(), reporting: false, machine: nil),
        as: UTF8.self)
      #expect(text.contains("splint_fleet_info{machine=\"\",version="), "\(text)")
      #expect(text.contains("# TYPE splint_fleet_revision gauge\n#"), "no sample without a suite: \(text)")
    }
  }
#endif
