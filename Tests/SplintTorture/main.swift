// The fault and load suite (script/torture runs it, in release mode, inside `splintctl sandbox`):
//
//   SplintTorture run [--quick] [--only NAME]
//       every scenario (or the one named); the summary table on standard output, progress on standard error; exit
//       status 1 when anything failed or was lost
//
// The other modes are the child processes of the scenarios: increment, own-keys, kill-loop, burst-watch,
// garbage-open, disk-child, write-for, converge-watch, try-writes, read-loop, daemon-week, c-lookups,
// hold-secret, portal-cycle, vault-reads (with the SplintFleet trait).

import Foundation
import SplintSettings
import TestSupport

// The top level stays synchronous and waits for the mode on the cooperative pool: an async top level hands the main
// thread to dispatch_main, which valgrind cannot run (script/leaks runs `daemon-week` under it).
let finished = DispatchSemaphore(value: 0)
Task.detached {
  do {
    try await run(Array(CommandLine.arguments.dropFirst()))
  } catch {
    FileHandle.standardError.write(Data("SplintTorture: \(error)\n".utf8))
    exit(70)
  }
  finished.signal()
}
finished.wait()

/// Runs the mode `arguments` name.
func run(_ arguments: [String]) async throws {
  switch (arguments.first, arguments.count) {
  case ("increment", 3):
    let settings = store(arguments[1])
    let counter = Setting("counter", default: 0, store: settings)
    for _ in 0..<(Int(arguments[2]) ?? 0) { try settings.update { $0[counter] += 1 } }
  case ("own-keys", 4):
    let settings = store(arguments[1])
    for index in 0..<(Int(arguments[3]) ?? 0) { try settings.set(.int(index), forKey: "\(arguments[2])-\(index)") }
  case ("kill-loop", 2):
    let settings = store(arguments[1])
    var first = true
    while true {
      try settings.update { settings in
        let count = (settings["counter"].flatMap { try? Int(jsonValue: $0) } ?? 0) + 1
        settings["counter"] = .int(count)
        settings["payload"] = .string(payload(for: count))
      }
      if first {
        print("writing")
        fflush(nil)
        first = false
      }
    }
  case ("burst-watch", 3):
    let value = Setting("v", default: 0, store: store(arguments[1]))
    let updates = value.updates(initial: false)
    _ = FileManager.default.createFile(atPath: arguments[2], contents: nil)
    for await seen in updates {
      if seen == -1 { exit(0) }
      print(seen)
      fflush(nil)
    }
  case ("garbage-open", 2):
    garbageOpen(arguments[1])
  case ("disk-child", 3):
    await diskChild(arguments[1], arguments[2])
  case ("write-for", 4):
    writeFor(arguments[1], arguments[2], Double(arguments[3]) ?? 0)
  case ("converge-watch", 3):
    await convergeWatch(arguments[1], arguments[2])
  case ("try-writes", 3):
    tryWrites(arguments[1], count: Int(arguments[2]) ?? 0)
  case ("read-loop", 3):
    readLoop(arguments[1], count: Int(arguments[2]) ?? 0)
  case ("daemon-week", 2):
    await daemonWeek(reads: Int(arguments[1]) ?? 0)
  case ("c-lookups", 2):
    cLookups(Int(arguments[1]) ?? 0)
  case ("portal-cycle", 3):
    try portalCycle(rounds: Int(arguments[1]) ?? 0, reads: Int(arguments[2]) ?? 0)
  case ("fleet-watch", 2):
    #if SplintFleet
      await fleetWatch(ready: arguments[1])
    #endif
  case ("fleet-memory", 2):
    #if SplintFleet
      try await fleetMemory(changes: Int(arguments[1]) ?? 0)
    #endif
  case ("vault-reads", 2):
    #if SplintFleet
      vaultReads(Int(arguments[1]) ?? 0)
    #endif
  case ("hold-secret", 4):
    holdSecret(service: arguments[1], account: arguments[2], count: Int(arguments[3]) ?? 0)
  case ("run", _):
    let quick = arguments.contains("--quick")
    let only = arguments.firstIndex(of: "--only").flatMap {
      arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
    }
    let scratch = Scratch()
    var scenarios: [(name: String, run: () async -> Outcome)] = [
      ("increments", { await concurrentIncrements(scratch) }),
      ("keys", { await concurrentKeys(scratch) }),
      ("killed-writers", { await killedWriters(scratch, rounds: quick ? 20 : 200) }),
      ("bursts", { await burstsToAWatcher(scratch) }),
      ("garbage", { await garbageFiles(scratch) }),
      ("fuzz", { await fuzzParser(seconds: quick ? 5 : 30) }),
      ("disks", { await fullAndReadOnlyDisks(scratch) }),
      ("watchers", { await manyWatchersConverge(scratch) }),
      ("attacker", { await attackerBesideRootWriters(quick: quick) }),
      ("secrets", { await concurrentSecrets() }),
      ("keyring-killed", { await keyringKilledMidLoop() }),
      ("keyring-locked", { await lockedMidLoop() }),
      ("security", { await security(scratch) }),
      ("daemon-week", { await daemonsWeek(quick: quick) }),
      ("core-dump", { await secretInACoreDump(scratch) }),
    ]
    #if SplintFleet
      scenarios += [
        ("fleet", { await fleetUnderFaults(quick: quick) }),
        ("fleet-history", { await rollbacksAmongWriters(quick: quick) }),
        ("fleet-rollout", { await rolloutsUnderKills(quick: quick) }),
        ("fleet-memory", { await fleetMemoryScenario(quick: quick) }),
        ("vault-reads", { await vaultReadsScenario(quick: quick) }),
      ]
    #endif
    if let only, !scenarios.contains(where: { $0.name == only }) {
      let names = scenarios.map(\.name).joined(separator: ", ")
      FileHandle.standardError.write(Data("SplintTorture: no scenario \(only); the scenarios: \(names)\n".utf8))
      exit(64)
    }
    var outcomes: [Outcome] = []
    for scenario in scenarios where only == nil || scenario.name == only { outcomes.append(await scenario.run()) }
    print(table(outcomes), terminator: "")
    exit(!outcomes.isEmpty && outcomes.allSatisfy { $0.failures == 0 && $0.dataLost == 0 } ? 0 : 1)
  default:
    FileHandle.standardError.write(Data("usage: SplintTorture run [--quick] [--only NAME]\n".utf8))
    exit(64)
  }
}

/// Runs the libFuzzer target script/torture built from the settings file parser, for `seconds`.
func fuzzParser(seconds: Int) async -> Outcome {
  await scenario("coverage-guided fuzzing of the settings file parser (libFuzzer)") { outcome in
    guard let fuzzer = ProcessInfo.processInfo.environment["FUZZER"],
      let corpus = ProcessInfo.processInfo.environment["FUZZ_CORPUS"]
    else { throw TortureError("script/torture did not build the fuzzer (FUZZER, FUZZ_CORPUS)") }
    let output = try await Programs.run(
      [fuzzer, "-max_total_time=\(seconds)", "-max_len=65536", "-timeout=10", "-rss_limit_mb=4096", corpus],
      seconds: seconds + 120)
    let runs =
      output.stderr.split(separator: "\n").last { $0.hasPrefix("Done ") }
      .flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    outcome.operations = runs
    if output.status != 0 { outcome.fail("the fuzzer found a failure: \(output.stderr.suffix(2_000))") }
    outcome.figure = "\(runs) inputs, \(seconds) s"
  }
}

struct TortureError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
