// script/bench runs this in release mode inside `splintctl sandbox`:
//
//   SplintBench run [--quick]                  every measurement, as a Markdown report on standard output
//   SplintBench watch FILE READY [--echo]      (child) the watcher of a propagation measurement
//   SplintBench raw-watch DIRECTORY NAME READY (child) the bare inotify watcher, the floor
//   SplintBench rss COUNT                      (child) the memory of COUNT Settings
//   SplintBench poll-idle COUNT SECONDS        (child) the CPU and wake-ups of COUNT polled files, idle
//   SplintBench time RUNS COMMAND...           times COMMAND as the benchmark times a process, to set beside
//                                              hyperfine -N: each run's nanoseconds
//   SplintBench rollout                        only "a change followed across N machines" (the full run's), as
//                                              Markdown on standard output
//   SplintBench vault                          only the vault store's read against the bare GET (the full run's
//                                              sizes), as Markdown; SPLINT_BAO names the OpenBao program

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch (arguments.first, arguments.count) {
case ("watch", 3), ("watch", 4):
  await watchMode(file: arguments[1], ready: arguments[2], echo: arguments.count == 4 && arguments[3] == "--echo")
case ("fleet-watch", 3):
  #if SplintFleet
    await fleetWatchMode(suite: arguments[1], ready: arguments[2])
  #endif
case ("raw-watch", 4):
  RawInotify.watch(directory: arguments[1], name: arguments[2], ready: arguments[3])
case ("rss", 2):
  await rssMode(count: Int(arguments[1]) ?? 0)
case ("poll-idle", 3):
  await pollIdleMode(count: Int(arguments[1]) ?? 0, seconds: Int(arguments[2]) ?? 0)
case ("time", 3...):
  timeMode(runs: Int(arguments[1]) ?? 10, command: Array(arguments.dropFirst(2)))
case ("rollout", 1):
  #if SplintFleet
    await runAlone { report in try await benchmarkRollout(into: &report) }
  #endif
case ("vault", 1):
  #if SplintFleet
    await runAlone { report in try await benchmarkFleet(Sizes.full, into: &report, commands: false) }
  #endif
case ("run", _):
  let sizes = arguments.contains("--quick") ? Sizes.quick : Sizes.full
  let environment = ProcessInfo.processInfo.environment
  let splintctl = environment["SPLINTCTL"] ?? "splintctl"
  let started = now()
  var report = Report()
  do {
    try await benchmarkSecrets(sizes, into: &report)
    try await benchmarkSettings(sizes, into: &report)
    try await benchmarkCommandLine(sizes, splintctl: splintctl, into: &report)
    try await benchmarkPropagation(sizes, splintctl: splintctl, into: &report)
    try await benchmarkPolling(sizes, into: &report)
    try await benchmarkConfiguration(sizes, into: &report)
    try await benchmarkScale(sizes, into: &report)
    #if SplintFleet
      try await benchmarkFleetSettings(sizes, into: &report)
      try await benchmarkFleet(sizes, into: &report)
      if sizes.propagationChanges == Sizes.full.propagationChanges { try await benchmarkRollout(into: &report) }
    #endif
  } catch {
    FileHandle.standardError.write(Data("SplintBench: \(error)\n".utf8))
    exit(1)
  }
  report.line("The measurements took \(format(Double(now() - started))).")
  let command = "script/bench" + (sizes.propagationChanges == Sizes.quick.propagationChanges ? " --quick" : "")
  print(
    """
    # Benchmarks

    Measured by `\(command)` (release build) on \(environment["BENCH_DATE"] ?? "an unrecorded date"), in one run; \
    each comparison alternates with its anchor, so that a busy machine slows both sides alike. A benchmark, not a \
    test: nothing fails on a missed target.

    - Machine: \(environment["BENCH_MACHINE"] ?? "unrecorded")
    - Software: \(environment["BENCH_SOFTWARE"] ?? "unrecorded")

    ## Targets

    \(report.targetTable)
    \(report.text)
    """, terminator: "")
default:
  FileHandle.standardError.write(Data("usage: SplintBench run [--quick]\n".utf8))
  exit(64)
}

/// Runs one group of the full run alone, and prints its report as Markdown; exits with status 1 when it fails.
func runAlone(_ group: (inout Report) async throws -> Void) async {
  var report = Report()
  do {
    try await group(&report)
  } catch {
    FileHandle.standardError.write(Data("SplintBench: \(error)\n".utf8))
    exit(1)
  }
  print(report.text, terminator: "")
}
