#if SplintConfigurationBenchmarks
  import Configuration
  import Foundation
  import SplintConfiguration
  import SplintSettings
  import Synchronization
  import SystemPackage

  /// The changes each watch has seen, as (stamp, arrival) pairs on the monotonic clock.
  private final class Arrivals: Sendable {
    let seen = Mutex<[Int: Int]>([:])
    func record(_ stamp: Int) {
      let arrival = now()
      seen.withLock { if $0[stamp] == nil { $0[stamp] = arrival } }
    }
    func arrived(_ stamp: Int) -> Bool { seen.withLock { $0[stamp] != nil } }
  }

  /// Our settings provider and swift-configuration's ReloadingFileProvider, each under a `ConfigReader` watch of the
  /// same key of the same file, which this process rewrites as an editor saves (a temporary file renamed over it).
  func benchmarkConfiguration(_ sizes: Sizes, into report: inout Report) async throws {
    let changes = sizes.configurationChanges
    let pollInterval = Duration.milliseconds(1)
    let (ours, theirs, missed, idle) = try await withScratch { directory in
      let file = directory.appendingPathComponent("settings.json")
      func write(_ stamp: Int) throws {
        let temporary = directory.appendingPathComponent(".settings.json.tmp")
        try Data(#"{"bench": {"t": "\#(stamp)"}}"#.utf8).write(to: temporary)
        guard rename(temporary.path, file.path) == 0 else { throw BenchError("rename failed: errno \(errno)") }
      }
      try write(0)
      let settings = ConfigReader(provider: SettingsProvider(store: SettingsStore(fileURL: file)))
      let polling = try await ReloadingFileProvider<JSONSnapshot>(
        filePath: .init(file.path), pollInterval: pollInterval)
      let reloading = ConfigReader(provider: polling)
      let (oursSeen, theirsSeen) = (Arrivals(), Arrivals())
      let (ours, theirs, missed) = try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await polling.run() }
        for (reader, arrivals) in [(settings, oursSeen), (reloading, theirsSeen)] {
          group.addTask {
            // A string: ReloadingFileProvider 1.4.0 compares old and new values as strings to decide whom to tell,
            // so a watch of an integer never hears of a change.
            try await reader.watchString(forKey: "bench.t", default: "") { updates in
              for await stamp in updates { if let stamp = Int(stamp) { arrivals.record(stamp) } }
            }
          }
        }
        // Both watches are under way once each has seen the file's first value.
        let started = now()
        while !(oursSeen.arrived(0) && theirsSeen.arrived(0)), now() - started < 10_000_000_000 {
          try await Task.sleep(for: .milliseconds(1))
        }
        var stamps: [Int] = []
        for _ in 0..<changes {
          let stamp = now()
          stamps.append(stamp)
          try write(stamp)
          // The next change waits for both watches, or 200 polls: a change the poller never notices (two saves
          // within the file system's timestamp granularity look like one) counts as missed.
          while !(oursSeen.arrived(stamp) && theirsSeen.arrived(stamp)), now() - stamp < 200_000_000 {
            try await Task.sleep(for: .microseconds(200))
          }
          try await Task.sleep(for: .milliseconds(2))
        }
        group.cancelAll()
        func latencies(_ arrivals: Arrivals) -> [Double] {
          arrivals.seen.withLock { seen in stamps.compactMap { stamp in seen[stamp].map { Double($0 - stamp) } } }
        }
        let missed = stamps.filter { !theirsSeen.arrived($0) }.count + stamps.filter { !oursSeen.arrived($0) }.count
        return (Summary(latencies(oursSeen)), Summary(latencies(theirsSeen)), missed)
      }
      // What watching costs while nothing changes: each alone for a second.
      let idle = (
        ours: try await cpuTime(whileRunning: {
          try await settings.watchString(forKey: "bench.t", default: "") { for await _ in $0 {} }
        }),
        theirs: try await cpuTime(whileRunning: {
          try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await polling.run() }
            try await reloading.watchString(forKey: "bench.t", default: "") { for await _ in $0 {} }
          }
        })
      )
      return (ours, theirs, missed, idle)
    }
    report.distributionTable(
      "swift-configuration: a settings file's change → a `ConfigReader` watch",
      [
        Distribution(
          what: "`SettingsProvider` (inotify) → `ConfigReader.watchString`", summary: ours,
          target: "p50 under `ReloadingFileProvider`'s polling every 1 ms", met: ours.median < theirs.median,
          versus: theirs),
        Distribution(
          what: "swift-configuration's `ReloadingFileProvider<JSONSnapshot>`, polling every 1 ms → "
            + "`ConfigReader.watchString`", summary: theirs),
      ],
      explanation: """
        One process rewrites a settings file \(changes) times as an editor saves it (a temporary file renamed over \
        it), each time with the monotonic clock's time in the value; two `ConfigReader`s in the same process watch \
        the same key, one through our `SettingsProvider`, one through swift-configuration 1.4.0's \
        `ReloadingFileProvider<JSONSnapshot>` with a poll interval of 1 ms (its API takes any `Duration`; its \
        default is 15 s, and its configuration key `pollIntervalSeconds` goes no lower than 1 s). The value is a \
        string: `ReloadingFileProvider` 1.4.0 decides which watches to tell by comparing the old and new values as \
        strings, so a `watchInt` on it never hears of a change to an integer (our provider's does). The next write \
        waits until both have seen the change, or 200 ms; changes missed: \(missed). While nothing changes, the \
        process used \(format(idle.ours)) of CPU time in a second with our watch alone, and \(format(idle.theirs)) \
        with `ReloadingFileProvider`'s run loop and watch alone.
        """)
  }

  /// The CPU time this process uses in one second while `body` runs (after 100 ms to settle); `body` is cancelled
  /// then.
  private func cpuTime(whileRunning body: @escaping @Sendable () async throws -> Void) async throws -> Double {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await body() }
      try await Task.sleep(for: .milliseconds(100))
      let start = processCPUTime()
      try await Task.sleep(for: .seconds(1))
      let used = processCPUTime() - start
      group.cancelAll()
      return Double(used)
    }
  }

  /// This process's CPU time, in nanoseconds.
  private func processCPUTime() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
  }
#else
  /// Built without the SplintConfigurationBenchmarks trait: the swift-configuration row is left out.
  func benchmarkConfiguration(_ sizes: Sizes, into report: inout Report) async throws {
    report.line(
      "(The swift-configuration row needs the SplintConfigurationBenchmarks trait, which script/bench turns on.)")
    report.line()
  }
#endif
