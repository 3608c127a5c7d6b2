import Foundation
import TestSupport
import Testing

@testable import SplintSettings

@Suite struct JSONTests {
  @Test func parsesEveryKindOfValue() throws {
    let value = try JSONValue(
      parsing:
        #" {"n": null, "t": true, "f": false, "i": -42, "d": 2.5e-3, "s": "a\"b\\c\/\n\t\u00e9\ud83d\ude00", "a": [1, [], {}], "o": {"x": 0}} "#
    )
    #expect(
      value
        == .object([
          "n": .null, "t": .bool(true), "f": .bool(false), "i": .int(-42), "d": .double(0.0025),
          "s": .string("a\"b\\c/\n\té😀"), "a": .array([.int(1), .array([]), .object([:])]),
          "o": .object(["x": .int(0)]),
        ]))
    #expect(try JSONValue(parsing: Data("[true]".utf8)) == .array([.bool(true)]))
  }

  @Test(
    "integers stay integers and exact; other numbers are Doubles",
    arguments: [
      ("0", JSONValue.int(0)), ("-0", .int(0)), ("9223372036854775807", .int(.max)),
      ("-9223372036854775808", .int(.min)), ("9223372036854775808", .double(9_223_372_036_854_775_808)),
      ("5.0", .double(5)), ("1e2", .double(100)), ("1E+2", .double(100)), ("0.1", .double(0.1)),
      ("2.5e-324", .double(.leastNonzeroMagnitude)),
    ])
  func numbers(text: String, expected: JSONValue) throws {
    #expect(try JSONValue(parsing: text) == expected)
  }

  @Test(
    "doubles are written with the fewest digits that read back exactly",
    arguments: [
      0.1, 1.0 / 3, .pi, 1e-7, 1e300, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 123_456_789.012_345_67,
    ])
  func doublesRoundTrip(number: Double) throws {
    let text = JSONValue.double(number).description
    #expect(try JSONValue(parsing: text) == .double(number))
    #expect(text == number.description)
  }

  @Test(
    "invalid JSON is refused with where and why",
    arguments: [
      ("", "line 1, column 1: the text ends where a value should be"),
      ("{", "line 1, column 2: the text ends where a key in double quotes should be"),
      ("{\"a\" 1}", "line 1, column 6: '1' after the key \"a\", where ':' should be"),
      (
        "{\"a\": 1,}",
        "line 1, column 8: a comma before '}': JSON allows none after the last element (a settings file may have one)"
      ),
      ("{\"a\": 1 \"b\": 2}", "line 1, column 9: '\"' after the value of \"a\", where ',' or '}' should be"),
      ("{\"a\": 1, \"a\": 2}", "line 1, column 10: the key \"a\" appears twice in one object"),
      ("[1 2]", "line 1, column 4: '2' after an array element, where ',' or ']' should be"),
      ("[1,\n  x]", "line 2, column 3: 'x' where a value should be"),
      ("nul", "line 1, column 1: expected null"),
      ("tru", "line 1, column 1: expected true"),
      ("falsy", "line 1, column 1: expected false"),
      ("NaN", "line 1, column 1: 'N' where a value should be"),
      ("-", "line 1, column 1: a number is cut short: digits must follow"),
      ("1.", "line 1, column 1: a number is cut short: digits must follow"),
      ("1e", "line 1, column 1: a number is cut short: digits must follow"),
      ("1e999", "line 1, column 1: the number 1e999 is too large to store"),
      ("01", "line 1, column 2: '1' after the end of the JSON value"),
      ("\"abc", "line 1, column 1: a string is not closed"),
      ("\"a\\", "line 1, column 3: a string is not closed"),
      ("\"\t\"", "line 1, column 2: a control character (byte 0x9) inside a string must be escaped"),
      ("\"\\x\"", "line 1, column 2: \\'x' is not an escape"),
      ("\"\\u12\"", "line 1, column 2: \\u must be followed by four hexadecimal digits"),
      ("\"\\u+123\"", "line 1, column 2: \\u must be followed by four hexadecimal digits"),
      ("\"\\ud800\"", "line 1, column 2: \\ud800 starts a surrogate pair that does not continue"),
      ("\"\\ud800\\u0041\"", "line 1, column 2: \\ud800 is followed by no low surrogate"),
      ("\"\\udc00\"", "line 1, column 2: \\udc00 is a lone surrogate, which is no character"),
      ("\"\u{7F}\" x", "line 1, column 5: 'x' after the end of the JSON value"),
      ("{} \u{1}", "line 1, column 4: byte 0x1 after the end of the JSON value"),
    ])
  func refused(text: String, message: String) {
    #expect(throws: SettingsError.invalidJSON(reason: message)) { try JSONValue(parsing: text) }
  }

  @Test("JSON values are written as literals, each meaning the case a parser gives for the same text")
  func literals() throws {
    let written: JSONValue = ["retries": 3, "ratio": 0.5, "name": "a", "on": true, "none": nil, "hosts": ["a", 1]]
    #expect(
      written
        == (try JSONValue(parsing: #"{"retries":3,"ratio":0.5,"name":"a","on":true,"none":null,"hosts":["a",1]}"#)))
    let cases: JSONValue = .object([
      "retries": .int(3), "ratio": .double(0.5), "name": .string("a"), "on": .bool(true), "none": .null,
      "hosts": .array([.string("a"), .int(1)]),
    ])
    #expect(written == cases)
    let twice: JSONValue = ["k": 1, "k": 2]
    #expect(twice == ["k": 2], "a key written twice takes its last value")
    let store = SettingsStore(fileURL: FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID()).json"))
    defer { try? FileManager.default.removeItem(at: store.fileURL) }
    try store.set(5, forKey: "count")
    try store.set(["x", 2.5], forKey: "list")
    #expect(store.value(forKey: "count") == .int(5))
    #expect(store.value(forKey: "list") == .array([.string("x"), .double(2.5)]))
  }

  @Test("a number with more digits than a Double keeps is told apart from one written in another form")
  func numberExactness() throws {
    for (text, exact) in [
      ("123456789012345678901234567890", false), ("[1, 0.30000000000000004]", true), ("0.10", true), ("1e2", true),
      ("-1.5E+3", true), ("0.0", true), ("-0.0", true), ("1e-400", false), ("[\"9.99999999999999999999\"]", true),
      ("{\"a\": [2.00000000000000000001]}", false), ("1.7976931348623157e308", true),
    ] {
      #expect(try JSONParser.valueAndExactness(from: Array(text.utf8)).exact == exact, "\(text)")
    }
    var settings = SettingsTransaction(document: SettingsDocument())
    #expect(throws: SettingsError.self) { try settings.set(jsonText: "[1,", forKey: "k") }
    #expect(throws: SettingsError.self, "too large for a Double") {
      try settings.set(jsonText: "1e999999999999999999999", forKey: "k")
    }
    try settings.set(jsonText: "123456789012345678901234567890", forKey: "$version")
    #expect(String(decoding: settings.document.rendered(), as: UTF8.self) == "{}\n", "the reserved key is not set")
    try settings.set(jsonText: " 123456789012345678901234567890\t", forKey: "k")
    #expect(
      String(decoding: settings.document.rendered(), as: UTF8.self) == "{\n  \"k\": 123456789012345678901234567890\n}\n"
    )
  }

  @Test("the text splintctl prints: strict JSON, and numbers as the file has them, also after a write here")
  func exactText() throws {
    let scratch = Scratch()
    let store = SettingsStore(fileURL: scratch.url("settings.json"))
    try "{\"big\": 123456789012345678901234567890, /* c */ \"list\": [1e-400,],}".write(
      to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(store.exactText(forKey: "big") == "123456789012345678901234567890")
    #expect(store.exactText(forKey: "list") == "[\n  1e-400\n]")
    #expect(store.exactText(forKey: "none") == nil)
    try store.update { try $0.set(jsonText: "98765432109876543210987654321", forKey: "big") }
    try store.set(["x": 1], forKey: "new")
    #expect(store.exactText(forKey: "big") == "98765432109876543210987654321")
    #expect(
      store.exactText(version: true)
        == "{\n  \"big\": 98765432109876543210987654321,\n  \"list\": [\n    1e-400\n  ],\n  \"new\": {\n    \"x\": 1\n  }\n}"
    )
    #expect(SettingsStore(fileURL: scratch.url("none.json")).exactText(version: true) == "{}")
  }

  @Test func invalidUTF8IsRefused() {
    #expect(throws: SettingsError.invalidJSON(reason: "line 1, column 1: a string is not valid UTF-8")) {
      try JSONValue(parsing: Data([0x22, 0xFF, 0xFE, 0x22]))
    }
  }

  @Test func nestingBeyondTheLimitIsRefusedWithoutExhaustingTheStack() throws {
    let depth = JSONParser.maximumDepth
    let deepest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    #expect(try JSONValue(parsing: deepest).description == deepest)
    let tooDeep = String(repeating: "[", count: 100_000)
    #expect(throws: SettingsError.self) { try JSONValue(parsing: tooDeep) }
    let objects = String(repeating: "{\"a\":", count: depth + 1)
    #expect(
      throws: SettingsError.invalidJSON(
        reason: "line 1, column \(5 * depth + 1): objects and arrays are nested more than \(depth) levels deep")
    ) { try JSONValue(parsing: objects) }
  }

  @Test func compactAndPrettyText() throws {
    let value = JSONValue.object([
      "b": .array([.int(1), .string("x\u{1}\u{8}\"\\\r")]), "a": .object([:]), "c": .array([]),
    ])
    #expect(value.description == #"{"a":{},"b":[1,"x\u0001\u0008\"\\\r"],"c":[]}"#)
    #expect(
      value.prettyDescription == """
        {
          "a": {},
          "b": [
            1,
            "x\\u0001\\u0008\\"\\\\\\r"
          ],
          "c": []
        }
        """)
    #expect(try JSONValue(parsing: value.prettyDescription) == value)
  }

  @Test func kindsAndFiniteness() {
    #expect(JSONValue.null.kind == "null")
    #expect(JSONValue.bool(true).kind == "a boolean")
    #expect(JSONValue.int(1).kind == "a number")
    #expect(JSONValue.array([.double(.nan)]).isFinite == false)
    #expect(JSONValue.object(["a": .double(.infinity)]).isFinite == false)
    #expect(JSONValue.object(["a": .array([.double(1), .string("")])]).isFinite)
  }

  @Test func settingsDocumentsKeepOrderAndUntouchedText() throws {
    let text = "\u{FEFF}{ \"b\" : [1,2] , \"a\":{\"x\":  1.50}, \"c\": null }"
    var document = try SettingsDocument(parsing: Array(text.utf8))
    #expect(document.keys == ["b", "a", "c"])
    document["c"] = .bool(true)
    document["d"] = .string("new")
    document["b"] = nil
    document["missing"] = nil
    #expect(
      String(decoding: document.rendered(), as: UTF8.self)
        == "\u{FEFF}{ \"a\":{\"x\":  1.50}, \"c\": true, \"d\": \"new\" }")
    document["a"] = nil
    document["c"] = nil
    document["d"] = nil
    #expect(String(decoding: document.rendered(), as: UTF8.self) == "\u{FEFF}{}")
    #expect(String(decoding: SettingsDocument().rendered(), as: UTF8.self) == "{}\n", "a new file")
  }

  @Test func settingsDocumentsAreObjectsOrEmpty() throws {
    #expect(try SettingsDocument(parsing: Array(" \n ".utf8)).keys == [])
    #expect(throws: JSONSyntaxError(message: "the file holds an array, not a JSON object", line: 1, column: 1)) {
      try SettingsDocument(parsing: Array("[1]".utf8))
    }
    #expect(throws: JSONSyntaxError(message: "'}' after the end of the JSON value", line: 1, column: 9)) {
      try SettingsDocument(parsing: Array("{\"a\": 1}}".utf8))
    }
  }
}
