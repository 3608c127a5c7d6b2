/// Where and why JSON text is not valid.
struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
  let message: String
  let line: Int
  let column: Int

  var description: String { "line \(line), column \(column): \(message)" }
}

/// A JSON (RFC 8259) parser over UTF-8 bytes, strict, or for settings files: JSON with comments, as VS Code's
/// `settings.json` is.
///
/// What it refuses, with a line and column: invalid UTF-8, unescaped control characters, lone surrogates, numbers
/// outside Double's range, NaN and other extensions, duplicate keys in an object (which value would be meant is
/// anyone's guess), text after the value, and nesting deeper than ``maximumDepth`` (so a hostile file cannot
/// exhaust the stack). It never traps on any input.
///
/// A settings file (``members(from:)``, ``object(from:)``: the user's file, system files, imports) may also hold
/// `//` and `/* */` comments wherever whitespace may be (a `/* */` does not nest), and one comma after the last
/// member of an object or the last element of an array. Everything else stays an error there: `[,]`, `{,}`, two
/// commas in a row, a comma before the first element. ``value(from:)`` reads strict JSON only, and says so when it
/// meets a comment or a trailing comma.
struct JSONParser: ~Copyable {
  static let maximumDepth = 512

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  /// Whether comments and one trailing comma are read (a settings file), or refused (strict JSON).
  private var lenient = false
  /// Whether every number parsed so far reads back with its digits: false once one (such as
  /// 123456789012345678901234567890) had more significant digits than a `Double` keeps. Nil when nobody asked, so
  /// that reading a settings file does not pay for it.
  private var numbersAreExact: Bool?
  /// The texts of the numbers a `Double` would round, for ``exactText(of:format:indent:)``, which finds each where
  /// the value holds the string `marker` + its index + `marker`; nil when nobody asked.
  private var roundedNumbers: [String]?
  private var marker = ""

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

  /// The JSON value `bytes` holds (a settings file's text: comments and trailing commas are read), written out as
  /// strict JSON laid out as `format` (object keys sorted, as ``JSONValue`` writes them), but with every number a
  /// `Double` would round written as `bytes` has it: 123456789012345678901234567890 stays so, where the value's own
  /// JSON would say 1.2345678901234568e+29. For `splintctl`, which prints what the file holds.
  ///
  /// - Parameter indent: What the line the value starts on is indented by.
  static func exactText(of bytes: [UInt8], format: JSONFormat, indent: [UInt8] = []) throws(JSONSyntaxError) -> String {
    var numbers: [String] = []
    // Each rounded number stands in the value as a string no text holds (a private-use character and a random
    // number around its index), which its text then replaces.
    let marker = "\u{F8FF}\(UInt64.random(in: 0...UInt64.max))\u{F8FF}"
    let value = try withParser(bytes, lenient: true) { parser throws(JSONSyntaxError) in
      parser.roundedNumbers = []
      parser.marker = marker
      parser.skipByteOrderMark()
      let value = try parser.parseValue(depth: 0)
      try parser.expectEnd()
      numbers = parser.roundedNumbers ?? []
      return value
    }
    var output: [UInt8] = []
    value.write(to: &output, format: format, indent: indent)
    var text = String(decoding: output, as: UTF8.self)
    for (index, number) in numbers.enumerated() {
      var quoted: [UInt8] = []
      JSONValue.writeString("\(marker)\(index + 1)\(marker)", to: &quoted)
      text = text.replacing(String(decoding: quoted, as: UTF8.self), with: number)
    }
    return text
  }

  /// Where a member of a settings file's object is in its text: offsets of the key's opening quote, of the byte after
  /// its closing quote, and of the value's first and last-plus-one bytes.
  struct MemberSpan: Sendable, Equatable {
    let keyStart: Int
    let keyEnd: Int
    let valueStart: Int
    let valueEnd: Int
  }

  /// A settings file's object: its members in order, each with where it is, and the offsets of the object's braces
  /// (nil for a file without one: blank, or comments only).
  struct SettingsObject {
    var members: [(key: String, value: JSONValue, span: MemberSpan)] = []
    var braces: (open: Int, close: Int)?
  }

