import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// A store watches its file only once something may wait for a change; until then it runs nothing in the
/// background, and each read looks at the file.
@Suite struct LazyWatchingTests {
  let scratch = Scratch()

  @Test("a one-shot read or write (a command-line tool's) starts no thread, no inotify and no epoll instance")
  func oneShotUseStartsNothing() async throws {
    let output = try await probe("one-shot", scratch.url("suite", "settings.json").path, "volume")
    #expect(output.status == 0, "\(output)")
    #expect(output.lines.count == 2, "\(output)")
    // The probe's own async main has threads and an epoll instance (libdispatch's) before it starts: none more.
    #expect(output.lines.first == output.lines.last, "threads or instances appeared: \(output.lines)")
    #expect(output.lines.last?.contains("inotify 0") == true, "\(output.lines)")
  }

  @Test("unwatched, every read sees the file as it is now, changes by other processes included")
  func unwatchedReadsLookAtTheFile() async throws {
    let store = scratch.store()
    #expect(store.value(forKey: "volume") == nil)
    try store.set(.int(1), forKey: "volume")
    #expect(try await probe("set", store.fileURL.path, "volume", "2").status == 0)
    #expect(store.value(forKey: "volume") == .int(2), "at once, with no watcher to wait for")
    #expect(try await probe("set", store.fileURL.path, "theme", #""dark""#).status == 0)
    #expect(store.keys == ["volume", "theme"])
    #expect(store.values == ["volume": .int(2), "theme": .string("dark")])
    try Data("{\"volume\": 3, oops".utf8).write(to: store.fileURL)
    #expect(store.fileError?.code == .corruptFile, "reported at the first read, with no grace to wait for")
    #expect(store.value(forKey: "volume") == .int(2), "the last good content stays in use")
    try Data(#"{"volume": 4}"#.utf8).write(to: store.fileURL)
    #expect(store.fileError == nil)
    #expect(store.value(forKey: "volume") == .int(4))
    try FileManager.default.removeItem(at: store.fileURL)
    #expect(store.keys == [])
    #expect(!store.file.isWatching)
  }

  @Test("a Setting made, saved and reset, and the store's writes, start nothing; nor does making a store")
  func writesStartNothing() throws {
    let store = SettingsStore(fileURL: scratch.url("new", "settings.json"))
    #expect(!FileManager.default.fileExists(atPath: scratch.url("new").path), "nothing is made before a write")
    let volume = Setting("volume", default: 0, store: store)
    try volume.save(3)
    volume.reset()
    try store.set(.int(1), forKey: "other")
    try store.update { $0[volume] += 1 }
    try store.removeValue(forKey: "other")
    #expect(store.values == ["volume": .int(1)])
    #expect(!store.file.isWatching)
  }

  enum Observer: String, CaseIterable, Sendable {
    case settingValue = "a Setting's value read"
    case settingUpdates = "a Setting's updates()"
    case observationTracking = "withObservationTracking on a Setting"
    case storeChanges = "the store's changes()"
    case storeErrors = "the store's errors()"
  }

  @Test(
    "each way of observing starts watching, and changes by another process then arrive unasked",
    arguments: Observer.allCases)
  func observingStartsWatching(observer: Observer) async throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: "volume")
    let setting = Setting("volume", default: 0, store: store)
    #expect(!store.file.isWatching)
    let tracked = Shared(false)
    var streams: [Any] = []
    switch observer {
    case .settingValue: #expect(setting.value == 1)
    case .settingUpdates: streams.append(setting.updates())
    case .observationTracking:
      withObservationTracking {
        _ = setting.value
      } onChange: {
        tracked.value.withLock { $0 = true }
      }
    case .storeChanges: streams.append(store.changes())
    case .storeErrors: streams.append(store.errors())
    }
    #expect(store.file.isWatching)
    // Heard without any read here: only the watcher can bring it.
    let heard = Shared<JSONValue?>(nil)
    let id = store.file.makeObserverID()
    _ = store.file.observe("volume", id: id, watching: false) { _, value in heard.value.withLock { $0 = value } }
    defer { store.file.removeObserver("volume", id: id) }
    #expect(try await probe("set", store.fileURL.path, "volume", "5").status == 0)
    #expect(await eventually { heard.value.withLock { $0 } == .int(5) })
    if observer == .observationTracking { #expect(await eventually { tracked.value.withLock { $0 } }) }
    #expect(setting.value == 5)
    withExtendedLifetime(streams) {}
  }

  @Test("reads and Settings inside an update's body neither deadlock nor lose the watch they ask for")
  func insideAnUpdate() async throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: "volume")
    let volume = Setting("volume", default: 0, store: store)
    try store.update { settings in
      #expect(store.value(forKey: "volume") == .int(1))
      #expect(store.fileError == nil)
      #expect(volume.value == 1)  // asks to watch, which the write does once it is done
      settings[volume] = 2
    }
    #expect(store.file.isWatching)
    #expect(volume.value == 2)
    let updates = volume.updates(initial: false)
    #expect(try await probe("set", store.fileURL.path, "volume", "3").status == 0)
    #expect(await collect(updates) { $0 == 3 } == [3])
  }

  @Test("many threads reading while one starts watching all see the file's content")
  func concurrentReadsWhileWatchingStarts() async throws {
    let store = scratch.store()
    try store.set(.int(7), forKey: "volume")
    let volume = Setting("volume", default: 0, store: store)
    let wrong = Shared(0)
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<8 {
        group.addTask {
          for _ in 0..<200 {
            let read = index == 0 ? JSONValue.int(volume.value) : store.value(forKey: "volume")
            if read != .int(7) { wrong.value.withLock { $0 += 1 } }
          }
        }
      }
    }
    #expect(wrong.value.withLock { $0 } == 0)
    #expect(store.file.isWatching)
  }
}
