#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A type a ``Setting`` can hold: how its values map to and from the JSON in the settings file.
///
/// These conform already: `Bool`; `Int`, `Int8`, `Int16`, `Int32`, `Int64`, `UInt8`, `UInt16`, `UInt32`, and `UInt`
/// and `UInt64` up to `Int.max`; `Double`, `Float`, `String`, `Data` (as base64), `Date` (ISO 8601 in UTC, with the
/// fractional digits that make it read back exactly), `URL` (as a string), ``JSONValue``; and `Optional`, `Array`,
/// `Set` (a JSON array) and `[String: Value]` of conforming types. Your own types conform by declaring it:
///
/// ```swift
/// enum Theme: String, SettingValue { case light, dark }      // stored as its raw value: "dark"
///
/// struct Window: Codable, Equatable, SettingValue {          // stored as plain nested JSON:
///   var width: Int                                           // {"height": 600, "width": 800}
///   var height: Int
/// }
/// ```
///
/// A `RawRepresentable` type whose raw value conforms is stored as its raw value; any other `Codable` type as the
/// JSON its `Codable` conformance writes (dates in ISO 8601, data in base64).
public protocol SettingValue: Sendable, Equatable {
  /// Reads a value from the JSON the settings file holds.
  ///
  /// - Throws: When `jsonValue` is not a value of this type. The setting then keeps its current value, the stored
  ///   value stays in the file, and the store reports ``SettingsError/undecodableValue(key:expected:reason:)``.
  init(jsonValue: JSONValue) throws

  /// The JSON the value is stored as.
  ///
  /// - Throws: When the value cannot be stored as JSON, such as a `Double` that is NaN or infinite.
  func jsonValue() throws -> JSONValue
}

/// A stored value of the wrong kind, or a value JSON cannot hold.
struct SettingValueError: Error, CustomStringConvertible {
  let description: String

  static func mismatch(_ expected: String, _ found: JSONValue) -> SettingValueError {
    let text = found.description
    return SettingValueError(
      description: "expected \(expected), found \(found.kind) \(text.count > 60 ? text.prefix(60) + "…" : text)")
  }

  static func notFinite(_ value: some FloatingPoint) -> SettingValueError {
    SettingValueError(description: "\(value) is not a finite number, and JSON has no NaN or infinity")
  }
}

extension JSONValue: SettingValue {
  /// The JSON itself.
  public init(jsonValue: JSONValue) { self = jsonValue }

  /// The JSON itself.
  public func jsonValue() -> JSONValue { self }
}

extension Bool: SettingValue {
  /// `true` or `false`.
  public init(jsonValue: JSONValue) throws {
    guard case .bool(let value) = jsonValue else { throw SettingValueError.mismatch("true or false", jsonValue) }
    self = value
  }

  /// `true` or `false`.
  public func jsonValue() -> JSONValue { .bool(self) }
}

extension Int: SettingValue {}
extension Int8: SettingValue {}
extension Int16: SettingValue {}
extension Int32: SettingValue {}
extension Int64: SettingValue {}
extension UInt8: SettingValue {}
extension UInt16: SettingValue {}
extension UInt32: SettingValue {}
/// Stored as a JSON integer up to `Int.max`; a larger value cannot be assigned (see ``jsonValue()``).
extension UInt64: SettingValue {}
/// Stored as a JSON integer up to `Int.max`; a larger value cannot be assigned (see ``jsonValue()``).
extension UInt: SettingValue {}

extension SettingValue where Self: FixedWidthInteger & Codable {
  /// A JSON integer in the type's range; a number with a fraction is accepted when it is a whole number in range.
  public init(jsonValue: JSONValue) throws { self = try wholeNumber(from: jsonValue) }

  /// A JSON integer, written without a fraction.
  ///
  /// - Throws: For a `UInt` or `UInt64` above `Int.max`, which the settings file cannot hold exactly as an integer
  ///   (nor can many programs that read JSON, which keep numbers as `Double`s). Store such a value as a `String`.
  public func jsonValue() throws -> JSONValue {
    guard let number = Int(exactly: self) else {
      throw SettingValueError(
        description:
          "\(self) is above \(Int.max), the largest integer a settings file holds exactly; store it as a string")
    }
    return .int(number)
  }
}

