import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// System-wide defaults: read-only files below the user's, in temporary directories standing for `/etc/xdg`.
@Suite struct SystemLayerTests {
  let scratch = Scratch()

  /// The environment for a probe on suite `app`: its user file under `home`, its system files in `directories`.
  func environment(home: URL, directories: String?) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = home.path
    environment["XDG_CONFIG_DIRS"] = directories
    return environment
  }

  /// Writes `text` to `url` as an administrator's editor would (a new file renamed over the old), making its
  /// directory first.
  func save(_ text: String, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
  }

  /// The names in `directory`, sorted.
  func names(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
  }

  @Test("a suite's system files follow $XDG_CONFIG_DIRS in order, /etc/xdg when it is unset or empty")
  func systemFilesOfASuite() async throws {
    let home = scratch.url("home")
    let first = scratch.url("first").path
    let second = scratch.url("second").path
    let ordered = try await probe(
      "layers", "suite:app",
      environment: environment(home: home, directories: "\(second):relative/xdg::\(first):\(second)/"))
    #expect(
      ordered.lines == [
        home.path + "/app/settings.json", second + "/app/settings.json", first + "/app/settings.json",
      ], "\(ordered)")
    for directories in [nil, "", "relative:also/relative"] {
      let fallback = try await probe(
        "layers", "suite:app", environment: environment(home: home, directories: directories))
      #expect(fallback.lines == [home.path + "/app/settings.json", "/etc/xdg/app/settings.json"], "\(fallback)")
    }
    #expect(throws: SettingsError.invalidSuiteName("a/b")) { try SettingsStore.systemFileURLs(forSuite: "a/b") }
  }

  @Test("the user's value beats every system file's, and the first system file holding a key wins")
  func layersInOrder() throws {
    let first = scratch.url("first", "app", "settings.json")
    let second = scratch.url("second", "app", "settings.json")
    try save(#"{"a": 1}"#, to: first)
    try save(#"{"a": 2, "b": 2}"#, to: second)
    let user = scratch.url("home", "app", "settings.json")
    let store = SettingsStore(fileURL: user, systemFiles: [first, second, first, user])
    #expect(store.systemFileURLs == [first, second])
    let a = Setting("a", default: 0, store: store)
    let b = Setting("b", default: 0, store: store)
    let c = Setting("c", default: 0, store: store)
    #expect((a.value, b.value, c.value) == (1, 2, 0))
    #expect(store.value(forKey: "a") == .int(1) && store.origin(ofKey: "a") == .system(first))
    #expect(store.value(forKey: "b") == .int(2) && store.origin(ofKey: "b") == .system(second))
    #expect(store.value(forKey: "c") == nil && store.origin(ofKey: "c") == nil)

    b.value = 3
    #expect(b.value == 3 && store.origin(ofKey: "b") == .user(user))
    // The user's file only: what export, list and reset work on.
    #expect(store.keys == ["b"] && store.values == ["b": .int(3)])
    #expect(try String(contentsOf: second, encoding: .utf8) == #"{"a": 2, "b": 2}"#)

    // A store on an explicit file has no system layers unless given.
    let plain = SettingsStore(fileURL: user)
    #expect(plain.systemFileURLs.isEmpty)
    #expect(plain.value(forKey: "a") == nil && Setting("a", default: 0, store: plain).value == 0)
  }

  @Test("reset removes the user's value only, and every process falls back to the system value")
  func resetFallsBackToTheSystemValue() async throws {
    let home = scratch.url("home")
    let system = scratch.url("xdg", "app", "settings.json")
    try save(#"{"interval": 45}"#, to: system)
    let store = SettingsStore(fileURL: home.appendingPathComponent("app/settings.json"), systemFiles: [system])
    let interval = Setting("interval", default: 30, store: store)
    interval.value = 60
    let ready = scratch.url("ready").path
    let watcher = try await startProbe(
      "watch", "suite:app", "interval", "45", ready,
      environment: environment(home: home, directories: scratch.url("xdg").path))
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) }, "\(watcher.stdoutSoFar)")
    interval.reset()
    #expect(interval.value == 45)
    #expect(store.origin(ofKey: "interval") == .system(system))
    let output = await watcher.wait()
    #expect(output.status == 0 && output.lines == ["60", "45"], "\(output)")
    // Set again here, then reset by another process: this process falls back too.
    interval.value = 61
    try await probe(
      "reset", "suite:app", "interval", environment: environment(home: home, directories: scratch.url("xdg").path))
    #expect(await eventually { interval.value == 45 })
    #expect(try String(contentsOf: system, encoding: .utf8) == #"{"interval": 45}"#)
  }

  @Test("an administrator's edit of a system file reaches a running program, unless the user's value hides it")
  func anAdministratorsEditReachesRunningPrograms() async throws {
    let home = scratch.url("home")
    let system = scratch.url("xdg", "app", "settings.json")
    try save(#"{"volume": 3}"#, to: system)
    let ready = scratch.url("ready").path
    let watcher = try await startProbe(
      "watch", "suite:app", "volume", "7", ready,
      environment: environment(home: home, directories: scratch.url("xdg").path))
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) }, "\(watcher.stdoutSoFar)")
    try save(#"{"volume": 7}"#, to: system)
    let output = await watcher.wait()
    #expect(output.status == 0 && output.lines == ["3", "7"], "\(output)")

    // Here, changes() announces a system file's change only for keys no file above it holds.
    let user = home.appendingPathComponent("app/settings.json")
    let store = SettingsStore(fileURL: user, systemFiles: [system])
    try store.set(.int(1), forKey: "volume")
    let volume = Setting("volume", default: 0, store: store)
    let updates = volume.updates(initial: false)
    let changes = store.changes()
    try save(#"{"volume": 8, "mode": "quiet"}"#, to: system)
    #expect(await take(1, from: changes) == [["mode"]])
    try store.removeValue(forKey: "volume")
    try save(#"{"volume": 9, "mode": "quiet"}"#, to: system)
    #expect(await take(2, from: changes) == [["volume"], ["volume"]])
    // The newest waits when values come faster than they are read: 8 may be skipped, 9 may not.
    #expect(await collect(updates) { $0 == 9 }.last == 9)
  }

  @Test("a system directory made after a program started reaches it, and nothing is polled meanwhile")
  func aSystemDirectoryMadeLaterIsWatchedWithoutPolling() async throws {
    let xdg = scratch.url("xdg")
    let system = xdg.appendingPathComponent("app/settings.json")
    let store = SettingsStore(fileURL: scratch.url("home", "app", "settings.json"), systemFiles: [system])
    let mode = Setting("mode", default: "off", store: store)
    let updates = mode.updates(initial: false)
    let layer = try #require(store.systemFiles.first)
    #expect(layer.isWatching)
    #expect(!SettingsWatcher.shared.isPolled(ObjectIdentifier(layer)))
    // Nothing is made in a system directory, nor on the way to it.
    #expect(!FileManager.default.fileExists(atPath: xdg.path))

    // `mkdir -p`, then a file saved in it.
    try save(#"{"mode": "on"}"#, to: system)
    #expect(await collect(updates) { $0 == "on" } == ["on"])
    #expect(!SettingsWatcher.shared.isPolled(ObjectIdentifier(layer)))

    // The directory removed: the default again, waited for through its parent; then back.
    try FileManager.default.removeItem(at: system.deletingLastPathComponent())
    #expect(await collect(updates) { $0 == "off" } == ["off"])
    #expect(!SettingsWatcher.shared.isPolled(ObjectIdentifier(layer)))
    try save(#"{"mode": "again"}"#, to: system)
    #expect(await collect(updates) { $0 == "again" } == ["again"])
  }

  @Test("another process started before /etc/xdg/<suite> existed sees it made and filled")
  func anotherProcessSeesASystemDirectoryMadeLater() async throws {
    let xdg = scratch.url("xdg")
    let ready = scratch.url("ready").path
    let watcher = try await startProbe(
      "watch", "suite:app", "mode", #""on""#, ready,
      environment: environment(home: scratch.url("home"), directories: xdg.path))
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) }, "\(watcher.stdoutSoFar)")
    #expect(!FileManager.default.fileExists(atPath: xdg.path))
    try save(#"{"mode": "on"}"#, to: xdg.appendingPathComponent("app/settings.json"))
    let output = await watcher.wait()
    #expect(output.status == 0 && output.lines == ["absent", #""on""#], "\(output)")
  }

  @Test("a system directory that comes and goes many times leaves no watch behind and is never polled")
  func aDirectoryComingAndGoingLeavesNothingBehind() async throws {
    let system = scratch.url("xdg", "app", "settings.json")
    let store = SettingsStore(fileURL: scratch.url("settings.json"), systemFiles: [system])
    let round = Setting("round", default: -1, store: store)
    let layer = try #require(store.systemFiles.first)
    _ = round.value
    #expect(SettingsWatcher.shared.watchCount(ObjectIdentifier(layer)) == 1)
    for number in 0..<10 {
      try save(#"{"round": \#(number)}"#, to: system)
      #expect(await eventually { round.value == number }, "round \(number)")
      #expect(SettingsWatcher.shared.watchCount(ObjectIdentifier(layer)) == 1)
      try FileManager.default.removeItem(at: scratch.url("xdg"))
      #expect(await eventually { round.value == -1 }, "round \(number) removed")
      #expect(await eventually { SettingsWatcher.shared.watchCount(ObjectIdentifier(layer)) == 1 })
      #expect(!SettingsWatcher.shared.isPolled(ObjectIdentifier(layer)))
    }
  }

  @Test("a broken system file is reported and skipped, keeps its last good values, and is never written")
  func aBrokenSystemFileIsSkipped() async throws {
    let directory = scratch.url("xdg", "app")
    let system = directory.appendingPathComponent("settings.json")
    try save(#"{"a": 1}"#, to: system)
    let user = scratch.url("home", "app", "settings.json")
    let store = SettingsStore(fileURL: user, systemFiles: [system])
    let a = Setting("a", default: 0, store: store)
    #expect(a.value == 1)
    let errors = store.errors()
    try save("{broken", to: system)
    let reported = await take(1, from: errors)
    #expect(reported.first?.url == system && reported.first?.code == .corruptFile, "\(reported)")
    // Its remedy is not the user's file's: it is never written, its administrator fixes it.
    #expect(reported.first?.description.contains("It is skipped") == true, "\(reported)")
    #expect(store.fileError?.url == system)
    #expect(a.value == 1 && store.value(forKey: "a") == .int(1))

    // Writes go to the user's file; nothing is made beside the system file.
    try store.update { settings in settings["b"] = .int(2) }
    a.value = 5
    try store.resetAll()
    #expect(try names(in: directory) == ["settings.json"])
    #expect(try String(contentsOf: system, encoding: .utf8) == "{broken")
    #expect(a.value == 1)

    // A system file broken from the start gives nothing, and the user's file is still read.
    let broken = scratch.url("other", "settings.json")
    try save("[1]", to: broken)
    let fresh = SettingsStore(fileURL: scratch.url("fresh.json"), systemFiles: [broken])
    try fresh.set(.int(2), forKey: "b")
    #expect(fresh.fileError?.url == broken)
    #expect(fresh.value(forKey: "a") == nil && fresh.value(forKey: "b") == .int(2))
    #expect(try names(in: broken.deletingLastPathComponent()) == ["settings.json"])
  }

  @Test("a system file that cannot be read is reported with its administrator's remedy, and skipped")
  func anUnreadableSystemFile() async throws {
    let system = scratch.url("xdg", "app", "settings.json")
    try save(#"{"a": 1}"#, to: system)
    #expect(chmod(system.path, 0) == 0)
    // Read by a process without privileges even when the tests run as root: in a user namespace of its own, with
    // no mapping, it is nobody.
    guard (try? await Programs.run(["unshare", "--user", "true"]))?.status == 0 else {
      print("skipped: this system does not permit user namespaces (unshare), so no unprivileged reader")
      return
    }
    let output = try await Programs.run(
      ["unshare", "--user", Programs.helper("SettingsProbe"), "problem", "suite:app"],
      environment: environment(home: scratch.url("home"), directories: scratch.url("xdg").path))
    let reason = "this user may not open it (Permission denied)"
    #expect(output.stdout == SettingsError.unreadableSystemFile(system, reason: reason).description + "\n", "\(output)")
    #expect(output.stdout.contains("readable by every user"))
  }

  @Test("an update's body reads a Setting as the Setting does: the user's value, else the system value")
  func aTransactionCountsOnFromTheSystemValue() throws {
    let system = scratch.url("xdg", "app", "settings.json")
    try save(#"{"launches": 10}"#, to: system)
    let store = SettingsStore(fileURL: scratch.url("settings.json"), systemFiles: [system])
    let launches = Setting("launches", default: 0, store: store)
    let raw = try store.update { settings -> JSONValue? in
      settings[launches] += 1
      return settings["nothing"]
    }
    #expect(raw == nil)
    #expect(store.values == ["launches": .int(11)])
    try store.update { settings in
      #expect(settings.keys == ["launches"])
      settings[launches] += 1
    }
    #expect(launches.value == 12)
    #expect(try String(contentsOf: system, encoding: .utf8) == #"{"launches": 10}"#)
  }
}

@Suite struct StandardizedPathTests {
  @Test("paths are made absolute and lose ., .. and repeated slashes, as URL's standardizedFileURL makes them")
  func standardized() {
    for path in ["/a/b/c.json", "/a/./b//c.json", "/a/b/../b/c.json", "/a/b/c.json/", "/../a/b/c.json"] {
      #expect(FileIO.standardized(path) == "/a/b/c.json", "\(path)")
    }
    #expect(FileIO.standardized("/") == "/")
    for path in ["x.json", "./y/../x.json", "y/z/../../x.json"] {
      #expect(FileIO.standardized(path) == URL(fileURLWithPath: path).standardizedFileURL.path, "\(path)")
    }
  }
}
