#if SplintFleet
  import Foundation
  import SplintFleet
  import TestSupport
  import Testing

  /// `splintctl fleet history`, `diff`, `rollback` and `set --dry-run`, as an operator runs them against a cluster with
  /// authentication on: what they print, their JSON, and exit statuses a script can trust.
  @Suite(.startsServers) struct HistoryCommandTests {
    let scratch = Scratch()

    /// The environment of an operator's shell: the etcd users' passwords as systemd credentials.
    var environment: [String: String] {
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
      environment["XDG_CONFIG_HOME"] = scratch.url("home").path
      environment["CREDENTIALS_DIRECTORY"] = scratch.url("credentials").path
      // As root through sudo, a record names who ran sudo.
      environment["SUDO_USER"] = "operator"
      for variable in ["ETCDCTL_ENDPOINTS", "ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY"] {
        environment[variable] = nil
      }
      return environment
    }

    /// Runs `splintctl fleet ARGUMENTS --endpoints ENDPOINTS`.
    func fleet(_ arguments: [String], _ etcd: LocalEtcd) async throws -> ProgramOutput {
      try await Programs.run(
        [Programs.helper("splintctl"), "fleet"] + arguments + ["--endpoints", etcd.endpoints.joined(separator: ",")],
        environment: environment)
    }

    /// The JSON object `output` printed.
    func object(_ output: ProgramOutput) throws -> [String: Any] {
      try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any], "\(output)")
    }

    @Test("set --dry-run, history, diff and rollback print what an operator needs, --json, and exit statuses")
    func commands() async throws {
      let (etcd, alice, _) = try await startAuthenticatedCluster()
      try FileManager.default.createDirectory(at: scratch.url("credentials"), withIntermediateDirectories: true)
      for name in ["alice", "bob"] { try Data("\(name)pw".utf8).write(to: scratch.url("credentials", "etcd__\(name)")) }

      let set = try await fleet(["set", "--suite", "app", "interval", "60", "--user", "alice"], etcd)
      #expect(set.status == 0, "\(set)")
      let point = try await etcd.revision()
      #expect(
        try await fleet(["set", "--suite", "app", "mode", "fast", "--string", "--user", "bob"], etcd).status == 0)
      try await etcd.put("/splint/app/interval", "90", user: "root:rootpw")
      let now = try await etcd.revision()

      // A dry run prints the diff, and writes nothing.
      let dry = try await fleet(["set", "--suite", "app", "interval", "30", "--dry-run", "--user", "alice"], etcd)
      #expect(
        dry.lines == [
          "Setting interval in app would change (dry run: nothing was written; the cluster is at revision \(now)):",
          "  interval: 90 -> 30",
        ], "\(dry)")
      let dryJSON = try await fleet(
        ["set", "--suite", "app", "interval", "30", "--dry-run", "--json", "--user", "alice"], etcd)
      #expect(
        dryJSON.lines == [
          #"{"differences":[{"from":"90","key":"interval","to":"30"}],"dryRun":true,"from":\#(now),"#
            + #""rebuiltFromRecords":false,"suite":"app"}"#
        ], "\(dryJSON)")
      let same = try await fleet(["set", "--suite", "app", "interval", "90", "--dry-run", "--user", "alice"], etcd)
      #expect(
        same.lines == [
          "interval in app already holds 90: setting it would change nothing (dry run; the cluster is at revision \(now))"
        ], "\(same)")
      #expect(try await etcd.revision() == now)

      // History: newest first, each with who made it; the etcdctl change as not recorded.
      let history = try await fleet(["history", "--suite", "app", "--user", "bob"], etcd)
      #expect(history.status == 0, "\(history)")
      let lines = history.lines
      #expect(lines.first == "app at revision \(now): etcd holds every change of it.", "\(history)")
      #expect(lines.count == 7, "\(history)")
      #expect(
        lines.dropFirst().first == "revision \(now), not recorded: made around splintctl (etcdctl, or another client)")
      #expect(lines.dropFirst(2).first == "  interval: 60 -> 90")
      #expect(lines.dropFirst(3).first?.hasPrefix("revision \(now - 1), ") == true)
      #expect(
        lines.dropFirst(3).first?.hasSuffix(
          " as etcd user bob: splintctl fleet set --suite app mode fast --string --user bob --endpoints "
            + etcd.endpoints.joined(separator: ",")) == true, "\(history)")
      if getuid() == 0 {
        #expect(lines.dropFirst(3).first?.contains(" root (sudo by operator) on ") == true, "\(history)")
      }
      #expect(lines.dropFirst(4).first == #"  mode: (not set) -> "fast""#)
      #expect(lines.dropFirst(6).first == "  interval: (not set) -> 60")
      let json = try object(
        try await fleet(["history", "--suite", "app", "interval", "--json", "--user", "bob"], etcd))
      let changes = try #require(json["changes"] as? [[String: Any]])
      #expect(changes.map { $0["recorded"] as? Bool } == [false, true])
      #expect(changes.map { $0["etcdUser"] as? String } == [nil, "alice"])
      #expect((changes.last?["keys"] as? [[String: Any]])?.first?["new"] as? String == "60")
      #expect(json["compactedRevision"] as? Int == 0 && json["revision"] as? Int == Int(now))

      // diff exits 1 when something differs, as diff does, and 0 when nothing does.
      let diff = try await fleet(["diff", "--suite", "app", "--to", String(point), "--user", "alice"], etcd)
      #expect(diff.status == 1, "\(diff)")
      #expect(
        diff.lines == [
          "app from revision \(now) (now) to revision \(point):", "  interval: 90 -> 60",
          #"  mode: "fast" -> (not set)"#,
        ], "\(diff)")
      let unchanged = try await fleet(["diff", "--suite", "app", "--to", String(now), "--user", "alice"], etcd)
      #expect(
        unchanged.status == 0 && unchanged.lines == ["app holds the same at revision \(now) (now) and revision \(now)."]
      )

      // rollback shows the diff and changes nothing without --yes (exit status 1); with it, rolls back, recorded.
      let asked = try await fleet(["rollback", "--suite", "app", "--to", String(point), "--user", "alice"], etcd)
      #expect(asked.status == 1, "\(asked)")
      #expect(asked.lines.first == "Rolling app back from revision \(now) (now) to revision \(point) changes:")
      #expect(asked.stderr.contains("Nothing was changed: give --yes to roll app back to revision \(point)."))
      #expect(try await etcd.revision() == now)
      let rolled = try await fleet(
        ["rollback", "--suite", "app", "--to", String(point), "--yes", "--json", "--user", "alice"], etcd)
      #expect(rolled.status == 0, "\(rolled)")
      let applied = try object(rolled)
      #expect(applied["applied"] as? Bool == true && applied["revision"] as? Int == Int(now + 1))
      #expect(try await alice.storedValues(suite: "app").map(\.key) == ["interval"])
      let recorded = try await fleet(["history", "--suite", "app", "--limit", "1", "--user", "bob"], etcd)
      #expect(
        recorded.lines.dropFirst().first?.contains(": splintctl fleet rollback --suite app --to \(point) --yes") == true
      )
      let nothing = try await fleet(["rollback", "--suite", "app", "--to", String(point), "--user", "alice"], etcd)
      #expect(nothing.status == 0 && nothing.lines.last?.hasSuffix("nothing to roll back.") == true, "\(nothing)")

      // After a compaction, history says where etcd's own history ends.
      let compacted = try await etcd.compact(user: "root:rootpw")
      let after = try await fleet(["history", "--suite", "app", "--user", "bob"], etcd)
      #expect(
        after.lines.first?.hasPrefix("app at revision \(compacted): etcd holds its changes after revision \(compacted)")
          == true, "\(after)")

      // A suite too large for one transaction: refused with the numbers (exit status 70); bad numbers: usage (64).
      try await alice.setValues((0..<100).map { ("k\($0)", "1") }, suite: "big")
      try await alice.setValues((100..<129).map { ("k\($0)", "1") }, suite: "big")
      let large = try await fleet(
        ["rollback", "--suite", "big", "--to", String(point), "--yes", "--user", "alice"], etcd)
      #expect(large.status == 70, "\(large)")
      #expect(large.errorText.contains("131 comparisons and 130 operations"), "\(large)")
      #expect(large.errorText.contains("(--max-txn-ops)") && large.errorText.contains("never split"), "\(large)")
      for arguments in [
        ["rollback", "--suite", "app", "--to", "999999"], ["set", "--suite", "app", "n", "1", "--history-limit", "0"],
        ["history", "--suite", "app", "--limit", "0"],
      ] {
        #expect(try await fleet(arguments + ["--user", "alice"], etcd).status == 64, "\(arguments)")
      }
    }
  }
#endif
