#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A JSON value, as the settings file stores it.
///
/// Integers and floating-point numbers stay apart: `5` is ``int(_:)`` and `5.0` is ``double(_:)``, integers are
/// exact across the whole `Int` range, and a `Double` is written with the fewest digits that read back to the same
/// value. Object keys are unordered, as in JSON; they are written sorted.
///
/// Text is compared as JSON compares it: two strings (or two keys, see ``JSONKey``) are equal only when their
/// Unicode scalars are, not when they merely look alike, as Swift's `String` compares them.
///
/// ```swift
/// let value = try JSONValue(parsing: #"{"retries": 3, "hosts": ["a", "b"]}"#)
/// print(value)  // {"hosts":["a","b"],"retries":3}
/// print(value == ["retries": 3, "hosts": ["a", "b"]])  // true: values are written as literals too
/// ```
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number written without a fraction or exponent that fits in `Int`.
  case int(Int)
  /// Any other number. Always finite: JSON has no NaN or infinity.
  case double(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([JSONKey: JSONValue])

  /// Whether two values are the same JSON: strings equal only when their Unicode scalars are.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let left), .bool(let right)): left == right
    case (.int(let left), .int(let right)): left == right
    case (.double(let left), .double(let right)): left == right
    case (.string(let left), .string(let right)): left.utf8.elementsEqual(right.utf8)
    case (.array(let left), .array(let right)): left == right
    case (.object(let left), .object(let right)): left == right
    default: false
    }
  }

  /// Hashes the value as ``==(_:_:)`` compares it.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let flag): hasher.combine(flag)
    case .int(let number): hasher.combine(number)
    case .double(let number): hasher.combine(number)
    case .string(let text): hasher.combine(JSONKey(text))
    case .array(let elements): hasher.combine(elements)
    case .object(let members): hasher.combine(members)
    }
  }

  /// Parses JSON text, which must hold exactly one value.
  ///
  /// - Throws: ``SettingsError/invalidJSON(reason:)`` with the line, column and what was expected.
  public init(parsing text: String) throws(SettingsError) {
    self = try Self.parse(Array(text.utf8))
  }

  /// Parses UTF-8 JSON text, which must hold exactly one value.
  ///
  /// - Throws: ``SettingsError/invalidJSON(reason:)`` with the line, column and what was expected.
  public init(parsing data: Data) throws(SettingsError) {
    self = try Self.parse(Array(data))
  }

  private static func parse(_ bytes: [UInt8]) throws(SettingsError) -> JSONValue {
    do {
      return try JSONParser.value(from: bytes)
    } catch {
      throw .invalidJSON(reason: error.description)
    }
  }

  /// The value as compact JSON text.
  public var description: String {
    var output: [UInt8] = []
    write(to: &output, format: .compact)
    return String(decoding: output, as: UTF8.self)
  }

  /// The value as JSON text, indented by two spaces a level.
  public var prettyDescription: String {
    var output: [UInt8] = []
    write(to: &output, format: .pretty)
    return String(decoding: output, as: UTF8.self)
  }

  /// Whether every number in the value is finite, so that it can be written as JSON.
  var isFinite: Bool {
    switch self {
    case .double(let number): number.isFinite
    case .array(let elements): elements.allSatisfy(\.isFinite)
    case .object(let members): members.values.allSatisfy(\.isFinite)
    case .null, .bool, .int, .string: true
    }
  }

  /// A short name for the kind of value, for messages: "a string", "an object".
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .int, .double: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  // MARK: - Writing

  /// Appends the value as UTF-8 JSON, laid out as `format` says; `indent` is what the line the value starts on is
  /// indented by, which the lines of its elements add a level to.
  func write(to output: inout [UInt8], format: JSONFormat, indent: [UInt8] = []) {
    switch self {
    case .null: output.append(contentsOf: "null".utf8)
    case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
    case .int(let number): output.append(contentsOf: String(number).utf8)
    case .double(let number): output.append(contentsOf: number.description.utf8)
    case .string(let text): Self.writeString(text, to: &output)
    case .array(let elements):
      Self.writeContainer(
        elements.map { (key: String?.none, value: $0) }, open: UInt8(ascii: "["), close: UInt8(ascii: "]"), to: &output,
        format: format,
        indent: indent)
    case .object(let members):
      Self.writeContainer(
        members.sorted { $0.key < $1.key }.map { (key: String?.some($0.key.text), value: $0.value) },
        open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), to: &output, format: format, indent: indent)
    }
  }

  private static func writeContainer(
    _ elements: [(key: String?, value: JSONValue)], open: UInt8, close: UInt8, to output: inout [UInt8],
    format: JSONFormat, indent: [UInt8]
  ) {
    output.append(open)
    let inner = format.unit.map { indent + $0 } ?? indent
    for (index, element) in elements.enumerated() {
      if index > 0 {
        output.append(UInt8(ascii: ","))
        if format.unit == nil { output += format.space }
      }
      if format.unit != nil { output += format.newline + inner }
      if let key = element.key {
        writeString(key, to: &output)
        output += format.colon
      }
      element.value.write(to: &output, format: format, indent: inner)
    }
    if format.unit != nil, !elements.isEmpty { output += format.newline + indent }
    output.append(close)
  }

  /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
  static func writeString(_ text: String, to output: inout [UInt8]) {
    writeString(utf8: text.utf8, to: &output)
  }

  /// Appends the text whose UTF-8 is `utf8` as a JSON string, as ``writeString(_:to:)`` does.
  static func writeString(utf8: some Sequence<UInt8>, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for byte in utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
      case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
      case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
      case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        output.append(contentsOf: #"\u00"#.utf8)
        output += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }
}

