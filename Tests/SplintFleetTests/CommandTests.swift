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
      return environment
    }

    /// Runs splintctl with `arguments`.
    @discardableResult
    func splintctl(_ arguments: String..., input: String = "") async throws -> ProgramOutput {
      try await Programs.run(
        [Programs.helper("splintctl")] + arguments, input: Data(input.utf8), environment: environment)
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
        [Programs.helper("splintctl"), "fleet", "follow", "--suite", "app", "--endpoints", endpoints],
        environment: environment, seconds: 120)
      defer { follower.kill() }
      #expect(await eventually { (try? await splintctl("get", "--suite", "app", "interval").stdout) == "60\n" })
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
      #expect(status.status == 0, "\(status)")
      #expect(status.stdout.contains("state: following since"))
      #expect(status.stdout.contains("left out: broken: not JSON"))
      #expect(status.stdout.contains("enforced: mode"))
      #expect(!status.stdout.contains("overridden by"), "the user's own mode, unused while enforced, is no drift")
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
      #expect(
        firstLog.hasPrefix(
          "splintctl fleet follow: reading every key: this machine has no copy of app yet (a first read)"),
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

    @Test("fleet commands say what is missing: no endpoints, no copy, a cluster that does not answer")
    func failures() async throws {
      let none = try await splintctl("fleet", "get", "--suite", "app", "interval")
      #expect(none.status == 64 && none.stderr.contains("--endpoints"), "\(none)")
      let noCopy = try await splintctl("fleet", "status", "--suite", "app")
      #expect(noCopy.status == 1 && noCopy.stderr.contains("No fleet copy"), "\(noCopy)")
      let port = freeLoopbackPort()
      let down = try await splintctl(
        "fleet", "get", "--suite", "app", "interval", "--endpoints", "http://127.0.0.1:\(port)", "--timeout", "2")
      #expect(down.status == 69 && down.stderr.contains("No endpoint of the etcd cluster answered"), "\(down)")
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
#endif
