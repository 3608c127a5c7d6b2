/// JSON numbers as JSON Schema compares them: by their mathematical value, whether written as an integer (`5`,
/// ``JSONValue/int(_:)``) or with a fraction (`5.0`, ``JSONValue/double(_:)``), exactly (an `Int` near `Int.max` is
/// not rounded to a `Double` to be compared), and `multipleOf` in decimal, as the numbers are written: 0.0075 is a
/// multiple of 0.0001, which binary floating point would deny.
enum SchemaNumbers {
  /// Whether `value` is a number.
  static func isNumber(_ value: JSONValue) -> Bool {
    switch value {
    case .int, .double: true
    default: false
    }
  }

  /// Whether `value` is a number with no fractional part: JSON Schema's "integer", which 1.0 is.
  static func isInteger(_ value: JSONValue) -> Bool {
    switch value {
    case .int: true
    case .double(let number): number == number.rounded(.towardZero)
    default: false
    }
  }

  /// How two numbers compare: -1, 0 or 1; nil when one of them is no number.
  static func compare(_ left: JSONValue, _ right: JSONValue) -> Int? {
    switch (left, right) {
    case (.int(let left), .int(let right)): left == right ? 0 : (left < right ? -1 : 1)
    case (.double(let left), .double(let right)): left == right ? 0 : (left < right ? -1 : 1)
    case (.int(let left), .double(let right)): compare(left, right)
    case (.double(let left), .int(let right)): -compare(right, left)
    default: nil
    }
  }

  /// How the integer `left` compares with `right`, exactly.
  private static func compare(_ left: Int, _ right: Double) -> Int {
    if right >= 0x1p63 { return -1 }
    if right < -0x1p63 { return 1 }
    let whole = right.rounded(.towardZero)  // within Int's range: exact
    let integer = Int(whole)
    if left != integer { return left < integer ? -1 : 1 }
    let fraction = right - whole
    return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
  }

  /// Whether two values are equal as JSON Schema's `enum` and `const` compare them: numbers by their value (1 and
  /// 1.0 are equal), strings by their Unicode scalars, arrays element by element, objects member by member.
  static func equal(_ left: JSONValue, _ right: JSONValue) -> Bool {
    switch (left, right) {
    case (.int, _), (.double, _):
      return compare(left, right) == 0
    case (.array(let left), .array(let right)):
      return left.count == right.count && zip(left, right).allSatisfy { equal($0, $1) }
    case (.object(let left), .object(let right)):
      return left.count == right.count
        && left.allSatisfy { key, value in right[key].map { equal(value, $0) } ?? false }
    default:
      return left == right
    }
  }

  /// A number as a decimal: `significand` × 10^`exponent`, its sign left out, with no trailing zeros in the
  /// significand; a `Double` by the shortest digits that read back as it (which are the digits written, for a number
  /// written with at most 15 significant digits).
  struct Decimal: Sendable, Equatable {
    let significand: UInt64
    let exponent: Int

    init?(_ value: JSONValue) {
      switch value {
      case .int(let number): self.init(significand: UInt64(number.magnitude), exponent: 0)
      case .double(let number): self.init(number)
      default: return nil
      }
    }

    init(significand: UInt64, exponent: Int) {
      var (significand, exponent) = (significand, exponent)
      while significand != 0, significand % 10 == 0 {
        significand /= 10
        exponent += 1
      }
      self.significand = significand
      self.exponent = significand == 0 ? 0 : exponent
    }

    /// From `Double.description`, which writes the shortest digits that read back: "0.0075", "1e-08",
    /// "1.2391239123e+10" (at most 17 significant digits: they fit a `UInt64`).
    private init(_ number: Double) {
      let text = number.magnitude.description
      let parts = text.split(separator: "e", maxSplits: 1)
      let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
      let fraction = mantissa.count > 1 ? mantissa[1] : ""
      let digits = (mantissa[0] + fraction).drop { $0 == "0" }
      self.init(
        significand: UInt64(digits) ?? 0, exponent: (parts.count > 1 ? Int(parts[1]) ?? 0 : 0) - fraction.count)
    }

    /// Whether `value` (this decimal's magnitude sign aside) is a whole multiple of `divisor`, exactly:
    /// a × 10^m / (b × 10^n) is whole when b divides a × 10^(m-n) (m ≥ n), or b × 10^(n-m) divides a.
    func isMultiple(of divisor: Decimal) -> Bool {
      let (a, b) = (significand, divisor.significand)
      if a == 0 { return true }
      let shift = exponent - divisor.exponent
      if shift >= 0 {
        // b must divide a × 10^shift: what b has beyond a's share must be made of 2s and 5s, at most shift of each.
        var rest = b / Self.greatestCommonDivisor(a, b)
        var (twos, fives) = (0, 0)
        while rest % 2 == 0 {
          rest /= 2
          twos += 1
        }
        while rest % 5 == 0 {
          rest /= 5
          fives += 1
        }
        return rest == 1 && twos <= shift && fives <= shift
      }
      // b × 10^-shift must divide a, which it cannot once it is larger.
      var factor = b
      for _ in 0 ..< -shift {
        let (product, overflow) = factor.multipliedReportingOverflow(by: 10)
        if overflow || product > a { return false }
        factor = product
      }
      return a % factor == 0
    }

    private static func greatestCommonDivisor(_ first: UInt64, _ second: UInt64) -> UInt64 {
      var (a, b) = (first, second)
      while b != 0 { (a, b) = (b, a % b) }
      return a
    }
  }
}
