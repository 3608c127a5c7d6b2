import Foundation
import SplintSettings
import TestSupport

/// This program, for starting its child modes.
let tortureBinary = Programs.helper("SplintTorture")

func store(_ path: String) -> SettingsStore { SettingsStore(fileURL: URL(fileURLWithPath: path)) }

func stored(_ file: URL) -> [JSONKey: JSONValue]? {
  guard let data = try? Data(contentsOf: file), case .object(let members)? = try? JSONValue(parsing: data) else {
    return nil
  }
  return members
}

// MARK: - Concurrent writers

func concurrentIncrements(_ scratch: Scratch) async -> Outcome {
  await scenario("8 processes x 500 batch increments of one counter") { outcome in
    let file = scratch.url("counter", "settings.json")
    let start = DispatchTime.now()
    var writers: [RunningProgram] = []
    for _ in 0..<8 {
      writers.append(try await Programs.start([tortureBinary, "increment", file.path, "500"], seconds: 300))
    }
    for writer in writers {
      let output = await writer.wait()
      if output.status != 0 { outcome.fail("a writer exited \(output.status): \(output.stdout)\(output.stderr)") }
    }
    let elapsed = seconds(since: start)
    outcome.operations = 8 * 500
    let count = stored(file).flatMap { $0["counter"] }.flatMap { try? Int(jsonValue: $0) } ?? 0
    if count != 4_000 { outcome.lose("the counter is \(count), not 4000", count: 4_000 - count) }
    outcome.figure = String(format: "%.0f increments/s", 4_000 / elapsed)
  }
}

func concurrentKeys(_ scratch: Scratch) async -> Outcome {
  await scenario("8 processes each writing their own 200 keys at once") { outcome in
    let file = scratch.url("keys", "settings.json")
    let start = DispatchTime.now()
    let writers = try await (0..<8).asyncMap { writer in
      try await Programs.start([tortureBinary, "own-keys", file.path, "writer\(writer)", "200"], seconds: 300)
    }
    for writer in writers where await writer.wait().status != 0 { outcome.fail("a writer failed") }
    let elapsed = seconds(since: start)
    outcome.operations = 1_600
    let present = stored(file)?.count ?? 0
    if present != 1_600 { outcome.lose("\(present) keys of 1600 are there", count: 1_600 - present) }
    outcome.figure = String(format: "%.0f writes/s", 1_600 / elapsed)
  }
}

// MARK: - SIGKILL

/// The payload `kill-loop` writes beside the counter: telling a torn or mixed file from a whole one.
func payload(for count: Int) -> String { String(repeating: "\(count)-", count: 200) }

func killedWriters(_ scratch: Scratch, rounds: Int) async -> Outcome {
  await scenario("\(rounds) rounds of SIGKILL of a writer at a random moment") { outcome in
    let file = scratch.url("kill", "settings.json")
    var last = 0
    for round in 0..<rounds {
      // The writer must get going: a lock left behind by the last one would stop it here.
      let writer = try await Programs.start([tortureBinary, "kill-loop", file.path], seconds: nil)
      let deadline = Date().addingTimeInterval(10)
      while !writer.stdoutSoFar.contains("writing"), Date() < deadline { usleep(1_000) }
      if !writer.stdoutSoFar.contains("writing") { outcome.fail("round \(round): the writer never got the lock") }
      usleep(UInt32.random(in: 0...15_000))
      writer.send(SIGKILL)
      await writer.wait()
      outcome.operations += 1
      guard let members = stored(file), case .int(let count)? = members["counter"] else {
        outcome.lose("round \(round): the file does not parse or has no counter")
        continue
      }
      if members["payload"] != .string(payload(for: count)) {
        outcome.lose("round \(round): the payload does not belong to counter \(count): a mixed file")
      }
      if count < last { outcome.lose("round \(round): the counter went back from \(last) to \(count)") }
      last = count
    }
    // After all that, an ordinary writer goes straight through.
    try store(file.path).update { settings in settings["after"] = .bool(true) }
    if stored(file)?["after"] != .bool(true) { outcome.fail("the writer after the last kill did not write") }
    outcome.figure = "\(last) writes survived"
  }
}

// MARK: - Bursts

