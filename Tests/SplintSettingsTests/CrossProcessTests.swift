import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// Other processes (SettingsProbe, the shell) writing the file this process watches.
@Suite struct CrossProcessTests {
  let scratch = Scratch()

  @Test func aWriteByAnotherProcessReachesEveryObserverHere() async throws {
    let store = scratch.store()
    let first = Setting("interval", default: 30, store: store)
    let second = Setting("interval", default: 30, store: SettingsStore(fileURL: store.fileURL))
    let updates = second.updates(initial: false)
    let changes = store.changes()
    #expect(try await probe("set", store.fileURL.path, "interval", "60").status == 0)
    #expect(await collect(updates) { $0 == 60 } == [60])
    #expect(first.value == 60)
    #expect(await take(1, from: changes) == [["interval"]])
  }

  @Test("withObservationTracking's onChange, for a change made here or by another process, reads the new value")
  func onChangeReadsTheNewValue() async throws {
    let store = scratch.store()
    let interval = Setting("interval", default: 30, store: store)
    let seen = Shared<[Int]>([])
    // What the guide's "Programs with callbacks" shows: observe, and from onChange observe again, reading the value.
    @Sendable func follow() {
      let value = withObservationTracking {
        interval.value
      } onChange: {
        follow()
      }
      seen.value.withLock { $0.append(value) }
    }
    follow()
    interval.value = 45
    #expect(seen.value.withLock { $0 } == [30, 45], "called before the assignment returns, with the value in place")
    interval.value = 45
    #expect(seen.value.withLock { $0 } == [30, 45], "the same value is no change")
    #expect(try await probe("set", store.fileURL.path, "interval", "60").status == 0)
    #expect(await eventually { seen.value.withLock { $0 } == [30, 45, 60] })
  }

  @Test("a write stuck behind another process's lock on one file holds up no other file's changes")
  func oneSlowFileDoesNotStallTheOthers() async throws {
    let slow = scratch.store("slow.json")
    try slow.set(.int(0), forKey: "a")
    let other = scratch.store("other.json")
    // When other.json's change is delivered here, on the monotonic clock (timed where it happens, not when a task
    // gets around to looking).
    let arrival = Shared<Int?>(nil)
    let observer = other.file.makeObserverID()
    _ = other.file.observe("volume", id: observer) { _, value in
      if value == .int(7) { arrival.value.withLock { $0 = monotonicNanoseconds() } }
    }
    defer { other.file.removeObserver("volume", id: observer) }
    // Another process holds slow.json's lock for 2 s. Meanwhile it changes slow.json, which this process must
    // reload while its own write of slow.json waits for the lock, and then other.json, which must arrive at once.
    let script = """
      import fcntl, json, os, sys, time
      def save(path, content):
          with open(path + '.new', 'w') as f: json.dump(content, f)
          os.rename(path + '.new', path)
      slow, other = sys.argv[1], sys.argv[2]
      with open(slow + '.lock', 'a') as lock:
          fcntl.flock(lock, fcntl.LOCK_EX)
          print('locked', flush=True)
          time.sleep(0.3)
          save(slow, {'a': 1})
          time.sleep(0.2)
          sent = time.monotonic_ns()  # before the save: its news may arrive before a time taken after it
          save(other, {'volume': 7})
          print(sent, flush=True)
          time.sleep(1.5)
          print(time.monotonic_ns(), flush=True)
      """
    let holder = try await Programs.start([Programs.python, "-c", script, slow.fileURL.path, other.fileURL.path])
    #expect(await eventually { holder.stdoutSoFar.hasPrefix("locked") })
    // A thread of its own, not one of Swift's few cooperative ones, since it blocks for about 2 s.
    let written = Shared<Result<Void, SettingsError>?>(nil)
    Thread { written.value.withLock { $0 = Result { () throws(SettingsError) in try slow.set(.int(2), forKey: "a") } } }
      .start()
    #expect(await eventually { arrival.value.withLock { $0 } != nil })
    let ended = await holder.wait()
    #expect(ended.status == 0)
    let times = ended.lines.dropFirst().compactMap { Int($0) }
    let (sent, released) = (times.first ?? 0, times.last ?? 0)
    let arrived = arrival.value.withLock { $0 } ?? .max
    // Held up by the stuck write, the change would arrive only once the lock is released, 1.5 s after it was made:
    // what is measured is that it came before, however busy the machine is (the tests run their programs side by
    // side on 2 cores here, and script/bench times how fast it is).
    #expect(times.count == 2 && arrived > sent, "\(times)")
    #expect(arrived < released, "other.json's change took \((arrived - sent) / 1_000_000) ms, past the lock's release")
    #expect(await eventually { written.value.withLock { $0 } != nil })
    #expect(slow.value(forKey: "a") == .int(2))
  }

