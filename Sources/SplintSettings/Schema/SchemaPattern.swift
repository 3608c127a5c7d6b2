/// A JSON Schema `pattern`: a regular expression in the subset of ECMA-262 that JSON Schema recommends for
/// interoperability (json-schema.org, "Regular Expressions"), matched with a guaranteed linear-time bound, so that a
/// pattern in a fleet's schema cannot stall every machine that checks a value against it.
///
/// What it reads, over Unicode scalars (as ECMA-262's `u` flag does): literal characters; `.` (any but a line
/// terminator); classes `[abc]`, `[a-z]`, `[^…]`; `\d \w \s \D \W \S` (ASCII digits and word characters, as
/// ECMA-262 has them; `\s` is its white space and line terminators); `^` and `$` (the start and end of the text: no
/// multiline mode); `\b` and `\B`; groups `(…)`, `(?:…)`, `(?<name>…)`; alternation `|`; quantifiers `* + ?
/// {n} {n,} {n,m}`, lazy ones (`*?`, ...) too, which match the same texts; escapes `\t \n \v \f \r \0 \cX \xHH \uHHHH
/// \u{H…}` and escaped punctuation. A pattern matches a text when it matches anywhere in it, as JSON Schema says.
///
/// It also reads Unicode's general categories, since JSON Schema's patterns have Unicode semantics: `\p{L}`,
/// `\p{Letter}`, `\p{Nd}`, `\p{digit}`, `\P{…}`, `\p{gc=Lu}`, in classes too.
///
/// What it refuses when it is made, with a ``SchemaPatternError``: backreferences (`\1`, `\k<name>`), lookahead and
/// lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`), which no linear-time matcher has; other Unicode properties (scripts,
/// binary properties such as `Alphabetic`); malformed patterns; and patterns past the bounds below.
///
/// **How the cost is bounded.** The pattern is compiled to a program of at most ``maximumStates`` instructions (a
/// counted repetition such as `a{2,5}` is expanded, each count at most ``maximumRepetition``; the pattern itself at
/// most ``maximumLength`` scalars), which is run as a Thompson NFA (a Pike VM without captures): every instruction is
/// a state, and the matcher keeps the set of states it is in, never backtracking. Each scalar of the text moves
/// every state at most once, and each state is entered at most once per position, so matching costs at most
/// O(states × text length) steps, whatever the pattern and the text. `^(a+)+$` against 10,000 `a`s and a `b`, which a
/// backtracking engine takes 2^10,000 steps for, takes about 1 ms (a release build, on a loaded machine of 2 cores);
/// the worst a pattern can do, 2,000 states all live at once (`.{999}.{998}b`), takes about 1.2 s against 65,536
/// scalars, the most a fleet's value holds by default, and a few milliseconds against a setting of usual length.
package struct SchemaPattern: Sendable, Equatable, CustomStringConvertible {
  /// The longest pattern read, in Unicode scalars.
  package static let maximumLength = 1_000
  /// The most instructions a pattern's program may have, counted repetitions expanded.
  package static let maximumStates = 2_000
  /// The largest count of a counted repetition (`{n}`, `{n,m}`).
  package static let maximumRepetition = 1_000
  /// How deeply groups may nest.
  static let maximumNesting = 100

  /// The pattern as written.
  package let source: String
  private let program: [Instruction]
  private let sets: [ScalarSet]
  /// Whether each instruction reads a scalar: a thread that reaches one waits there, with nothing to follow.
  private let reads: [Bool]

  /// The pattern as written.
  package var description: String { source }

  /// Compiles `source`.
  ///
  /// - Throws: ``SchemaPatternError`` for a pattern that is not ECMA-262, uses what this matcher does not have, or is
  ///   past its bounds, with where in the pattern.
  package init(_ source: String) throws(SchemaPatternError) {
    self.source = source
    let scalars = Array(source.unicodeScalars)
    guard scalars.count <= Self.maximumLength else {
      throw SchemaPatternError(
        .tooLarge, at: Self.maximumLength, "the pattern is longer than \(Self.maximumLength) characters")
    }
    var parser = PatternParser(scalars)
    let tree = try parser.parse()
    let size = tree.size
    guard size < Self.maximumStates else {
      throw SchemaPatternError(
        .tooLarge, at: 0,
        "the pattern expands to more than \(Self.maximumStates) states (counted repetitions multiply); make it simpler")
    }
    var emitter = Emitter()
    emitter.emit(tree)
    emitter.program.append(.match)
    program = emitter.program
    sets = emitter.sets
    reads = program.map { instruction in
      switch instruction {
      case .scalar, .set: true
      case .split, .jump, .assertion, .match: false
      }
    }
  }

  /// Whether the pattern matches anywhere in `text`.
  package func matches(_ text: String) -> Bool {
    let input = Array(text.unicodeScalars)
    var current = StateSet(capacity: program.count)
    var next = StateSet(capacity: program.count)
    var stack: [Int] = []
    // Whether the scalar at a position is in each set, worked out once per position (`seen` holds the position + 1
    // it was worked out at): `.{900}` is one set, read by 900 states.
    var seen = [Int](repeating: 0, count: sets.count)
    var inSet = [Bool](repeating: false, count: sets.count)
    for position in 0...input.count {
      // A thread starts at every position: the pattern may match anywhere.
      if enter(0, at: position, of: input, into: &current, stack: &stack) { return true }
      guard position < input.count else { break }
      let scalar = input[position]
      for index in 0..<current.count {
        let state = current.states[index]
        let advances: Bool
        switch program[state] {
        case .scalar(let expected): advances = scalar == expected
        case .set(let set):
          if seen[set] != position + 1 {
            seen[set] = position + 1
            inSet[set] = sets[set].contains(scalar)
          }
          advances = inSet[set]
        case .split, .jump, .assertion, .match: advances = false
        }
        guard advances else { continue }
        if reads[state + 1] {
          _ = next.insert(state + 1)
        } else if enter(state + 1, at: position + 1, of: input, into: &next, stack: &stack) {
          return true
        }
      }
      swap(&current, &next)
      next.removeAll()
    }
    return false
  }

  /// Adds `state` and every state reached from it without reading a scalar (at `position`) to `states`; true when
  /// one of them is the match.
  private func enter(
    _ state: Int, at position: Int, of input: [Unicode.Scalar], into states: inout StateSet, stack: inout [Int]
  ) -> Bool {
    stack.append(state)
    while let state = stack.popLast() {
      guard states.insert(state) else { continue }
      switch program[state] {
      case .jump(let target):
        stack.append(target)
      case .split(let first, let second):
        stack.append(second)
        stack.append(first)
      case .assertion(let assertion):
        if assertion.holds(at: position, in: input) { stack.append(state + 1) }
      case .match:
        stack.removeAll()
        return true
      case .scalar, .set:
        break
      }
    }
    return false
  }
}