private func wholeNumber<Integer: FixedWidthInteger>(from json: JSONValue) throws -> Integer {
  switch json {
  case .int(let number) where Integer(exactly: number) != nil: return Integer(number)
  case .double(let number) where Integer(exactly: number) != nil: return Integer(number)
  default: throw SettingValueError.mismatch("a whole number from \(Integer.min) to \(Integer.max)", json)
  }
}

extension Double: SettingValue {
  /// Any JSON number.
  public init(jsonValue: JSONValue) throws {
    switch jsonValue {
    case .double(let number): self = number
    case .int(let number): self = Double(number)
    default: throw SettingValueError.mismatch("a number", jsonValue)
    }
  }

  /// The number with the fewest digits that read back as exactly this `Double`.
  ///
  /// - Throws: For NaN and infinities, which JSON cannot hold.
  public func jsonValue() throws -> JSONValue {
    guard isFinite else { throw SettingValueError.notFinite(self) }
    return .double(self)
  }
}

extension Float: SettingValue {
  /// Any JSON number within `Float`'s range, rounded to the nearest `Float`.
  public init(jsonValue: JSONValue) throws {
    let number = try Double(jsonValue: jsonValue)
    guard Float(number).isFinite else { throw SettingValueError.mismatch("a number within Float's range", jsonValue) }
    self = Float(number)
  }

  /// The number with the fewest digits that read back as exactly this `Float` (`0.1`, not `0.10000000149…`).
  ///
  /// - Throws: For NaN and infinities, which JSON cannot hold.
  public func jsonValue() throws -> JSONValue {
    guard isFinite else { throw SettingValueError.notFinite(self) }
    // The shortest digits, as long as they come back as this very Float through a Double; else every digit.
    let shortest = Double(description) ?? Double(self)
    return .double(Float(shortest) == self ? shortest : Double(self))
  }
}

extension String: SettingValue {
  /// A JSON string.
  public init(jsonValue: JSONValue) throws {
    guard case .string(let value) = jsonValue else { throw SettingValueError.mismatch("a string", jsonValue) }
    self = value
  }

  /// A JSON string.
  public func jsonValue() -> JSONValue { .string(self) }
}

extension Data: SettingValue {
  /// A string of base64.
  public init(jsonValue: JSONValue) throws {
    guard case .string(let text) = jsonValue, let data = Data(base64Encoded: text) else {
      throw SettingValueError.mismatch("a string of base64", jsonValue)
    }
    self = data
  }

  /// A string of base64.
  public func jsonValue() -> JSONValue { .string(base64EncodedString()) }
}

extension Date: SettingValue {
  /// An ISO 8601 date and time, with any number of fractional digits or none: `2026-11-22T10:15:00.250Z`.
  public init(jsonValue: JSONValue) throws {
    guard case .string(let text) = jsonValue, let date = Self.parseISO8601(text) else {
      throw SettingValueError.mismatch("an ISO 8601 date such as 2026-11-22T10:15:00.250Z", jsonValue)
    }
    self = date
  }

  /// An ISO 8601 date and time in UTC, with the fewest fractional digits (at least three) that read back as exactly
  /// this date: `2026-11-22T10:15:00.250Z`, `2026-11-22T10:15:00.123456716Z`.
  public func jsonValue() -> JSONValue { .string(iso8601Text) }

  /// See ``jsonValue()``.
  var iso8601Text: String {
    let (seconds, fraction) = ExactDecimal.split(timeIntervalSinceReferenceDate)
    let whole = Date(timeIntervalSinceReferenceDate: seconds).formatted(Date.ISO8601FormatStyle())
    let digits = fraction + String(repeating: "0", count: max(3 - fraction.count, 0))
    return "\(whole.dropLast()).\(digits)Z"
  }

  /// The date `text` names in ISO 8601, its fractional digits taken exactly; nil when it names none.
  static func parseISO8601(_ text: String) -> Date? {
    // The fraction is cut out and added back in decimal, so that every digit counts (Foundation keeps three).
    var whole = Substring(text)
    var fraction = Substring("")
    if let point = text.firstIndex(of: "."), text[..<point].contains("T") {
      let digits = text[text.index(after: point)...].prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty else { return nil }
      whole = text[..<point] + text[digits.endIndex...]
      fraction = digits
    }
    guard let date = try? Date.ISO8601FormatStyle().parse(String(whole)) else { return nil }
    let seconds = date.timeIntervalSinceReferenceDate
    return ExactDecimal.join(seconds, fraction).map(Date.init(timeIntervalSinceReferenceDate:))
  }
}

