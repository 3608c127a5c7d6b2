/// How a schema's messages show text that comes from outside (values, keys, patterns, keywords): short, and with
/// every character that could hide or rewrite what a terminal or a log shows escaped as `\uXXXX`: control
/// characters (C0, DEL, C1), line and paragraph separators, and the marks that reorder text (bidirectional
/// overrides and isolates), so that a value from a fleet's cluster cannot forge a line of a report.
enum SchemaText {
  /// The most characters of a value a message shows, before "…".
  static let limit = 60

  /// `value` as compact JSON, cut after about ``limit`` characters with "…", its strings escaped as above.
  static func shown(_ value: JSONValue, limit: Int = limit) -> String {
    var writer = Writer(budget: limit)
    writer.write(value)
    return writer.output
  }

  /// `text` with the characters above escaped, cut after about ``limit`` characters with "…".
  static func escaped(_ text: String, limit: Int = limit) -> String {
    var writer = Writer(budget: limit)
    writer.writeScalars(of: text, quoting: false)
    return writer.output
  }

  /// Whether `scalar` must be shown escaped.
  static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  /// Writes JSON text while a budget of characters lasts, then "…" once.
  private struct Writer {
    var budget: Int
    var output = ""
    var cut = false

    /// Appends `piece` if the budget allows it whole; otherwise "…", and nothing after it.
    mutating func append(_ piece: String) -> Bool {
      guard !cut else { return false }
      let count = piece.unicodeScalars.count
      guard count <= budget else {
        output += "…"
        cut = true
        return false
      }
      budget -= count
      output += piece
      return true
    }

    mutating func write(_ value: JSONValue) {
      switch value {
      case .null, .bool, .int, .double:
        _ = append(value.description)
      case .string(let text):
        writeScalars(of: text, quoting: true)
      case .array(let elements):
        guard append("[") else { return }
        for (index, element) in elements.enumerated() {
          guard index == 0 || append(",") else { return }
          write(element)
        }
        _ = append("]")
      case .object(let members):
        guard append("{") else { return }
        for (index, (key, member)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
          guard index == 0 || append(",") else { return }
          writeScalars(of: key.text, quoting: true)
          guard append(":") else { return }
          write(member)
        }
        _ = append("}")
      }
    }

    /// Appends the scalars of `text`, escaped (as JSON escapes them too, with `quoting`), each whole.
    mutating func writeScalars(of text: String, quoting: Bool) {
      if quoting, !append("\"") { return }
      for scalar in text.unicodeScalars {
        let piece: String
        switch scalar {
        case "\"" where quoting: piece = "\\\""
        case "\\" where quoting: piece = "\\\\"
        case "\n": piece = "\\n"
        case "\t": piece = "\\t"
        case "\r": piece = "\\r"
        case _ where mustEscape(scalar):
          let hex = String(scalar.value, radix: 16)
          piece = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: piece = String(scalar)
        }
        guard append(piece) else { return }
      }
      if quoting { _ = append("\"") }
    }
  }
}
