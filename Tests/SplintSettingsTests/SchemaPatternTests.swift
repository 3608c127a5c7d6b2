import Foundation
import Testing

@testable import SplintSettings

/// `SchemaPattern`: ECMA-262's interoperable subset, matched by a Thompson NFA in time linear in the text.
@Suite struct SchemaPatternTests {
  /// Whether `pattern` matches `text`; the pattern must compile.
  func matches(_ pattern: String, _ text: String) throws -> Bool {
    try SchemaPattern(pattern).matches(text)
  }

  @Test("literals, '.', anchors and alternation match as ECMA-262 has them, anywhere in the text")
  func basics() throws {
    #expect(try matches("abc", "xxabcxx"))
    #expect(try !matches("abc", "ab"))
    #expect(try matches("^abc$", "abc"))
    #expect(try !matches("^abc$", "abc\n"), "$ is the end of the text, not of a line")
    #expect(try !matches("^abc", "xabc"))
    #expect(try matches("a.c", "abc"))
    #expect(try !matches("a.c", "a\nc"), ". reads no line terminator")
    #expect(try !matches("a.c", "a\u{2028}c"))
    #expect(try matches("^(cat|dog)s?$", "dogs"))
    #expect(try !matches("^(cat|dog)s?$", "cow"))
    #expect(try matches("^(?:a|)$", ""), "an empty branch")
    #expect(try matches("", "anything"), "the empty pattern matches every text")
    #expect(try matches("^(?<word>ab)+$", "abab"), "a named group is a group")
    #expect(try matches("^🐲*$", "🐲🐲"), "scalars, not UTF-16 units")
    #expect(try matches("^.$", "🐲"))
    #expect(try matches("a}b]c", "a}b]c"), "} and ] alone are themselves")
    #expect(try matches("^a{,2}$", "a{,2}"), "a { that starts no count is itself")
    #expect(try matches("x{1", "x{1"))
  }

  @Test("quantifiers: * + ? and counts, lazy ones matching the same texts")
  func quantifiers() throws {
    #expect(try matches("^a*$", ""))
    #expect(try matches("^a+$", "aaa"))
    #expect(try !matches("^a+$", ""))
    #expect(try matches("^ab?c$", "ac"))
    #expect(try matches("^a{3}$", "aaa"))
    #expect(try !matches("^a{3}$", "aa"))
    #expect(try !matches("^a{3}$", "aaaa"))
    #expect(try matches("^a{2,}$", "aaaaa"))
    #expect(try !matches("^a{2,}$", "a"))
    #expect(try matches("^a{2,4}$", "aaaa"))
    #expect(try !matches("^a{2,4}$", "aaaaa"))
    #expect(try matches("^a{0,1}$", ""))
    #expect(try matches("^a*?b+?c??d{1,2}?$", "aabbdd"))
    #expect(try matches("^(a*)*$", "aaa"), "a loop that can match nothing ends")
    #expect(try matches("^(|a)+$", "aa"))
    #expect(try matches("^(a|ab)(c|bcd)(d*)$", "abcd"))
  }

  @Test("classes, ranges, negation and the class escapes")
  func classes() throws {
    #expect(try matches("^[abc]+$", "cab"))
    #expect(try !matches("^[abc]$", "d"))
    #expect(try matches("^[a-z0-9_-]+$", "a-b_9"))
    #expect(try matches("^[^a-z]$", "A"))
    #expect(try !matches("^[^a-z]$", "q"))
    #expect(try !matches("[]", "a"), "[] matches nothing")
    #expect(try matches("^[^]$", "\n"), "[^] matches anything")
    #expect(try matches("^[-a]$", "-"))
    #expect(try matches("^[a-]$", "-"))
    #expect(try matches(#"^[\d\s]+$"#, "1 2\t3"))
    #expect(try matches(#"^[\]\\\-]+$"#, #"]\-"#))
    #expect(try matches(#"^[\b]$"#, "\u{08}"), "[\\b] is a backspace")
    #expect(try matches(#"^\d+$"#, "0123"))
    #expect(try !matches(#"^\d$"#, "٣"), "\\d is ASCII digits")
    #expect(try matches(#"^\D$"#, "٣"))
    #expect(try matches(#"^\w+$"#, "a_Z9"))
    #expect(try !matches(#"^\w$"#, "é"), "\\w is ASCII word characters")
    #expect(try matches(#"^\W$"#, "é"))
    #expect(try matches(#"^\s+$"#, " \t\n\u{0B}\u{0C}\r\u{A0}\u{FEFF}\u{2003}\u{3000}\u{2029}"))
    #expect(try !matches(#"^\s$"#, "a"))
    #expect(try matches(#"^\S$"#, "a"))
    #expect(try matches(#"^[\D]$"#, "x"))
    #expect(try matches(#"^[\W\S]$"#, "x"))
  }

