import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Standard input, output and error, written at once (no buffering: `watch` lines must arrive as they happen),
/// and the terminal.
enum Output {
  /// Writes `text` and a newline to standard output.
  static func line(_ text: String) {
    write(Data((text + "\n").utf8), to: FileHandle.standardOutput)
  }

  /// Writes `data` to standard output exactly.
  static func bytes(_ data: Data) {
    write(data, to: FileHandle.standardOutput)
  }

  /// Writes `text` and a newline to standard error.
  static func error(_ text: String) {
    write(Data((text + "\n").utf8), to: FileHandle.standardError)
  }

  private static func write(_ data: Data, to handle: FileHandle) {
    try? handle.write(contentsOf: data)
  }

  /// Whether standard output is a terminal (a person reading, not a pipe).
  static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// Whether standard input is a terminal.
  static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

  /// Everything on standard input.
  static func readAll() -> Data {
    FileHandle.standardInput.readDataToEndOfFile()
  }

  /// Asks for a line on the terminal without echoing what is typed, as passwords are asked for.
  static func readHiddenLine(prompt: String) -> Data {
    FileHandle.standardError.write(Data(prompt.utf8))
    var saved = termios()
    let canHide = tcgetattr(STDIN_FILENO, &saved) == 0
    if canHide {
      var hidden = saved
      hidden.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden)
    }
    defer {
      if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
      FileHandle.standardError.write(Data("\n".utf8))
    }
    var line = Data()
    var byte: UInt8 = 0
    while read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
    return line
  }
}
