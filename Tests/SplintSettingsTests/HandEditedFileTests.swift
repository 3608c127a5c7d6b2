import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// A settings file kept by hand, as VS Code's `settings.json` is: comments and trailing commas read, and a write that
/// changes only what it changes, in the file's own layout.
@Suite struct HandEditedFileTests {
  let scratch = Scratch()

  /// A file as a person keeps it: both kinds of comment, blank lines, trailing commas, four spaces.
  static let kept = """
    // Settings for the sync daemon.
    {
        // How often to sync, in seconds.
        "interval": 60, // one minute

        /* Where to sync from,
           in order. */
        "hosts": [
            "a.example.com",
            "b.example.com", // the backup
        ],
        "mode": "fast",
        "proxy": null,
    }

    """

  @Test("both kinds of comment and trailing commas are read")
  func commentsAndTrailingCommasAreRead() throws {
    let store = scratch.store()
    try Self.kept.write(to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(store.fileError == nil)
    #expect(store.keys == ["interval", "hosts", "mode", "proxy"])
    #expect(store.value(forKey: "hosts") == ["a.example.com", "b.example.com"])
    #expect(Setting("interval", default: 30, store: store).value == 60)
  }

  @Test("a write changes the changed member's line only, and keeps every comment, blank line and comma")
  func aWriteChangesOnlyTheChangedMember() throws {
    let store = scratch.store()
    try Self.kept.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.set(90, forKey: "interval")
    let before = Self.kept.split(separator: "\n", omittingEmptySubsequences: false)
    let after = store.text.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(before.count == after.count)
    let changed = zip(before, after).enumerated().filter { $0.element.0 != $0.element.1 }
    #expect(changed.map(\.offset) == [3])
    #expect(after[3] == #"    "interval": 90, // one minute"#)
    #expect(store.fileError == nil)
  }

  @Test("a changed container value and a new member are written with the file's own indentation")
  func newValuesFollowTheIndentation() throws {
    for unit in ["\t", "    ", "  "] {
      let store = SettingsStore(fileURL: scratch.url("\(unit.count)-\(unit == "\t").json"))
      let text = "{\n\(unit)\"a\": 1,\n\(unit)\"b\": {\n\(unit)\(unit)\"x\": 1\n\(unit)}\n}\n"
      try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
      try store.update { settings in
        settings["a"] = ["list": [1, 2]]
        settings["c"] = [true]
      }
      #expect(
        store.text == """
          {
          \(unit)"a": {
          \(unit)\(unit)"list": [
          \(unit)\(unit)\(unit)1,
          \(unit)\(unit)\(unit)2
          \(unit)\(unit)]
          \(unit)},
          \(unit)"b": {
          \(unit)\(unit)"x": 1
          \(unit)},
          \(unit)"c": [
          \(unit)\(unit)true
          \(unit)]
          }

          """, "indented by \(unit.debugDescription)")
    }
  }