  @Test func twoProcessesWritingDifferentKeysAtOnceKeepBoth() async throws {
    let store = scratch.store()
    let writers = try await ["left", "right"].asyncMap {
      try await startProbe("write-keys", store.fileURL.path, $0, "100")
    }
    for writer in writers { #expect(await writer.wait().status == 0) }
    let keys = Set(try JSONValue.keys(of: store.fileURL))
    #expect(keys == Set((0..<100).flatMap { ["left-\($0)", "right-\($0)"] }))
    #expect(await eventually { store.keys.count == 200 })
  }

  @Test("K processes x M batch increments lose nothing")
  func concurrentIncrementsLoseNothing() async throws {
    let store = scratch.store()
    let counter = Setting("counter", default: 0, store: store)
    let (processes, increments) = (4, 150)
    let writers = try await (0..<processes).asyncMap { _ in
      try await startProbe("increment", store.fileURL.path, "counter", String(increments))
    }
    for _ in 0..<increments { try store.update { $0[counter] += 1 } }  // and this process too
    for writer in writers { #expect(await writer.wait().status == 0) }
    let total = (processes + 1) * increments
    #expect(try JSONValue(parsing: Data(contentsOf: store.fileURL)) == .object(["counter": .int(total)]))
    #expect(await eventually { counter.value == total })
  }

  @Test("SIGKILL of a writer in a write loop never leaves a torn or empty file, nor a stuck lock")
  func killedWritersNeverTearTheFile() async throws {
    let store = scratch.store()
    // The file exists from the start: a writer killed before its first write finishes (a busy machine) leaves none.
    try store.set(.int(0), forKey: "counter")
    var last = 0
    for round in 0..<15 {
      let writer = try await startProbe("write-loop", store.fileURL.path, "counter", bounded: false)
      #expect(await eventually { writer.stdoutSoFar.contains("writing") })
      try await Task.sleep(for: .milliseconds(Int.random(in: 5...60)))
      writer.send(SIGKILL)
      #expect(await writer.wait().status == 128 + SIGKILL)
      let stored = try JSONValue(parsing: Data(contentsOf: store.fileURL))
      guard case .object(let members) = stored, case .int(let count)? = members["counter"] else {
        Issue.record("round \(round): the file holds \(stored)")
        continue
      }
      #expect(count >= last)
      last = count
    }
    // The lock died with its holder: the next writer goes straight through.
    try store.update { settings in settings["after"] = .bool(true) }
    #expect(store.value(forKey: "after") == .bool(true))
    let strays = try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(strays.count <= 15, "at most one temporary file per killed write: \(strays)")
  }

  @Test("hand edits in place (echo >) and by rename (editors' safe save) are seen")
  func handEditsAreSeen() async throws {
    let store = scratch.store()
    let theme = Setting("theme", default: "light", store: store)
    let updates = theme.updates(initial: false)
    let path = store.fileURL.path
    #expect(try await Programs.run(["sh", "-c", #"echo '{"theme": "dark"}' > "$0""#, path]).status == 0)
    #expect(await collect(updates) { $0 == "dark" } == ["dark"])
    let rename = #"printf '{"theme": "sepia"}' > "$0.new" && mv "$0.new" "$0""#
    #expect(try await Programs.run(["sh", "-c", rename, path]).status == 0)
    #expect(await collect(updates) { $0 == "sepia" } == ["sepia"])
  }

  @Test func aWatcherProcessSeesOurWrites() async throws {
    let store = scratch.store()
    let ready = scratch.url("ready").path
    let watcher = try await startProbe("watch", store.fileURL.path, "mode", #""last""#, ready)
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
    let mode = Setting("mode", default: "first", store: store)
    mode.value = "middle"
    mode.value = "last"
    let output = await watcher.wait()
    #expect(output.status == 0)
    #expect(output.lines.first == "absent")
    #expect(output.lines.last == #""last""#)
  }
}

extension JSONValue {
  /// The top-level keys of the JSON object in the file at `url`.
  static func keys(of url: URL) throws -> [String] {
    guard case .object(let members) = try JSONValue(parsing: Data(contentsOf: url)) else { return [] }
    return members.keys.map(\.text)
  }
}
