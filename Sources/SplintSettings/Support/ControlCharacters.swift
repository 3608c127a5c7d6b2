extension String {
  /// The text with every character that a terminal or a log acts on written out as `\u{1B}`: the C0 controls (but
  /// for line feeds and tabs, with `keepingLines`), DEL, the C1 controls, and the bidirectional overrides and
  /// isolates that reorder what is shown. Text from a server or from another user, safe to print, log, or keep in a
  /// copy, and still saying what was received.
  package func escapingControlCharacters(keepingLines: Bool = false) -> String {
    guard
      unicodeScalars.contains(where: { Self.isEscaped($0, keepingLines: keepingLines) })
    else { return self }
    var escaped = ""
    for scalar in unicodeScalars {
      if Self.isEscaped(scalar, keepingLines: keepingLines) {
        escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      } else {
        escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// The text escaped (``escapingControlCharacters(keepingLines:)``), and cut to at most `limit` characters, with
  /// "…" where it is cut, in the middle (its end often tells two long names apart): a name or a message from a
  /// server, however long it was sent, for a line of a log.
  package func shown(limit: Int = 200) -> String {
    let escaped = escapingControlCharacters()
    guard escaped.count > limit else { return escaped }
    return String(escaped.prefix(limit - limit / 3)) + "…" + String(escaped.suffix(limit / 3))
  }

  private static func isEscaped(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
    switch scalar.value {
    case 0x0A, 0x09: !keepingLines
    case 0x00..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
