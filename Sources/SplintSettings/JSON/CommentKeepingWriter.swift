/// How a settings file's text is written back after a change: the file as it was, but for the members that changed.
///
/// A person keeps a settings file by hand, as VS Code's `settings.json`: comments, blank lines, an order, an
/// indentation of their own. A write keeps all of it:
/// - A member nobody changed is written back byte for byte, with the comments around it.
/// - A changed value is written in place of the old one; the key, the comments before the member and on its line
///   stay. A comment inside the old value goes with it.
/// - A removed member goes with the comments that belong to it: those on the lines right above it (with no blank line
///   between) and those after it on its own line. Other comments and blank lines stay where they were.
/// - A new member goes after the last one (into an object with none, after the comments inside it), written as the
///   file writes members: on a line of its own with the same indentation, or on the same line, with the same spaces
///   around its colon, nested values indented a level more by the file's own unit (a tab, four spaces, two), the
///   file's line ends (`\r\n` too), and a comma after it if the file puts one after its last member.
/// A document made here (a new file) has one member a line, indented by two spaces.
enum CommentKeepingWriter {
  /// The text for `document`: its source's text with the document's changes made (see ``CommentKeepingWriter``).
  static func render(_ document: SettingsDocument) -> [UInt8] {
    let fresh = render(document.members, in: Array("{}\n".utf8), braces: .init(open: 0, close: 1), spans: [])
    guard let source = document.source else { return fresh }
    if let braces = source.braces {
      return render(document.members, in: source.bytes, braces: braces, spans: source.spans)
    }
    // No object: the file is blank, or holds comments only. Unchanged, it stays so; else the comments stay, and the
    // object follows them.
    if document.members.isEmpty { return source.bytes }
    let comments = Array(source.bytes.reversed().drop(while: isWhitespace).reversed())
    return comments.isEmpty ? fresh : comments + newline(of: source.bytes) + fresh
  }

  /// Where a member of the source is, with what belongs to it. Its *region* runs from the first comment that belongs
  /// to it (or the line break before its own line, or its key) to the end of what follows it on its line; the *gap*
  /// before it holds what belongs to no member: blank lines and comments set apart.
  private struct Entry {
    let span: JSONParser.MemberSpan
    let gap: Range<Int>
    let start: Int
    /// The offset of the comma after the value, if one follows.
    let comma: Int?
    let end: Int
    /// The spaces or tabs before the key, when the key starts its line.
    let indentation: Range<Int>?
    /// Whether the region ends in a `//` comment.
    let endsInLineComment: Bool
  }

  /// How the file writes members, as its last member shows (or, with none, as a new file is written).
  private struct Style {
    var format = JSONFormat.pretty
    /// Whether members are on lines of their own.
    var lines = true
    /// What indents a member's line.
    var indentation: [UInt8] = Array("  ".utf8)
    /// Whether the last member has a comma after it.
    var trailingComma = false
  }