/// Why a pattern is refused, and where: ``offset`` counts Unicode scalars from the pattern's start.
package struct SchemaPatternError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of refusal.
  package enum Kind: Sendable, Equatable {
    /// ECMA-262 has it, but this matcher does not (backreferences, lookaround, `\p{…}`).
    case unsupported
    /// Not a regular expression ECMA-262 reads.
    case invalid
    /// Past the bounds on length, states or counts.
    case tooLarge
  }

  package let kind: Kind
  package let offset: Int
  package let message: String

  init(_ kind: Kind, at offset: Int, _ message: String) {
    self.kind = kind
    self.offset = offset
    self.message = message
  }

  package var description: String { "at character \(offset + 1), \(message)" }
}

// MARK: - Sets of scalars

/// A set of Unicode scalars: ranges of their values (sorted, disjoint, not adjacent) and general categories, or what
/// is in neither (`negated`, for `[^…]` with a `\p{…}` in it).
struct ScalarSet: Sendable, Hashable {
  private(set) var ranges: [ClosedRange<UInt32>]
  /// The general categories in the set, a bit each (see ``GeneralCategories``).
  private(set) var categories: UInt32
  private(set) var negated = false

  init(_ ranges: [ClosedRange<UInt32>], categories: UInt32 = 0) {
    let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
    var merged: [ClosedRange<UInt32>] = []
    for range in sorted {
      if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
        merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
      } else {
        merged.append(range)
      }
    }
    self.ranges = merged
    self.categories = categories
  }

  static let digits = ScalarSet([0x30...0x39])
  static let word = ScalarSet([0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
  /// ECMA-262's WhiteSpace and LineTerminator.
  static let space = ScalarSet([
    0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029, 0x202F...0x202F,
    0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
  ])
  /// What `.` matches: any scalar but a line terminator.
  static let dot = ScalarSet([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]).inverted

  /// Every scalar this set does not hold: the ranges between its ranges (surrogate values included: no text holds
  /// them), or, for a set with categories, the same set negated.
  var inverted: ScalarSet {
    guard categories == 0 else {
      var set = self
      set.negated.toggle()
      return set
    }
    var result: [ClosedRange<UInt32>] = []
    var start: UInt32 = 0
    for range in ranges {
      if range.lowerBound > start { result.append(start...(range.lowerBound - 1)) }
      start = range.upperBound &+ 1
    }
    if start <= 0x10FFFF { result.append(start...0x10FFFF) }
    return ScalarSet(result)
  }

  func contains(_ scalar: Unicode.Scalar) -> Bool {
    let found =
      rangesContain(scalar.value)
      || (categories != 0 && categories & GeneralCategories.bit(of: scalar.properties.generalCategory) != 0)
    return found != negated
  }

  private func rangesContain(_ value: UInt32) -> Bool {
    var low = 0
    var high = ranges.count
    while low < high {
      let middle = (low + high) / 2
      if ranges[middle].upperBound < value {
        low = middle + 1
      } else if ranges[middle].lowerBound > value {
        high = middle
      } else {
        return true
      }
    }
    return false
  }
}

/// Unicode's general categories as ECMA-262's `\p{…}` names them (the names and aliases of Unicode's
/// PropertyValueAliases for `gc`), a bit each.
enum GeneralCategories {
  /// Each category and its names, in the order of their bits.
  private static let categories: [(category: Unicode.GeneralCategory, names: [String])] = [
    (.control, ["Cc", "Control", "cntrl"]), (.format, ["Cf", "Format"]), (.unassigned, ["Cn", "Unassigned"]),
    (.privateUse, ["Co", "Private_Use"]), (.surrogate, ["Cs", "Surrogate"]),
    (.lowercaseLetter, ["Ll", "Lowercase_Letter"]), (.modifierLetter, ["Lm", "Modifier_Letter"]),
    (.otherLetter, ["Lo", "Other_Letter"]), (.titlecaseLetter, ["Lt", "Titlecase_Letter"]),
    (.uppercaseLetter, ["Lu", "Uppercase_Letter"]), (.spacingMark, ["Mc", "Spacing_Mark"]),
    (.enclosingMark, ["Me", "Enclosing_Mark"]), (.nonspacingMark, ["Mn", "Nonspacing_Mark"]),
    (.decimalNumber, ["Nd", "Decimal_Number", "digit"]), (.letterNumber, ["Nl", "Letter_Number"]),
    (.otherNumber, ["No", "Other_Number"]), (.connectorPunctuation, ["Pc", "Connector_Punctuation"]),
    (.dashPunctuation, ["Pd", "Dash_Punctuation"]), (.closePunctuation, ["Pe", "Close_Punctuation"]),
    (.finalPunctuation, ["Pf", "Final_Punctuation"]), (.initialPunctuation, ["Pi", "Initial_Punctuation"]),
    (.otherPunctuation, ["Po", "Other_Punctuation"]), (.openPunctuation, ["Ps", "Open_Punctuation"]),
    (.currencySymbol, ["Sc", "Currency_Symbol"]), (.modifierSymbol, ["Sk", "Modifier_Symbol"]),
    (.mathSymbol, ["Sm", "Math_Symbol"]), (.otherSymbol, ["So", "Other_Symbol"]),
    (.lineSeparator, ["Zl", "Line_Separator"]), (.paragraphSeparator, ["Zp", "Paragraph_Separator"]),
    (.spaceSeparator, ["Zs", "Space_Separator"]),
  ]

  /// The groups of categories (those whose short names start with the group's), by their names; `LC` is the cased
  /// letters.
  private static let groups: [(prefix: String, names: [String])] = [
    ("C", ["C", "Other"]), ("L", ["L", "Letter"]), ("M", ["M", "Mark", "Combining_Mark"]), ("N", ["N", "Number"]),
    ("P", ["P", "Punctuation", "punct"]), ("S", ["S", "Symbol"]), ("Z", ["Z", "Separator"]),
  ]

  private static let bits: [Unicode.GeneralCategory: UInt32] = Dictionary(
    uniqueKeysWithValues: categories.enumerated().map { ($0.element.category, UInt32(1) << $0.offset) })

  /// Every category.
  static let all = (UInt32(1) << categories.count) - 1

  /// The categories `name` names (exactly, as ECMA-262 matches them): one category (`Lu`, `Uppercase_Letter`), a
  /// group (`L`, `Letter`) or the cased letters (`LC`, `Cased_Letter`); nil for a name that is none.
  static func mask(named name: String) -> UInt32? {
    var mask: UInt32 = 0
    for (index, entry) in categories.enumerated() {
      let short = entry.names[0]
      let inGroup = groups.contains { $0.names.contains(name) && short.hasPrefix($0.prefix) }
      let cased = ["LC", "Cased_Letter"].contains(name) && ["Ll", "Lt", "Lu"].contains(short)
      if entry.names.contains(name) || inGroup || cased { mask |= UInt32(1) << index }
    }
    return mask == 0 ? nil : mask
  }

  /// The bit of `category`; none for a category this table does not know (a newer Unicode's).
  static func bit(of category: Unicode.GeneralCategory) -> UInt32 { bits[category] ?? 0 }
}

// MARK: - Parsing

/// What a pattern parses to.
private indirect enum PatternTree: Sendable {
  case scalar(Unicode.Scalar)
  case set(ScalarSet)
  case assertion(Assertion)
  case sequence([PatternTree])
  case alternatives([PatternTree])
  /// At least `minimum` times, at most `maximum` (without end when nil).
  case repetition(PatternTree, minimum: Int, maximum: Int?)

  /// How many instructions the tree compiles to, at most `Int.max / 4` (saturating, so that nested counts cannot
  /// overflow before they are refused).
  var size: Int {
    let cap = Int.max / 4
    switch self {
    case .scalar, .set, .assertion:
      return 1
    case .sequence(let parts):
      return parts.reduce(0) { min($0 + $1.size, cap) }
    case .alternatives(let branches):
      return min(branches.reduce(0) { min($0 + $1.size, cap) } + 2 * (branches.count - 1), cap)
    case .repetition(let tree, let minimum, let maximum):
      let size = tree.size
      let required = minimum.multipliedReportingOverflow(by: size)
      let optional: (partialValue: Int, overflow: Bool) =
        if let maximum { (maximum - minimum).multipliedReportingOverflow(by: size + 1) } else { (size + 2, false) }
      guard !optional.overflow, !required.overflow else { return cap }
      return min(required.partialValue, cap) + min(optional.partialValue, cap)
    }
  }
}

/// A test of the position between two scalars, which reads none.
private enum Assertion: Sendable, Equatable {
  case start, end, wordBoundary, notWordBoundary

  func holds(at position: Int, in input: [Unicode.Scalar]) -> Bool {
    switch self {
    case .start: return position == 0
    case .end: return position == input.count
    case .wordBoundary, .notWordBoundary:
      let before = position > 0 && ScalarSet.word.contains(input[position - 1])
      let after = position < input.count && ScalarSet.word.contains(input[position])
      return (before != after) == (self == .wordBoundary)
    }
  }
}

/// A recursive-descent parser of ECMA-262 patterns (the subset ``SchemaPattern`` reads), over Unicode scalars.
private struct PatternParser {
  let scalars: [Unicode.Scalar]
  var index = 0
  var depth = 0

  init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

  var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

  func peek(_ offset: Int) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }

  func error(_ kind: SchemaPatternError.Kind, _ message: String, at offset: Int? = nil) -> SchemaPatternError {
    SchemaPatternError(kind, at: offset ?? index, message)
  }

  mutating func parse() throws(SchemaPatternError) -> PatternTree {
    let tree = try parseAlternatives()
    if peek == ")" { throw error(.invalid, "')' closes no group") }
    return tree
  }

  /// Branches separated by `|`, up to a `)` or the end.
  mutating func parseAlternatives() throws(SchemaPatternError) -> PatternTree {
    var branches = [try parseSequence()]
    while peek == "|" {
      index += 1
      branches.append(try parseSequence())
    }
    return branches.count == 1 ? branches[0] : .alternatives(branches)
  }

  /// Quantified atoms, up to a `|`, a `)` or the end.
  mutating func parseSequence() throws(SchemaPatternError) -> PatternTree {
    var parts: [PatternTree] = []
    while let scalar = peek, scalar != "|", scalar != ")" {
      let start = index
      let atom = try parseAtom()
      parts.append(try parseQuantifier(of: atom, at: start))
    }
    return parts.count == 1 ? parts[0] : .sequence(parts)
  }

  /// The quantifier after `atom`, if one follows, applied to it.
  mutating func parseQuantifier(of atom: PatternTree, at start: Int) throws(SchemaPatternError) -> PatternTree {
    let bounds: (Int, Int?)
    switch peek {
    case "*":
      index += 1
      bounds = (0, nil)
    case "+":
      index += 1
      bounds = (1, nil)
    case "?":
      index += 1
      bounds = (0, 1)
    case "{":
      guard let counted = try parseCount() else { return atom }
      bounds = counted
    default:
      return atom
    }
    if case .assertion = atom {
      throw error(.invalid, "an anchor or word boundary cannot be repeated", at: start)
    }
    if peek == "?" { index += 1 }  // lazy: it matches the same texts
    if let next = peek, "*+?".unicodeScalars.contains(next) || (next == "{" && countFollows()) {
      throw error(.invalid, "a quantifier follows a quantifier (nothing to repeat)")
    }
    return .repetition(atom, minimum: bounds.0, maximum: bounds.1)
  }

  /// Whether `{n}`, `{n,}` or `{n,m}` starts at the index.
  func countFollows() -> Bool {
    var copy = self
    return (try? copy.parseCount()).flatMap { $0 } != nil
  }

  /// A counted quantifier at the index, or nil (the index unchanged) when `{` starts none: ECMA-262 (Annex B) then
  /// reads the `{` as itself.
  mutating func parseCount() throws(SchemaPatternError) -> (Int, Int?)? {
    let start = index
    index += 1  // {
    guard let minimum = parseNumber() else {
      index = start
      return nil
    }
    var maximum: Int? = minimum
    if peek == "," {
      index += 1
      maximum = parseNumber()
    }
    guard peek == "}" else {
      index = start
      return nil
    }
    index += 1
    for count in [minimum, maximum ?? 0] where count > SchemaPattern.maximumRepetition {
      throw error(.tooLarge, "a count above \(SchemaPattern.maximumRepetition) in {…}", at: start)
    }
    if let maximum, maximum < minimum {
      throw error(.invalid, "{\(minimum),\(maximum)} counts down: its numbers are out of order", at: start)
    }
    return (minimum, maximum)
  }

  /// Decimal digits at the index, as a number (saturating past any count allowed); nil when there are none.
  mutating func parseNumber() -> Int? {
    var number: Int?
    while let scalar = peek, ("0"..."9").contains(scalar) {
      number = min((number ?? 0) * 10 + Int(scalar.value - 0x30), SchemaPattern.maximumRepetition + 1)
      index += 1
    }
    return number
  }

  mutating func parseAtom() throws(SchemaPatternError) -> PatternTree {
    let start = index
    guard let scalar = peek else { throw error(.invalid, "the pattern ends where an atom should be") }
    index += 1
    switch scalar {
    case "^": return .assertion(.start)
    case "$": return .assertion(.end)
    case ".": return .set(.dot)
    case "(": return try parseGroup(at: start)
    case "[": return .set(try parseClass(at: start))
    case "\\":
      switch try parseEscape(inClass: false, at: start) {
      case .scalar(let scalar): return .scalar(scalar)
      case .set(let set): return .set(set)
      case .assertion(let assertion): return .assertion(assertion)
      }
    case "*", "+", "?":
      throw error(.invalid, "'\(scalar)' has nothing to repeat", at: start)
    case "{":
      index = start
      if countFollows() { throw error(.invalid, "a count {…} has nothing to repeat") }
      index += 1
      return .scalar(scalar)
    default:
      return .scalar(scalar)
    }
  }

  mutating func parseGroup(at start: Int) throws(SchemaPatternError) -> PatternTree {
    if peek == "?" {
      switch (peek(1), peek(2)) {
      case (":", _):
        index += 2
      case ("=", _), ("!", _):
        throw error(.unsupported, "lookahead (?\(peek(1) ?? "=")…) is not supported", at: start)
      case ("<", "="), ("<", "!"):
        throw error(.unsupported, "lookbehind (?<\(peek(2) ?? "=")…) is not supported", at: start)
      case ("<", _):
        index += 2
        let nameStart = index
        while let scalar = peek,
          scalar.properties.isAlphabetic || scalar == "_" || scalar == "$"
            || (index > nameStart && ("0"..."9").contains(scalar))
        {
          index += 1
        }
        guard index > nameStart, peek == ">" else { throw error(.invalid, "a group name must be (?<name>…)") }
        index += 1
      default:
        throw error(.invalid, "'(?' must start (?:…) or (?<name>…)", at: start)
      }
    }
    depth += 1
    guard depth <= SchemaPattern.maximumNesting else {
      throw error(.tooLarge, "groups nest more than \(SchemaPattern.maximumNesting) deep", at: start)
    }
    let inner = try parseAlternatives()
    depth -= 1
    guard peek == ")" else { throw error(.invalid, "'(' is not closed", at: start) }
    index += 1
    return inner
  }

  /// A class `[…]`, after its `[`.
  mutating func parseClass(at start: Int) throws(SchemaPatternError) -> ScalarSet {
    var negated = false
    if peek == "^" {
      negated = true
      index += 1
    }
    var ranges: [ClosedRange<UInt32>] = []
    var categories: UInt32 = 0
    while peek != "]" {
      let itemStart = index
      let low = try parseClassItem(at: start)
      if peek == "-", let after = peek(1), after != "]" {
        index += 1
        let high = try parseClassItem(at: start)
        guard case .scalar(let lowScalar) = low, case .scalar(let highScalar) = high else {
          throw error(.invalid, "a range in […] must be between two characters, not a class such as \\d", at: itemStart)
        }
        guard lowScalar.value <= highScalar.value else {
          throw error(.invalid, "the range \(lowScalar)-\(highScalar) is out of order", at: itemStart)
        }
        ranges.append(lowScalar.value...highScalar.value)
        continue
      }
      switch low {
      case .scalar(let scalar): ranges.append(scalar.value...scalar.value)
      case .set(let set):
        ranges += set.ranges
        categories |= set.categories
      case .assertion: break  // coverage:ignore — parseClassItem never gives an assertion
      }
    }
    index += 1  // ]
    let set = ScalarSet(ranges, categories: categories)
    return negated ? set.inverted : set
  }

  mutating func parseClassItem(at start: Int) throws(SchemaPatternError) -> Escape {
    guard let scalar = peek else { throw error(.invalid, "'[' is not closed", at: start) }
    let itemStart = index
    index += 1
    return scalar == "\\" ? try parseEscape(inClass: true, at: itemStart) : .scalar(scalar)
  }

  enum Escape {
    case scalar(Unicode.Scalar)
    case set(ScalarSet)
    case assertion(Assertion)
  }

  /// What follows a backslash (at `start`).
  mutating func parseEscape(inClass: Bool, at start: Int) throws(SchemaPatternError) -> Escape {
    guard let scalar = peek else { throw error(.invalid, "the pattern ends with a lone backslash", at: start) }
    index += 1
    switch scalar {
    case "d": return .set(.digits)
    case "D": return .set(ScalarSet.digits.inverted)
    case "w": return .set(.word)
    case "W": return .set(ScalarSet.word.inverted)
    case "s": return .set(.space)
    case "S": return .set(ScalarSet.space.inverted)
    case "t": return .scalar("\t")
    case "n": return .scalar("\n")
    case "v": return .scalar("\u{0B}")
    case "f": return .scalar("\u{0C}")
    case "r": return .scalar("\r")
    case "b": return inClass ? .scalar("\u{08}") : .assertion(.wordBoundary)
    case "B" where !inClass: return .assertion(.notWordBoundary)
    case "0" where !(peek.map { ("0"..."9").contains($0) } ?? false): return .scalar("\0")
    case "c":
      guard let letter = peek, letter.isASCII, letter.properties.isAlphabetic else {
        throw error(.invalid, "\\c must be followed by a letter", at: start)
      }
      index += 1
      return .scalar(Unicode.Scalar(UInt8(letter.value % 32)))
    case "x":
      return .scalar(try hexScalar(digits: 2, at: start))
    case "u":
      return .scalar(try parseUnicodeEscape(at: start))
    case "1"..."9":
      throw error(.unsupported, "backreferences (\\\(scalar)) are not supported", at: start)
    case "k":
      throw error(.unsupported, "named backreferences (\\k<…>) are not supported", at: start)
    case "p", "P":
      let mask = try parseProperty(at: start)
      return .set(ScalarSet([], categories: scalar == "p" ? mask : GeneralCategories.all & ~mask))
    default:
      // ECMA-262 (Annex B) reads an escaped character that is no escape as itself: \. \- \/ \$ ... but a letter or a
      // digit after a backslash is a mistake, which is said.
      if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
        throw error(.invalid, "\\\(scalar) is not an escape", at: start)
      }
      return .scalar(scalar)
    }
  }

  /// The general categories `{…}` names after `\p` or `\P`: a category's or a group's name, alone or after `gc=` or
  /// `General_Category=`. Other properties (scripts, binary properties such as `Alphabetic`) are not supported.
  mutating func parseProperty(at start: Int) throws(SchemaPatternError) -> UInt32 {
    guard peek == "{" else { throw error(.invalid, "\\p and \\P must be followed by {name}", at: start) }
    index += 1
    var text = ""
    while let scalar = peek, scalar != "}" {
      text.unicodeScalars.append(scalar)
      index += 1
    }
    guard peek == "}" else { throw error(.invalid, "\\p{ is not closed", at: start) }
    index += 1
    let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let shown = SchemaText.escaped(text)
    if parts.count == 2, !["gc", "General_Category"].contains(parts[0]) {
      throw error(
        .unsupported, "\\p{\(shown)}: of Unicode's properties, only General_Category is supported", at: start)
    }
    guard let mask = GeneralCategories.mask(named: parts[parts.count - 1]) else {
      throw error(
        .unsupported,
        """
        \\p{\(shown)} names no general category (L, Lu, Letter, Nd, digit, ...), the only Unicode properties \
        supported
        """, at: start)
    }
    return mask
  }

  /// `\uHHHH` (two of them for a surrogate pair) or `\u{H…}`, after the `u`.
  mutating func parseUnicodeEscape(at start: Int) throws(SchemaPatternError) -> Unicode.Scalar {
    if peek == "{" {
      index += 1
      var value: UInt32 = 0
      var digits = 0
      while let scalar = peek, let digit = scalar.hexDigitValue {
        value = min(value * 16 + UInt32(digit), 0x110000)
        digits += 1
        index += 1
      }
      guard digits > 0, peek == "}", let scalar = Unicode.Scalar(value) else {
        throw error(.invalid, "\\u{…} must hold the hexadecimal number of a Unicode scalar", at: start)
      }
      index += 1
      return scalar
    }
    let high = try hexValue(digits: 4, at: start)
    if (0xD800..<0xDC00).contains(high), peek == "\\", peek(1) == "u" {
      let resume = index
      index += 2
      if let low = try? hexValue(digits: 4, at: start), (0xDC00..<0xE000).contains(low),
        let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
      {
        return scalar
      }
      index = resume
    }
    guard let scalar = Unicode.Scalar(high) else {
      throw error(.invalid, "\\u\(String(high, radix: 16)) is a lone surrogate, which no text holds", at: start)
    }
    return scalar
  }

  mutating func hexScalar(digits: Int, at start: Int) throws(SchemaPatternError) -> Unicode.Scalar {
    // Two hexadecimal digits are always a scalar.
    Unicode.Scalar(try hexValue(digits: digits, at: start)) ?? "\0"
  }

  mutating func hexValue(digits: Int, at start: Int) throws(SchemaPatternError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<digits {
      guard let digit = peek?.hexDigitValue else {
        throw error(.invalid, "\\\(scalars[start + 1]) must be followed by \(digits) hexadecimal digits", at: start)
      }
      value = value * 16 + UInt32(digit)
      index += 1
    }
    return value
  }
}

