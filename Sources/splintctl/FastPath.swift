import SplintSecrets

/// The two commands shell scripts run most often, run before swift-argument-parser is asked, when they are spelled
/// the plainest way: `get --file FILE KEY` (or `--suite SUITE`) and `secret read SERVICE ACCOUNT`. Everything else,
/// and any other spelling of these (options in another order or place, `--name=value`, `--`, a value that begins
/// with `-` or is empty), goes to the full parser, which runs the same code for them (a test compares the two).
///
/// Building the parser's command tree costs most of a short command's start: it reflects on every option of every
/// command on the way and resolves the generic types of its property wrappers, each resolution a walk of every
/// protocol conformance in the binary. Under callgrind, `splintctl get --file FILE KEY` ran 14.4 million
/// instructions, 9.7 million of them in `parseAsRoot`.
enum FastPath {
  /// The hot command `arguments` (after the program's name) spell in their plainest form, ready to run; nil for any
  /// other command line.
  static func command(_ arguments: [String]) -> (() throws -> Void)? {
    guard arguments.count == 4, arguments[2...].allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") }) else {
      return nil
    }
    let (first, second, third, fourth) = (arguments[0], arguments[1], arguments[2], arguments[3])
    switch (first, second) {
    case ("get", "--file"):
      return { try GetCommand.print(fourth, of: try StoreOptions.store(file: third, suite: nil), origin: false) }
    case ("get", "--suite"):
      return { try GetCommand.print(fourth, of: try StoreOptions.store(file: nil, suite: third), origin: false) }
    case ("secret", "read"):
      return { try SecretCommand.Read.print(Credential(service: third, account: fourth), binary: false) }
    default:
      return nil
    }
  }
}