  /// Parses a settings file: one JSON object, or nothing but whitespace and comments (such a file holds no
  /// settings). Each member comes with where it is, so that a value nobody changes can be written back unchanged,
  /// with the comments and the layout around it.
  static func settingsObject(from bytes: [UInt8]) throws(JSONSyntaxError) -> SettingsObject {
    try withParser(bytes, lenient: true) { parser throws(JSONSyntaxError) in
      parser.skipByteOrderMark()
      try parser.skipWhitespace()
      var object = SettingsObject()
      guard !parser.isAtEnd else { return object }
      let open = parser.index
      guard parser.peek == UInt8(ascii: "{") else {
        let value = try parser.parseValue(depth: 0)
        throw parser.error("the file holds \(value.kind), not a JSON object", at: open)
      }
      try parser.parseObject(depth: 0) { parser, key, value, keyStart, keyEnd, valueStart in
        object.members.append(
          (key, value, MemberSpan(keyStart: keyStart, keyEnd: keyEnd, valueStart: valueStart, valueEnd: parser.index)))
      }
      object.braces = (open, parser.index - 1)
      try parser.expectEnd()
      return object
    }
  }

  /// Parses text that must hold one JSON object, such as settings to import: its members in order. Unlike a settings
  /// file, blank text is refused (it holds no object), and so is any other value, at the place where it starts.
  static func object(from bytes: [UInt8]) throws(JSONSyntaxError) -> [(key: String, value: JSONValue)] {
    try withParser(bytes, lenient: true) { parser throws(JSONSyntaxError) in
      parser.skipByteOrderMark()
      try parser.skipWhitespace()
      guard parser.peek == UInt8(ascii: "{") else {
        guard !parser.isAtEnd else { throw parser.error("expected a JSON object of settings, found nothing") }
        let start = parser.index
        let value = try parser.parseValue(depth: 0)
        throw parser.error("expected a JSON object of settings, found \(value.kind)", at: start)
      }
      var members: [(key: String, value: JSONValue)] = []
      try parser.parseObject(depth: 0) { _, key, value, _, _, _ in members.append((key, value)) }
      try parser.expectEnd()
      return members
    }
  }

  private static func withParser<T>(
    _ bytes: [UInt8], lenient: Bool = false, _ body: (inout JSONParser) throws(JSONSyntaxError) -> T
  ) throws(JSONSyntaxError) -> T {
    let result = bytes.withUnsafeBufferPointer { buffer -> Result<T, JSONSyntaxError> in
      var parser = JSONParser(buffer)
      parser.lenient = lenient
      return Result { () throws(JSONSyntaxError) -> T in try body(&parser) }
    }
    return try result.get()
  }

  // MARK: - Values

  private var isAtEnd: Bool { index >= bytes.count }
  private var peek: UInt8? { isAtEnd ? nil : bytes[index] }