extension Unicode.Scalar {
  /// The value of a hexadecimal digit, or nil.
  fileprivate var hexDigitValue: Int? {
    switch self {
    case "0"..."9": Int(value - 0x30)
    case "a"..."f": Int(value - 0x61 + 10)
    case "A"..."F": Int(value - 0x41 + 10)
    default: nil
    }
  }
}

// MARK: - The program

private enum Instruction: Sendable, Equatable {
  /// Reads this scalar.
  case scalar(Unicode.Scalar)
  /// Reads a scalar of this set (an index into the sets).
  case set(Int)
  /// Goes on at both.
  case split(Int, Int)
  case jump(Int)
  /// Goes on at the next instruction when the assertion holds, reading nothing.
  case assertion(Assertion)
  case match
}

/// Turns a tree into instructions.
private struct Emitter {
  var program: [Instruction] = []
  var sets: [ScalarSet] = []
  var setIndices: [ScalarSet: Int] = [:]

  mutating func emit(_ tree: PatternTree) {
    switch tree {
    case .scalar(let scalar):
      program.append(.scalar(scalar))
    case .set(let set):
      // One set for equal sets, so that a scalar is looked up in it once.
      let index = setIndices[set] ?? sets.count
      if index == sets.count {
        sets.append(set)
        setIndices[set] = index
      }
      program.append(.set(index))
    case .assertion(let assertion):
      program.append(.assertion(assertion))
    case .sequence(let parts):
      for part in parts { emit(part) }
    case .alternatives(let branches):
      // split(first, next); first; jump(end); next: split(second, ...) ... last; end:
      var jumps: [Int] = []
      for branch in branches.dropLast() {
        let split = program.count
        program.append(.split(split + 1, 0))
        emit(branch)
        jumps.append(program.count)
        program.append(.jump(0))
        program[split] = .split(split + 1, program.count)
      }
      emit(branches[branches.count - 1])
      for jump in jumps { program[jump] = .jump(program.count) }
    case .repetition(let tree, let minimum, let maximum):
      for _ in 0..<minimum { emit(tree) }
      guard let maximum else {
        // loop: split(body, end); body; jump(loop); end:
        let loop = program.count
        program.append(.split(loop + 1, 0))
        emit(tree)
        program.append(.jump(loop))
        program[loop] = .split(loop + 1, program.count)
        return
      }
      // Each optional copy may be skipped to the end: split(body, end); body; split(body, end); body; end:
      var splits: [Int] = []
      for _ in minimum..<maximum {
        splits.append(program.count)
        program.append(.split(program.count + 1, 0))
        emit(tree)
      }
      for split in splits { program[split] = .split(split + 1, program.count) }
    }
  }
}

/// A set of states, in the order they were added, cleared in constant time (a sparse set).
private struct StateSet {
  private(set) var states: [Int]
  private var positions: [Int]
  private(set) var count = 0

  init(capacity: Int) {
    states = Array(repeating: 0, count: capacity)
    positions = Array(repeating: 0, count: capacity)
  }

  /// Adds `state`; false when it was there.
  mutating func insert(_ state: Int) -> Bool {
    let position = positions[state]
    if position < count, states[position] == state { return false }
    positions[state] = count
    states[count] = state
    count += 1
    return true
  }

  mutating func removeAll() { count = 0 }
}
