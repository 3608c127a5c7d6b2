import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// A change of several keys at once (a batch `update`, another process's write of the file, a fleet transaction that
/// reaches a copy whole) is seen whole: once any `Setting` shows a key's new value, every `Setting` of the store shows
/// the other keys of that change at their new values too, whatever order their news arrives in; and when
/// `changes()` yields, every `Setting` already shows the change it announces.
@Suite struct WholeChangeTests {
  let scratch = Scratch()

  /// What three settings on `a`, `b` and `c` read, from the moment any of them hears of a change (inside its
  /// `withObservationTracking` `onChange`, before the other two may have heard) and from each element of `changes()`.
  final class Readings: Sendable {
    let settings: [Setting<Int>]
    let seen = Mutex<[[Int]]>([])

    init(_ store: SettingsStore) {
      settings = ["a", "b", "c"].map { Setting($0, default: 0, store: store) }
      for setting in settings { follow(setting) }
    }

    /// Reads all three now.
    func read() -> [Int] { settings.map(\.value) }

    private func follow(_ setting: Setting<Int>) {
      _ = withObservationTracking {
        setting.value
      } onChange: { [self] in
        let values = read()
        seen.withLock { $0.append(values) }
        follow(setting)
      }
    }

    /// The readings in which the three differ: a change seen half-way.
    var torn: [[Int]] { seen.withLock { $0.filter { Set($0).count > 1 } } }
  }

  @Test("a batch update of several keys is seen whole by each setting's observer, whichever hears first")
  func batchUpdateSeenWhole() throws {
    let store = scratch.store()
    let readings = Readings(store)
    for value in 1...30 {
      try store.update { settings in
        for key in ["a", "b", "c"] { settings[key] = .int(value) }
      }
    }
    #expect(readings.read() == [30, 30, 30])
    #expect(readings.seen.withLock { $0.count } >= 30)
    #expect(readings.torn.isEmpty, "seen half-way: \(readings.torn.prefix(5))")
  }

  /// Replaces `url`'s content with `{"a": value, "b": value, "c": value}` in one rename, as a writer in another
  /// process (or a fleet follower) does.
  private func write(_ value: Int, to url: URL) throws {
    let next = url.appendingPathExtension("next")
    try Data(#"{"a": \#(value), "b": \#(value), "c": \#(value)}"#.utf8).write(to: next)
    #expect(rename(next.path, url.path) == 0)
  }

  @Test(
    "another process's write of the user's file, a fleet copy or a system file is seen whole, by observers and after each element of changes()",
    arguments: ["user", "fleet", "system"])
  func aWriteElsewhereSeenWhole(layer: String) async throws {
    let user = scratch.url(layer, "settings.json")
    let copy = scratch.url(layer, "copy.json")
    let system = scratch.url(layer, "system.json")
    try FileManager.default.createDirectory(at: user.deletingLastPathComponent(), withIntermediateDirectories: true)
    let store = SettingsStore(fileURL: user, systemFiles: [system], fleetCopies: [copy])
    let written = ["user": user, "fleet": copy, "system": system][layer] ?? user
    let readings = Readings(store)
    let changes = store.changes()
    let afterChanges = Task {
      var torn: [[Int]] = []
      for await _ in changes {
        let values = readings.read()
        if Set(values).count > 1 { torn.append(values) }
        if values == [40, 40, 40] { break }
      }
      return torn
    }
    for value in 1...40 {
      try write(value, to: written)
      // Each write is waited for, so that every one of them is a change the observers hear.
      #expect(await eventually { readings.read() == [value, value, value] })
    }
    #expect(await afterChanges.value.isEmpty, "seen half-way after an element of changes()")
    #expect(readings.torn.isEmpty, "seen half-way: \(readings.torn.prefix(5))")
  }
}

extension WholeChangeTests {
  @Test(
    "read from the first key's news, a key the change removed reads its default, and one whose new value does not decode keeps its last"
  )
  func removedAndUndecodableKeysInAWholeChange() throws {
    let store = scratch.store()
    // Observers hear a change's keys in their order: `a` first, so that `y` and `z` are read before they hear it.
    let (a, y, z) = (
      Setting("a", default: 0, store: store), Setting("y", default: 7, store: store),
      Setting("z", default: 0, store: store)
    )
    try store.update { settings in
      settings["y"] = .int(1)
      settings["z"] = .int(1)
    }
    let seen = Mutex<[[Int]]>([])
    _ = withObservationTracking {
      a.value
    } onChange: {
      seen.withLock { $0.append([a.value, y.value, z.value]) }
    }
    try store.update { settings in
      settings["a"] = .int(2)
      settings["y"] = nil
      settings["z"] = .string("two")
    }
    #expect(seen.withLock { $0 } == [[2, 7, 1]] as [[Int]])
    #expect([a.value, y.value, z.value] == [2, 7, 1] as [Int])
  }
}