  private static func render(
    _ members: [SettingsDocument.Member], in bytes: [UInt8], braces: SettingsDocument.Braces,
    spans: [JSONParser.MemberSpan]
  ) -> [UInt8] {
    // The common change, values set in place (no member added or removed): only the changed members are looked at,
    // and their new values spliced into the text.
    if members.count == spans.count, members.indices.allSatisfy({ members[$0].origin == $0 }) {
      let last = spans.indices.last.map { entry(at: $0, of: spans, in: bytes, open: braces.open) }
      let style = self.style(of: bytes, braces: braces, last: last, count: spans.count)
      var output: [UInt8] = []
      var copied = 0
      for (index, member) in members.enumerated() where !member.keepsText {
        let entry = entry(at: index, of: spans, in: bytes, open: braces.open)
        output += bytes[copied..<spans[index].valueStart]
        output += value(of: member, style: style, lineIndentation: entry.indentation.map { Array(bytes[$0]) })
        copied = spans[index].valueEnd
      }
      return output + bytes[copied...]
    }
    let entries = self.entries(in: bytes, braces: braces, spans: spans)
    let style = self.style(of: bytes, braces: braces, last: entries.last, count: entries.count)
    var kept: [Int: SettingsDocument.Member] = [:]
    for member in members { if let origin = member.origin { kept[origin] = member } }
    let added = members.filter { $0.origin == nil }
    let lastKept = entries.indices.last { kept[$0] != nil }

    var output = Output(newline: style.format.newline)
    output.append(bytes[...braces.open], endsInLineComment: false)
    // The spaces after `{` of members removed from the start, which the first member kept takes instead of its own.
    var opening: Range<Int>?
    for (index, entry) in entries.enumerated() {
      guard let member = kept[index] else {
        if hasComment(bytes[entry.gap]) {
          output.append(bytes[entry.gap], endsInLineComment: endsInLineComment(bytes, entry.gap))
        } else if index == 0 {
          opening = entry.gap
        }
        continue
      }
      let gap = opening.flatMap { hasComment(bytes[entry.gap]) ? nil : $0 } ?? entry.gap
      opening = nil
      output.append(bytes[gap], endsInLineComment: endsInLineComment(bytes, gap))
      output.append(bytes[entry.start..<entry.span.valueStart])
      if member.keepsText {
        output.append(bytes[entry.span.valueStart..<entry.span.valueEnd])
      } else {
        output.append(value(of: member, style: style, lineIndentation: entry.indentation.map { Array(bytes[$0]) }))
      }
      let wantsComma = index != lastKept || !added.isEmpty || style.trailingComma
      let rest: ArraySlice<UInt8> =
        switch (entry.comma, wantsComma) {
        case (let comma?, false): bytes[entry.span.valueEnd..<comma] + bytes[(comma + 1)..<entry.end]
        case (nil, true): Array(",".utf8) + bytes[entry.span.valueEnd..<entry.end]
        default: bytes[entry.span.valueEnd..<entry.end]
        }
      output.append(rest, endsInLineComment: entry.endsInLineComment)
    }
    let tail = (entries.last?.end ?? braces.open + 1)..<bytes.count
    // An object whose every member was removed, with nothing left inside but whitespace, is `{}`.
    if !entries.isEmpty, lastKept == nil, added.isEmpty, output.bytes.count == braces.open + 1,
      isBlank(bytes[tail.lowerBound..<braces.close])
    {
      return output.bytes + bytes[braces.close...]
    }
    var insertion = tail.lowerBound
    if !added.isEmpty, lastKept == nil {
      // Into an object left with no member: after the comments inside it, on a line of its own (or right after
      // the spaces after `{`, in a file written on one line).
      if !style.lines {
        output.append(opening.map { bytes[$0] } ?? [])
      } else {
        // Before the line break that ends the interior; without one, after its last comment, on a new line.
        let pieces = pieces(of: bytes, in: tail.lowerBound..<braces.close)
        let lineBreak = pieces.last { $0.kind == .lineBreak }?.range.lowerBound
        insertion = lineBreak ?? braces.close
        let end = lineBreak ?? pieces.last { $0.kind == .comment }?.range.upperBound ?? tail.lowerBound
        output.append(bytes[tail.lowerBound..<end], endsInLineComment: endsInLineComment(bytes, tail.lowerBound..<end))
      }
    }
    for (index, member) in added.enumerated() {
      if style.lines {
        output.append(style.format.newline + style.indentation)
      } else if lastKept != nil || index > 0 {
        output.append(style.format.space)
      }
      var text: [UInt8] = []
      JSONValue.writeString(member.key.text, to: &text)
      output.append(text + style.format.colon)
      output.append(value(of: member, style: style, lineIndentation: style.lines ? style.indentation : nil))
      if index < added.count - 1 || style.trailingComma { output.append(Array(",".utf8)) }
    }
    if !added.isEmpty, lastKept == nil, style.lines, insertion == braces.close { output.append(style.format.newline) }
    output.append(bytes[insertion...])
    return output.bytes
  }

  /// Text being written, which knows whether it ends in a `//` comment: what follows then starts on a new line,
  /// rather than join the comment.
  private struct Output {
    let newline: [UInt8]
    var bytes: [UInt8] = []
    var inLineComment = false

