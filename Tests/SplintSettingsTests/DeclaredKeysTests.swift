import Foundation
import TestSupport
import Testing

@testable import SplintSettings

enum Pace: String, CaseIterable, SettingValue { case slow, fast }

// Declared once, as a program declares its keys; the tests point them at stores of their own.
extension SettingKeys {
  static let interval = SettingKey("interval", default: 30)
  static let pace = SettingKey("pace", default: Pace.slow)
  static let proxy = SettingKey<String?>("proxy", default: nil)
}

/// Keys declared once (`SettingKeys`), used with any store; and a stored value of the wrong type, which is never
/// taken for the default where that would write it.
@Suite struct DeclaredKeysTests {
  let scratch = Scratch()

  @Test("the same declared keys, used with two stores, read and write each store's own file")
  func declaredKeysWithTwoStores() throws {
    let first = scratch.store("first.json")
    let second = scratch.store("second.json")
    #expect(first[.interval] == 30 && second[.interval] == 30)
    first[.interval] = 60
    second[.pace] = .fast
    #expect(first[.interval] == 60 && second[.interval] == 30)
    #expect(first[.pace] == .slow && second[.pace] == .fast)
    #expect(first.value(forKey: "interval") == .int(60) && second.value(forKey: "interval") == nil)
    #expect(Setting(.interval, store: first).value == 60)
    #expect(Setting(.pace, store: second).value == .fast)
    try second.update { settings in settings[.interval] += 5 }
    #expect(second[.interval] == 35)
    first[.proxy] = "http://proxy:3128"
    first[.proxy] = nil
    #expect(first.keys == ["interval"], "nil removes the key, as a Setting's does")
    #expect(SettingKeys.interval.name == "interval" && SettingKeys.interval.defaultValue == 30)
  }

  @Test("a declared key costs nothing until used: no file is read or made, nothing is watched")
  func aDeclaredKeyCostsNothing() {
    let key = SettingKey("unused", default: 1)
    let store = scratch.store()
    #expect(key.name == "unused")
    #expect(!store.file.isWatching)
    #expect(!FileManager.default.fileExists(atPath: store.fileURL.path))
  }

  @Test("update {} over a stored value of the wrong type throws and writes nothing, not the default plus 30")
  func anUpdateOverAWrongTypeWritesNothing() throws {
    let store = scratch.store()
    let text = #"{"interval": "sixty", "other": 1}"#
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let interval = Setting("interval", default: 30, store: store)
    for increment in [
      { (settings: inout SettingsTransaction) in settings[interval] += 30 },
      { (settings: inout SettingsTransaction) in settings[.interval] += 30 },
    ] {
      #expect(
        throws: SettingsError.undecodableValue(
          key: "interval", expected: "Int",
          reason: "expected a whole number from \(Int.min) to \(Int.max), found a string \"sixty\"")
      ) {
        try store.update { settings in
          settings["other"] = 2
          increment(&settings)
        }
      }
    }
    #expect(store.text == text)
    #expect(store.writeCount == 0)
    // Assigned without being read, the value replaces the wrong one.
    try store.update { settings in settings[interval] = 45 }
    #expect(store.value(forKey: "interval") == .int(45))
  }

  @Test("errors() tells a stored value of the wrong type at once, and a new stream hears it until it decodes")
  func errorsTellAWrongTypeAtOnce() async throws {
    let store = scratch.store()
    try #"{"pace": "warp"}"#.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let pace = Setting(.pace, store: store)
    #expect(pace.value == .slow)
    let first = await take(1, from: store.errors())
    #expect(first.map(\.code) == [.undecodableValue])
    #expect(first.first?.description.contains(#"one of "slow", "fast" (the raw values of Pace)"#) == true, "\(first)")
    // A second stream hears it too, once; and store[.pace], which reads the same, tells nothing new.
    let errors = store.errors()
    #expect(store[.pace] == .slow)
    pace.value = .fast
    #expect(await take(2, from: errors, within: 1).map(\.code) == [.undecodableValue])
    let later = store.errors()
    try store.set(.string("warp"), forKey: "other")  // a change that is not about speed
    pace.value = .fast
    #expect(await take(1, from: later, within: 1).isEmpty, "it decodes now: nothing to tell")
  }

  @Test("a process that starts on a file holding a value of the wrong type hears it from errors() first")
  func aProcessStartingOnAWrongTypeHearsIt() async throws {
    let file = scratch.url("settings.json")
    try #"{"count": "many"}"#.write(to: file, atomically: true, encoding: .utf8)
    let output = try await probe("first-error", file.path, "count")
    #expect(output.lines == ["value 0", "undecodableValue count"])
  }
}