  @Test("a removed member takes its own comments with it; comments set apart by a blank line stay")
  func removedMembersTakeTheirComments() throws {
    let store = scratch.store()
    try Self.kept.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.reset(keys: ["interval", "hosts"])
    #expect(
      store.text == """
        // Settings for the sync daemon.
        {
            "mode": "fast",
            "proxy": null,
        }

        """)
    try store.removeValue(forKey: "proxy")
    try store.set("b", forKey: "new")
    #expect(
      store.text == """
        // Settings for the sync daemon.
        {
            "mode": "fast",
            "new": "b",
        }

        """, "a new member is written as the others, with the file's trailing comma")
  }

  @Test("resetAll keeps the comments that belong to no member; import --replace keeps the members it keeps")
  func resetAllAndReplace() throws {
    let store = scratch.store()
    let text = """
      {
        // Network

        "proxy": "p", // the office's
        "timeout": 5,
        // "retries": 3,
      }
      """
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.importSettings(from: Data(#"{"timeout": 5, "retries": 4}"#.utf8), replacing: true)
    #expect(
      store.text == """
        {
          // Network

          "timeout": 5,
          "retries": 4,
          // "retries": 3,
        }
        """)
    try store.resetAll()
    #expect(
      store.text == """
        {
          // Network

          // "retries": 3,
        }
        """)
    try store.set(1, forKey: "first")
    #expect(
      store.text == """
        {
          // Network

          // "retries": 3,
          "first": 1
        }
        """, "into an object with no member: after the comments inside it")
  }

  @Test("a comment inside a value the program replaces goes with the value")
  func commentsInsideAReplacedValue() throws {
    let store = scratch.store()
    try "{\n  \"hosts\": [\n    \"a\" // the first\n  ],\n  \"b\": 1\n}".write(
      to: store.fileURL, atomically: true, encoding: .utf8)
    try store.set(["c"], forKey: "hosts")
    #expect(store.text == "{\n  \"hosts\": [\n    \"c\"\n  ],\n  \"b\": 1\n}")
  }

  @Test(
    "a file written on one line, with CRLF line ends, or with its members at the margin keeps that style",
    arguments: [
      (#"{"a": 1, "b": 2}"#, #"{"a": 1, "c": [1, {"d": true}]}"#),
      (#"{"a":1,"b":2}"#, #"{"a":1,"c":[1,{"d":true}]}"#),
      (#"{ "a" : 1 , "b" : 2 }"#, #"{ "a" : 1 , "c" : [1, {"d" : true}] }"#),
      (
        "{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}\r\n",
        "{\r\n  \"a\": 1,\r\n  \"c\": [\r\n    1,\r\n    {\r\n      \"d\": true\r\n    }\r\n  ]\r\n}\r\n"
      ),
      ("{\n\"a\": 1,\n\"b\": 2\n}", "{\n\"a\": 1,\n\"c\": [\n  1,\n  {\n    \"d\": true\n  }\n]\n}"),
    ])
  func lineStyles(text: String, expected: String) throws {
    let store = scratch.store()
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.update { settings in
      settings["b"] = nil
      settings["c"] = [1, ["d": true]]
    }
    #expect(store.text == expected)
  }

  @Test(
    "members removed from the start, the end, or all of them",
    arguments: [
      (#"{"a": 1, "b": 2, "c": 3}"#, ["a"], #"{"b": 2, "c": 3}"#),
      (#"{"a": 1, "b": 2, "c": 3}"#, ["a", "b"], #"{"c": 3}"#),
      (#"{"a": 1, "b": 2, "c": 3}"#, ["c"], #"{"a": 1, "b": 2}"#),
      (#"{ "a": 1, "b": 2 }"#, ["a", "b"], "{}"),
      ("{\n  \"a\": 1\n}\n", ["a"], "{}\n"),
      ("{\n  \"a\": 1,\n\n  \"b\": 2,\n\n  \"c\": 3\n}", ["b"], "{\n  \"a\": 1,\n\n  \"c\": 3\n}"),
      ("{\n  \"a\": 1 /* one */ ,\n  \"b\": 2 // two\n}", ["b"], "{\n  \"a\": 1 /* one */ \n}"),
      ("{ // the settings\n  \"a\": 1\n}", ["a"], "{ // the settings\n}"),
      ("{\n  \"a\": 1, /* about b */ \"b\": 2\n}", ["b"], "{\n  \"a\": 1\n}"),
    ])
  func removals(text: String, removed: [String], expected: String) throws {
    let store = scratch.store()
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.reset(keys: removed)
    #expect(store.text == expected)
  }

  @Test(
    "new members in an object with none, or a file without one",
    arguments: [
      ("{}", "{\n  \"k\": 1\n}"),
      ("{ }\n", "{\n  \"k\": 1\n}\n"),
      ("{\n\t// Place your settings in this file.\n}\n", "{\n\t// Place your settings in this file.\n\t\"k\": 1\n}\n"),
      ("{ /* none yet */ }", "{ /* none yet */\n  \"k\": 1\n}"),
      ("// The daemon's settings.\n", "// The daemon's settings.\n{\n  \"k\": 1\n}\n"),
      ("  \n", "{\n  \"k\": 1\n}\n"),
    ])
  func intoNothing(text: String, expected: String) throws {
    let store = scratch.store()
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.set(1, forKey: "k")
    #expect(store.text == expected)
  }

  @Test("setting a value the file holds already writes nothing, so its text and comments stay")
  func theSameValueWritesNothing() throws {
    let store = scratch.store()
    try "{\"a\": 1.50 /* kept */, \"b\": [1, /* kept */ 2]}".write(to: store.fileURL, atomically: true, encoding: .utf8)
    try store.update { settings in
      settings["a"] = 1.5
      settings["b"] = [1, 2]
    }
    #expect(store.writeCount == 0)
    try store.set(-0.0, forKey: "zero")
    try store.set(0.0, forKey: "zero")
    #expect(store.text.contains(#""zero": 0.0"#), "0 and -0 are equal, but not the same")
  }

  @Test("an unchanged document renders to exactly the text it was read from")
  func unchangedTextRoundTrips() throws {
    for text in [Self.kept, "\u{FEFF}{\"a\":1}", "{}", "  {\r\n\"a\" : [ ] , } // end", "{\"a\": 1}\n\n"] {
      let document = try SettingsDocument(parsing: Array(text.utf8))
      #expect(document.rendered() == Array(text.utf8))
    }
  }

  @Test(
    "syntax errors name the real cause and place",
    arguments: [
      ("{\"a\": 1,,}", "line 1, column 9: two commas in a row after the value of \"a\""),
      ("{,}", "line 1, column 2: a comma before the first member"),
      ("{\"a\": [,]}", "line 1, column 8: a comma before the first element"),
      ("{\"a\": [1,,2]}", "line 1, column 10: two commas in a row in an array"),
      ("{\"a\": ,}", "line 1, column 7: a comma where a value should be"),
      ("{\"a\": 1 /* open", "line 1, column 9: a /* comment is not closed: it needs */"),
      (
        "{\"a\": /* a /* b */ 1 */}",
        "line 1, column 22: '*/' after the value of \"a\", where ',' or '}' should be, which closes no comment (/* */ comments do not nest)"
      ),
      (
        "{\"a\": 1 / 2}",
        "line 1, column 9: '/' after the value of \"a\", where ',' or '}' should be: a comment starts with // or /*"
      ),
      ("{\"a\": 1}\n}", "line 2, column 1: '}' after the end of the JSON value"),
      ("{\"a\" 1}", "line 1, column 6: '1' after the key \"a\", where ':' should be"),
      ("{\"a\": 1 \"b\": 2}", "line 1, column 9: '\"' after the value of \"a\", where ',' or '}' should be"),
      ("{\"a\": [1 2]}", "line 1, column 10: '2' after an array element, where ',' or ']' should be"),
      ("{a: 1}", "line 1, column 2: 'a' where a key in double quotes should be"),
    ])
  func settingsFileErrors(text: String, message: String) {
    let error = #expect(throws: JSONSyntaxError.self) { try SettingsDocument(parsing: Array(text.utf8)) }
    #expect(error?.description == message)
  }

  @Test(
    "strict JSON (JSONValue(parsing:), fleet values) refuses comments and trailing commas, and says so",
    arguments: [
      (
        "{\"a\": 1,}",
        "line 1, column 8: a comma before '}': JSON allows none after the last element (a settings file may have one)"
      ),
      (
        "[1,\n]",
        "line 1, column 3: a comma before ']': JSON allows none after the last element (a settings file may have one)"
      ),
      (
        "// c\n{}",
        "line 1, column 1: a comment where a value should be: JSON has no comments (a settings file may have them)"
      ),
      (
        "{\"a\": 1 /* c */}",
        "line 1, column 9: a comment after the value of \"a\", where ',' or '}' should be: JSON has no comments (a settings file may have them)"
      ),
    ])
  func strictJSON(text: String, message: String) {
    #expect(throws: SettingsError.invalidJSON(reason: message)) { try JSONValue(parsing: text) }
  }

  @Test("a file with comments that does not parse is reported with the place, and never written over")
  func brokenCommentedFile() throws {
    let store = scratch.store()
    let text = "{\n  // the interval\n  \"interval\": 60,,\n}\n"
    try text.write(to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(store.fileError?.code == .corruptFile)
    #expect(store.fileError?.description.contains("line 3, column 18: two commas in a row") == true)
    #expect(throws: SettingsError.self) { try store.set(1, forKey: "interval") }
    #expect(store.text == text)
  }
}
