// Following a change while machines die: a writer changes a value and runs `splintctl fleet wait` after each change,
// as a deploy pipeline would, while the followers of three machines are killed and started again.

#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The suite the rollout scenario follows.
  private let rolloutSuite = "torture-rollout"

  /// Three machines follow a 3-member cluster; a writer changes a value and runs `splintctl fleet wait --revision R
  /// --expect 3` after each change, while a machine's follower is killed (SIGKILL) at a random moment after every
  /// other change and started again under its name up to 1.5 s later, within its presence's time to live (so that
  /// every machine stays alive to the wait). At least 90% of the waits return 0 within their timeout, and every one
  /// that returns 0 is true: each machine's copy holds revision R then.
  func rolloutsUnderKills(quick: Bool) async -> Outcome {
    let changes = quick ? 10 : 40
    return await scenario("fleet wait after each change, followers killed and restarted: every 0 true") { outcome in
      guard let splintctl = ProcessInfo.processInfo.environment["SPLINTCTL"] else {
        throw TortureError("script/torture did not say where splintctl is (SPLINTCTL)")
      }
      let etcd = try await LocalEtcd.start(size: 3)
      let endpoints = etcd.endpoints.joined(separator: ",")
      let cluster = EtcdCluster(endpoints: etcd.endpoints)
      let scratch = Scratch()
      let machines = (0..<3).map { "torture-\($0)" }
      let copies = machines.map { scratch.url($0, "fleet", "\(rolloutSuite).json") }
      // Without timeout(1) between (seconds: nil), so that SIGKILL reaches the follower itself.
      func follow(_ machine: Int) async throws -> RunningProgram {
        var environment = ProcessInfo.processInfo.environment
        environment["SPLINT_FLEET_DIRECTORY"] = copies[machine].deletingLastPathComponent().path
        environment["XDG_CONFIG_HOME"] = scratch.url(machines[machine], "home").path
        return try await Programs.start(
          [
            splintctl, "fleet", "follow", "--suite", rolloutSuite, "--machine", machines[machine], "--endpoints",
            endpoints,
          ], environment: environment, seconds: nil)
      }
      var followers: [RunningProgram] = []
      defer { followers.forEach { $0.kill() } }
      for machine in machines.indices { followers.append(try await follow(machine)) }
      var (returned, kills) = (0, 0)
      var failed: [String] = []
      for value in 1...changes {
        let revision = try await cluster.setValue(jsonText: String(value), forKey: "n", suite: rolloutSuite).revision
        let waiting = Task {
          try await Programs.run(
            [
              splintctl, "fleet", "wait", "--suite", rolloutSuite, "--revision", String(revision), "--expect", "3",
              "--timeout", "20", "--endpoints", endpoints,
            ], seconds: 60)
        }
        if value % 2 == 0 {
          // A machine dies at a random moment of the wait (or before it starts), and comes back.
          let machine = Int.random(in: machines.indices)
          try await Task.sleep(for: .milliseconds(Int.random(in: 0...300)))
          followers[machine].send(SIGKILL)
          await followers[machine].wait()
          kills += 1
          try await Task.sleep(for: .milliseconds(Int.random(in: 0...1_500)))
          followers[machine] = try await follow(machine)
        }
        let wait = try await waiting.value
        guard wait.status == 0 else {
          failed.append("exit \(wait.status): \(wait.stderr.suffix(300))")
          continue
        }
        returned += 1
        // A wait that returned 0 is true only if each machine's copy holds the revision (copies never go back, so a
        // copy read now that is behind was behind when the wait returned).
        for (machine, copy) in zip(machines, copies) {
          let held = SettingsStore(fileURL: scratch.url("reader.json"), fleetCopies: [copy]).fleetStatus.first?.revision
          if (held ?? 0) < revision {
            outcome.lose("fleet wait returned 0 for revision \(revision), but \(machine)'s copy holds \(held ?? 0)")
          }
        }
      }
      // At least 90%: a wait may outlast its timeout when a machine's follower is slow to come back.
      if returned * 10 < changes * 9 {
        outcome.fail("only \(returned) of \(changes) waits returned 0; the others: \(failed.prefix(3))")
      }
      outcome.operations = changes
      outcome.figure = "\(returned) of \(changes) waits returned 0, each true; \(kills) followers killed and restarted"
    }
  }
#endif