/// Seconds as decimal text, exactly: a `Double` split into whole seconds and the digits of its fraction, and back.
enum ExactDecimal {
  /// The whole seconds at or below `value` and the digits after them, from the shortest decimal that reads back as
  /// `value` (what `description` writes): 817041600.25 is (817041600, "25"), -0.3 is (-1, "7").
  static func split(_ value: Double) -> (seconds: Double, fraction: String) {
    let text = value.magnitude.description
    let (mantissa, exponent) =
      text.firstIndex(of: "e").map { (text[..<$0], Int(text[text.index(after: $0)...]) ?? 0) } ?? (text[...], 0)
    let digits = mantissa.filter { $0 != "." }
    let point =
      (mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) }
        ?? mantissa.count) + exponent
    let padded =
      String(repeating: "0", count: max(-point, 0)) + digits
      + String(repeating: "0", count: max(point - digits.count, 0))
    let split = max(point, 0)
    let whole = Double(padded.prefix(split)) ?? 0
    var fraction = String(padded.dropFirst(split))
    while fraction.last == "0" { fraction.removeLast() }
    guard value < 0 else { return (whole, fraction) }
    return fraction.isEmpty ? (-whole, "") : (-whole - 1, complement(fraction))
  }

  /// `seconds` (whole) plus the decimal fraction `digits`, as the `Double` nearest to their exact sum.
  static func join(_ seconds: Double, _ digits: Substring) -> Double? {
    guard seconds < 0, digits.contains(where: { $0 != "0" }) else {
      return Double("\(Int64(seconds)).\(digits.isEmpty ? "0" : digits)")
    }
    var fraction = String(digits)
    while fraction.last == "0" { fraction.removeLast() }
    return Double("-\(Int64(-seconds) - 1).\(complement(fraction))")
  }

  /// The digits of 1 − 0.`digits`, for digits whose last is not 0: 25 gives 75, 3 gives 7, 05 gives 95.
  private static func complement(_ digits: String) -> String {
    let values = digits.compactMap(\.wholeNumberValue)
    return String(
      values.enumerated().map { index, digit in
        Character(String(index == values.count - 1 ? 10 - digit : 9 - digit))
      })
  }
}

extension URL: SettingValue {
  /// A string holding a URL.
  public init(jsonValue: JSONValue) throws {
    guard case .string(let text) = jsonValue, let url = URL(string: text) else {
      throw SettingValueError.mismatch("a URL", jsonValue)
    }
    self = url
  }

  /// The URL's absolute string.
  public func jsonValue() -> JSONValue { .string(absoluteString) }
}

extension Optional: SettingValue where Wrapped: SettingValue {
  /// `null` for nil, otherwise the wrapped value.
  public init(jsonValue: JSONValue) throws {
    self = jsonValue == .null ? nil : try Wrapped(jsonValue: jsonValue)
  }

  /// `null` for nil (inside an array or an object), otherwise the wrapped value. Assigning nil to a ``Setting``
  /// stores nothing: it removes the key, as `UserDefaults`' `set(nil, forKey:)` does, so that the default applies.
  public func jsonValue() throws -> JSONValue {
    try self?.jsonValue() ?? .null
  }
}

/// An `Optional`, whatever it wraps: what an assignment asks to tell nil by.
private protocol OptionalSettingValue {
  var isNone: Bool { get }
}

extension Optional: OptionalSettingValue {
  fileprivate var isNone: Bool { self == nil }
}

extension SettingValue {
  /// What assigning the value stores under its key: its JSON, or nothing (the key removed) for an `Optional` that
  /// is nil, so that the setting's default applies, as `UserDefaults`' `set(nil, forKey:)` and Defaults do.
  func storedJSON() throws -> JSONValue? {
    if (self as? any OptionalSettingValue)?.isNone == true { return nil }
    return try jsonValue()
  }
}