func burstsToAWatcher(_ scratch: Scratch) async -> Outcome {
  await scenario("a watcher process sees the last value of every burst") { outcome in
    let file = scratch.url("bursts", "settings.json")
    let ready = scratch.url("bursts", "ready").path
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    let watcher = try await Programs.start([tortureBinary, "burst-watch", file.path, ready], seconds: 300)
    _ = await eventually(within: 30) { FileManager.default.fileExists(atPath: ready) }
    let value = Setting("v", default: 0, store: store(file.path))
    for burst in 1...50 {
      let last = burst * 1_000 + 19
      for index in 0..<20 { value.value = burst * 1_000 + index }
      outcome.operations += 20
      let seen = await eventually(within: 10) { watcher.stdoutSoFar.split(separator: "\n").contains("\(last)") }
      if !seen { outcome.lose("burst \(burst): the watcher never saw \(last)") }
    }
    value.value = -1
    let output = await watcher.wait()
    if output.status != 0 { outcome.fail("the watcher exited \(output.status)") }
    let seen = output.stdout.split(separator: "\n").count
    outcome.figure = "the watcher saw \(seen) of \(outcome.operations) values"
  }
}

// MARK: - Garbage

/// A settings file no program should choke on.
struct Garbage: Sendable {
  let name: String
  let bytes: @Sendable () -> Data
  /// Whether the file is valid: loaded, not reported.
  var valid = false
}

