#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Standard input, output and error, written at once (no buffering: `watch` lines must arrive as they happen),
/// and the terminal. Plain read(2) and write(2): Foundation's FileHandle would bring all of Foundation (and ICU)
/// into splintctl.
enum Output {
  /// Writes `text` and a newline to standard output.
  static func line(_ text: String) {
    write((text + "\n").utf8, to: STDOUT_FILENO)
  }

  /// Writes `data` to standard output exactly.
  static func bytes(_ data: Data) {
    write(data, to: STDOUT_FILENO)
  }

  /// Writes `text` and a newline to standard error.
  static func error(_ text: String) {
    write((text + "\n").utf8, to: STDERR_FILENO)
  }

  /// Writes a problem to standard error as people read it: `headline` in lines of at most ``lineLimit`` characters
  /// (so the first says what happened), then `remedy`, a sentence a line.
  static func problem(_ headline: String, remedy: String?) {
    let lines = wrapped(headline, width: lineLimit) + (remedy.map(sentences) ?? [])
    error(lines.joined(separator: "\n"))
  }

  /// The longest first line of an error.
  static let lineLimit = 160

  /// `text` in lines of at most `width` characters, broken at spaces (a word longer than `width` stands alone).
  static func wrapped(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: false) {
      if !line.isEmpty, line.count + 1 + word.count > width {
        lines.append(line)
        line = String(word)
      } else {
        line += line.isEmpty ? String(word) : " " + word
      }
    }
    return lines + [line]
  }

  /// `text` a sentence a line: broken after each ". " that a capital letter or a backtick follows.
  static func sentences(_ text: String) -> [String] {
    var lines: [String] = []
    var rest = Substring(text)
    var searchFrom = rest.startIndex
    while let stop = rest[searchFrom...].firstRange(of: ". ") {
      if let next = rest[stop.upperBound...].first, next.isUppercase || next == "`" {
        lines.append(String(rest[..<stop.lowerBound]) + ".")
        rest = rest[stop.upperBound...]
        searchFrom = rest.startIndex
      } else {
        searchFrom = stop.upperBound
      }
    }
    return lines + [String(rest)]
  }

  /// Writes all of `bytes` to `descriptor`, as FileHandle's `write(contentsOf:)` did; a failure (a closed pipe)
  /// drops the rest, as `try?` on it did.
  private static func write(_ bytes: some Sequence<UInt8>, to descriptor: Int32) {
    let bytes = Array(bytes)
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
      }
    }
  }

  /// Whether standard output is a terminal (a person reading, not a pipe).
  static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// Whether standard input is a terminal.
  static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

  /// Everything on standard input.
  static func readAll() -> Data {
    (try? readAll(from: STDIN_FILENO)) ?? Data()
  }

  /// Why a file could not be read: the system's words for its error (`No such file or directory`).
  struct ReadError: Error {
    let reason: String
  }

  /// Everything in the file at `path` (a pipe or FIFO read to its end).
  static func readAll(path: String) throws(ReadError) -> Data {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
    defer { close(descriptor) }
    return try readAll(from: descriptor)
  }

  /// Everything `descriptor` gives until its end.
  private static func readAll(from descriptor: Int32) throws(ReadError) -> Data {
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      if count < 0 { throw ReadError(reason: String(cString: strerror(errno))) }
      guard count > 0 else { return data }
      data.append(contentsOf: chunk[..<count])
    }
  }

  /// Asks for a line on the terminal without echoing what is typed, as passwords are asked for.
  static func readHiddenLine(prompt: String) -> Data {
    write(prompt.utf8, to: STDERR_FILENO)
    var saved = termios()
    let canHide = tcgetattr(STDIN_FILENO, &saved) == 0
    if canHide {
      var hidden = saved
      hidden.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden)
    }
    defer {
      if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
      write("\n".utf8, to: STDERR_FILENO)
    }
    var line = Data()
    var byte: UInt8 = 0
    while read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
    return line
  }
}
