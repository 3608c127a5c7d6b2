import Foundation
import TestSupport
import Testing

@testable import SplintSettings

enum Theme: String, SettingValue {
  case light, dark
}

enum Speed: Int, Codable, CaseIterable, SettingValue {
  case slow = 1, fast = 2
}

struct Window: Codable, Equatable, SettingValue {
  var width: Int
  var height: Int
  var title: String?
  var opened: Date?
  var icon: Data?
}

@Suite struct SettingValueTests {
  let scratch = Scratch()

  /// Stores `value` in a fresh file, and returns what a second instance reads back and the file's text.
  func roundTrip<Value: SettingValue>(_ value: Value, default defaultValue: Value) -> (Value, String) {
    let store = scratch.store("\(UUID()).json")
    Setting("key", default: defaultValue, store: store).value = value
    return (Setting("key", default: defaultValue, store: store).value, store.text)
  }

  @Test func numberFidelity() throws {
    #expect(roundTrip(5, default: 0) == (5, "{\n  \"key\": 5\n}\n"))
    #expect(roundTrip(Int.max, default: 0).0 == .max)
    #expect(roundTrip(Int64.min, default: 0).0 == .min)
    #expect(roundTrip(0.1, default: 0.0) == (0.1, "{\n  \"key\": 0.1\n}\n"))
    #expect(roundTrip(5.0, default: 0.0) == (5.0, "{\n  \"key\": 5.0\n}\n"))
    for number in [Double.pi, 1.0 / 3, 1e-300, -0.0, .leastNonzeroMagnitude] {
      #expect(roundTrip(number, default: 0).0.bitPattern == number.bitPattern)
    }
    #expect(roundTrip(Float(0.1), default: 0) == (0.1, "{\n  \"key\": 0.1\n}\n"))
    for number in [Float.pi, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .ulpOfOne, 16_777_215] {
      #expect(roundTrip(number, default: 0).0 == number)
    }
  }

