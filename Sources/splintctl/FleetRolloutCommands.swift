#if SplintFleet
  import ArgumentParser
  import SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  struct FleetRolloutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rollout",
      abstract: "Tell which machines hold a suite's latest change, which are behind, and which are gone.",
      discussion: """
        From each machine's report (/splint.machines/<machine>/reports/<suite>): how many machines follow the \
        suite and how many hold the revision (the cluster's now, or --revision), then each machine that is behind, \
        left a value out, refused one (keeping the key's last good value) or cannot write its copy, was stopped, or is gone (its follower died or is cut off), with \
        the revision it holds and since when (by the machine's clock, and how far that is off the cluster's when \
        by 2 s or more). With --json: {"suite": S, "revision": R, "machines": [{"name": N, "state": \
        "holding"|"behind"|"problem"|"stopped"|"gone", "revision": R, "since": DATE, "clockOffset": SECONDS (the \
        machine's clock minus the cluster's), "skipped": {KEY: WHY}, "rejected": {KEY: WHY}, "copyFailure": WHY}]}. \
        Exit status 0 when every machine that follows the suite holds the revision, 1 when one is behind, 65 when \
        one left a value out, refused one or cannot write its copy. With --label, the machines that carry the label \
        alone are counted and listed (a canary's change, before it is promoted).
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(help: ArgumentHelp("Count the machines that carry this label alone.", valueName: "label"))
    var label: String?

    @Option(help: "The revision to measure against (a write prints the one it made); the cluster's now by default.")
    var revision: Int64?

    @Flag(help: "Print one JSON object, for scripts.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      let whole = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.rollout(suite: suite, revision: revision)
      }
      let rollout = label.map { whole.carrying($0) } ?? whole
      if json {
        Output.line(Self.json(rollout).description)
      } else {
        for line in Self.lines(rollout, label: label) { Output.line(line) }
      }
      if !rollout.machines(.problem).isEmpty { throw ExitStatus.rejected }
      if !rollout.isComplete { throw ExitStatus.incomplete }
    }

    /// The rollout as people read it: a summary, then a line for each machine that does not simply hold it.
    static func lines(_ rollout: FleetRollout, label: String? = nil) -> [String] {
      let following = rollout.following
      let carrying = label.map { " with the label \($0.shown())" } ?? ""
      var lines = [
        "\(rollout.suite) at revision \(rollout.revision): \(rollout.machines(.holding).count) of \(following.count) "
          + "machines\(carrying) following it hold it"
      ]
      for machine in rollout.machines where machine.state != .holding {
        let report = machine.report
        let held =
          report.map { "at revision \($0.revision) since \($0.since.timestampText)\(clock($0))" } ?? "no report yet"
        switch machine.state {
        case .behind:
          lines.append("behind: \(machine.name), \(held)")
        case .problem:
          let failure = report?.copyFailure.map { ["cannot write its copy: \($0.shown(limit: 300))"] } ?? []
          let skipped = (report?.skipped ?? [:]).sorted { $0.key < $1.key }.map {
            "left out \($0.key.shown()): \($0.value.shown(limit: 300))"
          }
          let more = (report?.skippedMore ?? 0) > 0 ? ["and \(report?.skippedMore ?? 0) more keys left out"] : []
          let rejected = (report?.rejected ?? [:]).sorted { $0.key < $1.key }.map {
            "refused \($0.key.shown()): \($0.value.shown(limit: 300)), keeping its last good value"
          }
          let problems = failure + skipped + more + rejected
          lines.append("problem: \(machine.name), \(held): \(problems.joined(separator: "; "))")
        case .stopped:
          let stopped = report?.stopped.map { " since \($0.timestampText)" } ?? ""
          lines.append("stopped: \(machine.name)\(stopped), \(held)")
        case .gone:
          lines.append("gone: \(machine.name), \(held)")
        case .holding:
          break  // coverage:ignore — filtered out above
        }
      }
      return lines
    }

    /// ` (its clock N s ahead)` for a report whose machine's clock is 2 seconds or more off the cluster's, so that a
    /// time that looks wrong is not taken for the machine's.
    static func clock(_ report: FleetReport) -> String {
      guard let offset = report.clockOffset, abs(offset) >= 2 else { return "" }
      return " (by its clock, \(Int(abs(offset).rounded())) s \(offset > 0 ? "ahead of" : "behind") the cluster's)"
    }

    /// The rollout as one JSON object.
    static func json(_ rollout: FleetRollout) -> JSONValue {
      .object([
        "suite": .string(rollout.suite), "revision": .int(Int(rollout.revision)),
        "machines": .array(
          rollout.machines.map { machine in
            var fields: [JSONKey: JSONValue] = [
              "name": .string(machine.name), "state": .string(machine.state.rawValue),
            ]
            if let report = machine.report {
              fields["revision"] = .int(Int(report.revision))
              fields["since"] = .string(report.since.isoTimestamp)
              if let offset = report.clockOffset { fields["clockOffset"] = .double(offset) }
              fields["skipped"] = .object(
                Dictionary(uniqueKeysWithValues: report.skipped.map { (JSONKey($0.key), JSONValue.string($0.value)) }))
              if report.skippedMore > 0 { fields["skippedMore"] = .int(report.skippedMore) }
              if !report.rejected.isEmpty {
                fields["rejected"] = .object(
                  Dictionary(
                    uniqueKeysWithValues: report.rejected.map { (JSONKey($0.key), JSONValue.string($0.value)) }))
              }
              if let failure = report.copyFailure { fields["copyFailure"] = .string(failure) }
              if let stopped = report.stopped { fields["stopped"] = .string(stopped.isoTimestamp) }
            }
            return .object(fields)
          }),
      ])
    }
  }

  struct FleetWaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "wait",
      abstract: "Wait until every machine that follows a suite holds a revision.",
      discussion: """
        Returns 0 once every machine whose follower is alive and follows the suite holds the revision (--revision, \
        which every writing command prints; the cluster's revision as the wait starts by default), and at least \
        --expect machines follow it (1 unless given: a misspelt suite never passes). A quiet suite counts as held \
        at once (a machine that holds it as of an earlier revision holds it, if nothing of it changed since). Fails at --timeout (60 seconds unless \
        given; each request takes at most 5 of them) with exit status 1, \
        naming the machines still behind; at once with exit status 65 when a machine left a value out or cannot \
        write its copy. Prints the rollout it ended with, as `fleet rollout` does.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(help: "The revision to wait for; the cluster's as the wait starts by default.")
    var revision: Int64?

    @Option(help: "How many machines must follow the suite, at least.")
    var expect = 1

    @Flag(help: "Print one JSON object, for scripts.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    func validate() throws {
      guard expect >= 1 else { throw ValidationError("--expect is a number of machines, 1 or more.") }
    }

    func run() async throws {
      var (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      // --timeout is the whole wait's here; each request takes at most 5 s of it.
      let timeout = Duration.milliseconds(Int(min(self.cluster.timeout ?? 60, 86_400) * 1000))
      cluster.requestTimeout = min(timeout, .seconds(5))
      let rollout = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.waitForRollout(suite: suite, revision: revision, timeout: timeout, expect: expect)
      }
      if json {
        Output.line(FleetRolloutCommand.json(rollout).description)
      } else {
        for line in FleetRolloutCommand.lines(rollout) { Output.line(line) }
      }
    }
  }
#endif
