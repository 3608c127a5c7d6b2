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
  /// Runs of each program in "splintctl as a shell script runs it".
  let commandRuns: Int
  /// Changes in "swift-configuration: a settings file's change → a `ConfigReader` watch".
  let configurationChanges: Int
  /// Seconds of idling, and changes (about 1.15 s apart), in "Polling where inotify does not see every change".
  let pollingSeconds: Int
  let pollingChanges: Int

  static let full = Sizes(
    secretCalls: 1_000, processRuns: 50, propagationChanges: 500, readBatches: 200, commandRuns: 200,
    configurationChanges: 500, pollingSeconds: 30, pollingChanges: 40)
  static let quick = Sizes(
    secretCalls: 100, processRuns: 10, propagationChanges: 100, readBatches: 20, commandRuns: 20,
    configurationChanges: 20, pollingSeconds: 3, pollingChanges: 3)
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
  let pythonProcess = try Child(["/usr/bin/python3", "-c", python, service, account], input: true, output: true)
  let lines = LineReader(pythonProcess.output!)
  guard lines.next() == "ready" else { throw BenchError("Python keyring did not start") }
  var oursBesidePython: [Double] = []
  var pythonCalls: [Double] = []
  for _ in 0..<(sizes.processRuns * 4) {
    oursBesidePython += try sample(1, warmup: 0) { _ = try credential.read() }
    try pythonProcess.input?.write(contentsOf: Data("\n".utf8))
    pythonCalls.append(Double(lines.next() ?? "") ?? .nan)
  }
  try pythonProcess.input?.close()
  pythonProcess.wait()

  var oursBesideSecretTool: [Double] = []
  var secretToolRuns: [Double] = []
  for _ in 0..<sizes.processRuns {
    oursBesideSecretTool += try sample(1, warmup: 0) { _ = try credential.read() }
    secretToolRuns.append(
      Double(runProgram(["secret-tool", "lookup", "service", service, "username", account]).nanoseconds))
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
      new process each time, start included, as a shell script pays, timed as `hyperfine -N` times a run).
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
  to count: Int, file: URL, changes: Int, spacing: useconds_t, write: (Int) -> Void
) throws -> [Double] {
  let readyFiles = (0..<count).map { file.deletingLastPathComponent().appendingPathComponent("ready-\($0)").path }
  var watchers: [Child] = []
  for ready in readyFiles { watchers.append(try Child([benchBinary, "watch", file.path, ready], output: true)) }
  readyFiles.forEach(waitForFile)
  for _ in 0..<changes {
    write(now())
    usleep(spacing)
  }
  write(-1)
  var latencies: [Double] = []
  for watcher in watchers {
    latencies += String(decoding: watcher.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
      .split(separator: "\n").compactMap { Double($0) }
    watcher.wait()
  }
  return latencies
}

/// Child mode: follows the `t` setting of `file`, printing how long after its stamp each value arrived; with
/// `echo`, prints each stamp as it arrives instead, for the benchmark to time its arrival as it times `dconf watch`'s.
func watchMode(file: String, ready: String, echo: Bool = false) async -> Never {
  await watch(
    Setting("t", default: 0, store: SettingsStore(fileURL: URL(fileURLWithPath: file))), ready: ready, echo: echo)
}

/// The watcher of a propagation measurement, on `setting`: makes `ready` once watching, then prints each stamp as it
/// arrives (with `echo`), or at the end each latency, until a negative stamp.
func watch(_ setting: Setting<Int>, ready: String, echo: Bool) async -> Never {
  let updates = setting.updates(initial: false)
  _ = FileManager.default.createFile(atPath: ready, contents: nil)
  // Ends at the writer's sentinel, or after two minutes whatever happens, so that a failed writer cannot hang the run.
  let latencies = await withTaskGroup(of: [Int]?.self) { group in
    group.addTask {
      var latencies: [Int] = []
      for await stamp in updates {
        if echo { FileHandle.standardOutput.write(Data("\(stamp)\n".utf8)) }
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
  if !echo { print(latencies.map(String.init).joined(separator: "\n")) }
  exit(0)
}

/// The stamp in a line `dconf watch` prints for a value ("  int64 <stamp>"), or nil for its other lines.
@Sendable func dconfStamp(_ line: Substring) -> Int? {
  line.hasPrefix("  ") ? line.split(separator: " ").last.flatMap { Int($0) } : nil
}

func benchmarkPropagation(_ sizes: Sizes, splintctl: String, into report: inout Report) async throws {
  let changes = sizes.propagationChanges
  var rows: [Distribution] = []

  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json")
    let writer = Setting("t", default: 0, store: SettingsStore(fileURL: file))
    let ours = Summary(try propagate(to: 1, file: file, changes: changes, spacing: 2_000) { writer.value = $0 })
    rows.append(
      Distribution(
        what: "`Setting` assignment (durable) in one process → `updates()` in another", summary: ours,
        target: "p50 under 1 ms, p99 under 5 ms", met: ours.median < 1_000_000 && ours.p99 < 5_000_000))
  }

  try await withScratch { directory in
    let ready = directory.appendingPathComponent("ready").path
    let watcher = try Child([benchBinary, "raw-watch", directory.path, "stamp", ready], output: true)
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
    let text = String(decoding: watcher.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    watcher.wait()
    rows.append(
      Distribution(
        what: "raw inotify: a rename (no fsync) → a bare watcher reads it (the floor)",
        summary: Summary(text.split(separator: "\n").compactMap { Double($0) })))
  }

  // `splintctl set` and `dconf write` alternate change by change, each watched by a process that prints what it
  // receives; the benchmark times both lines' arrival alike.
  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json").path
    let ready = directory.appendingPathComponent("ready").path
    let splint = try Child([benchBinary, "watch", file, ready, "--echo"], output: true)
    waitForFile(ready)
    // Line by line into the pipe, as on a terminal.
    let dconf = try Child(["/usr/bin/stdbuf", "-oL", "dconf", "watch", "/splint/bench/"], output: true)
    let viaCLI = StampArrivals(splint.output!) { Int($0) }
    let viaDconf = StampArrivals(dconf.output!, stamp: dconfStamp)
    func set(_ stamp: Int) {
      let run = runProgram([splintctl, "set", "--file", file, "t", "--", String(stamp)])
      if run.status != 0 { FileHandle.standardError.write(Data("SplintBench: splintctl set failed\n".utf8)) }
    }
    func write(_ stamp: Int) { _ = runProgram(["dconf", "write", "/splint/bench/t", "int64 \(stamp)"]) }
    // dconf's service is started first, as it is on a desktop; both programs are read from disk once.
    for _ in 0..<3 {
      set(now())
      write(now())
    }
    usleep(200_000)
    viaCLI.clear()
    viaDconf.clear()
    for _ in 0..<changes {
      set(now())
      usleep(2_000)
      write(now())
      usleep(2_000)
    }
    set(-1)
    write(-1)
    let (ours, theirs) = (Summary(viaCLI.wait()), Summary(viaDconf.wait()))
    splint.wait()
    dconf.terminate()
    dconf.wait()
    rows.append(
      Distribution(
        what: "`splintctl set` (a new process each time) → `updates()` in another", summary: ours,
        target: "p50 at most `dconf write` → `dconf watch`'s", met: ours.median <= theirs.median,
        versus: theirs))
    rows.append(
      Distribution(
        what: "`dconf write` (a new process each time) → `dconf watch` (GSettings' backend)", summary: theirs))
  }

  report.distributionTable(
    "Propagation between processes", rows,
    explanation: """
      Each change carries the monotonic clock's time when the writer started it; the receiving process subtracts \
      that from the time it received it. Changes are 2 ms apart; \(changes) changes a row. Rows with "a new process \
      each time" include starting that process, as a shell script pays; there `splintctl set` (as installed: \
      release, static Swift runtime, stripped) and `dconf write` alternate change by change, and each watching \
      process prints what it receives, whose arrival the benchmark times alike. The floor leaves out fsync, the \
      `Setting` row includes it.
      """)
}

// MARK: - splintctl as a shell script runs it

func benchmarkCommandLine(_ sizes: Sizes, splintctl: String, into report: inout Report) async throws {
  let runs = sizes.commandRuns
  /// Runs a program to its end, and fails the measurement if it does not succeed.
  func run(_ arguments: [String]) throws {
    let status = runProgram(arguments).status
    guard status == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited with status \(status)") }
  }
  var rows: [Report.Row] = []

  try await withScratch { directory in
    let file = directory.appendingPathComponent("settings.json")
    let store = SettingsStore(fileURL: file)
    Setting("count", default: 0, store: store).value = 42
    try run(["dconf", "write", "/splint/bench/count", "42"])
    let reads = try interleaved(
      runs, warmup: 3,
      [
        { try run([splintctl, "get", "--file", file.path, "count"]) },
        { try run(["dconf", "read", "/splint/bench/count"]) },
      ])
    let (get, dconfRead) = (Summary(reads[0]), Summary(reads[1]))
    rows.append(
      .init(
        what: "`splintctl get` of one key", ours: get, anchorName: "`dconf read`", anchor: dconfRead,
        target: "at most `dconf read`'s", met: get.median <= dconfRead.median))

    var next = 0
    let writes = try interleaved(
      runs, warmup: 3,
      [
        {
          next += 1
          try run([splintctl, "set", "--file", file.path, "count", "\(next)"])
        },
        { try run(["dconf", "write", "/splint/bench/count", "\(next)"]) },
      ])
    rows.append(
      .init(
        what: "`splintctl set` of one key (durable)", ours: Summary(writes[0]),
        anchorName: "`dconf write` (through dconf's service)", anchor: Summary(writes[1]), target: "", met: nil))
  }

  let (service, account) = ("splint-bench", "token")
  let secrets = try interleaved(
    runs, warmup: 3,
    [
      { try run([splintctl, "secret", "read", service, account]) },
      { try run(["secret-tool", "lookup", "service", service, "username", account]) },
    ])
  let (secretRead, secretTool) = (Summary(secrets[0]), Summary(secrets[1]))
  rows.append(
    .init(
      what: "`splintctl secret read`", ours: secretRead, anchorName: "`secret-tool lookup`", anchor: secretTool,
      target: "at most `secret-tool lookup`'s", met: secretRead.median <= secretTool.median))

  let starts = try interleaved(
    runs, warmup: 3, [{ try run([splintctl, "--help"]) }, { try run([splintctl, "--version"]) }])
  for (what, summary) in [("`splintctl --help`", Summary(starts[0])), ("`splintctl --version`", Summary(starts[1]))] {
    rows.append(
      .init(
        what: what, ours: summary, anchorName: "", anchor: nil, target: "under 5 ms", met: summary.median < 5_000_000,
        limit: 5_000_000))
  }

  report.table(
    "splintctl as a shell script runs it", rows,
    explanation: """
      A new process each time, timed from just before posix_spawn to just after waitpid, as `hyperfine -N` times a \
      run; standard output goes to /dev/null. splintctl is measured as it is installed: built with `-c release \
      --static-swift-stdlib`, then stripped. Each row's two programs alternate run by run, \(runs) runs each. \
      `dconf read` reads dconf's database file itself, as `splintctl get` reads the settings file; `dconf write` \
      asks dconf's service, which writes the database and tells the watchers. `splintctl secret read` asks the \
      default chain (delivered secrets first, then the Secret Service), `secret-tool lookup` the Secret Service.
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

  var watchers: [Distribution] = []
  for count in [1, 8, 32] {
    try await withScratch { directory in
      let file = directory.appendingPathComponent("settings.json")
      let writer = Setting("t", default: 0, store: SettingsStore(fileURL: file))
      let latencies = try propagate(to: count, file: file, changes: sizes.propagationChanges / 2, spacing: 5_000) {
        writer.value = $0
      }
      watchers.append(
        Distribution(
          what: "durable assignment → \(count) watcher process\(count == 1 ? "" : "es")", summary: Summary(latencies)))
    }
  }
  report.distributionTable(
    "Scale: propagation to many watcher processes", watchers,
    explanation: """
      One writer, N processes each with its own inotify instance: every process wakes and parses the file for every \
      change, and on 2 cores they queue for the CPU, so the median grows with N: from \(format(watchers[0].summary.median)) \
      with one watcher to \(format(watchers[2].summary.median)) with 32. \(sizes.propagationChanges / 2) changes 5 ms \
      apart; the samples are every watcher's.
      """)

  var memory: [String] = []
  var gained: [Double] = []
  for count in [1_000, 10_000] {
    let run = runProgram([benchBinary, "rss", String(count)], output: true)
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
