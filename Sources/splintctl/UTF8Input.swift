import ArgumentParser

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Text from outside the process, the command line and standard input, which arrives as bytes and must be UTF-8.
///
/// `CommandLine.arguments`, and so ArgumentParser, turn bytes that are not UTF-8 into U+FFFD, and two different
/// keys would silently become one; splintctl refuses such text instead, as a usage error.
enum UTF8Input {
  /// What to do about text that is not UTF-8, to end an error message.
  private static let remedy = "convert it first, for example with iconv -f LATIN1 -t UTF-8"

  /// The program's arguments after its name, from the bytes the kernel passed.
  ///
  /// - Throws: ``ExitStatus/usage``, having told which argument is not UTF-8 and what to do.
  static func arguments() throws -> [String] {
    let argv = CommandLine.unsafeArgv
    return try (1..<Int(CommandLine.argc)).map { position in
      guard let pointer = argv[position] else { return "" }
      if let text = String(validatingCString: pointer) { return text }
      let bytes = Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
      throw failure(
        "argument \(position) is not valid UTF-8 \(excerpt(bytes)).",
        remedy: "splintctl takes every argument (keys, values, suite names, paths) as UTF-8 text: \(remedy); for a "
          + "file whose name is not UTF-8, give --file a symbolic link with a UTF-8 name.",
        ExitStatus.usage)
    }
  }

  /// Standard input, all of it, as text.
  ///
  /// - Throws: ``ExitStatus/usage``, having told where standard input is not UTF-8 and what to do.
  static func standardInput() throws -> String {
    let data = Output.readAll()
    if let text = String(validating: data, as: UTF8.self) { return text }
    throw failure(
      "standard input is not valid UTF-8 \(excerpt(Array(data))).",
      remedy: "splintctl reads values as UTF-8 text: \(remedy).", ExitStatus.usage)
  }

  /// Where `bytes` stop being UTF-8, for a message: `at byte 4: "caf\xe9"`, showing up to 32 bytes either side.
  ///
  /// The bytes are shown as printf(1) would take them: UTF-8 as it is, a backslash as `\\`, and each byte that is
  /// not UTF-8 or is a control character as `\xff`.
  static func excerpt(_ bytes: [UInt8]) -> String {
    let pieces = pieces(of: bytes)
    guard let bad = pieces.first(where: { $0.scalar == nil })?.range.lowerBound else { return "" }
    let window = max(0, bad - 32)..<(bad + 32)
    var text = window.lowerBound > 0 ? "..." : ""
    var end = 0
    for piece in pieces where window.contains(piece.range.lowerBound) {
      end = piece.range.upperBound
      switch piece.scalar {
      case "\\"?:
        text += "\\\\"
      case let scalar? where scalar.properties.generalCategory != .control:
        text.unicodeScalars.append(scalar)
      default:
        for byte in bytes[piece.range] { text += "\\x" + String(byte, radix: 16).leftPadded(to: 2) }
      }
    }
    if end < bytes.count { text += "..." }
    return "at byte \(bad + 1): \"\(text)\""
  }

  /// `bytes` in order as Unicode scalars, and runs of bytes that are not UTF-8 (a nil scalar).
  private static func pieces(of bytes: [UInt8]) -> [(range: Range<Int>, scalar: Unicode.Scalar?)] {
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    var pieces: [(range: Range<Int>, scalar: Unicode.Scalar?)] = []
    var start = 0
    while true {
      switch parser.parseScalar(from: &iterator) {
      case .valid(let encoded):
        pieces.append((start..<start + encoded.count, Unicode.UTF8.decode(encoded)))
        start += encoded.count
      case .error(let length):
        pieces.append((start..<start + length, nil))
        start += length
      case .emptyInput:
        return pieces
      }
    }
  }
}

extension String {
  /// The text with zeros before it up to `width` characters: `"f".leftPadded(to: 2)` is `"0f"`.
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