  @Test("escapes: control characters, hexadecimal and Unicode, escaped punctuation")
  func escapes() throws {
    #expect(try matches(#"^\t\n\v\f\r$"#, "\t\n\u{0B}\u{0C}\r"))
    #expect(try matches(#"^\0$"#, "\0"))
    #expect(try matches(#"^\cC\cc$"#, "\u{03}\u{03}"))
    #expect(try matches(#"^\x41\u0042\u{1F409}$"#, "AB🐉"))
    #expect(try matches(#"^\uD83D\uDC32$"#, "🐲"), "a surrogate pair is one scalar")
    #expect(try matches(#"^\u00e9$"#, "é"))
    #expect(try matches(#"^\.\*\+\?\(\)\[\]\{\}\|\/\$\^\\-$"#, #".*+?()[]{}|/$^\-"#))
    #expect(try matches(#"^\é$"#, "é"), "an escaped character that is no escape is itself")
  }

  @Test("Unicode's general categories: \\p{…} and \\P{…}, by short and long names and aliases, in classes too")
  func generalCategories() throws {
    #expect(try matches(#"^\p{Letter}+$"#, "Hello"))
    #expect(try matches(#"^\p{Letter}+$"#, "π"))
    #expect(try !matches(#"^\p{Letter}+$"#, "123"))
    #expect(try matches(#"^\p{L}\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}$"#, "aBcǅʰª"))
    #expect(try matches(#"^\p{digit}+$"#, "৪২"))
    #expect(try matches(#"^\p{Nd}\p{Decimal_Number}$"#, "٣4"))
    #expect(try !matches(#"^\p{Nd}$"#, "a"))
    #expect(try matches(#"^\P{L}+$"#, "12 !"))
    #expect(try !matches(#"^\P{L}$"#, "é"))
    #expect(try matches(#"^\p{gc=Lu}\p{General_Category=Zs}$"#, "A\u{3000}"))
    #expect(try matches(#"^[\p{L}\d_]+$"#, "é_9"))
    #expect(try !matches(#"^[^\p{L}\d]$"#, "é"))
    #expect(try !matches(#"^[^\p{L}\d]$"#, "7"))
    #expect(try matches(#"^[^\p{L}\d]$"#, "-"))
    #expect(try matches(#"^[\P{L}]$"#, "1"))
    #expect(try matches(#"^\p{LC}\p{Cased_Letter}$"#, "aB"))
    #expect(try !matches(#"^\p{LC}$"#, "ª"), "an other letter is not cased")
    #expect(try matches(#"^\p{P}\p{punct}\p{S}\p{Z}\p{C}\p{M}\p{N}\p{Combining_Mark}$"#, "!,+ \u{0}\u{301}5\u{300}"))
    #expect(try matches(#"^\p{Cn}\p{Co}\p{Cf}\p{Cc}\p{cntrl}$"#, "\u{378}\u{E000}\u{200B}\u{7}\u{7F}"))
    #expect(try matches(#"^\p{Pc}\p{Pd}\p{Ps}\p{Pe}\p{Pi}\p{Pf}\p{Po}$"#, "_-()«»!"))
    #expect(try matches(#"^\p{Sm}\p{Sc}\p{Sk}\p{So}\p{Zs}\p{Zl}\p{Zp}$"#, "+$^© \u{2028}\u{2029}"))
    #expect(try matches(#"^\p{Mn}\p{Mc}\p{Me}\p{Nl}\p{No}$"#, "\u{301}\u{903}\u{20DD}Ⅻ½"))
    #expect(try matches(#"^\p{Other}\p{Mark}\p{Number}\p{Punctuation}\p{Symbol}\p{Separator}$"#, "\u{1}\u{301}1.+ "))
  }

