import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// One inotify instance per process, and what happens when inotify cannot serve.
@Suite struct WatcherTests {
  let scratch = Scratch()

  /// The inotify instances this process holds.
  func inotifyInstances() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { fd in
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "anon_inode:inotify"
    }
  }

  @Test("10,000 Settings over 100 files use one inotify instance")
  func oneInstanceForTheProcess() async throws {
    let stores = (0..<100).map { SettingsStore(fileURL: scratch.url("suite-\($0)", "settings.json")) }
    let settings = (0..<10_000).map { Setting("key-\($0 % 7)", default: $0, store: stores[$0 % 100]) }
    // Read, so that every file is watched (a Setting's first read starts watching its file).
    #expect(settings.allSatisfy { $0.value >= 0 })
    #expect(stores.allSatisfy { $0.file.isWatching })
    #expect(SettingsWatcher.shared.usesInotify)
    #expect(try inotifyInstances() == 1)
    let watched = settings[42]
    let updates = watched.updates(initial: false)
    try await probe("set", watched.store.fileURL.path, watched.key, "-1")
    #expect(await collect(updates) { $0 == -1 } == [-1])
  }

  @Test("an event queue overflow makes every file check itself, so a change lost in it is still seen")
  func overflowConverges() async throws {
    // A watcher process of its own, so that the overflow swallows no other test's events: stopped while more events
    // than an inotify queue holds (16,384) pile up in its directory, along with the change it must still see.
    let store = scratch.store()
    let ready = scratch.url("ready").path
    let watcher = try await startProbe("watch", store.fileURL.path, "volume", "6", ready, bounded: false)
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
    watcher.send(SIGSTOP)
    let limit =
      (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
      .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
    let noise = scratch.url("noise").path
    for _ in 0...(limit / 2) {
      close(open(noise, O_CREAT | O_WRONLY, 0o600))
      unlink(noise)
    }
    try #"{"volume": 6}"#.write(to: store.fileURL, atomically: true, encoding: .utf8)
    watcher.send(SIGCONT)
    let output = await watcher.wait()
    #expect(output.status == 0, "\(output)")
    #expect(output.lines == ["absent", "6"])
  }

  @Test("with no inotify instance left, a process falls back to polling, says so, and still sees changes")
  func pollingWithoutInotify() async throws {
    try await pollingInNamespace(
      limit: "max_inotify_instances",
      told: "this process has no inotify instance: its user's limit (fs.inotify.max_user_instances = ")
  }

  @Test("with no inotify watch left, a process falls back to polling, says so, and still sees changes")
  func pollingWithoutWatches() async throws {
    try await pollingInNamespace(
      limit: "max_inotify_watches",
      told: "no inotify watch is left: its user's limit (fs.inotify.max_user_watches = ")
  }

  /// Runs a following SettingsProbe in a user namespace whose inotify `limit` is 0, and writes from here; the probe
  /// must say why it polls (`told`, then the limit's value and ") is used up").
  private func pollingInNamespace(limit: String, told: String) async throws {
    let path = scratch.url("settings.json").path
    let ready = scratch.url("ready").path
    guard await (try? Programs.run(["unshare", "--user", "--map-root-user", "true"]))?.status == 0 else {
      print("skipped: this system does not permit user namespaces (unshare), so inotify limits cannot be set")
      return
    }
    let script = #"echo 0 > /proc/sys/user/\#(limit) && SPLINT_PROBE_POLL_MS=100 exec "$0" follow "$1" count 3 "$2""#
    let watcher = try await Programs.start(
      ["unshare", "--user", "--map-root-user", "sh", "-c", script, Programs.helper("SettingsProbe"), path, ready])
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) }, "\(watcher.stdoutSoFar)")
    let store = SettingsStore(fileURL: URL(fileURLWithPath: path))
    for count in 1...3 {
      try store.set(.int(count), forKey: "count")
      try await Task.sleep(for: .milliseconds(150))
    }
    let output = await watcher.wait()
    #expect(output.status == 0, "\(output)")
    // Polling may skip a value written between two polls, never the last one, and never goes back.
    #expect(output.lines.first == "absent")
    #expect(output.lines.last == "3")
    let counts = output.lines.dropFirst().compactMap { Int($0) }
    #expect(counts == counts.sorted() && counts.count == output.lines.count - 1)
    let reports = output.stderr.split(separator: "\n").filter { $0.hasPrefix("watchedByPolling: ") }
    #expect(reports.count == 1, "told once: \(output.stderr)")
    #expect(reports.first?.contains(told) == true && reports.first?.contains(") is used up. Raise the limit") == true)
  }

  @Test func watchesNobodyNeedsAreDropped() async throws {
    let directory = scratch.url("shared")
    do {
      let first = SettingsStore(fileURL: directory.appendingPathComponent("a.json"))
      let second = SettingsStore(fileURL: directory.appendingPathComponent("b.json"))
      try first.set(.int(1), forKey: "x")
      try second.set(.int(1), forKey: "x")
    }
    // Both files are gone from this process; a third on the same directory still hears its changes.
    let third = SettingsStore(fileURL: directory.appendingPathComponent("c.json"))
    let changes = third.changes()
    try await probe("set", third.fileURL.path, "x", "2")
    #expect(await take(1, from: changes) == [["x"]])
  }
}
