import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// Splint's semantics, in one process.
@Suite struct SettingTests {
  let scratch = Scratch()

  @Test func absentReadsTheDefaultWhichIsNeverWritten() {
    let store = scratch.store()
    let setting = Setting("volume", default: 7, store: store)
    #expect(setting.value == 7)
    #expect(store.value(forKey: "volume") == nil)
    #expect(!FileManager.default.fileExists(atPath: store.fileURL.path))
    #expect(store.writeCount == 0)
    // A later build may change the default, and it takes effect.
    #expect(Setting("volume", default: 9, store: store).value == 9)
  }

  @Test func aStoredDecodableValueIsRead() throws {
    try #"{"volume": 3}"#.write(to: scratch.url("settings.json"), atomically: true, encoding: .utf8)
    #expect(Setting("volume", default: 7, store: scratch.store()).value == 3)
  }

  @Test func anUndecodableValueReadsTheDefaultStaysInTheFileAndIsReported() async throws {
    let original = #"{"volume": "loud", "other": 1}"#
    try original.write(to: scratch.url("settings.json"), atomically: true, encoding: .utf8)
    let store = scratch.store()
    let errors = store.errors()
    let setting = Setting("volume", default: 7, store: store)
    #expect(setting.value == 7)
    let reported = await collect(errors) { _ in true }
    #expect(
      reported == [
        .undecodableValue(
          key: "volume", expected: "Int",
          reason: "expected a whole number from \(Int.min) to \(Int.max), found a string \"loud\"")
      ])
    #expect(store.text == original)
    #expect(store.writeCount == 0)
  }

  @Test func everyAssignmentWritesOnceAndEveryInstanceSeesItBeforeTheSetterReturns() {
    let store = scratch.store()
    let first = Setting("volume", default: 0, store: store)
    let second = Setting("volume", default: 0, store: SettingsStore(fileURL: store.fileURL))
    first.value = 4
    #expect(second.value == 4)
    #expect(store.writeCount == 1)
    first.value = 4  // the file holds it already: nothing to write
    #expect(store.writeCount == 1)
    second.value = 5
    #expect(first.value == 5)
    #expect(store.writeCount == 2)
    #expect(store.value(forKey: "volume") == .int(5))
  }

  @Test func resetRemovesTheKeyAndEveryInstanceReadsItsDefault() {
    let store = scratch.store()
    let first = Setting("theme", default: "light", store: store)
    let second = Setting("theme", default: "light", store: store)
    first.value = "dark"
    second.reset()
    #expect(first.value == "light")
    #expect(second.value == "light")
    #expect(store.keys == [])
    #expect(store.text == "{}\n")
  }

  @Test func noWriteBackLoopsBetweenInstances() async throws {
    let store = scratch.store()
    let instances = (0..<5).map { _ in Setting("volume", default: 0, store: store) }
    instances[0].value = 1
    // Another process's change proves the watcher has handled every event of our own write by the time it arrives.
    try await probe("set", store.fileURL.path, "marker", "true")
    #expect(await eventually { store.value(forKey: "marker") == .bool(true) })
    #expect(instances.allSatisfy { $0.value == 1 })
    #expect(store.writeCount == 1)
  }

  @Test func anEqualExternalValueCausesNoNotification() async throws {
    let store = scratch.store()
    let setting = Setting("volume", default: 0, store: store)
    setting.value = 3
    let updates = setting.updates(initial: false)
    try await probe("set", store.fileURL.path, "volume", "3")  // equal: no update
    try await probe("set", store.fileURL.path, "volume", "3.0")  // equal as an Int too
    try await probe("set", store.fileURL.path, "volume", "4")
    #expect(await collect(updates) { $0 == 4 } == [4])
  }

  @Test func externalChangesReachTheValueRemovalRestoresTheDefaultAndUndecodableKeepsTheValue() async throws {
    let store = scratch.store()
    let errors = store.errors()
    let setting = Setting("volume", default: 0, store: store)
    let updates = setting.updates(initial: false)
    try await probe("set", store.fileURL.path, "volume", "8")
    #expect(await collect(updates) { $0 == 8 } == [8])
    try await probe("set", store.fileURL.path, "volume", #""loud""#)
    #expect(await collect(errors) { _ in true }.count == 1)
    #expect(setting.value == 8)
    try #"{"other": true}"#.write(to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(await collect(updates) { $0 == 0 } == [0])
  }

  @Test func updatesStartWithTheValueAndKeepOnlyTheNewest() async {
    let setting = Setting("volume", default: 1, store: scratch.store())
    let updates = setting.updates()
    setting.value = 2
    setting.value = 3
    #expect(await collect(updates) { $0 == 3 } == [3])
    let fresh = setting.updates()
    #expect(await collect(fresh) { _ in true } == [3])
  }

  @Test func observationFiresOnLocalAndExternalChanges() async throws {
    let store = scratch.store()
    let setting = Setting("volume", default: 0, store: store)
    let changes = Mutex(0)
    func track() {
      withObservationTracking {
        _ = setting.value
      } onChange: {
        changes.withLock { $0 += 1 }
      }
    }
    track()
    setting.value = 1
    #expect(changes.withLock { $0 } == 1)
    track()
    try await probe("set", store.fileURL.path, "volume", "2")
    #expect(await eventually { changes.withLock { $0 } == 2 })
    #expect(setting.value == 2)
  }

  @Test("a stream keeps its Setting alive while it is iterated, and lets it go once dropped or cancelled")
  func streamsOutliveTheirSetting() async throws {
    let store = scratch.store()
    weak var weakSetting: Setting<Int>?
    // As a user writes it: nothing but the stream holds the Setting.
    func updates() -> AsyncStream<Int> {
      let setting = Setting("volume", default: 0, store: store)
      weakSetting = setting
      return setting.updates()
    }
    do {
      var iterator = updates().makeAsyncIterator()
      #expect(await iterator.next() == 0)
      try await Task.sleep(for: .milliseconds(50))
      #expect(weakSetting != nil, "the stream keeps its Setting")
      try store.set(.int(1), forKey: "volume")
      #expect(await iterator.next() == 1)
      try await probe("set", store.fileURL.path, "volume", "2")
      #expect(await iterator.next() == 2)
    }
    #expect(weakSetting == nil, "dropped, the stream lets its Setting go")

    let stream = updates()
    let iterating = Task {
      for await _ in stream {}
    }
    #expect(weakSetting != nil, "the stream keeps its Setting")
    iterating.cancel()
    await iterating.value  // cancelled, the stream ends: a stream that went on would hang here
    #expect(weakSetting == nil)
  }

  @Test func failedEncodingsAreThrownReportedAndWriteNothing() async {
    let store = scratch.store()
    let errors = store.errors()
    let setting = Setting("ratio", default: 1.0, store: store)
    #expect(throws: SettingsError.self) { try setting.save(.nan) }
    setting.value = .infinity
    #expect(setting.value == 1.0)
    #expect(store.writeCount == 0)
    let reported = await take(2, from: errors)
    #expect(reported.count == 2)
    for error in reported {
      guard case .unencodableValue(key: "ratio", _) = error.situation else {
        Issue.record("expected unencodableValue for ratio, got \(error)")
        continue
      }
    }
    let later = await collect(store.errors(), within: 0.2) { _ in true }
    #expect(later.isEmpty, "a new stream hears the file's own problem only, and the file is fine")
  }

  @Test func theThrowingResetThrowsWhenTheFileCannotBeWritten() throws {
    let blocker = scratch.url("not-a-directory")
    try Data().write(to: blocker)
    let store = SettingsStore(fileURL: blocker.appendingPathComponent("settings.json"))
    let setting = Setting("volume", default: 0, store: store)
    #expect(throws: SettingsError.self) { try setting.remove() }
    setting.reset()  // reported, not thrown
    #expect(throws: SettingsError.self) { try setting.save(1) }
    #expect(setting.value == 0)
  }
}
