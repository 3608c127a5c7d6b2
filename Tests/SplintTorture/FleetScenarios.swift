// Settings for a fleet under faults: a real 3-member etcd cluster whose members are killed, restarted and stopped
// while two writers change values, with several machines (each its follower, `splintctl fleet follow`, and watcher
// processes on its copy); and a follower's memory over 20,000 changes.

#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import Synchronization
  import TestSupport

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The suite the scenarios follow.
  private let suite = "torture"

  /// Writes `values` in one transaction, again until the cluster takes it (a member killed meanwhile fails a call
  /// now and then); how many calls failed.
  private func write(_ values: [(key: String, jsonText: String)], to cluster: EtcdCluster) async -> Int {
    var failed = 0
    while true {
      do throws(FleetError) {
        try await cluster.setValues(values, suite: suite)
        return failed
      } catch {
        failed += 1
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
  }

  /// What the writers of ``fleetUnderFaults(quick:)`` count: calls tried again, and writers still writing.
  private final class WriterCounts: Sendable {
    let failedCalls = Atomic(0)
    let writing = Atomic(2)
  }

  /// Three machines follow a 3-member cluster while two writers change values and members die, stop and come back:
  /// every watcher ends on the final values, sees no transaction half-applied, and no value go backwards.
  func fleetUnderFaults(quick: Bool) async -> Outcome {
    let changes = quick ? 100 : 500
    return await scenario("a fleet: etcd members killed and stopped under writers, three machines following") {
      outcome in
      guard let splintctl = ProcessInfo.processInfo.environment["SPLINTCTL"] else {
        throw TortureError("script/torture did not say where splintctl is (SPLINTCTL)")
      }
      let etcd = try await LocalEtcd.start(size: 3)
      let cluster = EtcdCluster(endpoints: etcd.endpoints, requestTimeout: .seconds(2))
      let scratch = Scratch()
      var followers: [RunningProgram] = []
      var watchers: [RunningProgram] = []
      defer { (followers + watchers).forEach { $0.kill() } }
      for machine in 0..<3 {
        var environment = ProcessInfo.processInfo.environment
        environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("machine\(machine)", "fleet").path
        environment["XDG_CONFIG_HOME"] = scratch.url("machine\(machine)", "home").path
        followers.append(
          try await Programs.start(
            [splintctl, "fleet", "follow", "--suite", suite, "--endpoints", etcd.endpoints.joined(separator: ",")],
            environment: environment, seconds: 900))
        for watcher in 0..<2 {
          let ready = scratch.url("ready-\(machine)-\(watcher)").path
          watchers.append(
            try await Programs.start(
              [CommandLine.arguments[0], "fleet-watch", ready], environment: environment, seconds: 900))
          guard await eventually(within: 60, { FileManager.default.fileExists(atPath: ready) }) else {
            throw TortureError("a watcher did not start")
          }
        }
      }
      let counts = WriterCounts()
      // The writers: one writes a and b together, the other n alone.
      let pairs = Task {
        for value in 1...changes {
          counts.failedCalls.add(
            await write([("a", String(value)), ("b", String(value))], to: cluster), ordering: .relaxed)
          try? await Task.sleep(for: .milliseconds(5))
        }
        counts.writing.subtract(1, ordering: .relaxed)
      }
      let singles = Task {
        for value in 1...changes {
          counts.failedCalls.add(await write([("n", String(value))], to: cluster), ordering: .relaxed)
          try? await Task.sleep(for: .milliseconds(5))
        }
        counts.writing.subtract(1, ordering: .relaxed)
      }
      // The faults: a member killed and started again, or stopped and resumed, about every second, one at a time so
      // that the cluster keeps its quorum.
      var faults = 0
      while counts.writing.load(ordering: .relaxed) > 0 {
        let member = etcd.members[faults % etcd.members.count]
        if faults % 2 == 0 {
          await etcd.kill(member)
          try await Task.sleep(for: .milliseconds(500))
          try await etcd.start(member)
        } else {
          etcd.pause(member)
          try await Task.sleep(for: .milliseconds(1_500))
          etcd.resume(member)
        }
        faults += 1
        try await etcd.waitForLeader()
        try await Task.sleep(for: .milliseconds(500))
      }
      await pairs.value
      await singles.value
      _ = await write([("done", "true")], to: cluster)
      for watcher in watchers {
        let output = await watcher.wait()
        let fields = output.stdout.split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) } ?? []
        guard fields.count == 6, fields[0] == "final" else {
          outcome.fail("a watcher ended without its report (exit \(output.status)): \(output.stderr.suffix(500))")
          outcome.dataLost += 1
          continue
        }
        let (a, b, n, torn, backwards) = (fields[1], fields[2], fields[3], fields[4], fields[5])
        if a != String(changes) || b != String(changes) || n != String(changes) {
          outcome.fail("a watcher ended on a=\(a) b=\(b) n=\(n), not \(changes)")
          outcome.dataLost += 1
        }
        if torn != "0" { outcome.fail("a watcher saw a transaction half-applied \(torn) times") }
        if backwards != "0" { outcome.fail("a watcher saw a value go backwards \(backwards) times") }
      }
      outcome.operations = changes * 2
      outcome.figure =
        "\(changes * 2) transactions, \(faults) faults, \(counts.failedCalls.load(ordering: .relaxed)) calls retried"
    }
  }

  /// `SplintTorture fleet-watch READY`: a program on a following machine, with Settings on a, b and n of the suite
  /// (its copy where `SPLINT_FLEET_DIRECTORY` says): at each change it checks that a and b (written together) agree
  /// and that no value went backwards. Once `done` is set, prints `final A B N TORN BACKWARDS`.
  func fleetWatch(ready: String) async {
    let store = SettingsStore(suite: suite)
    let (a, b, n) = (
      Setting("a", default: 0, store: store), Setting("b", default: 0, store: store),
      Setting("n", default: 0, store: store)
    )
    let done = Setting("done", default: false, store: store)
    let changes = store.changes()
    _ = (a.value, b.value, n.value, done.value)
    _ = FileManager.default.createFile(atPath: ready, contents: nil)
    var torn = 0
    var backwards = 0
    var last = (a: 0, n: 0)
    for await _ in changes {
      // Two reads are two reads: the next change may come between them (Setting's promise is that a change is seen
      // whole, not that three reads are one). So a is read again after b and n, and the three are taken once a did
      // not change meanwhile: a and b are written together and only go up, so b read between two equal readings of
      // a belongs to a's transaction, and differs from it only if a transaction was seen half-applied.
      var (seenA, seenB, seenN) = (a.value, b.value, n.value)
      while a.value != seenA { (seenA, seenB, seenN) = (a.value, b.value, n.value) }
      if seenA != seenB { torn += 1 }
      if seenA < last.a || seenN < last.n { backwards += 1 }
      last = (seenA, seenN)
      if done.value { break }
    }
    print("final \(a.value) \(b.value) \(n.value) \(torn) \(backwards)")
  }

  /// A follower's memory over `changes` changes, in one process: a follower, Settings that hear each change, and the
  /// writes through the fleet's client. Eight writers at once, each changing a key of its own, so that changes come
  /// as fast as the member takes them (one writer waits for each write's two round trips: 20,000 changes took
  /// 460 s so); not recorded in the suite's history, which has a scenario of its own. Prints
  /// `RESIDENT-AFTER-WARMUP RESIDENT-AT-END` in bytes.
  func fleetMemory(changes: Int) async throws {
    let etcd = try await LocalEtcd.start(size: 1)
    var unrecorded = EtcdCluster(endpoints: etcd.endpoints)
    unrecorded.recording = nil
    let cluster = unrecorded
    let scratch = Scratch()
    let follower = try FleetFollower(suites: [suite], cluster: cluster, directory: scratch.url("fleet"))
    let following = Task { try await follower.run() }
    let store = SettingsStore(fileURL: scratch.url("home", "settings.json"), fleetCopies: follower.copyURLs)
    let writers = 8
    let rounds = max(changes / writers, 1)
    let counters = (0..<writers).map { Setting("counter\($0)", default: 0, store: store) }
    // Writes `values` to every writer's key, the writers at once, and waits until each Setting holds the last.
    func change(to values: ClosedRange<Int>) async throws {
      try await withThrowingTaskGroup { group in
        for writer in 0..<writers {
          group.addTask {
            for value in values {
              try await cluster.setValue(jsonText: String(value), forKey: "counter\(writer)", suite: suite)
            }
          }
        }
        try await group.waitForAll()
      }
      guard await eventually(within: 60, { counters.allSatisfy { $0.value == values.upperBound } }) else {
        throw TortureError("the last change did not arrive: \(counters.map(\.value))")
      }
    }
    let warmup = max(rounds / 10, 1)
    try await change(to: 1...warmup)
    let warm = residentBytes()
    if rounds > warmup { try await change(to: (warmup + 1)...rounds) }
    print("\(warm) \(residentBytes())")
    following.cancel()
    try await following.value
  }

  /// Runs ``fleetMemory(changes:)`` in a process of its own: its memory must not grow after the warm-up.
  func fleetMemoryScenario(quick: Bool) async -> Outcome {
    let changes = quick ? 2_000 : 20_000
    let limit = 4 << 20
    return await scenario("a follower's memory over \(changes) changes stays flat") { outcome in
      let run = try await Programs.run([CommandLine.arguments[0], "fleet-memory", String(changes)], seconds: 900)
      let figures = run.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
      guard figures.count == 2 else { throw TortureError("fleet-memory did not report: \(run.stderr.suffix(2_000))") }
      let growth = figures[1] - figures[0]
      if growth > limit {
        outcome.fail(String(format: "resident memory grew by %.1f MB (at most 4 MB)", Double(growth) / 1_048_576))
      }
      outcome.operations = changes
      outcome.figure = String(format: "RSS %+.2f MB after the warm-up", Double(growth) / 1_048_576)
    }
  }
#endif