  @Test("word boundaries")
  func wordBoundaries() throws {
    #expect(try matches(#"\bcat\b"#, "a cat sat"))
    #expect(try !matches(#"\bcat\b"#, "concatenate"))
    #expect(try matches(#"\Bcat\B"#, "concatenate"))
    #expect(try matches(#"^\b"#, "a"))
    #expect(try !matches(#"^\b"#, " "))
  }

  @Test("what the matcher has not is refused when the pattern is made, never matched some other way")
  func unsupported() {
    let cases: [(String, Int, String)] = [
      (#"(a)\1"#, 3, #"backreferences (\1) are not supported"#),
      (#"(?<n>a)\k<n>"#, 7, #"named backreferences (\k<…>) are not supported"#),
      ("a(?=b)", 1, "lookahead (?=…) is not supported"),
      ("a(?!b)", 1, "lookahead (?!…) is not supported"),
      ("(?<=a)b", 0, "lookbehind (?<=…) is not supported"),
      ("(?<!a)b", 0, "lookbehind (?<!…) is not supported"),
      (#"\p{Script=Greek}"#, 0, #"\p{Script=Greek}: of Unicode's properties, only General_Category is supported"#),
      (#"x\P{sc=Grek}"#, 1, #"\p{sc=Grek}: of Unicode's properties, only General_Category is supported"#),
      (
        #"\p{Alphabetic}"#, 0,
        #"\p{Alphabetic} names no general category (L, Lu, Letter, Nd, digit, ...), the only Unicode properties supported"#
      ),
      (
        #"[\p{gc=Letters}]"#, 1,
        #"\p{gc=Letters} names no general category (L, Lu, Letter, Nd, digit, ...), the only Unicode properties supported"#
      ),
    ]
    for (pattern, offset, message) in cases {
      #expect(throws: SchemaPatternError(.unsupported, at: offset, message), "\(pattern)") {
        try SchemaPattern(pattern)
      }
    }
  }

  @Test("malformed patterns are refused with where and why")
  func invalid() throws {
    let cases: [(String, Int, String)] = [
      ("a)", 1, "')' closes no group"),
      ("(a", 0, "'(' is not closed"),
      ("[a", 0, "'[' is not closed"),
      ("*a", 0, "'*' has nothing to repeat"),
      ("a|+", 2, "'+' has nothing to repeat"),
      ("{2}", 0, "a count {…} has nothing to repeat"),
      ("a**", 2, "a quantifier follows a quantifier (nothing to repeat)"),
      ("a{2}{3}", 4, "a quantifier follows a quantifier (nothing to repeat)"),
      ("a???", 3, "a quantifier follows a quantifier (nothing to repeat)"),
      ("^*", 0, "an anchor or word boundary cannot be repeated"),
      (#"\b+"#, 0, "an anchor or word boundary cannot be repeated"),
      ("a{3,2}", 1, "{3,2} counts down: its numbers are out of order"),
      ("[z-a]", 1, "the range z-a is out of order"),
      (#"[\d-z]"#, 1, #"a range in […] must be between two characters, not a class such as \d"#),
      ("a\\", 1, "the pattern ends with a lone backslash"),
      (#"\c1"#, 0, #"\c must be followed by a letter"#),
      (#"\xZZ"#, 0, #"\x must be followed by 2 hexadecimal digits"#),
      (#"\u12"#, 0, #"\u must be followed by 4 hexadecimal digits"#),
      (#"\u{110000}"#, 0, #"\u{…} must hold the hexadecimal number of a Unicode scalar"#),
      (#"\u{}"#, 0, #"\u{…} must hold the hexadecimal number of a Unicode scalar"#),
      (#"\uD800"#, 0, #"\ud800 is a lone surrogate, which no text holds"#),
      (#"\uD800\u0041"#, 0, #"\ud800 is a lone surrogate, which no text holds"#),
      (#"\a"#, 0, #"\a is not an escape"#),
      (#"[\B]"#, 1, #"\B is not an escape"#),
      ("(?i:a)", 0, "'(?' must start (?:…) or (?<name>…)"),
      ("(?<1>a)", 3, "a group name must be (?<name>…)"),
      ("(?<a", 4, "a group name must be (?<name>…)"),
      (#"\pL"#, 0, #"\p and \P must be followed by {name}"#),
      (#"\p{L"#, 0, #"\p{ is not closed"#),
    ]
    for (pattern, offset, message) in cases {
      #expect(throws: SchemaPatternError(.invalid, at: offset, message), "\(pattern)") { try SchemaPattern(pattern) }
    }
    let error = SchemaPatternError(.invalid, at: 1, "')' closes no group")
    #expect(error.description == "at character 2, ')' closes no group")
  }

  @Test("bounds: the pattern's length, its counts and its expanded states, and how deep groups nest")
  func bounds() throws {
    #expect(throws: SchemaPatternError(.tooLarge, at: 1000, "the pattern is longer than 1000 characters")) {
      try SchemaPattern(String(repeating: "a", count: 1001))
    }
    _ = try SchemaPattern(String(repeating: "a", count: 1000))
    #expect(throws: SchemaPatternError(.tooLarge, at: 1, "a count above 1000 in {…}")) { try SchemaPattern("a{1001}") }
    #expect(throws: SchemaPatternError(.tooLarge, at: 1, "a count above 1000 in {…}")) {
      try SchemaPattern("a{1,99999999999999999999}")
    }
    #expect(try matches("^a{1000}$", String(repeating: "a", count: 1000)))
    let tooMany = SchemaPatternError(
      .tooLarge, at: 0,
      "the pattern expands to more than 2000 states (counted repetitions multiply); make it simpler")
    #expect(throws: tooMany) { try SchemaPattern("(a{1000}){1000}") }
    #expect(throws: tooMany) { try SchemaPattern("((((a{1000}){1000}){1000}){1000}){1000}") }
    #expect(throws: tooMany) { try SchemaPattern("(a|b){1000}") }
    #expect(throws: tooMany) { try SchemaPattern("(a{999}|b{999}){2}") }
    #expect(throws: tooMany) { try SchemaPattern("(a{1000}){2,}") }
    let deep = String(repeating: "(", count: 101) + "a" + String(repeating: ")", count: 101)
    #expect(throws: SchemaPatternError(.tooLarge, at: 100, "groups nest more than 100 deep")) {
      try SchemaPattern(deep)
    }
    #expect(try matches(String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100), "a"))
  }

  /// Patterns built to make a backtracking engine take exponential time finish in time linear in the text here (the
  /// test checks their results, never a time, which it prints).
  @Test("patterns that make backtracking engines take exponential time are linear here")
  func pathologicalPatterns() throws {
    let text = String(repeating: "a", count: 10_000) + "b"
    let start = ContinuousClock.now
    #expect(try !matches("^(a+)+$", text))
    #expect(try !matches("^(a|aa)+$", text))
    #expect(try !matches("^(a|a?)+$", text))
    #expect(try !matches("^(.*a){20}$", text))
    #expect(try matches("(a+)+b", text))
    #expect(try !matches("^(a?){500}a{500}b$", text))
    print("SchemaPatternTests: six pathological patterns against 10,001 characters in \(ContinuousClock.now - start)")
  }

  @Test func descriptionIsTheSource() throws {
    #expect(try SchemaPattern("^a+$").description == "^a+$")
    #expect(try SchemaPattern("^a+$") == SchemaPattern("^a+$"))
  }
}
