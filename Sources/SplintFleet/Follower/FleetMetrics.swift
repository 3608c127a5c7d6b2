#if SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A follower's metrics file, in Prometheus's text format, for node_exporter's textfile collector
  /// (`--collector.textfile.directory`): what each copy holds and whether the follower follows and reports, as this
  /// machine sees it. Written whole (atomically) when it changes, at most every check interval, and once more when
  /// the follower stops; a file that cannot be written is told once, and following goes on.
  actor FleetMetrics {
    let path: String
    private let machine: String?
    private let report: @Sendable (FleetFollower.Event) -> Void
    /// What the file holds, as last written.
    private var written: [UInt8]?
    /// What failed last, told once until the file is written again.
    private var failure: PublishedFile.Failure?

    init(url: URL, machine: String?, report: @escaping @Sendable (FleetFollower.Event) -> Void) {
      path = url.standardizedFileURL.path
      self.machine = machine
      self.report = report
    }

    /// Writes what `copies` hold, and whether `reporter` reports, unless the file holds that already: unless what was
    /// last written says so and the file is still there (a file someone removed is written again).
    func update(copies: FleetCopies, reporter: FleetReporter?) async {
      let held = await copies.held
      let (state, since) = await copies.status
      let reporting = await reporter?.isReporting ?? false
      let text = Self.render(
        held: held, following: state == .following, since: since, reporting: reporting, machine: machine)
      // Whether the file is there only decides whether to write: the write itself judges the path (PublishedFile).
      guard text != written || !FileManager.default.fileExists(atPath: path) else { return }
      do throws(PublishedFile.Failure) {
        try PublishedFile.write(text, to: path)
        written = text
        failure = nil
      } catch {
        guard error != failure else { return }
        failure = error
        report(.metricsFailed(error.description))
      }
    }

    /// The file's text: a family per metric, each with its help and type, a sample per suite where it is one.
    static func render(
      held: [FleetCopies.Held], following: Bool, since: Date, reporting: Bool, machine: String?
    ) -> [UInt8] {
      var text = ""
      func family(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
        text += "# HELP splint_fleet_\(name) \(help)\n# TYPE splint_fleet_\(name) gauge\n"
        for (labels, value) in samples { text += "splint_fleet_\(name)\(labels) \(value)\n" }
      }
      func perSuite(_ value: (FleetCopies.Held) -> Int?) -> [(labels: String, value: String)] {
        held.compactMap { copy in value(copy).map { ("{suite=\"\(label(copy.suite))\"}", String($0)) } }
      }
      family(
        "info", "The follower: its version, and the machine it reports as.",
        [("{machine=\"\(label(machine ?? ""))\",version=\"\(SplintVersion.current)\"}", "1")])
      family(
        "following",
        "1 while the follower follows the cluster; 0 while it has lost it (the copies keep their last values) or "
          + "once it stopped.", [("", following ? "1" : "0")])
      family(
        "state_since_seconds",
        "Since when the follower follows, or has lost the cluster (Unix time): time() minus it, while lost, is how "
          + "long the copies have not heard of changes.", [("", String(Int64(since.timeIntervalSince1970)))])
      family(
        "reporting", "1 while the follower reports what its copies hold to the cluster (fleet rollout lists it).",
        [("", reporting ? "1" : "0")])
      family(
        "revision", "The cluster's revision as of which the copy holds the suite's keys (0 before the first read).",
        perSuite { Int($0.at?.revision ?? 0) })
      family("keys", "How many keys the cluster holds for the suite, those left out too.", perSuite(\.keys))
      family(
        "skipped_keys",
        "Keys of the suite the copy leaves out (not JSON, too large, reserved): splintctl fleet status "
          + "says why.", perSuite { $0.skipped.count + $0.skippedMore })
      family(
        "rejected_keys",
        "Keys of the suite whose value in the cluster the copy refused, keeping the last good value: "
          + "splintctl fleet status says why.", perSuite(\.rejected.count))
      family(
        "copy_failed", "1 when the copy's last write failed: the suite's programs read older values.",
        perSuite { $0.failure == nil ? 0 : 1 })
      return Array(text.utf8)
    }

    /// `value` as a label's value: a backslash, a double quote and a line feed escaped, as the format asks.
    static func label(_ value: String) -> String {
      value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
  }
#endif