    mutating func append(_ text: some Collection<UInt8>, endsInLineComment: Bool = false) {
      guard let first = text.first else { return }
      if inLineComment, first != 0x0A, first != 0x0D { bytes += newline }
      bytes += text
      inLineComment = endsInLineComment
    }
  }

  /// Whether the whitespace and comments in `range` end in a `//` comment.
  private static func endsInLineComment(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
    pieces(of: bytes, in: range).last.map { isLineComment($0, in: bytes) } ?? false
  }

  private static func isLineComment(_ piece: Piece, in bytes: [UInt8]) -> Bool {
    piece.kind == .comment && bytes[piece.range.lowerBound + 1] == UInt8(ascii: "/")
  }

  /// `member`'s value, in `style`: its containers on lines of their own, indented a level beyond `lineIndentation`,
  /// or on one line when the member is not on a line of its own.
  private static func value(of member: SettingsDocument.Member, style: Style, lineIndentation: [UInt8]?) -> [UInt8] {
    if let text = member.text { return Array(text.utf8) }
    var format = style.format
    if lineIndentation == nil { format.unit = nil }
    var output: [UInt8] = []
    member.value.write(to: &output, format: format, indent: lineIndentation ?? [])
    return output
  }

  // MARK: - Reading the layout

  private static func entries(
    in bytes: [UInt8], braces: SettingsDocument.Braces, spans: [JSONParser.MemberSpan]
  ) -> [Entry] {
    var entries: [Entry] = []
    var previousEnd = braces.open + 1
    for span in spans {
      entries.append(entry(of: span, after: previousEnd, in: bytes))
      previousEnd = entries[entries.count - 1].end
    }
    return entries
  }

  /// The entry of the member at `spans[index]`, looked at alone: what precedes it depends only on where the member
  /// before it ends.
  private static func entry(at index: Int, of spans: [JSONParser.MemberSpan], in bytes: [UInt8], open: Int) -> Entry {
    let previousEnd = index == 0 ? open + 1 : trail(of: spans[index - 1], in: bytes).end
    return entry(of: spans[index], after: previousEnd, in: bytes)
  }

  /// The entry of the member at `span`, whose region cannot start before `previousEnd`, where the member before it
  /// (or the object's `{`) ends.
  private static func entry(of span: JSONParser.MemberSpan, after previousEnd: Int, in bytes: [UInt8]) -> Entry {
    let before = pieces(of: bytes, in: previousEnd..<span.keyStart)
    var start = span.keyStart
    var indentation: Range<Int>?
    if let keyLine = before.lastIndex(where: { $0.kind == .lineBreak }) {
      if before[(keyLine + 1)...].allSatisfy({ $0.kind == .space }) {
        indentation = before[keyLine].range.upperBound..<span.keyStart
      }
      // The lines right above, each holding comments and nothing else, belong to the member.
      var first = keyLine
      while let previous = before[..<first].lastIndex(where: { $0.kind == .lineBreak }),
        before[(previous + 1)..<first].contains(where: { $0.kind == .comment }),
        before[(previous + 1)..<first].allSatisfy({ $0.kind != .lineBreak })
      {
        first = previous
      }
      start = before[first].range.lowerBound
    } else if let comment = before.first(where: { $0.kind == .comment }) {
      start = comment.range.lowerBound
    }
    let trail = trail(of: span, in: bytes)
    return Entry(
      span: span, gap: previousEnd..<start, start: start, comma: trail.comma, end: trail.end,
      indentation: indentation, endsInLineComment: trail.endsInLineComment)
  }

  /// What follows a member's value: the comma, if one does, and the end of what belongs to it on its line (comments,
  /// when the line ends before anything else starts).
  private static func trail(
    of span: JSONParser.MemberSpan, in bytes: [UInt8]
  ) -> (comma: Int?, end: Int, endsInLineComment: Bool) {
    let next = structureAfter(span.valueEnd, in: bytes)
    let comma = bytes[next] == UInt8(ascii: ",") ? next : nil
    let trailStart = comma.map { $0 + 1 } ?? span.valueEnd
    let after = pieces(of: bytes, in: trailStart..<structureAfter(trailStart, in: bytes))
    guard let lineEnd = after.firstIndex(where: { $0.kind == .lineBreak }),
      let comment = after[..<lineEnd].last(where: { $0.kind == .comment })
    else { return (comma, trailStart, false) }
    return (comma, comment.range.upperBound, isLineComment(comment, in: bytes))
  }

