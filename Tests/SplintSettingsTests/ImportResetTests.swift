import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// `SettingsStore.importSettings`, `reset(keys:)` and `resetAll()`, on real files, with other processes.
@Suite struct ImportResetTests {
  let scratch = Scratch()

  /// A file as a person or another tool wrote it: the text of the values a write leaves must stay as it is
  /// (`1.50`, `{"x":1}`, not `1.5` and an object a member a line).
  static let handWritten = #"{"a": 1.50, "b": {"x":1}, "c": "keep"}"#

  @Test func aMergeSetsTheObjectsKeysAndKeepsTheOthersByteForByte() async throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let changes = store.changes()
    try store.importSettings(from: Data(#"{"b": {"y": 2}, "d": true, "a": 1.5}"#.utf8))
    #expect(store.writeCount == 1)
    #expect(await take(1, from: changes) == [["b", "d"]])
    #expect(store.keys == ["a", "b", "c", "d"])
    #expect(store.value(forKey: "b") == .object(["y": .int(2)]), "a value is set whole, not merged into")
    #expect(store.text == #"{"a": 1.50, "b": {"y": 2}, "c": "keep", "d": true}"#, "as the file is written: one line")
  }

  @Test func aReplaceLeavesExactlyTheObjectsKeys() async throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let changes = store.changes()
    try store.importSettings(from: Data(#"{"e": null, "a": 1.5}"#.utf8), replacing: true)
    #expect(store.writeCount == 1)
    #expect(await take(1, from: changes) == [["b", "c", "e"]])
    #expect(store.keys == ["a", "e"])
    #expect(store.text == #"{"a": 1.50, "e": null}"#)
    try store.importSettings(from: Data("{}".utf8), replacing: true)
    #expect(store.text == "{}")
  }

  @Test func anImportThatChangesNothingWritesNothing() throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.importSettings(from: Data(#"{"c": "keep", "a": 1.5}"#.utf8))
    try store.importSettings(from: Data("{}".utf8))
    try store.importSettings(["a": .double(1.5), "b": .object(["x": .int(1)]), "c": .string("keep")], replacing: true)
    #expect(store.writeCount == 0)
    #expect(store.text == Self.handWritten)
  }

  @Test(arguments: [
    ("{\n  \"a\": 1,\n  \"b\": [1 2]\n}", "line 3, column 11: '2' after an array element, where ',' or ']' should be"),
    ("{\"a\": 1, \"a\": 2}", "line 1, column 10: the key \"a\" appears twice in one object"),
    ("{\"a\": 1}\n{\"b\": 2}", "line 2, column 1: '{' after the end of the JSON value"),
    ("{\"a\": NaN}", "line 1, column 7: 'N' where a value should be"),
    ("[{\"a\": 1}]", "line 1, column 1: expected a JSON object of settings, found an array"),
    ("\n  \"a\"", "line 2, column 3: expected a JSON object of settings, found a string"),
    ("42", "line 1, column 1: expected a JSON object of settings, found a number"),
    ("null", "line 1, column 1: expected a JSON object of settings, found null"),
    (" \n", "line 2, column 1: expected a JSON object of settings, found nothing"),
    ("", "line 1, column 1: expected a JSON object of settings, found nothing"),
  ])
  func textThatIsNotAJSONObjectIsRefusedWithItsPlaceAndWritesNothing(text: String, reason: String) throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let before = try Data(contentsOf: store.fileURL)
    let identity = FileIO.identity(store.fileURL.path)
    for replacing in [false, true] {
      #expect(throws: SettingsError.invalidJSON(reason: reason)) {
        try store.importSettings(from: Data(text.utf8), replacing: replacing)
      }
    }
    #expect(try Data(contentsOf: store.fileURL) == before)
    #expect(FileIO.identity(store.fileURL.path) == identity, "the file is the same file, not a copy")
    #expect(store.writeCount == 0)
    #expect(!FileManager.default.fileExists(atPath: store.fileURL.path + ".lock"), "not even the lock was taken")
  }

  @Test func invalidTextMakesNoFileWhereThereWasNone() throws {
    let store = scratch.store("new/settings.json")
    #expect(throws: SettingsError.self) { try store.importSettings(from: Data("{".utf8)) }
    #expect(!FileManager.default.fileExists(atPath: scratch.url("new").path))
  }

  @Test func aValueThatCannotBeStoredImportsNothing() throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: "a")
    #expect(throws: SettingsError.unencodableValue(key: "b", reason: "JSON has no NaN or infinity")) {
      try store.importSettings(["a": .int(2), "b": .array([.double(.infinity)]), "c": .null])
    }
    #expect(store.writeCount == 1)
    #expect(store.values == ["a": .int(1)])
  }

  @Test("export, as splintctl export prints it, and import into another suite carry every value exactly")
  func exportAndImportRoundTrip() throws {
    let original = scratch.store("original/settings.json")
    let values: [JSONKey: JSONValue] = [
      "int": .int(.max), "double": .double(0.1), "whole": .double(5), "negative-zero": .double(-0.0),
      "text": .string("line\n\"quoted\"\t\u{1}"), "\u{E9}": .string("one scalar"), "e\u{301}": .string("two"),
      "nested": .object(["list": .array([.null, .bool(false), .object([:])]), "empty": .array([])]),
    ]
    try original.importSettings(values)
    let exported = JSONValue.object(original.values).prettyDescription
    let copy = scratch.store("copy/settings.json")
    try copy.set(.string("stale"), forKey: "stale")
    try copy.importSettings(from: Data(exported.utf8), replacing: true)
    #expect(copy.values == values)
    #expect(JSONValue.object(copy.values).prettyDescription == exported)
    guard case .double(let zero)? = copy.value(forKey: "negative-zero") else {
      Issue.record("negative-zero is \(String(describing: copy.value(forKey: "negative-zero")))")
      return
    }
    #expect(zero.sign == .minus)
  }

  @Test func resetRemovesTheKeysThatAreSetInOneWrite() async throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let b = Setting("b", default: JSONValue.string("default"), store: store)
    let changes = store.changes()
    #expect(try store.reset(keys: ["missing", "c", "b", "c"]) == ["c", "b"])
    #expect(store.writeCount == 1)
    #expect(await take(1, from: changes) == [["b", "c"]])
    #expect(b.value == .string("default"))
    #expect(store.text == #"{"a": 1.50}"#)
    #expect(try store.reset(keys: ["missing", "b"]) == [])
    #expect(try store.reset(keys: []) == [])
    #expect(store.writeCount == 1)
  }

  @Test func resetAllEmptiesTheFileAndSettingsReadTheirDefaults() async throws {
    let store = scratch.store()
    try Self.handWritten.write(to: store.fileURL, atomically: true, encoding: .utf8)
    let a = Setting("a", default: 7.0, store: store)
    #expect(a.value == 1.5)
    #expect(try store.resetAll() == ["a", "b", "c"])
    #expect(store.text == "{}")
    #expect(a.value == 7.0)
    #expect(try store.resetAll() == [])
    #expect(store.writeCount == 1)
    #expect(FileManager.default.fileExists(atPath: store.fileURL.path))
  }

  @Test("a Setting in another process sees an import as one change")
  func anotherProcessSeesAnImportAsOneChange() async throws {
    let store = scratch.store()
    try store.importSettings(["old": .int(0), "kept": .int(0)])
    let ready = scratch.url("ready").path
    let watcher = try await startProbe("changes", store.fileURL.path, ready, "a", "b", "old", "kept")
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
    try store.importSettings(
      from: Data(#"{"a": 1, "b": [2], "c": "three", "kept": 0}"#.utf8), replacing: true)
    // Heard before the next write, which a busy machine would otherwise let the watcher read in the same reload.
    #expect(await eventually { watcher.stdoutSoFar.contains("change ") })
    try store.set(.bool(true), forKey: "done")
    let output = await watcher.wait()
    #expect(output.status == 0, "\(output)")
    #expect(output.lines == ["change a b c old", "change done", "a=1", "b=[2]", "old=absent", "kept=0"])
  }

  @Test("a writer in another process, incrementing all along, loses nothing to imports here")
  func aConcurrentWriterLosesNothing() async throws {
    let store = scratch.store()
    let writer = try await startProbe("increment-until", store.fileURL.path, "counter", "stop")
    #expect(await eventually { store.value(forKey: "counter") != nil })
    // Imports here, each a read-modify-write of the whole file, while the writer writes.
    let rounds = 40
    for round in 0..<rounds {
      try store.importSettings(from: Data(#"{"imported-\#(round)": \#(round), "shared": \#(round)}"#.utf8))
    }
    try store.set(.bool(true), forKey: "stop")
    let output = await writer.wait()
    #expect(output.status == 0)
    let increments = try #require(output.lines.last.flatMap { Int($0) })
    let stored = try JSONValue(parsing: Data(contentsOf: store.fileURL))
    guard case .object(let members) = stored else {
      Issue.record("the file holds \(stored)")
      return
    }
    #expect(members["counter"] == .int(increments))
    #expect(members["shared"] == .int(rounds - 1))
    #expect(
      Set(members.keys) == Set((0..<rounds).map { JSONKey("imported-\($0)") } + ["counter", "shared", "stop"]))
  }
}
