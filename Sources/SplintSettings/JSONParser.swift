/// Where and why JSON text is not valid.
struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
  let message: String
  let line: Int
  let column: Int

  var description: String { "line \(line), column \(column): \(message)" }
}

/// A strict JSON (RFC 8259) parser over UTF-8 bytes.
///
/// What it refuses, with a line and column: invalid UTF-8, unescaped control characters, lone surrogates, numbers
/// outside Double's range, NaN and other extensions, duplicate keys in an object (which value would be meant is
/// anyone's guess), text after the value, and nesting deeper than ``maximumDepth`` (so a hostile file cannot
/// exhaust the stack). It never traps on any input.
struct JSONParser: ~Copyable {
  static let maximumDepth = 512

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  /// Whether every number parsed so far reads back with its digits: false once one (such as
  /// 123456789012345678901234567890) had more significant digits than a `Double` keeps. Nil when nobody asked, so
  /// that reading a settings file does not pay for it.
  private var numbersAreExact: Bool?

  private init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// Parses text holding exactly one JSON value.
  static func value(from bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
    try withParser(bytes) { parser throws(JSONSyntaxError) in
      let value = try parser.parseValue(depth: 0)
      try parser.expectEnd()
      return value
    }
  }

  /// Parses text holding exactly one JSON value, and says whether its numbers are exact: whether every number keeps
  /// its digits in the value (and so in the value's JSON text), rather than being rounded to the nearest `Double`.
  static func valueAndExactness(from bytes: [UInt8]) throws(JSONSyntaxError) -> (value: JSONValue, exact: Bool) {
    try withParser(bytes) { parser throws(JSONSyntaxError) in
      parser.numbersAreExact = true
      let value = try parser.parseValue(depth: 0)
      try parser.expectEnd()
      return (value, parser.numbersAreExact == true)
    }
  }

  /// Parses a settings file: one JSON object, or nothing but whitespace (an empty file holds no settings). Each
  /// member comes with the exact text of its value, so that a value nobody changes can be written back unchanged.
  static func members(
    from bytes: [UInt8]
  ) throws(JSONSyntaxError) -> [(key: String, value: JSONValue, text: String)] {
    try withParser(bytes) { parser throws(JSONSyntaxError) in
      parser.skipByteOrderMark()
      parser.skipWhitespace()
      guard !parser.isAtEnd else { return [] }
      guard parser.peek == UInt8(ascii: "{") else {
        let value = try parser.parseValue(depth: 0)
        throw parser.error("the file holds \(value.kind), not a JSON object", at: 0)
      }
      var members: [(key: String, value: JSONValue, text: String)] = []
      try parser.parseObject(depth: 0) { parser, key, value, start in
        let text = String(decoding: parser.bytes[start..<parser.index], as: UTF8.self)
        members.append((key, value, text))
      }
      try parser.expectEnd()
      return members
    }
  }

  /// Parses text that must hold one JSON object, such as settings to import: its members in order. Unlike a settings
  /// file, blank text is refused (it holds no object), and so is any other value, at the place where it starts.
  static func object(from bytes: [UInt8]) throws(JSONSyntaxError) -> [(key: String, value: JSONValue)] {
    try withParser(bytes) { parser throws(JSONSyntaxError) in
      parser.skipByteOrderMark()
      parser.skipWhitespace()
      guard parser.peek == UInt8(ascii: "{") else {
        guard !parser.isAtEnd else { throw parser.error("expected a JSON object of settings, found nothing") }
        let start = parser.index
        let value = try parser.parseValue(depth: 0)
        throw parser.error("expected a JSON object of settings, found \(value.kind)", at: start)
      }
      var members: [(key: String, value: JSONValue)] = []
      try parser.parseObject(depth: 0) { _, key, value, _ in members.append((key, value)) }
      try parser.expectEnd()
      return members
    }
  }

  private static func withParser<T>(
    _ bytes: [UInt8], _ body: (inout JSONParser) throws(JSONSyntaxError) -> T
  ) throws(JSONSyntaxError) -> T {
    let result = bytes.withUnsafeBufferPointer { buffer -> Result<T, JSONSyntaxError> in
      var parser = JSONParser(buffer)
      return Result { () throws(JSONSyntaxError) -> T in try body(&parser) }
    }
    return try result.get()
  }