  /// The style of a file whose last member is `last`, one of `count`.
  private static func style(of bytes: [UInt8], braces: SettingsDocument.Braces, last: Entry?, count: Int) -> Style {
    var style = Style()
    style.format.newline = newline(of: bytes)
    guard let last else {
      // No member to learn from: the indentation of a comment on a line of its own inside the object, if any.
      let interior = pieces(of: bytes, in: (braces.open + 1)..<braces.close)
      for (index, piece) in interior.enumerated() where piece.kind == .lineBreak {
        // A line holds spaces and comments only: the spaces before its first comment are its indentation.
        let line = interior[(index + 1)...].prefix { $0.kind != .lineBreak }
        if let comment = line.first(where: { $0.kind == .comment }) {
          style.indentation = Array(bytes[piece.range.upperBound..<comment.range.lowerBound])
          break
        }
      }
      style.format.unit = style.indentation.isEmpty ? JSONFormat.pretty.unit : style.indentation
      return style
    }
    style.trailingComma = last.comma != nil
    let colon = bytes[last.span.keyEnd..<last.span.valueStart]
    if colon.filter({ $0 == UInt8(ascii: ":") }).count == 1, colon.allSatisfy({ $0 == UInt8(ascii: ":") || $0 == 0x20 })
    {
      style.format.colon = Array(colon)
    }
    if let indentation = last.indentation {
      style.indentation = Array(bytes[indentation])
      style.format.unit = style.indentation.isEmpty ? JSONFormat.pretty.unit : style.indentation
    } else {
      style.lines = false
      style.format.unit = nil
      // What separates two members (the first one's gap is what follows `{`).
      style.format.space = count > 1 && isBlank(bytes[last.gap]) ? Array(bytes[last.gap]) : Array(" ".utf8)
    }
    return style
  }

  /// The pieces of the whitespace and comments in `range`.
  private static func pieces(of bytes: [UInt8], in range: Range<Int>) -> [Piece] {
    var pieces: [Piece] = []
    var index = range.lowerBound
    while index < range.upperBound {
      let start = index
      let kind: Piece.Kind
      switch bytes[index] {
      case 0x0D where index + 1 < range.upperBound && bytes[index + 1] == 0x0A:
        index += 2
        kind = .lineBreak
      case 0x0A, 0x0D:
        index += 1
        kind = .lineBreak
      case 0x20, 0x09:
        while index < range.upperBound, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        kind = .space
      default:
        // The text parsed: anything else here starts a comment, which ends within the range.
        index = min(JSONParser.commentEnd(in: bytes, at: index) ?? range.upperBound, range.upperBound)
        kind = .comment
      }
      pieces.append(Piece(kind: kind, range: start..<index))
    }
    return pieces
  }

  /// A piece of whitespace or a comment.
  private struct Piece {
    enum Kind { case space, lineBreak, comment }
    let kind: Kind
    let range: Range<Int>
  }

  /// The offset of the first byte at or after `offset` that is not whitespace or in a comment.
  private static func structureAfter(_ offset: Int, in bytes: [UInt8]) -> Int {
    var index = offset
    while index < bytes.count {
      if isWhitespace(bytes[index]) {
        index += 1
      } else if let end = JSONParser.commentEnd(in: bytes, at: index), end >= 0 {
        index = end
      } else {
        break
      }
    }
    return index
  }

  /// What ends the file's lines: `\r\n` when its first line ends so, else `\n`.
  private static func newline(of bytes: [UInt8]) -> [UInt8] {
    guard let first = bytes.firstIndex(of: 0x0A), first > 0, bytes[first - 1] == 0x0D else { return [0x0A] }
    return [0x0D, 0x0A]
  }

  private static func hasComment(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.contains(UInt8(ascii: "/")) }

  private static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.allSatisfy(isWhitespace) }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }
}
