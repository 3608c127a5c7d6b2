import Foundation
import LibSecretFloor
import SplintSecrets
import SplintSettings
import Synchronization

/// How many samples each measurement takes; `--quick` takes fewer, for trying the benchmark out.
struct Sizes {
  let secretCalls: Int
  let processRuns: Int
  let propagationChanges: Int
  let readBatches: Int

  static let full = Sizes(secretCalls: 1_000, processRuns: 50, propagationChanges: 500, readBatches: 200)
  static let quick = Sizes(secretCalls: 100, processRuns: 10, propagationChanges: 100, readBatches: 20)
}

struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

// MARK: - Secrets

func benchmarkSecrets(_ sizes: Sizes, into report: inout Report) async throws {
  let service = "splint-bench", account = "token"
  let credential = Credential(service: service, account: account)
  try await credential.save("bench-token-0123456789")

  let reads = try interleaved(
    sizes.secretCalls,
    [
      { _ = try credential.read() }, { _ = LibSecretFloor.lookup(service: service, account: account) },
    ])
  let (ours, floor) = (Summary(reads[0]), Summary(reads[1]))

  // Python keyring answers one timed get_password per request line, so that its calls alternate with ours.
  let python = """
    import sys, time
    from keyring.backends import SecretService
    kr = SecretService.Keyring()
    service, account = sys.argv[1], sys.argv[2]
    for _ in range(5): kr.get_password(service, account)
    print("ready", flush=True)
    for _ in sys.stdin:
        start = time.perf_counter_ns(); kr.get_password(service, account)
        print(time.perf_counter_ns() - start, flush=True)
    """
  let pythonProcess = try await Child(["/usr/bin/python3", "-c", python, service, account])
  let lines = LineReader(pythonProcess.output)
  guard lines.next() == "ready" else { throw BenchError("Python keyring did not start") }
  var oursBesidePython: [Double] = []
  var pythonCalls: [Double] = []
  for _ in 0..<(sizes.processRuns * 4) {
    oursBesidePython += try sample(1, warmup: 0) { _ = try credential.read() }
    try pythonProcess.input.write(contentsOf: Data("\n".utf8))
    pythonCalls.append(Double(lines.next() ?? "") ?? .nan)
  }
  try pythonProcess.input.close()
  try await pythonProcess.wait()

  var oursBesideSecretTool: [Double] = []
  var secretToolRuns: [Double] = []
  for _ in 0..<sizes.processRuns {
    oursBesideSecretTool += try sample(1, warmup: 0) { _ = try credential.read() }
    secretToolRuns.append(
      Double(await runProgram(["secret-tool", "lookup", "service", service, "username", account]).nanoseconds))
  }
  let (besidePython, python3) = (Summary(oursBesidePython), Summary(pythonCalls))
  let (besideSecretTool, secretTool) = (Summary(oursBesideSecretTool), Summary(secretToolRuns))

  let saves = try interleaved(
    sizes.secretCalls / 4,
    [
      { try credential.save("bench-token-\(now())") },
      { _ = LibSecretFloor.store("bench-token-\(now())", service: service, account: "c") },
    ])
  let (saveOurs, saveFloor) = (Summary(saves[0]), Summary(saves[1]))

  let large = Credential(service: service, account: "large")
  try await large.save(Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
  let largeRead = Summary(try sample(sizes.secretCalls / 4) { _ = try large.readData() })

  report.table(
    "Secrets: Credential against libsecret, Python keyring and secret-tool",
    [
      .init(
        what: "`Credential.read()`", ours: ours, anchorName: "libsecret C `secret_service_lookup_sync`", anchor: floor,
        target: "at most 5% over the C floor", met: ours.median <= floor.median * 1.05),
      .init(
        what: "`Credential.read()`", ours: besidePython, anchorName: "Python keyring `get_password`", anchor: python3,
        target: "at least 10x faster", met: python3.median / besidePython.median >= 10),
      .init(
        what: "`Credential.read()`", ours: besideSecretTool, anchorName: "one `secret-tool lookup` process",
        anchor: secretTool, target: "", met: nil),
      .init(
        what: "`Credential.save(_:)`", ours: saveOurs, anchorName: "libsecret C `secret_service_store_sync`",
        anchor: saveFloor, target: "", met: nil,
        note: "ours first looks for items other tools wrote, to update them in place"),
      .init(
        what: "`Credential.readData()` of 64 KiB", ours: largeRead, anchorName: "", anchor: nil, target: "", met: nil),
    ],
    explanation: """
      gnome-keyring in a `splintctl sandbox` session (a private bus, an unlocked throw-away keyring). Every \
      comparison alternates call by call with ours, so each row's two columns were measured side by side: \
      \(ours.count) calls each against libsecret's C API, \(python3.count) against Python keyring (a running \
      process, timed inside Python, one call per request), \(secretTool.count) against `secret-tool lookup` (a \
      new process each time, start included, as a shell script pays).
      """)
}

// MARK: - Settings in one process

func benchmarkSettings(_ sizes: Sizes, into report: inout Report) async throws {
  try await withScratch { directory in
    let store = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"))
    let setting = Setting("count", default: 0, store: store)
    setting.value = 42
    let batch = 10_000
    var sink = 0
    let settingRead = Summary(sampleBatches(sizes.readBatches, of: batch) { sink &+= setting.value })

    let suite = "splint-bench-\(UUID())"
    guard let defaults = UserDefaults(suiteName: suite) else { throw BenchError("UserDefaults(suiteName:) failed") }
    defer { UserDefaults.standard.removePersistentDomain(forName: suite) }
    defaults.set(42, forKey: "count")
    let defaultsRead = Summary(
      sampleBatches(sizes.readBatches, of: batch / 10) { sink &+= defaults.integer(forKey: "count") })

    let mutex = Mutex(42)
    let mutexRead = Summary(sampleBatches(sizes.readBatches, of: batch) { sink &+= mutex.withLock { $0 } })
    if sink == 0 { print("unreachable: keeps the reads from being optimized away") }

    let fast = SettingsStore(fileURL: directory.appendingPathComponent("nosync.json"), syncsToDisk: false)
    let fastSetting = Setting("count", default: 0, store: fast)
    var next = 0
    let writes = try interleaved(
      sizes.secretCalls / 3,
      [
        {
          next += 1
          setting.value = next
        },
        {
          next += 1
          fastSetting.value = next
        },
        {
          next += 1
          defaults.set(next, forKey: "count")
          defaults.synchronize()
        },
      ])
    let (durable, noSync, defaultsWrite) = (Summary(writes[0]), Summary(writes[1]), Summary(writes[2]))

    report.table(
      "Settings: reading and assigning in one process",
      [
        .init(
          what: "`Setting.value` read", ours: settingRead, anchorName: "`UserDefaults.integer(forKey:)`",
          anchor: defaultsRead, target: "at least 10x faster", met: defaultsRead.median / settingRead.median >= 10),
        .init(
          what: "`Setting.value` read", ours: settingRead, anchorName: "a bare `Mutex<Int>` read (the floor)",
          anchor: mutexRead, target: "", met: nil),
        .init(
          what: "assignment, durable (lock, temp file, fsync, rename, directory fsync)", ours: durable,
          anchorName: "`UserDefaults.set` + `synchronize()`, neither atomic nor durable", anchor: defaultsWrite,
          target: "", met: nil),
        .init(
          what: "assignment without fsync (still locked and atomic)", ours: noSync,
          anchorName: "`UserDefaults.set` + `synchronize()`", anchor: defaultsWrite, target: "", met: nil),
      ],
      explanation: """
        Reads are timed in batches (\(batch) reads of `Setting.value` or the `Mutex`, \(batch / 10) of \
        `UserDefaults`) and reported per read. `UserDefaults` on Linux rewrites its plist in place with O_TRUNC and \
        takes no lock: a crash can leave it empty and concurrent processes lose writes, so its write is cheaper \
        because it promises less. The three kinds of assignment alternate; \(durable.count) of each.
        """)
  }
}

// MARK: - Propagation between processes

/// Starts `count` watcher processes (this binary's `watch` mode) on `file`, runs `write` with the stamp writer,
/// and returns every latency the watchers saw, in nanoseconds.
func propagate(
  to count: Int, file: URL, changes: Int, spacing: useconds_t, write: (Int) async -> Void
) async throws -> [Double] {
  let readyFiles = (0..<count).map { file.deletingLastPathComponent().appendingPathComponent("ready-\($0)").path }
  var watchers: [Child] = []
  for ready in readyFiles { watchers.append(try await Child([benchBinary, "watch", file.path, ready])) }
  readyFiles.forEach(waitForFile)
  for _ in 0..<changes {
    await write(now())
    usleep(spacing)
  }
  await write(-1)
  var latencies: [Double] = []
  for watcher in watchers {
    latencies += String(decoding: watcher.output.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
      .compactMap { Double($0) }
    try await watcher.wait()
  }
  return latencies
}

/// Child mode: follows the `t` setting of `file`, printing how long after its stamp each value arrived.
func watchMode(file: String, ready: String) async -> Never {
  let setting = Setting("t", default: 0, store: SettingsStore(fileURL: URL(fileURLWithPath: file)))
  let updates = setting.updates(initial: false)
  _ = FileManager.default.createFile(atPath: ready, contents: nil)
  // Ends at the writer's sentinel, or after two minutes whatever happens, so that a failed writer cannot hang the run.
  let latencies = await withTaskGroup(of: [Int]?.self) { group in
    group.addTask {
      var latencies: [Int] = []
      for await stamp in updates {
        if stamp < 0 { break }
        latencies.append(now() - stamp)
      }
      return latencies
    }
    group.addTask {
      try? await Task.sleep(for: .seconds(120))
      return nil
    }
    let first = await group.next() ?? nil
    group.cancelAll()
    return first ?? []
  }
  print(latencies.map(String.init).joined(separator: "\n"))
  exit(0)
}

func benchmarkPropagation(_ sizes: Sizes, splintctl: String, into report: inout Report) async throws {
  let changes = sizes.propagationChanges
  var rows: [(String, Summary, String, Bool?)] = []

  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json")
    let writer = Setting("t", default: 0, store: SettingsStore(fileURL: file))
    let ours = Summary(try await propagate(to: 1, file: file, changes: changes, spacing: 2_000) { writer.value = $0 })
    rows.append(
      (
        "`Setting` assignment (durable) in one process → `updates()` in another", ours,
        "p50 under 1 ms, p99 under 5 ms", ours.median < 1_000_000 && ours.p99 < 5_000_000
      ))
  }

  try await withScratch { directory in
    let ready = directory.appendingPathComponent("ready").path
    let watcher = try await Child([benchBinary, "raw-watch", directory.path, "stamp", ready])
    waitForFile(ready)
    func stamp(_ value: Int) {
      let temporary = directory.appendingPathComponent(".stamp.tmp")
      try? Data(String(value).utf8).write(to: temporary)
      rename(temporary.path, directory.appendingPathComponent("stamp").path)
    }
    for _ in 0..<changes {
      stamp(now())
      usleep(2_000)
    }
    stamp(-1)
    let text = String(decoding: watcher.output.readDataToEndOfFile(), as: UTF8.self)
    try await watcher.wait()
    rows.append(
      (
        "raw inotify: a rename (no fsync) → a bare watcher reads it (the floor)",
        Summary(text.split(separator: "\n").compactMap { Double($0) }), "", nil
      ))
  }

  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json")
    let viaCLI = Summary(
      try await propagate(to: 1, file: file, changes: changes, spacing: 2_000) { stamp in
        let run = await runProgram([splintctl, "set", "--file", file.path, "t", "--", String(stamp)])
        if run.status != 0 { FileHandle.standardError.write(Data("SplintBench: splintctl set failed\n".utf8)) }
      })
    rows.append(("`splintctl set` (a new process each time) → `updates()` in another", viaCLI, "", nil))
  }

  // Line by line into the pipe, as on a terminal.
  let dconf = try await Child(["/usr/bin/stdbuf", "-oL", "dconf", "watch", "/splint/bench/"])
  let arrivals = Mutex<[Double]>([])
  let finished = DispatchSemaphore(value: 0)
  Thread {
    var pending = Data()
    while true {
      let chunk = dconf.output.availableData
      if chunk.isEmpty { break }
      let arrived = now()
      pending += chunk
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending = Data(pending[(newline + 1)...])
        // A value line reads "  int64 <stamp>".
        guard line.hasPrefix("  "), let stamp = line.split(separator: " ").last.flatMap({ Int($0) }) else { continue }
        if stamp < 0 {
          finished.signal()
          return
        }
        arrivals.withLock { $0.append(Double(arrived - stamp)) }
      }
    }
  }.start()
  // The service is started first, as it is on a desktop.
  _ = await runProgram(["dconf", "write", "/splint/bench/t", "int64 0"])
  usleep(200_000)
  arrivals.withLock { $0.removeAll() }
  for _ in 0..<changes {
    _ = await runProgram(["dconf", "write", "/splint/bench/t", "int64 \(now())"])
    usleep(2_000)
  }
  _ = await runProgram(["dconf", "write", "/splint/bench/t", "int64 -1"])
  _ = finished.wait(timeout: .now() + 30)
  dconf.terminate()
  try await dconf.wait()
  rows.append(
    (
      "`dconf write` (a new process each time) → `dconf watch` (GSettings' backend)", Summary(arrivals.withLock { $0 }),
      "", nil
    ))

  report.distributionTable(
    "Propagation between processes", rows,
    explanation: """
      Each change carries the monotonic clock's time when the writer started it; the receiving process subtracts \
      that from the time it received it. Changes are 2 ms apart; \(changes) changes a row. Rows with "a new process \
      each time" include starting that process, as a shell script pays; `splintctl set` is there to compare with \
      `dconf write` on equal terms. The floor leaves out fsync, the `Setting` row includes it.
      """)
}