let garbage: [Garbage] = [
  Garbage(name: "random bytes") { Data((0..<4_096).map { _ in UInt8.random(in: 0...255) }) },
  Garbage(name: "truncated JSON") { Data(#"{"a": 1, "b": [1, 2"#.utf8) },
  Garbage(name: "a JSON array") { Data("[1, 2, 3]".utf8) },
  Garbage(name: "100,000 levels of nesting") {
    Data((#"{"a": "# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}").utf8)
  },
  Garbage(name: "50 MiB, an unterminated string") { Data(#"{"k": ""#.utf8) + Data(repeating: 0x61, count: 50 << 20) },
  Garbage(
    name: "50 MiB, valid",
    bytes: { Data(#"{"k": ""#.utf8) + Data(repeating: 0x61, count: 50 << 20) + Data(#""}"#.utf8) }, valid: true),
  Garbage(name: "invalid UTF-8") { Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]) },
  Garbage(name: "duplicate keys") { Data(#"{"a": 1, "a": 2}"#.utf8) },
  Garbage(name: "NaN") { Data(#"{"a": NaN}"#.utf8) },
  Garbage(name: "Infinity") { Data(#"{"a": -Infinity}"#.utf8) },
  Garbage(name: "a number too large") { Data(#"{"a": 1e999}"#.utf8) },
]

func garbageFiles(_ scratch: Scratch) async -> Outcome {
  await scenario("garbage and odd files: no crash, no hang, reported, nothing wiped") { outcome in
    for (index, kind) in garbage.enumerated() {
      let directory = scratch.url("garbage-\(index)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let file = directory.appendingPathComponent("settings.json")
      let original = kind.bytes()
      try original.write(to: file)
      // A child process, so that a crash is a failure here rather than the end of the suite.
      let output = try await Programs.run([tortureBinary, "garbage-open", file.path], seconds: 120)
      outcome.operations += 1
      guard output.status == 0 else {
        outcome.fail("\(kind.name): the program ended with status \(output.status)")
        continue
      }
      let reported = output.lines.first?.hasPrefix("reported") == true
      if reported == kind.valid { outcome.fail("\(kind.name): \(output.lines.first ?? "no answer")") }
      let refused = output.lines.contains("refused: corruptFile")
      if refused == kind.valid {
        outcome.lose("\(kind.name): a write over it was \(refused ? "refused" : "let through")")
      }
      // A write over garbage is refused; a reset of the whole file keeps the bytes beside the new file. A valid file
      // keeps them in it.
      let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      let kept = files.filter { $0.hasPrefix("settings.json.corrupt-") }.contains {
        (try? Data(contentsOf: directory.appendingPathComponent($0))) == original
      }
      let members = stored(file)
      if members?["written"] != .int(1) { outcome.fail("\(kind.name): the write after it is not in the file") }
      if kind.valid {
        if members?["k"] != .string(String(repeating: "a", count: 50 << 20)) { outcome.lose("\(kind.name): k changed") }
      } else if !kept {
        outcome.lose("\(kind.name): the bad bytes are not kept beside the file")
      }
    }
    let broken = garbage.filter { !$0.valid }.count
    let odd = try await oddFiles(scratch, &outcome)
    outcome.figure =
      "\(broken) broken files reported, written over by no write, kept by a reset, 1 valid 50 MiB file loaded, "
      + "\(odd) odd files refused"
  }
}

/// Paths that are not regular files (a FIFO, a directory, a socket, a device node in a private mount namespace), each
/// opened by a child process, which must neither hang nor write, and must report what the path is; and a symlink
/// re-pointed under a running watcher, which must follow it. Returns how many odd files were refused.
func oddFiles(_ scratch: Scratch, _ outcome: inout Outcome) async throws -> Int {
  let makers: [(kind: String, make: String)] = [
    ("a FIFO (named pipe)", #"mkfifo settings.json"#),
    ("a directory", #"mkdir settings.json"#),
    ("a socket", #"/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("settings.json")'"#),
    ("a character device", #"touch device && mount --bind /dev/null device && ln -s device settings.json"#),
  ]
  for (index, maker) in makers.enumerated() {
    let directory = scratch.url("odd-\(index)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    // In a user and mount namespace of its own, where the device node is /dev/null bound over a scratch file.
    let script = """
      cd "$1" && \(maker.make) || exit 99
      timeout 30 "$0" garbage-open "$1/settings.json"; echo "exit $?"
      [ -L settings.json ] && cd -P "$(dirname "$(readlink settings.json)")"
      stat -L -c %F settings.json; ls -A
      """
    let output = try await Programs.run(
      ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, tortureBinary, directory.path])
    outcome.operations += 1
    let reported = output.lines.first?.contains("is \(maker.kind)") == true
    let type = ["fifo", "directory", "socket", "character special file"][index]
    let files = index == 3 ? ["device", "settings.json"] : ["settings.json"]
    if !reported || !output.lines.contains("exit 0") || !output.lines.contains(type)
      || Array(output.lines.suffix(files.count)) != files
    {
      outcome.fail("\(maker.kind): \(output.stdout)\(output.stderr)")
    }
  }

  // A link re-pointed (`ln -sf`) under a running watcher process, then a change to the new target.
  let root = scratch.url("repointed")
  for (name, value) in [("first", 1), ("second", 2)] {
    try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true)
    try store(root.appendingPathComponent(name).appendingPathComponent("settings.json").path).set(
      .int(value), forKey: "v")
  }
  let link = root.appendingPathComponent("settings.json").path
  try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "first/settings.json")
  let ready = root.appendingPathComponent("ready").path
  let watcher = try await Programs.start([tortureBinary, "burst-watch", link, ready], seconds: 120)
  _ = await eventually(within: 30) { FileManager.default.fileExists(atPath: ready) }
  _ = try await Programs.run(["ln", "-sf", "second/settings.json", link])
  let swapped = await eventually(within: 10) { watcher.stdoutSoFar.split(separator: "\n").contains("2") }
  try store(root.appendingPathComponent("second").appendingPathComponent("settings.json").path).set(
    .int(3), forKey: "v")
  let followed = await eventually(within: 10) { watcher.stdoutSoFar.split(separator: "\n").contains("3") }
  try store(link).set(.int(-1), forKey: "v")
  _ = await watcher.wait()
  outcome.operations += 1
  if !swapped || !followed { outcome.fail("a watcher did not follow a re-pointed link: \(watcher.stdoutSoFar)") }
  return makers.count
}

/// Child mode: opens the store, says whether the file was reported, reads a setting, and writes one.
func garbageOpen(_ path: String) -> Never {
  let settings = store(path)
  print(settings.fileError.map { "reported: \($0)" } ?? "loaded \(settings.keys.count) keys")
  _ = Setting("a", default: 0, store: settings).value
  let written = Setting("written", default: 0, store: settings)
  do {
    try written.save(1)
  } catch {
    // A file that is not JSON is never written over: starting over is a reset of the whole file, on purpose.
    print("refused: \(error.code)")
    do {
      try settings.resetAll()
      try written.save(1)
    } catch {
      print("failed: \(error)")
    }
  }
  exit(0)
}

// MARK: - Full and read-only disks

func fullAndReadOnlyDisks(_ scratch: Scratch) async -> Outcome {
  await scenario("a full disk and a read-only file system") { outcome in
    for mode in ["full", "read-only"] {
      let directory = scratch.url("disk-\(mode)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let script = #"mount -t tmpfs -o size=256k tmpfs "$1" && exec "$0" disk-child "$1" "$2""#
      let output = try await Programs.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, tortureBinary, directory.path, mode])
      outcome.operations += 1
      // The write must be refused with an error, and the file and the value in memory stay as they were.
      let refused = output.lines.contains { $0.hasPrefix("refused: ") }
      if output.status != 0 || !refused || output.lines.last != "honest" {
        outcome.fail("\(mode): \(output.stdout)\(output.stderr)")
      }
    }
    outcome.figure = "each write refused with an error; file and value in memory unchanged"
  }
}

/// Child mode, in a mount namespace with a small tmpfs at `directory`: a write that the disk refuses must throw a
/// clear error and leave the file and the value in memory as they were.
func diskChild(_ directory: String, _ mode: String) async -> Never {
  let path = directory + "/settings.json"
  let volume = Setting("volume", default: 0, store: store(path))
  volume.value = 3
  if mode == "full" {
    _ = FileManager.default.createFile(atPath: directory + "/filler", contents: nil)
    if let filler = FileHandle(forWritingAtPath: directory + "/filler") {
      while (try? filler.write(contentsOf: Data(count: 16_384))) != nil {}
    }
  } else {
    _ = try? await Programs.run(["mount", "-o", "remount,ro", directory])
  }
  do {
    try volume.save(4)
    print("the write succeeded on a \(mode) disk")
  } catch {
    print("refused: \(error)")
  }
  let intact = stored(URL(fileURLWithPath: path)) == ["volume": .int(3)]
  print(volume.value == 3 && intact ? "honest" : "value \(volume.value), file intact: \(intact)")
  exit(0)
}

// MARK: - Many watchers

func manyWatchersConverge(_ scratch: Scratch) async -> Outcome {
  await scenario("32 watcher processes, 2 writers, 10 seconds: every watcher converges") { outcome in
    let directory = scratch.url("converge")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("settings.json")
    let readies = (0..<32).map { directory.appendingPathComponent("ready-\($0)").path }
    let watchers = try await readies.asyncMap {
      try await Programs.start([tortureBinary, "converge-watch", file.path, $0], seconds: 120)
    }
    _ = await eventually(within: 60) { readies.allSatisfy { FileManager.default.fileExists(atPath: $0) } }
    var writers: [RunningProgram] = []
    for writer in 0..<2 {
      writers.append(
        try await Programs.start([tortureBinary, "write-for", file.path, "writer\(writer)", "10"], seconds: 60))
    }
    for writer in writers {
      let output = await writer.wait()
      if output.status != 0 || output.stdout.contains("failed: ") {
        outcome.fail("a writer failed: \(output.stdout.prefix(500))")
      }
      outcome.operations += Int(output.lines.last ?? "") ?? 0
    }
    try store(file.path).set(.bool(true), forKey: "done")
    let final = JSONValue.object(stored(file) ?? [:]).description
    for (index, watcher) in watchers.enumerated() {
      let output = await watcher.wait()
      if output.lines.last != final { outcome.fail("watcher \(index) ended with \(output.lines.last ?? "nothing")") }
    }
    outcome.figure = "\(watchers.count) watchers"
  }
}

/// Child mode: writes PREFIX-a and PREFIX-b as fast as it can for `duration` seconds; prints any write that failed,
/// then how many writes it made.
func writeFor(_ path: String, _ prefix: String, _ duration: Double) -> Never {
  let settings = store(path)
  let end = Date().addingTimeInterval(duration)
  var writes = 0
  while Date() < end {
    do {
      try settings.set(.int(writes), forKey: "\(prefix)-\(writes % 2 == 0 ? "a" : "b")")
    } catch {
      print("failed: \(error)")
    }
    writes += 1
  }
  print(writes)
  exit(0)
}

/// Child mode: follows the file until it says done, then prints what it sees, as compact JSON.
func convergeWatch(_ path: String, _ ready: String) async -> Never {
  let settings = store(path)
  let changes = settings.changes()
  _ = FileManager.default.createFile(atPath: ready, contents: nil)
  for await _ in changes where settings.value(forKey: "done") == .bool(true) {
    print(JSONValue.object(settings.values).description)
    exit(0)
  }
  exit(1)
}
