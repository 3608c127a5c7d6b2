import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// Keys (and string values) are the same only when their Unicode scalars are, as JSON, jq and Python have them: "é"
/// as one scalar (U+00E9) and "é" as "e" and a combining accent (U+0301) are two keys, which Swift's `String` would
/// take for one.
@Suite struct KeyIdentityTests {
  let scratch = Scratch()
  let composed = "\u{E9}"
  let decomposed = "e\u{301}"

  @Test("a file with both keys loads, and each key keeps its own value")
  func bothKeysLoad() async throws {
    try Data(#"{"\#(composed)": 1, "\#(decomposed)": 2}"#.utf8).write(to: scratch.url("settings.json"))
    let store = scratch.store()
    #expect(store.fileError == nil)
    #expect(store.keys.map { Array($0.unicodeScalars) } == [[Unicode.Scalar(0xE9)!], ["e", Unicode.Scalar(0x301)!]])
    #expect(store.value(forKey: composed) == .int(1))
    #expect(store.value(forKey: decomposed) == .int(2))
  }

  @Test("setting one key leaves the other alone, in memory and in the file")
  func settingOneLeavesTheOther() async throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: composed)
    try store.set(.int(2), forKey: decomposed)
    #expect(store.keys.count == 2)
    #expect(store.value(forKey: composed) == .int(1))
    #expect(store.text == "{\n  \"\(composed)\": 1,\n  \"\(decomposed)\": 2\n}\n")
    try store.removeValue(forKey: decomposed)
    #expect(store.text == "{\n  \"\(composed)\": 1\n}\n")
  }

  @Test("each Setting hears its own key only, also of changes made by another process")
  func settingsObserveTheirOwnKey() async throws {
    let store = scratch.store()
    let first = Setting(composed, default: 0, store: store)
    let second = Setting(decomposed, default: 0, store: store)
    let updates = second.updates(initial: false)
    try await probe("set", store.fileURL.path, decomposed, "5")
    #expect(await collect(updates) { $0 == 5 } == [5])
    #expect(first.value == 0)
  }

  @Test("a string value that changes only in how its text is encoded is a change, and is written")
  func aValueRewrittenInTheOtherFormIsWritten() throws {
    let store = scratch.store()
    try store.set(.string(composed), forKey: "letter")
    let writes = store.writeCount
    try store.set(.string(decomposed), forKey: "letter")
    #expect(store.writeCount == writes + 1)
    #expect(store.text.contains("\"\(decomposed)\""))
  }

  @Test("objects inside values keep both keys too")
  func nestedObjects() throws {
    // Written sorted by Unicode scalars: "e" (U+0065) before "é" (U+00E9).
    let text = #"{"\#(decomposed)":2,"\#(composed)":1}"#
    #expect(try JSONValue(parsing: text).description == text)
  }

  @Test("values hash as they compare: text by its Unicode scalars")
  func valuesHashAsTheyCompare() {
    let values: [JSONValue] = [
      .null, .bool(true), .int(1), .double(1.5), .string(composed), .string(decomposed), .array([.int(1)]),
      .object([JSONKey(composed): .int(1)]), .object([JSONKey(decomposed): .int(1)]),
    ]
    #expect(Set(values + values).count == values.count)
    #expect(JSONValue.string(composed) != .string(decomposed))
    #expect(JSONValue.int(1) != .double(1))
    #expect(Set([JSONKey(composed), JSONKey(decomposed), "e", JSONKey(composed)]).count == 3)
    #expect(JSONKey(decomposed).description.unicodeScalars.count == 2)
  }

  @Test("a Swift dictionary cannot hold both keys: it does not decode, rather than lose one")
  func swiftDictionariesRefuseBoth() async throws {
    try Data(#"{"map": {"\#(composed)": 1, "\#(decomposed)": 2}}"#.utf8).write(to: scratch.url("settings.json"))
    let store = scratch.store()
    let errors = store.errors()
    let map = Setting("map", default: ["default": 0], store: store)
    #expect(map.value == ["default": 0])
    guard case .undecodableValue(let key, _, let reason)? = await take(1, from: errors).first?.situation else {
      Issue.record("expected undecodableValue")
      return
    }
    #expect(key == "map")
    #expect(reason.contains("an object whose keys Swift strings tell apart"))
  }
}