// MARK: - Scale

func benchmarkScale(_ sizes: Sizes, into report: inout Report) async throws {
  var writes: [Report.Row] = []
  for keys in [10, 1_000, 10_000] {
    try await withScratch { directory in
      let store = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"))
      try store.update { settings in
        for index in 0..<keys { settings["key-\(index)"] = .int(index) }
      }
      let setting = Setting("key-0", default: 0, store: store)
      var next = 0
      let summary = Summary(
        sample(sizes.processRuns * 2) {
          next += 1
          setting.value = next
        })
      writes.append(
        .init(
          what: "assignment, durable, \(keys) keys in the file", ours: summary, anchorName: "", anchor: nil, target: "",
          met: nil))
    }
  }
  let perThousandKeys = (writes[2].ours.median - writes[0].ours.median) / 9.99
  report.table(
    "Scale: write latency by file size", writes,
    explanation: """
      Every write re-reads and rewrites the whole file under the lock, so it grows linearly with the file's size: \
      here by \(format(perThousandKeys)) per 1,000 keys (from the 10- and 10,000-key medians).
      """)

  var fanOut: [Report.Row] = []
  for count in [1, 100, 10_000] {
    await withScratch { directory in
      let store = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"), syncsToDisk: false)
      let settings = (0..<count).map { _ in Setting("shared", default: 0, store: store) }
      var next = 0
      let summary = Summary(
        sample(sizes.processRuns * 2) {
          next += 1
          settings[0].value = next
        })
      precondition(settings.allSatisfy { $0.value == next })
      fanOut.append(
        .init(
          what: "one assignment seen by \(count) `Setting`s on its key", ours: summary, anchorName: "", anchor: nil,
          target: "", met: nil))
    }
  }
  let perSetting = (fanOut[2].ours.median - fanOut[0].ours.median) / 9_999
  report.table(
    "Scale: one change fanned out to many Settings", fanOut,
    explanation: """
      Every `Setting` on the key has the new value before the assignment returns; each decodes the value itself, so \
      the cost grows linearly with their number: here by \(format(perSetting)) per `Setting` (from the 1- and \
      10,000-`Setting` medians). Writes here skip fsync, so that the fan-out shows.
      """)

  var watchers: [(String, Summary, String, Bool?)] = []
  for count in [1, 8, 32] {
    try await withScratch { directory in
      let file = directory.appendingPathComponent("settings.json")
      let writer = Setting("t", default: 0, store: SettingsStore(fileURL: file))
      let latencies = try await propagate(to: count, file: file, changes: sizes.propagationChanges / 2, spacing: 5_000)
      {
        writer.value = $0
      }
      watchers.append(
        ("durable assignment → \(count) watcher process\(count == 1 ? "" : "es")", Summary(latencies), "", nil))
    }
  }
  report.distributionTable(
    "Scale: propagation to many watcher processes", watchers,
    explanation: """
      One writer, N processes each with its own inotify instance: every process wakes and parses the file for every \
      change, and on 2 cores they queue for the CPU, so the median grows with N: from \(format(watchers[0].1.median)) \
      with one watcher to \(format(watchers[2].1.median)) with 32. \(sizes.propagationChanges / 2) changes 5 ms \
      apart; the samples are every watcher's.
      """)

  var memory: [String] = []
  var gained: [Double] = []
  for count in [1_000, 10_000] {
    let run = await runProgram([benchBinary, "rss", String(count)])
    let bytes = Double(run.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan
    gained.append(bytes)
    memory.append(
      "| \(count) | \(String(format: "%.1f MiB", bytes / 1_048_576)) | \(String(format: "%.0f bytes", bytes / Double(count))) |"
    )
  }
  report.line("## Scale: memory of many Settings")
  report.line()
  report.line(
    "Resident memory a process gains by creating N `Setting<Int>`s on N keys of one store (measured in a fresh "
      + "process). It grows linearly: \(String(format: "%.0f", (gained[1] - gained[0]) / 9_000)) bytes per `Setting` "
      + "from 1,000 to 10,000.")
  report.line()
  report.line("| Settings | RSS gained | per Setting |")
  report.line("| --- | --- | --- |")
  memory.forEach { report.line($0) }
  report.line()
}

/// Child mode: prints the resident memory gained by creating `count` Settings.
func rssMode(count: Int) async -> Never {
  await withScratch { directory in
    let store = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"))
    let before = residentBytes()
    let settings = (0..<count).map { Setting("key-\($0)", default: $0, store: store) }
    let after = residentBytes()
    print(after - before)
    withExtendedLifetime(settings) {}
  }
  exit(0)
}