/// How JSON text is laid out: compact, or one element a line, indented by a unit a level; what follows a colon, and
/// (compact) a comma; how lines end.
struct JSONFormat: Sendable, Equatable {
  /// What each level indents by (`"  "`, `"    "`, a tab), or nil for compact text on one line.
  var unit: [UInt8]?
  /// What ends a line: `\n`, or `\r\n` in a file written so.
  var newline: [UInt8] = [0x0A]
  /// What follows a key: its colon and the spaces around it (`": "`, `":"`).
  var colon: [UInt8]
  /// What follows a comma in compact text (`" "` or nothing).
  var space: [UInt8] = []

  /// On one line, with no spaces: `{"a":[1,2]}`.
  static let compact = JSONFormat(unit: nil, colon: Array(":".utf8))
  /// One element a line, two spaces a level, `": "` after keys.
  static let pretty = JSONFormat(unit: Array("  ".utf8), colon: Array(": ".utf8))
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  /// ``null``, written `nil`.
  public init(nilLiteral: ()) { self = .null }

  /// ``bool(_:)``, written `true` or `false`.
  public init(booleanLiteral value: Bool) { self = .bool(value) }

  /// ``int(_:)``, written as an integer: `try store.set(5, forKey: "count")`.
  public init(integerLiteral value: Int) { self = .int(value) }

  /// ``double(_:)``, written with a fraction or an exponent: `0.5`.
  public init(floatLiteral value: Double) { self = .double(value) }

  /// ``string(_:)``, written as a string literal.
  public init(stringLiteral value: String) { self = .string(value) }

  /// ``array(_:)``, written as an array literal: `["a", 1, true]`.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

  /// ``object(_:)``, written as a dictionary literal: `["retries": 3, "hosts": ["a", "b"]]`. A key written twice
  /// takes its last value, as JSON parsers do.
  public init(dictionaryLiteral members: (JSONKey, JSONValue)...) {
    self = .object(Dictionary(members, uniquingKeysWith: { _, last in last }))
  }
}

/// A key of a JSON object or of a settings file: text that equals another only when their Unicode scalars are, as
/// in JSON (RFC 8259), jq and Python, so that "é" (U+00E9) and "e" followed by U+0301 are two keys. Swift's
/// `String` compares them as one, because they look alike.
///
/// Written as a string literal wherever a key is expected: `value["retries"]`, `.object(["retries": .int(3)])`.
public struct JSONKey: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The key's text.
  public let text: String

  /// The key with this text.
  public init(_ text: String) { self.text = text }

  /// The key with this text, written as a literal.
  public init(stringLiteral text: String) { self.text = text }

  /// The key's text.
  public var description: String { text }

  /// Whether the keys have the same Unicode scalars (the same UTF-8 bytes).
  public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

  /// Orders keys by their Unicode scalars (UTF-8 bytes order the same way).
  public static func < (lhs: JSONKey, rhs: JSONKey) -> Bool {
    lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
  }

  /// Hashes the key's UTF-8 bytes, as ``==(_:_:)`` compares them, in one piece.
  public func hash(into hasher: inout Hasher) {
    var text = text  // withUTF8 gives every string, small or bridged, contiguous bytes, so equal keys hash alike
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    hasher.combine(text.utf8.count)
  }
}

extension JSONValue {
  /// `text` as one line of compact JSON, with every number as `text` writes it (where a `Double` would round it, as
  /// ``description`` would); nil when `text` is not one strict JSON value. For `splintctl fleet`, which shows what a
  /// cluster holds: nothing of it reaches a terminal unescaped.
  package static func compactText(of text: String) -> String? {
    let bytes = Array(text.utf8)
    guard (try? JSONParser.valueAndExactness(from: bytes)) != nil else { return nil }
    return try? JSONParser.exactText(of: bytes, format: .compact)
  }
}
