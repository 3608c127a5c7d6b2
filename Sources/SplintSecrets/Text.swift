extension StringProtocol {
  /// The text's bytes with each `escape` byte and the two hexadecimal digits after it replaced by the byte they write
  /// (`%41` or `_41`: `A`); nil when an escape is not followed by two digits. The bytes need not be UTF-8.
  package func unescapedBytes(escape: UInt8) -> [UInt8]? {
    var bytes: [UInt8] = []
    var utf8 = self.utf8.makeIterator()
    while let byte = utf8.next() {
      guard byte == escape else {
        bytes.append(byte)
        continue
      }
      guard let high = utf8.next(), let low = utf8.next(),
        let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
    }
    return bytes
  }

  /// The text without the leading and trailing Unicode scalars `isTrimmed` accepts, as Foundation's
  /// `trimmingCharacters(in:)` (which is not in FoundationEssentials).
  func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
    let scalars = Substring(self).unicodeScalars
    guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
      let last = scalars.lastIndex(where: { !isTrimmed($0) })
    else { return "" }
    return String(scalars[first...last])
  }
}

extension Unicode.Scalar {
  /// A space or a tab: what `CharacterSet.whitespaces` holds (Unicode's space separators, and U+0009).
  var isSpaceOrTab: Bool { self == "\t" || properties.generalCategory == .spaceSeparator }

  /// White space or a line break: what `CharacterSet.whitespacesAndNewlines` holds.
  var isWhitespaceOrNewline: Bool { properties.isWhitespace }
}