  // MARK: - Values

  private var isAtEnd: Bool { index >= bytes.count }
  private var peek: UInt8? { isAtEnd ? nil : bytes[index] }

  private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
    skipWhitespace()
    switch peek {
    case UInt8(ascii: "{"):
      var members: [JSONKey: JSONValue] = [:]
      try parseObject(depth: depth + 1) { _, key, value, _ in members[JSONKey(key)] = value }
      return .object(members)
    case UInt8(ascii: "["):
      return .array(try parseArray(depth: depth + 1))
    case UInt8(ascii: "\""):
      return .string(try parseString())
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      return .null
    case .some(UInt8(ascii: "-")), .some(UInt8(ascii: "0")...UInt8(ascii: "9")):
      return try parseNumber()
    case nil:
      throw error("the text ends where a value should be")
    case let byte?:
      throw error("\(Self.describe(byte)) where a value should be")
    }
  }

  /// Parses an object, handing each member to `member` with the offset where its value's text starts.
  private mutating func parseObject(
    depth: Int, _ member: (borrowing JSONParser, String, JSONValue, Int) -> Void
  ) throws(JSONSyntaxError) {
    try enter(depth)
    index += 1  // {
    // Keys are the same only when their Unicode scalars are: "é" and "e" + U+0301 are two (see JSONKey).
    var keys = Set<JSONKey>()
    skipWhitespace()
    if peek == UInt8(ascii: "}") {
      index += 1
      return
    }
    var key = ""
    var separator = UInt8(ascii: ",")
    while separator == UInt8(ascii: ",") {
      skipWhitespace()
      guard peek == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
      let keyStart = index
      key = try parseString()
      guard keys.insert(JSONKey(key)).inserted else {
        throw error("the key \"\(key)\" appears twice in one object", at: keyStart)
      }
      skipWhitespace()
      guard peek == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
      index += 1
      skipWhitespace()
      let valueStart = index
      let value = try parseValue(depth: depth)
      member(self, key, value, valueStart)
      skipWhitespace()
      separator = peek ?? 0
      index += 1
    }
    guard separator == UInt8(ascii: "}") else {
      index -= 1
      throw error("expected ',' or '}' after the value of \"\(key)\"")
    }
  }

  private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> [JSONValue] {
    try enter(depth)
    index += 1  // [
    var elements: [JSONValue] = []
    skipWhitespace()
    if peek == UInt8(ascii: "]") {
      index += 1
      return elements
    }
    var separator = UInt8(ascii: ",")
    while separator == UInt8(ascii: ",") {
      elements.append(try parseValue(depth: depth))
      skipWhitespace()
      separator = peek ?? 0
      index += 1
    }
    guard separator == UInt8(ascii: "]") else {
      index -= 1
      throw error("expected ',' or ']' after an array element")
    }
    return elements
  }

  private func enter(_ depth: Int) throws(JSONSyntaxError) {
    if depth > Self.maximumDepth {
      throw error("objects and arrays are nested more than \(Self.maximumDepth) levels deep")
    }
  }

  private mutating func parseString() throws(JSONSyntaxError) -> String {
    let start = index
    index += 1  // opening quote
    var decoded: [UInt8] = []
    var chunkStart = index
    while let byte = peek {
      switch byte {
      case UInt8(ascii: "\""):
        decoded += bytes[chunkStart..<index]
        index += 1
        guard let text = String(validating: decoded, as: UTF8.self) else {
          throw error("a string is not valid UTF-8", at: start)
        }
        return text
      case UInt8(ascii: "\\"):
        decoded += bytes[chunkStart..<index]
        try parseEscape(into: &decoded)
        chunkStart = index
      case 0..<0x20:
        throw error("a control character (\(Self.describe(byte))) inside a string must be escaped")
      default:
        index += 1
      }
    }
    throw error("a string is not closed", at: start)
  }

  private mutating func parseEscape(into decoded: inout [UInt8]) throws(JSONSyntaxError) {
    let start = index
    index += 1  // backslash
    guard let escaped = peek else { throw error("a string is not closed", at: start) }
    index += 1
    let simple: [UInt8: UInt8] = [
      UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"),
      UInt8(ascii: "/"): UInt8(ascii: "/"), UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C,
      UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]
    if let byte = simple[escaped] {
      decoded.append(byte)
      return
    }
    guard escaped == UInt8(ascii: "u") else { throw error("\\\(Self.describe(escaped)) is not an escape", at: start) }
    var scalar = try parseHexQuad(start: start)
    if (0xD800..<0xDC00).contains(scalar) {
      guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
        throw error("\\u\(String(scalar, radix: 16)) starts a surrogate pair that does not continue", at: start)
      }
      index += 2
      let low = try parseHexQuad(start: start)
      guard (0xDC00..<0xE000).contains(low) else {
        throw error("\\u\(String(scalar, radix: 16)) is followed by no low surrogate", at: start)
      }
      scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
    }
    guard let unicode = Unicode.Scalar(scalar) else {
      throw error("\\u\(String(scalar, radix: 16)) is a lone surrogate, which is no character", at: start)
    }
    decoded += Array(String(Character(unicode)).utf8)
  }

  private mutating func parseHexQuad(start: Int) throws(JSONSyntaxError) -> UInt32 {
    guard index + 4 <= bytes.count,
      let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
      bytes[index..<index + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
    else { throw error("\\u must be followed by four hexadecimal digits", at: start) }
    index += 4
    return value
  }

  private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    var isInteger = true
    if peek == UInt8(ascii: "-") { index += 1 }
    if peek == UInt8(ascii: "0") {
      index += 1
    } else {
      try expectDigits(after: start)
    }
    if peek == UInt8(ascii: ".") {
      isInteger = false
      index += 1
      try expectDigits(after: start)
    }
    if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
      isInteger = false
      index += 1
      if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
      try expectDigits(after: start)
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    if isInteger, let integer = Int(text) { return .int(integer) }
    guard let number = Double(text), number.isFinite else {
      throw error("the number \(text) is too large to store", at: start)
    }
    if numbersAreExact == true, Self.significantDigits(text) != Self.significantDigits(number.description) {
      numbersAreExact = false
    }
    return .double(number)
  }

  /// A decimal number's significant digits and the position of its point relative to them, so that texts of the
  /// same number compare equal: "0.10", "1e-1" and "0.1" are all ("1", 0); "1.5e+3" and "1500" ("15", 4).
  private static func significantDigits(_ text: String) -> (digits: Substring, point: Int) {
    let parts = text.lowercased().split(separator: "e", maxSplits: 1)
    let mantissa = parts[0].filter { $0 != "-" }
    var digits = Substring(mantissa.filter { $0 != "." })
    var point =
      (mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) }
        ?? mantissa.count) + (parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
    while digits.first == "0" {
      digits.removeFirst()
      point -= 1
    }
    while digits.last == "0" { digits.removeLast() }
    return digits.isEmpty ? ("", 0) : (digits, point)
  }

  private mutating func expectDigits(after start: Int) throws(JSONSyntaxError) {
    let first = index
    while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    if index == first { throw error("a number is cut short: digits must follow", at: start) }
  }

  private mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
    let expected = Array(literal.utf8)
    guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
      throw error("expected \(literal)")
    }
    index += expected.count
  }

  private mutating func expectEnd() throws(JSONSyntaxError) {
    skipWhitespace()
    if let byte = peek { throw error("\(Self.describe(byte)) after the end of the JSON value") }
  }

  private mutating func skipWhitespace() {
    while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
  }

  /// Editors on other systems may start UTF-8 files with a byte order mark; it carries no content.
  private mutating func skipByteOrderMark() {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
  }

  // MARK: - Errors

  private func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
    let position = min(offset ?? index, bytes.count)
    let before = bytes[..<position]
    let line = before.count { $0 == UInt8(ascii: "\n") } + 1
    let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
    return JSONSyntaxError(message: message, line: line, column: position - lineStart + 1)
  }

  private static func describe(_ byte: UInt8) -> String {
    (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
  }
}