  private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
    try skipWhitespace()
    switch peek {
    case UInt8(ascii: "{"):
      var members: [JSONKey: JSONValue] = [:]
      try parseObject(depth: depth + 1) { _, key, value, _, _, _ in members[JSONKey(key)] = value }
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
    case UInt8(ascii: ","):
      throw error("a comma where a value should be")
    case _?:
      throw unexpected("where a value should be")
    }
  }

  /// Parses an object, handing each member to `member` with the offsets where its key starts and ends and where its
  /// value starts (the parser's index is where the value ends).
  private mutating func parseObject(
    depth: Int, _ member: (borrowing JSONParser, String, JSONValue, Int, Int, Int) -> Void
  ) throws(JSONSyntaxError) {
    try enter(depth)
    index += 1  // {
    // Keys are the same only when their Unicode scalars are: "é" and "e" + U+0301 are two (see JSONKey).
    var keys = Set<JSONKey>()
    try skipWhitespace()
    if peek == UInt8(ascii: "}") {
      index += 1
      return
    }
    var key = ""
    var closed = false
    while !closed {
      try skipWhitespace()
      guard peek == UInt8(ascii: "\"") else {
        if peek == UInt8(ascii: ",") {
          throw error(
            keys.isEmpty ? "a comma before the first member" : "two commas in a row after the value of \"\(key)\"")
        }
        throw unexpected("where a key in double quotes should be")
      }
      let keyStart = index
      key = try parseString()
      guard keys.insert(JSONKey(key)).inserted else {
        throw error("the key \"\(key)\" appears twice in one object", at: keyStart)
      }
      let keyEnd = index
      try skipWhitespace()
      guard peek == UInt8(ascii: ":") else { throw unexpected("after the key \"\(key)\", where ':' should be") }
      index += 1
      try skipWhitespace()
      let valueStart = index
      let value = try parseValue(depth: depth)
      member(self, key, value, keyStart, keyEnd, valueStart)
      guard let ends = try parseSeparator(before: UInt8(ascii: "}")) else {
        throw unexpected("after the value of \"\(key)\", where ',' or '}' should be")
      }
      closed = ends
    }
    index += 1  // }
  }

  /// Parses what follows a member or an element: a comma (then, in a settings file, the closing `close` may follow
  /// it), or `close`. Leaves the index on `close` and returns true when the object or array ends there; nil, with the
  /// index on it, when something else follows.
  private mutating func parseSeparator(before close: UInt8) throws(JSONSyntaxError) -> Bool? {
    try skipWhitespace()
    switch peek {
    case close:
      return true
    case UInt8(ascii: ","):
      let comma = index
      index += 1
      try skipWhitespace()
      guard peek == close else { return false }
      try acceptTrailingComma(at: comma, before: Character(Unicode.Scalar(close)))
      return true
    default:
      return nil
    }
  }

  private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> [JSONValue] {
    try enter(depth)
    index += 1  // [
    var elements: [JSONValue] = []
    try skipWhitespace()
    if peek == UInt8(ascii: "]") {
      index += 1
      return elements
    }
    var closed = false
    while !closed {
      try skipWhitespace()
      if peek == UInt8(ascii: ",") {
        throw error(elements.isEmpty ? "a comma before the first element" : "two commas in a row in an array")
      }
      elements.append(try parseValue(depth: depth))
      guard let ends = try parseSeparator(before: UInt8(ascii: "]")) else {
        throw unexpected("after an array element, where ',' or ']' should be")
      }
      closed = ends
    }
    index += 1  // ]
    return elements
  }

  /// Accepts the comma at `comma`, the last in its object or array, in a settings file; strict JSON has none.
  private func acceptTrailingComma(at comma: Int, before close: Character) throws(JSONSyntaxError) {
    guard lenient else {
      throw error(
        "a comma before '\(close)': JSON allows none after the last element (a settings file may have one)", at: comma)
    }
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
    if numbersAreExact == true || roundedNumbers != nil,
      Self.significantDigits(text) != Self.significantDigits(number.description)
    {
      numbersAreExact = false
      if roundedNumbers != nil {
        roundedNumbers?.append(text)
        return .string("\(marker)\(roundedNumbers?.count ?? 0)\(marker)")
      }
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
    try skipWhitespace()
    if peek != nil { throw unexpected("after the end of the JSON value") }
  }

  /// Skips whitespace, and in a settings file comments too.
  ///
  /// - Throws: For a `/*` comment that is not closed.
  private mutating func skipWhitespace() throws(JSONSyntaxError) {
    while let byte = peek {
      switch byte {
      case 0x20, 0x0A, 0x0D, 0x09:
        index += 1
      case UInt8(ascii: "/") where lenient:
        guard let end = Self.commentEnd(in: bytes, at: index) else { return }
        guard end >= 0 else { throw error("a /* comment is not closed: it needs */", at: index) }
        index = end
      default:
        return
      }
    }
  }

  /// Where the comment that starts at `start` ends (the offset after it: the newline that ends a `//` comment is not
  /// part of it); nil when no comment starts there, -1 for a `/*` that is not closed.
  static func commentEnd<Bytes: RandomAccessCollection<UInt8>>(in bytes: Bytes, at start: Int) -> Int?
  where Bytes.Index == Int {
    guard start >= bytes.startIndex, start + 1 < bytes.endIndex, bytes[start] == UInt8(ascii: "/") else { return nil }
    switch bytes[start + 1] {
    case UInt8(ascii: "/"):
      var end = start + 2
      while end < bytes.endIndex, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
      return end
    case UInt8(ascii: "*"):
      var end = start + 2
      while end + 1 < bytes.endIndex {
        if bytes[end] == UInt8(ascii: "*"), bytes[end + 1] == UInt8(ascii: "/") { return end + 2 }
        end += 1
      }
      return -1
    default:
      return nil
    }
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

  /// The error for the byte at the index, which does not belong `where` it is: named, and when it starts a comment
  /// or ends one, said so, since that is the real cause.
  private func unexpected(_ place: String) -> JSONSyntaxError {
    let next = index + 1 < bytes.count ? bytes[index + 1] : nil
    switch (peek, next) {
    case (UInt8(ascii: "/")?, UInt8(ascii: "/")?), (UInt8(ascii: "/")?, UInt8(ascii: "*")?):
      return error("a comment \(place): JSON has no comments (a settings file may have them)")
    case (UInt8(ascii: "*")?, UInt8(ascii: "/")?):
      return error("'*/' \(place), which closes no comment (/* */ comments do not nest)")
    case (UInt8(ascii: "/")?, _) where lenient:
      return error("'/' \(place): a comment starts with // or /*")
    case (nil, _):
      return error("the text ends \(place)")
    case (let byte?, _):
      return error("\(Self.describe(byte)) \(place)")
    }
  }

  private static func describe(_ byte: UInt8) -> String {
    (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
  }
}
