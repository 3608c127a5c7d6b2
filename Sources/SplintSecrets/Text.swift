extension StringProtocol {
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
