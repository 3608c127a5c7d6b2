#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// `splintctl fleet ...` and the programs on a following machine, each a process of its own, as an operator and
  /// a fleet's daemons use them.
  @Suite(.startsServers) struct CommandTests {
    let scratch = Scratch()

    /// The environment of a process on the test's machine: its copies in `fleet`, its user's files in `home`.
    var environment: [String: String] {
      var environment = ProcessInfo.processInfo.environment
      environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
      environment["XDG_CONFIG_HOME"] = scratch.url("home").path
      environment["XDG_CONFIG_DIRS"] = scratch.url("xdg").path
      environment["ETCDCTL_API"] = "3"
      for variable in ["ETCDCTL_ENDPOINTS", "ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY"] {
        environment[variable] = nil
      }
      return environment
    }

    /// Runs splintctl with `arguments`.
    @discardableResult
    func splintctl(_ arguments: String..., input: String = "") async throws -> ProgramOutput {
      try await splintctl(arguments, input: input)
    }

    /// Runs splintctl with `arguments`, in `environment` (the test's unless given).
    @discardableResult
    func splintctl(
      _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws -> ProgramOutput {
      try await Programs.run(
        [Programs.helper("splintctl")] + arguments, input: Data(input.utf8),
        environment: environment ?? self.environment)
    }

    @Test("fleet set, get, list, delete and enforce change the cluster; status and get --origin read the copy")
    func commands() async throws {
      let (etcd, _) = try await startCluster()
      let endpoints = etcd.endpoints.joined(separator: ",")
      try await splintctl("fleet", "set", "--suite", "app", "interval", "60", "--endpoints", endpoints)
      try await splintctl("fleet", "set", "--suite", "app", "mode", "fast", "--string", "--endpoints", endpoints)
      let notJSON = try await splintctl("fleet", "set", "--suite", "app", "mode", "fast", "--endpoints", endpoints)
      #expect(notJSON.status == 64 && notJSON.stderr.contains("not JSON"), "\(notJSON)")
      let reserved = try await splintctl("fleet", "set", "--suite", "app", "$x", "1", "--endpoints", endpoints)
      #expect(reserved.status == 64 && reserved.stderr.contains("reserves"), "\(reserved)")
      #expect(
        try await splintctl("fleet", "get", "--suite", "app", "interval", "--endpoints", endpoints).stdout == "60\n")
      let absent = try await splintctl("fleet", "get", "--suite", "app", "nope", "--endpoints", endpoints)
      #expect(absent.status == 1 && absent.stdout.isEmpty)
      try await etcd.put("/splint/app/broken", "fast")

      let follower = try await Programs.start(
        [
          Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", endpoints, "--machine",
          "cli-1", "--metrics-file", scratch.url("fleet.prom").path,
        ], environment: environment, seconds: 120)
      defer { follower.kill() }
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "60\n" })
      #expect(
        await eventually {
          (try? String(contentsOf: scratch.url("fleet.prom"), encoding: .utf8))?.contains(
            "splint_fleet_revision{suite=\"app\"} ") == true
        })
      let origin = try await splintctl("get", "--suite", "app", "interval", "--origin")
      #expect(origin.lines == ["60", "fleet \(scratch.url("fleet").path)/app.json"], "\(origin)")
      try await splintctl("set", "--suite", "app", "mode", "mine")
      #expect(try await splintctl("get", "--suite", "app", "mode").stdout == "\"mine\"\n")

      // The endpoints default to the copy's; enforcing a key makes it the fleet's everywhere on the machine.
      let enforce = try await splintctl("fleet", "enforce", "--suite", "app", "mode")
      #expect(enforce.status == 0, "\(enforce)")
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "mode").stdout) == "\"fast\"\n" })
      let refused = try await splintctl("set", "--suite", "app", "mode", "slow")
      #expect(refused.status == 70 && refused.stderr.contains("enforced by the fleet"), "\(refused)")
      #expect(
        try await splintctl("get", "--suite", "app", "mode", "--origin").lines.last?.hasSuffix(", enforced") == true)

      let list = try await splintctl("fleet", "list", "--suite", "app")
      #expect(list.lines == ["broken fast", "interval 60", "mode \"fast\"", "$enforced [\"mode\"]"], "\(list)")
      let status = try await splintctl("fleet", "status", "--suite", "app")
      #expect(status.status == 65, "a key left out: \(status)")
      #expect(status.stdout.contains("state: following since"))
      #expect(
        await eventually {
          (try? await splintctl("fleet", "status", "--suite", "app"))?.stdout.contains(
            "reporting: as the machine cli-1\n") == true
        })
      #expect(status.stdout.contains("left out: broken: not JSON"))
      #expect(status.stdout.contains("enforced: mode"))
      #expect(!status.stdout.contains("overridden by"), "the user's own mode, unused while enforced, is no drift")
      // A value the follower cannot take: the machine keeps the last good one, and says so everywhere.
      try await etcd.put("/splint/app/interval", "sixty")
      #expect(
        await eventually {
          (try? await splintctl("fleet", "status", "--suite", "app"))?.stdout.contains(
            "refused: interval: not JSON (") == true
        })
      let kept = try await splintctl("fleet", "status", "--suite", "app")
      #expect(kept.status == 65 && kept.stdout.contains(") (the last good value is kept)\n"), "\(kept)")
      #expect(try await splintctl("get", "--suite", "app", "interval").stdout == "60\n")
      #expect(
        await eventually {
          (try? String(contentsOf: scratch.url("fleet.prom"), encoding: .utf8))?.contains(
            "splint_fleet_rejected_keys{suite=\"app\"} 1\n") == true
        })
      var rollout: ProgramOutput?
      #expect(
        await eventually {
          rollout = try? await splintctl("fleet", "rollout", "--suite", "app")
          return rollout?.stdout.contains("refused interval: not JSON (") == true
        }, "\(String(describing: rollout))")
      #expect(rollout?.status == 65 && rollout?.stdout.contains(", keeping its last good value") == true)
      let rolloutJSON = try await splintctl("fleet", "rollout", "--suite", "app", "--json")
      let parsed = try JSONSerialization.jsonObject(with: Data(rolloutJSON.stdout.utf8)) as? [String: Any]
      let machine = (parsed?["machines"] as? [[String: Any]])?.first
      let rejected = machine?["rejected"] as? [String: String]
      #expect(rejected?["interval"]?.hasPrefix("not JSON (") == true, "\(rolloutJSON)")
      try await etcd.put("/splint/app/interval", "60")
      #expect(
        await eventually {
          (try? await splintctl("fleet", "status", "--suite", "app"))?.stdout.contains("refused:") == false
        })
      try await splintctl("set", "--suite", "app", "--", "interval", "5")
      #expect(try await splintctl("fleet", "status", "--suite", "app").stdout.contains("overridden by"))

      try await splintctl("fleet", "enforce", "--suite", "app", "mode", "--stop")
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "mode").stdout) == "\"mine\"\n" })
      try await splintctl("fleet", "delete", "--suite", "app", "interval")
      #expect(
        await eventually {
          (try? await splintctl("get", "--suite", "app", "interval", "--origin").lines.last)
            != "fleet \(scratch.url("fleet").path)/app.json"
        })

      // SIGTERM: the follower ends, recording it; status then says no follower runs (exit status 69).
      follower.send(SIGTERM)
      let ended = await follower.wait()
      #expect(ended.status == 0, "\(ended)")
      let after = try await splintctl("fleet", "status", "--suite", "app")
      #expect(after.status == 69 && after.stdout.contains("no follower since"), "\(after)")
    }

    @Test(
      "a follower killed: status says when it was last seen; started again: its own process at once; lost: said once")
    func followerLife() async throws {
      let (etcd, _) = try await startCluster()
      try await etcd.put("/splint/app/interval", "60")
      let endpoints = etcd.endpoints.joined(separator: ",")
      func follow() async throws -> RunningProgram {
        try await Programs.start(
          [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", endpoints],
          environment: environment, seconds: nil)
      }
      let store = SettingsStore(
        fileURL: scratch.url("probe", "settings.json"), fleetCopies: [scratch.url("fleet", "app.json")])
      let first = try await follow()
      // Seen again after its start: its presence moves every check interval (3 s), whatever the cluster does.
      #expect(await eventually { store.fleetStatus.first.map { $0.lastSeen > $0.since.addingTimeInterval(2) } == true })
      let seen = try #require(store.fleetStatus.first?.lastSeen)
      first.send(SIGKILL)
      let killed = Date()
      let firstLog = await first.wait().stderr
      // The reporter claims the machine's name beside the first read, so its line may come before or after it.
      let following = firstLog.split(separator: "\n").filter { !$0.contains("reporting to the cluster as") }
      #expect(
        following.first
          == "splintctl fleet follow: reading every key: this machine has no copy of app yet (a first read)",
        "the normal first read, said as one: \(firstLog)")
      let dead = try await splintctl("fleet", "status", "--suite", "app")
      #expect(dead.status == 69, "\(dead)")
      let line = try #require(dead.lines.first { $0.hasPrefix("state: no follower since ") }, "\(dead)")
      let shown = line.split(separator: " ").dropFirst(4).prefix(2).joined(separator: " ")
      let format = DateFormatter()
      format.dateFormat = "yyyy-MM-dd HH:mm:ss"
      format.timeZone = TimeZone(identifier: "UTC")
      let since = try #require(format.date(from: shown), "\(line)")
      #expect(since >= seen.addingTimeInterval(-1) && since <= killed, "last seen \(shown), killed at \(killed)")
      #expect(line.hasSuffix(" UTC (the values are the last it wrote)"), "\(line)")
      #expect(!dead.stdout.contains("+0000"), "one format for every time: \(dead.stdout)")

      // Started again: its own process, at once, with no change in the cluster.
      let second = try await follow()
      defer { second.kill() }
      #expect(
        await eventually {
          (try? await splintctl("fleet", "status", "--suite", "app"))?.stdout.contains("process \(second.pid)\n")
            == true
        })
      #expect(await eventually { (try? await splintctl("fleet", "status", "--suite", "app"))?.status == 0 })

      // The cluster away: the loss is told once (again only if what the follower finds changes), and recorded.
      await etcd.stopAll()
      #expect(
        await eventually {
          (try? await splintctl("fleet", "status", "--suite", "app"))?.stdout.contains("the cluster is unreachable")
            == true
        })
      second.send(SIGTERM)
      let log = await second.wait()
      #expect(log.status == 0, "\(log)")
      let lost = log.stderr.split(separator: "\n").filter { $0.contains("fleet follow: lost:") }
      #expect((1...2).contains(lost.count), "\(log.stderr)")
      #expect(Set(lost).count == lost.count, "no line twice: \(log.stderr)")
    }

    @Test("fleet schema set, get and delete; a value the schema refuses, and a schema not checked, exit 65")
    func schemaCommands() async throws {
      let (etcd, _) = try await startCluster()
      let endpoints = ["--suite", "app", "--endpoints", etcd.endpoints.joined(separator: ",")]
      try await splintctl(["fleet", "set", "interval", "60"] + endpoints)
      let none = try await splintctl(["fleet", "schema", "get"] + endpoints)
      #expect(none.status == 1 && none.stderr.contains("no schema for app"), "\(none)")
      let file = scratch.url("app.schema.json")
      try Data(#"{"properties": {"interval": {"type": "integer", "maximum": 300}}}"#.utf8).write(to: file)
      let set = try await splintctl(["fleet", "schema", "set", file.path] + endpoints)
      #expect(set.status == 0 && set.stdout.hasPrefix("the schema of app is set, at revision "), "\(set)")
      let again = try await splintctl(
        ["fleet", "schema", "set", "-"] + endpoints, input: try String(contentsOf: file, encoding: .utf8))
      #expect(again.stdout.hasPrefix("app already holds this schema: nothing was changed"), "\(again)")
      #expect(try await splintctl(["fleet", "schema", "get"] + endpoints).stdout.contains(#""maximum": 300"#))
      let refused = try await splintctl(["fleet", "set", "interval", "600"] + endpoints)
      #expect(
        refused.status == 65 && refused.stderr.contains("interval: must be at most 300 (maximum), found 600"),
        "\(refused)")
      // A dry run refuses it as the write does; one the schema allows prints its diff.
      let dry = try await splintctl(["fleet", "set", "interval", "600", "--dry-run"] + endpoints)
      #expect(dry.status == 65 && dry.stderr.contains("found 600") && dry.stdout.isEmpty, "\(dry)")
      let allowed = try await splintctl(["fleet", "set", "interval", "200", "--dry-run"] + endpoints)
      #expect(allowed.status == 0 && allowed.stdout.contains("would change"), "\(allowed)")
      try Data(#"{"properties": {"interval": {"anyOf": []}}}"#.utf8).write(to: file)
      let unchecked = try await splintctl(["fleet", "schema", "set", file.path] + endpoints)
      #expect(unchecked.status == 65 && unchecked.stderr.contains("anyOf"), "\(unchecked)")
      try Data(#"{"properties": {"interval": {"maximum": 10}}}"#.utf8).write(to: file)
      let broken = try await splintctl(["fleet", "schema", "set", file.path] + endpoints)
      #expect(broken.status == 65 && broken.stderr.contains("--force"), "\(broken)")
      #expect(try await splintctl(["fleet", "schema", "set", file.path, "--force"] + endpoints).status == 0)
      let missing = try await splintctl(["fleet", "schema", "set", scratch.url("nothing").path] + endpoints)
      #expect(missing.status == 64 && missing.stderr.contains("cannot read"), "\(missing)")
      let removed = try await splintctl(["fleet", "schema", "delete"] + endpoints)
      #expect(removed.stdout.hasPrefix("the schema of app is removed, at revision "), "\(removed)")
      let nothing = try await splintctl(["fleet", "schema", "delete"] + endpoints)
      #expect(nothing.stdout.hasPrefix("app holds no schema: nothing was removed"), "\(nothing)")
      #expect(try await splintctl(["fleet", "set", "interval", "600"] + endpoints).status == 0)
    }

    @Test("values and keys with escape sequences are printed escaped by fleet get and list")
    func escapes() async throws {
      let (etcd, _) = try await startCluster()
      let endpoint = etcd.endpoints[0]
      let put = try await Programs.run(
        bytes: [Array("etcdctl".utf8), Array("--endpoints=\(endpoint)".utf8), Array("put".utf8)]
          + [Array("/splint/app/title".utf8), Array("\"\u{1B}]0;owned\u{07}\u{1B}[2J\"\n".utf8)])
      #expect(put.status == 0, "\(put)")
      let get = try await splintctl("fleet", "get", "--suite", "app", "title", "--endpoints", endpoint)
      #expect(get.stdout == "\"\\u{1B}]0;owned\\u{7}\\u{1B}[2J\"\n\n", "\(get)")
      let list = try await splintctl("fleet", "list", "--suite", "app", "--endpoints", endpoint)
      #expect(!list.stdout.unicodeScalars.contains("\u{1B}") && list.stdout.contains("\\u{1B}[2J"), "\(list)")
    }

    @Test("fleet set, delete and enforce print what they wrote and the revision it was written at, or JSON")
    func writes() async throws {
      let (etcd, _) = try await startCluster()
      let endpoints = ["--endpoints", etcd.endpoints.joined(separator: ",")]
      /// The revision `key` of app was last written at, as etcd says; the cluster's revision when `key` is nil.
      func modified(_ key: String? = nil) async throws -> Int {
        let output = try await etcd.etcdctl(["get", "/splint/app/\(key ?? "")", "-w", "json"])
        let answer = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let pair = (answer?["kvs"] as? [[String: Any]])?.first
        let header = answer?["header"] as? [String: Any]
        return try #require(
          ((key == nil ? header : pair)?[key == nil ? "revision" : "mod_revision"] as? NSNumber)?.intValue)
      }

      // A new key is said to be new; a misspelt one names the keys close to it, in JSON's quotes.
      let first = try await splintctl(["fleet", "set", "--suite", "app", "interval", "60"] + endpoints)
      let revision = try await modified("interval")
      #expect(
        first.lines == [
          "interval = 60 in app, written at revision \(revision)",
          "interval is a new key: app held no value of it before.",
        ], "\(first)")
      try await etcd.put("/splint/app/interva\u{1B}", "1")
      let typo = try await splintctl(["fleet", "set", "--suite", "app", "intervall", "[1,  2]"] + endpoints)
      #expect(
        typo.lines == [
          "intervall = [1,2] in app, written at revision \(try await modified("intervall"))",
          #"intervall is a new key: app held no value of it before (app's keys close to it: "interva\u001b", "interval")."#,
        ], "\(typo)")
      let replaced = try await splintctl(["fleet", "set", "--suite", "app", "interval", "30"] + endpoints)
      #expect(
        replaced.lines == ["interval = 30 in app, written at revision \(try await modified("interval")) (it was 60)"],
        "\(replaced)")
      let json = try await splintctl(
        ["fleet", "set", "--suite", "app", "mode", "fast", "--string", "--json"] + endpoints)
      #expect(
        json.lines == [
          #"{"key":"mode","new":true,"revision":\#(try await modified("mode")),"suite":"app","value":"fast"}"#
        ], "\(json)")
      let other = try await splintctl(["fleet", "set", "--suite", "app", "other", "1"] + endpoints)
      #expect(other.lines.last == "other is a new key: app held no value of it before (app holds no key close to it).")

      // Text that is not JSON: how to quote it, or --string; nothing of the follower's copy.
      let notJSON = try await splintctl(["fleet", "set", "--suite", "app", "mode", "slow"] + endpoints)
      #expect(notJSON.status == 64, "\(notJSON)")
      #expect(notJSON.errorText.contains("The value of mode is not JSON"), "\(notJSON)")
      #expect(notJSON.errorText.contains(#"splintctl fleet set --suite app mode '"slow"'."#), "\(notJSON)")
      #expect(notJSON.errorText.contains("splintctl fleet set --suite app mode slow --string."), "\(notJSON)")
      #expect(!notJSON.errorText.contains("copy"), "\(notJSON)")

      // Enforcing a key the suite holds no value of is refused, unless it is to be set later.
      let unset = try await splintctl(["fleet", "enforce", "--suite", "app", "intervl"] + endpoints)
      #expect(unset.status == 1, "\(unset)")
      #expect(
        unset.errorText.contains("app holds no value of intervl: enforcing it would change nothing until one is set."),
        "\(unset)")
      #expect(
        unset.errorText.contains(
          #"Check the key (app's keys close to it: "interva\u001b", "interval", "intervall"). To enforce it before it is set, give --allow-unset."#
        ), "\(unset)")
      let later = try await splintctl(["fleet", "enforce", "--suite", "app", "later", "--allow-unset"] + endpoints)
      #expect(later.lines == ["later is enforced in app, from revision \(try await modified("$enforced"))"], "\(later)")
      let again = try await splintctl(["fleet", "enforce", "--suite", "app", "later", "--allow-unset"] + endpoints)
      #expect(
        again.lines == [
          "later was already enforced in app: nothing changed (the cluster is at revision \(try await modified()))"
        ], "\(again)")
      let enforced = try await splintctl(["fleet", "enforce", "--suite", "app", "mode", "--json"] + endpoints)
      #expect(
        enforced.lines == [
          #"{"changed":true,"enforced":true,"key":"mode","revision":\#(try await modified("$enforced")),"suite":"app"}"#
        ], "\(enforced)")
      let stopped = try await splintctl(["fleet", "enforce", "--suite", "app", "later", "--stop"] + endpoints)
      #expect(stopped.lines == ["later is no longer enforced in app, from revision \(try await modified("$enforced"))"])
      let notEnforced = try await splintctl(["fleet", "enforce", "--suite", "app", "nope", "--stop"] + endpoints)
      #expect(notEnforced.lines.first?.hasPrefix("nope was not enforced in app: nothing changed") == true)
      #expect(
        try await splintctl(["fleet", "list", "--suite", "app"] + endpoints).lines.last == #"$enforced ["mode"]"#)

      // A removal says what the key held (JSON, or that it was not), and nothing is removed twice.
      let removed = try await splintctl(["fleet", "delete", "--suite", "app", "intervall"] + endpoints)
      #expect(
        removed.lines == ["intervall removed from app at revision \(try await modified()) (it was [1,2])"], "\(removed)"
      )
      try await etcd.put("/splint/app/broken", "fast")
      let broken = try await splintctl(["fleet", "delete", "--suite", "app", "broken"] + endpoints)
      #expect(broken.lines.first?.hasSuffix("(it was not JSON)") == true, "\(broken)")
      let twice = try await splintctl(["fleet", "delete", "--suite", "app", "intervall", "--json"] + endpoints)
      let now = try await modified()
      #expect(twice.lines == [#"{"key":"intervall","removed":false,"revision":\#(now),"suite":"app"}"#], "\(twice)")
      let none = try await splintctl(["fleet", "delete", "--suite", "app", "intervall"] + endpoints)
      #expect(none.lines == ["app holds no intervall: nothing was removed (the cluster is at revision \(now))"])
    }

    @Test(
      "without --endpoints: $ETCDCTL_ENDPOINTS, else the copy's endpoints, said; a cluster away, told once; the demo")
    func endpointsFromElsewhere() async throws {
      let (etcd, _) = try await startCluster()
      let endpoint = etcd.endpoints[0]
      let copy = scratch.url("fleet").appendingPathComponent("app.json").path
      try await etcd.put("/splint/app/interval", "60")
      let nowhere = try await splintctl("fleet", "follow", "--suite", "app")
      #expect(nowhere.status == 64, "\(nowhere)")
      #expect(nowhere.stderr.contains("ETCDCTL_ENDPOINTS") && nowhere.stderr.contains("looked at \(copy)"))

      // HOST:PORT alone, as etcdctl takes it.
      var variable = environment
      variable["ETCDCTL_ENDPOINTS"] = String(endpoint.dropFirst("http://".count))
      let first = try await Programs.start(
        [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app"], environment: variable, seconds: 120)
      defer { first.kill() }
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "60\n" })
      first.send(SIGTERM)
      let firstOutput = await first.wait()
      #expect(firstOutput.status == 0, "\(firstOutput)")
      #expect(
        firstOutput.stderr.hasPrefix("splintctl fleet follow: the endpoints of ETCDCTL_ENDPOINTS: \(endpoint)\n"),
        "\(firstOutput)")

      // Then the copy's, for the follower and the other commands alike.
      let second = try await Programs.start(
        [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app"], environment: environment, seconds: 120)
      defer { second.kill() }
      #expect(await eventually { (try? await splintctl("fleet", "status", "--suite", "app").status) == 0 })
      // The demo daemon reads the fleet's copy as SettingsStore(suite:) does, and says the value is the fleet's.
      let demo = try await Programs.start(
        [Programs.helper("SplintDemo"), "app"], environment: environment, seconds: 60)
      defer { demo.kill() }
      #expect(await eventually { demo.stdoutSoFar.contains("daemon: watching") })
      #expect(
        demo.stdoutSoFar.contains("interval 60 s (the fleet's, from \(copy)), mode fast, "), "\(demo.stdoutSoFar)")
      let set = try await splintctl("fleet", "set", "--suite", "app", "interval", "90")
      #expect(set.status == 0, "\(set)")
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "90\n" })
      #expect(
        await eventually { demo.stdoutSoFar.contains("daemon: interval is now 90 s (the fleet's, from \(copy)), ") })
      try await splintctl("set", "--suite", "app", "mode", "stop")
      let demoOutput = await demo.wait()
      #expect(demoOutput.status == 0, "\(demoOutput)")
      #expect(demoOutput.lines.contains { $0.hasPrefix("daemon: mode is now stop, ") }, "\(demoOutput)")
      second.send(SIGTERM)
      let secondOutput = await second.wait()
      #expect(
        secondOutput.stderr.hasPrefix("splintctl fleet follow: the endpoints of the copy \(copy): \(endpoint)\n"),
        "\(secondOutput)")

      // The cluster away: one plain cause, once; where the endpoints came from; nothing a one-shot command won't do.
      await etcd.stopAll()
      let away = try await splintctl("fleet", "get", "--suite", "app", "interval", "--timeout", "2")
      #expect(away.status == 69, "\(away)")
      #expect(
        away.stderr.split(separator: "\n").first
          == "splintctl: No endpoint of the etcd cluster answered (\(endpoint): connection refused).", "\(away)")
      #expect(away.errorText.contains("The endpoints are those of the copy \(copy); name others with --endpoints."))
      #expect(!away.errorText.contains("follower") && !away.errorText.contains("errno"), "\(away)")
      variable["ETCDCTL_ENDPOINTS"] = endpoint
      let fromVariable = try await splintctl(
        ["fleet", "set", "--suite", "app", "interval", "1"], environment: variable)
      #expect(fromVariable.errorText.contains("The endpoints are those of ETCDCTL_ENDPOINTS;"), "\(fromVariable)")
    }

    @Test("fleet commands say what is missing: no endpoints, no copy, a cluster that does not answer")
    func failures() async throws {
      let none = try await splintctl("fleet", "get", "--suite", "app", "interval")
      #expect(none.status == 64 && none.stderr.contains("--endpoints"), "\(none)")
      let noCopy = try await splintctl("fleet", "status", "--suite", "app")
      #expect(noCopy.status == 1 && noCopy.stderr.contains("No fleet copy"), "\(noCopy)")
      // Each endpoint's cause, in plain words, once: an address, a name of two addresses, a name of none (https:
      // plain http goes to a loopback address only, and the connection fails before TLS would start).
      let port = freeLoopbackPort()
      let down = try await splintctl(
        "fleet", "get", "--suite", "app", "interval", "--timeout", "2", "--endpoints",
        "http://127.0.0.1:\(port),https://localhost:\(port),https://nonexistent.invalid:2379")
      #expect(down.status == 69, "\(down)")
      #expect(
        down.errorText.hasPrefix(
          "splintctl: No endpoint of the etcd cluster answered (http://127.0.0.1:\(port): connection refused; "
            + "https://localhost:\(port): connection refused; https://nonexistent.invalid:2379: nonexistent.invalid "
            + "does not resolve ("), "\(down)")
      #expect(!down.errorText.contains("errno") && !down.errorText.contains("Error"), "\(down)")
      let follow = try await splintctl("fleet", "follow", "--endpoints", "http://127.0.0.1:\(port)")
      #expect(follow.status == 64 && follow.stderr.contains("--suite"), "\(follow)")
      let badTimeout = try await splintctl(
        "fleet", "get", "--suite", "app", "k", "--endpoints", "http://h:1", "--timeout", "0")
      #expect(badTimeout.status == 64, "\(badTimeout)")
    }

    @Test("an etcd put reaches Setting.updates() in another process, through one follower")
    func anotherProcess() async throws {
      let (etcd, cluster) = try await startCluster()
      try await etcd.put("/splint/app/interval", "60")
      let follower = try FleetFollower(suites: ["app"], cluster: cluster, directory: scratch.url("fleet"))
      let following = Task { try await follower.run() }
      defer { following.cancel() }
      let ready = scratch.url("ready").path
      let watcher = try await Programs.start(
        [Programs.helper("SettingsProbe"), "watch", "suite:app", "interval", "90", ready], environment: environment)
      #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
      try await etcd.put("/splint/app/interval", "90")
      let output = await watcher.wait()
      #expect(output.status == 0, "\(output)")
      #expect(output.lines.last == "90")
    }
  }

  extension ProgramOutput {
    /// Standard error with its lines joined by spaces: a message as it reads, whatever lines splintctl broke it into.
    var errorText: String { stderr.split(separator: "\n").joined(separator: " ") }
  }
#endif
