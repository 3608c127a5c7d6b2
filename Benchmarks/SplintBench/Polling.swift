import Foundation
import SplintSettings

// MARK: - Polling, where inotify does not see every change

/// The arguments that run the benchmark's `mode` in a user namespace whose inotify limit is 0 (no instance at all),
/// so that every file it follows is polled, as on NFS or FUSE; nil where user namespaces are refused.
func withoutInotify(_ mode: [String]) -> [String]? {
  guard runProgram(["unshare", "--user", "--map-root-user", "true"]).status == 0 else { return nil }
  return [
    "unshare", "--user", "--map-root-user", "sh", "-c",
    #"echo 0 >/proc/sys/user/max_inotify_instances && exec "$0" "$@""#, benchBinary,
  ] + mode
}

func benchmarkPolling(_ sizes: Sizes, into report: inout Report) async throws {
  let files = 100
  let seconds = sizes.pollingSeconds
  guard let idle = withoutInotify(["poll-idle", String(files), String(seconds)]) else {
    report.line("## Polling where inotify does not see every change")
    report.line()
    report.line("Not measured: this machine refuses user namespaces, in which the benchmark takes inotify away.")
    report.line()
    return
  }
  // "cpu NANOSECONDS wakeups COUNT" over `seconds` of idling with `files` polled files.
  let run = runProgram(idle, output: true)
  let fields = run.output.split(whereSeparator: \.isWhitespace)
  guard run.status == 0, fields.count == 4, let cpu = Double(fields[1]), let wakeups = Double(fields[3]) else {
    throw BenchError("poll-idle failed: \(run.output)")
  }
  let share = cpu / (Double(seconds) * 1e9)
  let idleResult =
    String(format: "%.3f%% of a core", share * 100) + " (\(format(cpu / Double(seconds))) of CPU time a second), "
    + String(format: "%.1f context switches a second", wakeups / Double(seconds))
  report.target(
    "\(files) polled files, idle, at the default interval (1 s)", result: idleResult,
    target: "under 0.1% of a core", met: share < 0.001)

  // A change made where inotify does not see it arrives at the next poll: between 0 and the interval later.
  var delays: [Double] = []
  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json")
    let ready = directory.appendingPathComponent("ready").path
    guard let arguments = withoutInotify(["watch", file.path, ready]) else { return }
    let writer = Setting("t", default: 0, store: SettingsStore(fileURL: file))
    let watcher = try Child(arguments, output: true)
    waitForFile(ready)
    for _ in 0..<sizes.pollingChanges {
      writer.value = now()
      // Apart by more than the interval, at a time that falls anywhere within it.
      usleep(1_000_000 + UInt32.random(in: 0..<300_000))
    }
    writer.value = -1
    delays = String(decoding: watcher.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
      .split(separator: "\n").compactMap { Double($0) }
    watcher.wait()
  }
  let polled = Summary(delays)
  report.distributionTable(
    "Polling where inotify does not see every change",
    [
      Distribution(
        what: "`Setting` assignment → `updates()` in a process that polls (interval 1 s)", summary: polled,
        target: "within the interval and its timer leeway: max under 1.2 s", met: polled.max < 1_200_000_000)
    ],
    explanation: """
      On NFS, SMB, 9p and FUSE, and where a user's inotify instances or watches are used up, a store follows its \
      file by polling: one timer for every polled file, a `stat` of each at its interval (`SettingsStore.Options.\
      pollInterval`, 1 s unless set), and a read only when what `stat` says changed. Measured in a user namespace \
      whose inotify limit is 0, so that every file is polled. Idle: \(files) files followed for \(seconds) s cost \
      \(idleResult) (the whole process's CPU time, user and system, from `getrusage`). \
      Propagation: \(sizes.pollingChanges) changes about 1.15 s apart, from this process to one that polls; a change \
      waits for the next poll, so the delays spread over the interval (NFS's attribute cache, `actimeo`, and FUSE's \
      can add to them: see the SharingAPreference guide).
      """)
}

/// Child mode: follows `count` files (a `Setting` read on each), all polled here, and after the first poll prints
/// "cpu NANOSECONDS wakeups COUNT": the process's CPU time and context switches over `seconds` of idling.
func pollIdleMode(count: Int, seconds: Int) async -> Never {
  await withScratch { directory in
    let settings = (0..<count).map { index in
      Setting("k", default: 0, store: SettingsStore(fileURL: directory.appendingPathComponent("\(index).json")))
    }
    _ = settings.map(\.value)  // each file watched, and here polled
    try? await Task.sleep(for: .seconds(2))
    let (cpuBefore, switchesBefore) = usage()
    try? await Task.sleep(for: .seconds(seconds))
    let (cpuAfter, switchesAfter) = usage()
    print("cpu \(cpuAfter - cpuBefore) wakeups \(switchesAfter - switchesBefore)")
    withExtendedLifetime(settings) {}
  }
  exit(0)
}

/// The process's CPU time (user and system) in nanoseconds, and its context switches (voluntary and not).
private func usage() -> (cpu: Int, switches: Int) {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  let cpu =
    (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000_000
    + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1_000
  return (cpu, usage.ru_nvcsw + usage.ru_nivcsw)
}