extension Array: SettingValue where Element: SettingValue {
  /// A JSON array whose every element decodes.
  public init(jsonValue: JSONValue) throws {
    guard case .array(let elements) = jsonValue else { throw SettingValueError.mismatch("an array", jsonValue) }
    self = try elements.map(Element.init(jsonValue:))
  }

  /// A JSON array.
  public func jsonValue() throws -> JSONValue {
    .array(try map { try $0.jsonValue() })
  }
}

extension Set: SettingValue where Element: SettingValue {
  /// A JSON array whose every element decodes; an element written twice counts once.
  public init(jsonValue: JSONValue) throws {
    self = Set(try [Element](jsonValue: jsonValue))
  }

  /// A JSON array, its elements in the order of their JSON text, so that the same set is always written the same way.
  public func jsonValue() throws -> JSONValue {
    .array(try map { try $0.jsonValue() }.sorted { $0.description.utf8.lexicographicallyPrecedes($1.description.utf8) })
  }
}

extension Dictionary: SettingValue where Key == String, Value: SettingValue {
  /// A JSON object whose every member decodes, and whose keys stay apart as Swift strings: an object with both "é"
  /// and "e" + U+0301 (two JSON keys, one Swift `String`) does not decode, rather than lose one of them.
  public init(jsonValue: JSONValue) throws {
    guard case .object(let members) = jsonValue else { throw SettingValueError.mismatch("an object", jsonValue) }
    self = [:]
    for (key, member) in members {
      guard updateValue(try Value(jsonValue: member), forKey: key.text) == nil else {
        throw SettingValueError.mismatch("an object whose keys Swift strings tell apart (\"\(key.text)\")", jsonValue)
      }
    }
  }

  /// A JSON object.
  public func jsonValue() throws -> JSONValue {
    // Keys a Swift dictionary holds apart are apart as JSON keys too.
    .object([JSONKey: JSONValue](uniqueKeysWithValues: try map { (JSONKey($0.key), try $0.value.jsonValue()) }))
  }
}

extension SettingValue where Self: RawRepresentable, RawValue: SettingValue {
  /// The raw value, which must name a case.
  public init(jsonValue: JSONValue) throws {
    try self.init(rawJSON: jsonValue)
  }

  /// The raw value.
  public func jsonValue() throws -> JSONValue {
    try rawValue.jsonValue()
  }
}

extension SettingValue where Self: Codable {
  /// The JSON the `Codable` conformance reads.
  public init(jsonValue: JSONValue) throws {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
      let container = try decoder.singleValueContainer()
      guard let date = Date.parseISO8601(try container.decode(String.self)) else {
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an ISO 8601 date")
      }
      return date
    }
    self = try decoder.decode(Self.self, from: Data(jsonValue.description.utf8))
  }

  /// The JSON the `Codable` conformance writes, as plain nested JSON; dates in ISO 8601, data in base64.
  public func jsonValue() throws -> JSONValue {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(date.iso8601Text)
    }
    return try JSONValue(parsing: encoder.encode(self))
  }
}

extension SettingValue where Self: RawRepresentable & Codable, RawValue: SettingValue {
  /// The raw value, which must name a case. (Preferred over `Codable` for types that are both.)
  public init(jsonValue: JSONValue) throws {
    try self.init(rawJSON: jsonValue)
  }

  /// The raw value.
  public func jsonValue() throws -> JSONValue {
    try rawValue.jsonValue()
  }
}

extension RawRepresentable where RawValue: SettingValue {
  fileprivate init(rawJSON: JSONValue) throws {
    guard let value = Self(rawValue: try RawValue(jsonValue: rawJSON)) else {
      guard let iterable = Self.self as? any CaseIterable.Type else {
        throw SettingValueError.mismatch(
          "a raw value of \(Self.self) (declare it CaseIterable to have them listed here)", rawJSON)
      }
      let values = Self.rawValues(of: iterable).map(\.description).joined(separator: ", ")
      throw SettingValueError.mismatch("one of \(values) (the raw values of \(Self.self))", rawJSON)
    }
    self = value
  }

  /// The raw values of every case, in order, as JSON.
  private static func rawValues<Cases: CaseIterable>(of type: Cases.Type) -> [JSONValue] {
    type.allCases.compactMap { ($0 as? Self).flatMap { try? $0.rawValue.jsonValue() } }
  }
}