  @Test func everyBuiltInTypeRoundTrips() throws {
    #expect(roundTrip(true, default: false).0)
    #expect(roundTrip("héllo \"😀\"", default: "").0 == "héllo \"😀\"")
    #expect(roundTrip(Data([0, 255, 7]), default: Data()) == (Data([0, 255, 7]), "{\n  \"key\": \"AP8H\"\n}\n"))
    let date = Date(timeIntervalSince1970: 1_795_348_800.25)
    #expect(roundTrip(date, default: .distantPast) == (date, "{\n  \"key\": \"2026-11-22T12:00:00.250Z\"\n}\n"))
    let url = URL(string: "https://example.com/a?b=c")!
    #expect(
      roundTrip(url, default: URL(fileURLWithPath: "/")) == (url, "{\n  \"key\": \"https://example.com/a?b=c\"\n}\n"))
    #expect(roundTrip(String?.none, default: nil).0 == nil)
    #expect(roundTrip(String?.some("y"), default: nil).0 == "y")
    #expect(roundTrip([1, nil, 3] as [Int?], default: []).0 == [1, nil, 3])
    #expect(roundTrip([1, 2, 3], default: []).0 == [1, 2, 3])
    let dictionary: [String: [Bool]] = ["a": [true], "b": []]
    #expect(roundTrip(dictionary, default: [:]).0 == dictionary)
    #expect(roundTrip(JSONValue.array([.null]), default: .null).0 == .array([.null]))
  }

  @Test("a Date reads back equal to what was assigned, to the last bit; dates written to the millisecond still read")
  func datesRoundTripExactly() throws {
    let now = Date()
    #expect(roundTrip(now, default: .distantPast).0 == now)
    let window = Window(width: 1, height: 1, opened: now)
    #expect(roundTrip(window, default: Window(width: 0, height: 0)).0 == window)
    let chosen: [Double] = [
      0, 0.3, -0.3, 1e-9, -1e-7, 1e-300, -1e-300, 817_041_600.123_456_789, -978_307_200.5, 1_000_000.000_1,
      Date.distantFuture.timeIntervalSinceReferenceDate, Date.distantPast.timeIntervalSinceReferenceDate,
    ]
    for interval in chosen + (0..<2000).map({ _ in Double.random(in: -4e9...4e9) }) {
      let date = Date(timeIntervalSinceReferenceDate: interval)
      let read = try Date(jsonValue: date.jsonValue())
      #expect(read.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern, "\(interval)")
    }
    #expect(Date(timeIntervalSinceReferenceDate: -0.3).jsonValue() == .string("2000-12-31T23:59:59.700Z"))
    #expect(Date(timeIntervalSinceReferenceDate: 1e-9).jsonValue() == .string("2001-01-01T00:00:00.000000001Z"))
    let written = Date(timeIntervalSince1970: 1_795_348_800.25)
    #expect(try Date(jsonValue: .string("2026-11-22T12:00:00.250Z")) == written)
    #expect(try Date(jsonValue: .string("2026-11-22T12:00:00.25Z")) == written)
    #expect(try Date(jsonValue: .string("2026-11-22T12:00:00Z")) == written - 0.25)
    #expect(throws: (any Error).self) { try Date(jsonValue: .string("2026-11-22T12:00:00.Z")) }
    #expect(throws: (any Error).self) { try Date(jsonValue: .string("2026-11-22T12:00:00.5")) }
  }

  @Test("assigning nil to an optional setting removes its key, so that a default that is not nil applies")
  func nilRemovesTheKey() throws {
    let store = scratch.store("\(UUID()).json")
    let title = Setting<String?>("title", default: "Untitled", store: store)
    try store.set(.int(1), forKey: "other")
    title.value = "Draft"
    #expect(store.value(forKey: "title") == .string("Draft"))
    title.value = nil
    #expect(title.value == "Untitled")
    #expect(Setting<String?>("title", default: "Untitled", store: store).value == "Untitled")
    #expect(store.text == "{\n  \"other\": 1\n}\n")
    try title.save("Again")
    try store.update { $0[title] = nil }
    #expect(store.keys == ["other"])
    // A null another program wrote is still nil.
    try store.set(.null, forKey: "title")
    #expect(title.value == nil)
  }

  @Test func enumsAreStoredAsTheirRawValue() {
    #expect(roundTrip(Theme.dark, default: .light) == (.dark, "{\n  \"key\": \"dark\"\n}\n"))
    #expect(roundTrip(Speed.fast, default: .slow) == (.fast, "{\n  \"key\": 2\n}\n"))
  }

  @Test func codableValuesAreStoredAsPlainNestedJSON() throws {
    let window = Window(
      width: 800, height: 600, title: "Main", opened: Date(timeIntervalSince1970: 0), icon: Data([1]))
    let (read, text) = roundTrip(window, default: Window(width: 0, height: 0))
    #expect(read == window)
    let stored = try JSONValue(parsing: text)
    #expect(
      stored
        == .object([
          "key": .object([
            "width": .int(800), "height": .int(600), "title": .string("Main"),
            "opened": .string("1970-01-01T00:00:00.000Z"), "icon": .string("AQ=="),
          ])
        ]))
  }

  @Test(
    "values of the wrong kind are refused with what was expected",
    arguments: [
      (Bool.self as any SettingValue.Type, JSONValue.int(1), "expected true or false, found a number 1"),
      (
        Int.self, .double(1.5),
        "expected a whole number from -9223372036854775808 to 9223372036854775807, found a number 1.5"
      ),
      (
        Int64.self, .string("1"),
        "expected a whole number from -9223372036854775808 to 9223372036854775807, found a string \"1\""
      ),
      (Double.self, .bool(true), "expected a number, found a boolean true"),
      (Float.self, .double(1e300), "expected a number within Float's range, found a number 1e+300"),
      (String.self, .null, "expected a string, found null null"),
      (Data.self, .string("%%%"), "expected a string of base64, found a string \"%%%\""),
      (
        Date.self, .string("yesterday"),
        "expected an ISO 8601 date such as 2026-11-22T10:15:00.250Z, found a string \"yesterday\""
      ),
      (URL.self, .int(3), "expected a URL, found a number 3"),
      ([Int].self, .object([:]), "expected an array, found an object {}"),
      ([String: Int].self, .array([]), "expected an object, found an array []"),
      (
        Theme.self, .string("sepia"),
        "expected a raw value of Theme (declare it CaseIterable to have them listed here), found a string \"sepia\""
      ),
      (Speed.self, .int(9), "expected one of 1, 2 (the raw values of Speed), found a number 9"),
      (
        Int.self, .string(String(repeating: "x", count: 100)),
        "expected a whole number from -9223372036854775808 to 9223372036854775807, found a string \"\(String(repeating: "x", count: 59))…"
      ),
    ])
  func mismatches(type: any SettingValue.Type, json: JSONValue, message: String) {
    #expect(throws: (any Error).self) { try type.init(jsonValue: json) }
    do {
      _ = try type.init(jsonValue: json)
    } catch {
      #expect("\(error)" == message)
    }
  }

  @Test func wholeNumbersWrittenWithAFractionAreAccepted() throws {
    #expect(try Int(jsonValue: .double(3)) == 3)
    #expect(try Int64(jsonValue: .double(-2)) == -2)
    #expect(try Double(jsonValue: .int(7)) == 7)
    #expect(try Date(jsonValue: .string("2026-11-22T10:15:00Z")) == Date(timeIntervalSince1970: 1_795_342_500))
  }

  @Test func nonFiniteNumbersCannotBeStored() {
    #expect(throws: (any Error).self) { try Double.nan.jsonValue() }
    #expect(throws: (any Error).self) { try Float.infinity.jsonValue() }
    #expect(throws: (any Error).self) { try [Double.infinity].jsonValue() }
    #expect(throws: (any Error).self) { try ["a": -Double.infinity].jsonValue() }
    #expect(throws: (any Error).self) { try Double?.some(.nan).jsonValue() }
  }

  @Test("every standard integer width is a setting, read back exactly within its range and refused outside it")
  func integerWidths() throws {
    #expect(roundTrip(Int8.min, default: 0) == (.min, "{\n  \"key\": -128\n}\n"))
    #expect(roundTrip(Int16.max, default: 0).0 == .max)
    #expect(roundTrip(Int32.min, default: 0).0 == .min)
    #expect(roundTrip(UInt8.max, default: 0) == (.max, "{\n  \"key\": 255\n}\n"))
    #expect(roundTrip(UInt16.max, default: 0).0 == .max)
    #expect(roundTrip(UInt32.max, default: 0) == (.max, "{\n  \"key\": 4294967295\n}\n"))
    #expect(roundTrip(UInt64(Int.max), default: 0).0 == UInt64(Int.max))
    #expect(roundTrip(UInt(7), default: 0).0 == 7)
    mismatches(
      type: Int8.self, json: .int(128), message: "expected a whole number from -128 to 127, found a number 128")
    mismatches(type: UInt8.self, json: .int(-1), message: "expected a whole number from 0 to 255, found a number -1")
    mismatches(
      type: UInt32.self, json: .double(0.5), message: "expected a whole number from 0 to 4294967295, found a number 0.5"
    )
    #expect(try UInt16(jsonValue: .double(65535)) == 65535)

    // Above Int.max, a UInt64 is refused when assigned, rather than rounded by the file or by whoever reads it.
    let setting = Setting("key", default: UInt64(1), store: scratch.store("wide.json"))
    #expect(
      throws: SettingsError.unencodableValue(
        key: "key",
        reason: "18446744073709551615 is above 9223372036854775807, the largest integer a settings file holds exactly; "
          + "store it as a string")
    ) { try setting.save(.max) }
    #expect(throws: (any Error).self) { try UInt.max.jsonValue() }
    #expect(setting.value == 1, "the refused value is not taken")
  }

  @Test("JSONValue's literals take nothing from a setting's type: a literal default is still the Swift type it names")
  func literalDefaultsKeepTheirSwiftTypes() {
    let store = scratch.store("literals.json")
    #expect(type(of: Setting("a", default: 5, store: store)) == Setting<Int>.self)
    #expect(type(of: Setting("b", default: [1, 2], store: store)) == Setting<[Int]>.self)
    #expect(type(of: Setting("c", default: ["a": [true], "b": []], store: store)) == Setting<[String: [Bool]]>.self)
    #expect(type(of: Setting("d", default: "x", store: store)) == Setting<String>.self)
    #expect(type(of: Setting("e", default: 0.5, store: store)) == Setting<Double>.self)
    #expect(type(of: Setting("f", default: ["a": ["x": 1]], store: store)) == Setting<[String: [String: Int]]>.self)
  }

  @Test("a Set is a JSON array, written in one order whatever the set's, and read back whole")
  func sets() throws {
    let tags: Set = ["zeta", "alpha", "mu"]
    #expect(
      roundTrip(tags, default: []) == (tags, "{\n  \"key\": [\n    \"alpha\",\n    \"mu\",\n    \"zeta\"\n  ]\n}\n"))
    #expect(roundTrip(Set([3, -1, 20]), default: []).0 == [3, -1, 20])
    #expect(try Set<Int>(jsonValue: [1, 1, 2]) == [1, 2], "an element written twice counts once")
    mismatches(
      type: Set<Int>.self, json: ["a"],
      message: "expected a whole number from \(Int.min) to \(Int.max), found a string \"a\"")
    mismatches(type: Set<String>.self, json: "a", message: "expected an array, found a string \"a\"")
  }

  @Test func codableDecodingRefusesWrongShapesAndBadDates() {
    #expect(throws: (any Error).self) { try Window(jsonValue: .object(["width": .int(1)])) }
    #expect(throws: (any Error).self) {
      try Window(jsonValue: .object(["width": .int(1), "height": .int(1), "opened": .string("soon")]))
    }
  }
}
