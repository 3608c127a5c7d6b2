#if SplintFleet
  import Glibc
  import SplintSecrets

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A JSON value of an answer of the server, read from its bytes without copying its strings: each string is a range
  /// of the bytes until it is asked for, so that a secret (a KV field, a token) is decoded straight into storage that
  /// is wiped when freed, and never becomes a Swift `String`.
  struct VaultJSON {
    /// What the value is.
    enum Kind {
      case object([Member])
      case array([VaultJSON])
      case string
      case number
      case bool(Bool)
      case null
    }

    /// A member of an object: its name (decoded: names are never secrets) and value.
    struct Member {
      let name: String
      let value: VaultJSON
    }

    let kind: Kind
    /// Where the value is in the bytes, quotes included for a string: what ``raw(in:)`` gives back.
    let range: Range<Int>

    /// The document in `bytes`, or nil when they are not JSON (or nest deeper than 64 levels).
    static func parse(_ bytes: [UInt8]) -> VaultJSON? {
      var reader = Reader(bytes: bytes)
      guard let value = reader.value(depth: 0) else { return nil }
      reader.skipSpace()
      return reader.offset == bytes.count ? value : nil
    }

    /// The member `name` of an object, or nil.
    subscript(name: String) -> VaultJSON? {
      guard case .object(let members) = kind else { return nil }
      return members.first { $0.name == name }?.value
    }

    /// The members of an object, or none.
    var members: [Member] {
      if case .object(let members) = kind { return members }
      return []
    }

    /// The elements of an array, or none.
    var elements: [VaultJSON] {
      if case .array(let elements) = kind { return elements }
      return []
    }

    /// A string's text, for values that are never secret (names, versions, errors, times).
    func text(in bytes: [UInt8]) -> String? {
      guard case .string = kind else { return nil }
      return Self.text(of: range, in: bytes)
    }

    /// The text of the string at `range` (quotes included): its bytes as they are when it has no escape, as most
    /// have (a member's name, a version), else decoded.
    fileprivate static func text(of range: Range<Int>, in bytes: [UInt8]) -> String {
      let contents = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
      guard contents.contains(UInt8(ascii: "\\")) else { return String(decoding: contents, as: UTF8.self) }
      var decoded: [UInt8] = []
      unescape(contents, into: &decoded)
      return String(decoding: decoded, as: UTF8.self)
    }

    /// A number's value, when it is an integer.
    func integer(in bytes: [UInt8]) -> Int? {
      guard case .number = kind else { return nil }
      return Int(String(decoding: bytes[range], as: UTF8.self))
    }

    /// Whether the value is `true`.
    var isTrue: Bool {
      if case .bool(true) = kind { return true }
      return false
    }

    /// A string's bytes (its escapes decoded), in a `Data` wiped when its last copy goes: a secret's way out.
    func secret(in bytes: [UInt8]) -> Data? {
      guard case .string = kind else { return nil }
      return SecretBuffer.wiping(capacity: range.count) { buffer in
        Self.unescape(bytes[(range.lowerBound + 1)..<(range.upperBound - 1)], into: &buffer)
      }
    }

    /// The value's own bytes, as the server wrote it, to be written back unchanged.
    func raw(in bytes: [UInt8]) -> ArraySlice<UInt8> { bytes[range] }

    /// Appends the UTF-8 bytes the string contents `escaped` stands for. Only called on contents the reader checked,
    /// so every escape is whole.
    private static func unescape(_ escaped: ArraySlice<UInt8>, into output: inout [UInt8]) {
      var index = escaped.startIndex
      while index < escaped.endIndex {
        let byte = escaped[index]
        index += 1
        guard byte == UInt8(ascii: "\\") else {
          output.append(byte)
          continue
        }
        let kind = escaped[index]
        index += 1
        switch kind {
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = hex(escaped, at: index)
          index += 4
          // A surrogate pair is one scalar; a lone surrogate becomes U+FFFD, as Go's decoder makes it.
          if (0xD800..<0xDC00).contains(scalar), index + 6 <= escaped.endIndex, escaped[index] == UInt8(ascii: "\\"),
            escaped[index + 1] == UInt8(ascii: "u"), case let low = hex(escaped, at: index + 2),
            (0xDC00..<0xE000).contains(low)
          {
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            index += 6
          }
          UTF8.encode(Unicode.Scalar(scalar) ?? "\u{FFFD}") { output.append($0) }
        default: output.append(kind)  // `"`, `\` and `/` stand for themselves
        }
      }
    }

    /// The value of the four hexadecimal digits at `index`.
    private static func hex(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
      bytes[index..<(index + 4)].reduce(0) { $0 << 4 | UInt32(hexDigit($1) ?? 0) }
    }

    /// The value of a hexadecimal digit, or nil.
    fileprivate static func hexDigit(_ byte: UInt8) -> UInt8? {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
      default: nil
      }
    }

    /// A recursive-descent reader of RFC 8259 JSON.
    private struct Reader {
      let bytes: [UInt8]
      var offset = 0

      mutating func skipSpace() {
        while offset < bytes.count {
          switch bytes[offset] {
          case 0x20, 0x09, 0x0A, 0x0D: offset += 1
          default: return
          }
        }
      }

      mutating func value(depth: Int) -> VaultJSON? {
        skipSpace()
        guard offset < bytes.count, depth < 64 else { return nil }
        let start = offset
        switch bytes[offset] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map { VaultJSON(kind: .string, range: $0) }
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default:
          while offset < bytes.count, Self.isNumberByte(bytes[offset]) { offset += 1 }
          let text = String(decoding: bytes[start..<offset], as: UTF8.self)
          return offset > start && Double(text) != nil ? VaultJSON(kind: .number, range: start..<offset) : nil
        }
      }

      /// Whether `byte` may be part of a number (RFC 8259's grammar is checked by parsing what they make).
      static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
          UInt8(ascii: "e"), UInt8(ascii: "E"):
          true
        default: false
        }
      }

      mutating func literal(_ word: String, _ kind: Kind) -> VaultJSON? {
        let start = offset
        guard bytes[offset...].starts(with: word.utf8) else { return nil }
        offset += word.utf8.count
        return VaultJSON(kind: kind, range: start..<offset)
      }

      /// A string's range, quotes included, once its escapes are checked.
      mutating func string() -> Range<Int>? {
        let start = offset
        offset += 1
        while offset < bytes.count {
          switch bytes[offset] {
          case UInt8(ascii: "\""):
            offset += 1
            return start..<offset
          case UInt8(ascii: "\\"):
            guard offset + 1 < bytes.count else { return nil }
            let kind = bytes[offset + 1]
            if kind == UInt8(ascii: "u") {
              guard offset + 6 <= bytes.count, bytes[(offset + 2)..<(offset + 6)].allSatisfy({ hexDigit($0) != nil })
              else { return nil }
              offset += 6
            } else {
              guard "\"\\/bfnrt".utf8.contains(kind) else { return nil }
              offset += 2
            }
          case 0x00..<0x20: return nil
          default: offset += 1
          }
        }
        return nil
      }

      mutating func object(depth: Int) -> VaultJSON? {
        let start = offset
        offset += 1
        var members: [Member] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
          offset += 1
          return VaultJSON(kind: .object(members), range: start..<offset)
        }
        repeat {
          skipSpace()
          guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\""), let name = string() else { return nil }
          skipSpace()
          guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { return nil }
          offset += 1
          guard let value = value(depth: depth + 1) else { return nil }
          members.append(Member(name: VaultJSON.text(of: name, in: bytes), value: value))
          skipSpace()
          guard offset < bytes.count else { return nil }
          offset += 1
        } while bytes[offset - 1] == UInt8(ascii: ",")
        guard bytes[offset - 1] == UInt8(ascii: "}") else { return nil }
        return VaultJSON(kind: .object(members), range: start..<offset)
      }

      mutating func array(depth: Int) -> VaultJSON? {
        let start = offset
        offset += 1
        var elements: [VaultJSON] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
          offset += 1
          return VaultJSON(kind: .array(elements), range: start..<offset)
        }
        repeat {
          guard let element = value(depth: depth + 1) else { return nil }
          elements.append(element)
          skipSpace()
          guard offset < bytes.count else { return nil }
          offset += 1
        } while bytes[offset - 1] == UInt8(ascii: ",")
        guard bytes[offset - 1] == UInt8(ascii: "]") else { return nil }
        return VaultJSON(kind: .array(elements), range: start..<offset)
      }
    }
  }

  /// Bytes that hold a secret on their way in or out (a request body, a decoded field): written into storage
  /// reserved once, so that no growth leaves a copy behind, and zeroed before they are let go.
  enum SecretBuffer {
    /// What `fill` writes into a buffer of `capacity` bytes (it must write no more), as a `Data` that wipes itself
    /// when freed; the buffer itself is zeroed at once.
    static func wiping(capacity: Int, _ fill: (inout [UInt8]) -> Void) -> Data {
      var buffer: [UInt8] = []
      buffer.reserveCapacity(capacity)
      fill(&buffer)
      defer { wipe(&buffer) }
      return buffer.withUnsafeBytes { Data.wiping($0) }
    }

    /// Zeroes `bytes` where they are (the array must be the only reference to its storage, as a local one is).
    static func wipe(_ bytes: inout [UInt8]) {
      bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
      }
    }
  }

  /// Base64 (RFC 4648, with padding), written and read without a `String` in between, for secrets that are not
  /// UTF-8 (the KV field `value_base64`, as `bao kv put` and others read it).
  enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 of `data` to `output`: 4 bytes for every 3, rounded up.
    static func encode(_ data: Data, into output: inout [UInt8]) {
      var index = data.startIndex
      while index < data.endIndex {
        let chunk = data[index..<min(index + 3, data.endIndex)].map(UInt32.init)
        let value = (chunk[0] << 16) | ((chunk.count > 1 ? chunk[1] : 0) << 8) | (chunk.count > 2 ? chunk[2] : 0)
        for position in 0..<4 {
          output.append(
            position <= chunk.count ? alphabet[Int((value >> UInt32(18 - 6 * position)) & 0x3F)] : UInt8(ascii: "="))
        }
        index += 3
      }
    }

    /// The bytes `text` encodes, wiped when freed, or nil when it is not base64 (white space is not allowed).
    static func decode(_ text: Data) -> Data? {
      guard text.count.isMultiple(of: 4) else { return nil }
      var valid = true
      let decoded = SecretBuffer.wiping(capacity: text.count / 4 * 3) { output in
        var value: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
          guard byte != UInt8(ascii: "=") else {
            padding += 1
            continue
          }
          guard padding == 0, let digit = alphabet.firstIndex(of: byte) else {
            valid = false
            return
          }
          value = value << 6 | UInt32(digit)
          bits += 6
          if bits >= 8 {
            bits -= 8
            output.append(UInt8(truncatingIfNeeded: value >> UInt32(bits)))
          }
        }
        valid = padding <= 2
      }
      return valid ? decoded : nil
    }
  }
#endif
