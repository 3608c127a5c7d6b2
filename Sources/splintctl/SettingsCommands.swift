import ArgumentParser
import SplintSettings

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Which settings file a command works on.
struct StoreOptions: ParsableArguments {
  @Option(help: "The suite: the file $XDG_CONFIG_HOME/<suite>/settings.json (or ~/.config/<suite>/settings.json).")
  var suite: String?

  @Option(
    help: "The settings file itself, for system daemons and other places.", completion: .file(extensions: ["json"]))
  var file: String?

  func validate() throws {
    guard (suite == nil) != (file == nil) else {
      throw ValidationError("Name the settings with --suite NAME or --file PATH (one of them).")
    }
  }

  /// The store named by the options: a suite's has the machine's copies of the fleet's values and the system-wide
  /// defaults of `$XDG_CONFIG_DIRS` below the user's file, a file named with --file none.
  func store() throws -> SettingsStore {
    try Self.store(file: file, suite: suite)
  }

  /// The store of the file `file`, or else of the suite `suite` (see ``store()``).
  static func store(file: String?, suite: String?) throws -> SettingsStore {
    if let file { return SettingsStore(filePath: file) }
    do {
      let suite = suite ?? ""
      return SettingsStore(
        fileURL: try SettingsStore.fileURL(forSuite: suite),
        systemFiles: try SettingsStore.systemFileURLs(forSuite: suite),
        fleetCopies: try SettingsStore.fleetCopyURLs(forSuite: suite))
    } catch {
      throw failure(error)
    }
  }

  /// The store, for a change: a problem of a system file is told on standard error, and the change goes ahead; the
  /// user's file's own problem is the change's to report (a change to a file that is not JSON fails with it).
  func storeForChange() throws -> SettingsStore {
    let store = try store()
    if let problem = store.fileError, problem.url != store.fileURL {
      Output.problem("splintctl: warning: \(problem.summary)", remedy: problem.remedy)
    }
    return store
  }
}

struct GetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get",
    abstract: "Print a setting's value as JSON. Exits with status 1, printing nothing, when it is not set.",
    discussion: """
      With --suite, a key the user's file does not hold is looked for in the machine's copy of the fleet's \
      settings (see `splintctl fleet status`), then in the system-wide defaults, <dir>/<suite>/settings.json for \
      each directory of $XDG_CONFIG_DIRS (/etc/xdg when unset), the first that holds it winning, as programs read \
      it; a key the fleet enforces is the fleet's, whatever the user's file holds. --origin adds a line saying \
      where the value comes from: `user file PATH`, `fleet PATH` (`fleet PATH, for the label canary` when one of \
      the machine's labels gave it, `..., enforced`) or `system file PATH`. \
      For a key no file sets, it prints `no file sets KEY: the program's default applies` instead (exit status 1). \
      A system file that is not valid JSON is told on standard error and skipped.
      """)

  @OptionGroup var options: StoreOptions

  @Argument(help: "The setting's key.")
  var key: String

  @Flag(
    name: [.customLong("origin"), .customLong("verbose")],
    help: "Also print where the value comes from: the user's file, the fleet, a system file, or the program's default.")
  var origin = false

  func run() throws {
    try Self.print(key, of: try options.store(), origin: origin)
  }

  /// What `get` does once its arguments are known; also what ``FastPath`` runs.
  static func print(_ key: String, of store: SettingsStore, origin: Bool) throws {
    // The user's file must be readable; a broken system file is skipped, as programs skip it.
    if let problem = store.fileError {
      guard problem.url != store.fileURL else { throw failure(problem) }
      Output.problem("splintctl: warning: \(problem.summary)", remedy: problem.remedy)
    }
    guard let value = store.value(forKey: key) else {
      if origin { Output.line("no file sets \(key): the program's default applies") }
      throw failure("\(key) is not set in \(store.fileURL.path).", ExitStatus.absent)
    }
    // What the file holds: a number with more digits than a Double keeps is printed with all of them.
    Output.line(store.exactText(forKey: key) ?? value.prettyDescription)
    guard origin else { return }
    switch store.origin(ofKey: key) {
    case .system(let url)?: Output.line("system file \(url.path)")
    case .fleet(let url, let label)?:
      let copy = store.fleetStatus.first { $0.url == url }
      let enforced = copy.map { $0.isTrusted && $0.enforcedKeys.contains(key) } ?? false
      let labelled = label.map { ", for the label \($0.shown())" } ?? ""
      Output.line("fleet \(url.path)\(labelled)\(enforced ? ", enforced" : "")")
    default: Output.line("user file \(store.fileURL.path)")
    }
  }
}

struct SetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "set",
    abstract: "Set a setting. VALUE is taken as JSON when it is valid JSON, otherwise as a string.",
    discussion: """
      `splintctl set --suite app retries 3` stores the number 3, `... enabled true` a boolean, \
      `... hosts '["a", "b"]'` an array, and `... name Alice` the string "Alice". --string stores VALUE as a \
      string even when it is valid JSON (`--string zip 02134`). A value that starts with "-", such as a negative \
      number, goes after --: `splintctl set --suite app offset -- -5`. Other processes watching the file see the \
      change at once; keys this command does not set are kept exactly.

      --stdin, or - as VALUE, reads the value from standard input instead, for values longer than the command \
      line allows: `splintctl set --suite app motd --stdin < motd.txt`. It is taken as VALUE would be (JSON when \
      it is valid JSON, a string otherwise or with --string), except that one trailing newline (\\n or \\r\\n, as \
      echo and editors add) is dropped, as `splintctl secret store` drops it. To keep a string's trailing newline, \
      send it as JSON: `jq -Rs . < motd.txt | splintctl set --suite app motd --stdin`. To store the string "-" \
      itself, give it as JSON: '"-"'. Arguments and standard input must be UTF-8 text.
      """)

  @OptionGroup var options: StoreOptions

  @Argument(help: "The setting's key.")
  var key: String

  @Argument(help: "The value: JSON, or else a string; - reads it from standard input, as --stdin does.")
  var value: String?

  @Flag(help: "Store the value as a string even when it is valid JSON.")
  var string = false

  @Flag(help: "Read the value from standard input, dropping one trailing newline.")
  var stdin = false

  func validate() throws {
    if stdin, value != nil {
      throw ValidationError("Give the value as VALUE or on standard input with --stdin, not both.")
    }
    if !stdin, value == nil {
      // A negative number is taken for an option, and the argument parser drops it: say what to write instead.
      if let dashed = CommandLine.arguments.dropFirst().first(where: {
        $0.count > 1 && $0.hasPrefix("-") && Double($0) != nil
      }) {
        throw ValidationError(
          "\(dashed) was taken for an option. A value that starts with \"-\" goes after --: splintctl set ... \(key) -- \(dashed)"
        )
      }
      throw ValidationError("Give the value: as VALUE, or on standard input with --stdin (or - as VALUE).")
    }
  }

  func run() throws {
    var text = value ?? "-"
    if stdin || text == "-" {
      text = try UTF8Input.standardInput()
      if text.utf8.last == UInt8(ascii: "\n") {
        text.removeLast()  // "\r\n" is a single Character, so this drops both
      }
    }
    do {
      let store = try options.storeForChange()
      if string || (try? JSONValue(parsing: text)) == nil {
        try store.set(.string(text), forKey: key)
      } else {
        // The number texts as given: 123456789012345678901234567890 is written so, not rounded to a Double.
        try store.update { try $0.set(jsonText: text, forKey: key) }
      }
    } catch let error as SettingsError {
      throw failure(error)
    }
  }
}

struct DeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete",
    abstract: "Remove a setting, so that programs read their default. Removing one that is not set succeeds.")

  @OptionGroup var options: StoreOptions

  @Argument(help: "The setting's key.")
  var key: String

  func run() throws {
    do {
      try options.storeForChange().removeValue(forKey: key)
    } catch let error as SettingsError {
      throw failure(error)
    }
  }
}

struct ListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "Print every setting, as one JSON object.",
    discussion: """
      Only the user's file is listed. With --suite, programs also read system-wide defaults (in \
      $XDG_CONFIG_DIRS, /etc/xdg when unset) for the keys it does not hold: `splintctl get --origin KEY` \
      prints the value in effect and where it comes from.
      """)

  @OptionGroup var options: StoreOptions

  func run() throws { try Self.printSettings(of: options) }

  /// Prints every setting of the store `options` name, as one JSON object with sorted keys (`list` and `export`);
  /// with `version`, also the schema version the file records, if it records one.
  static func printSettings(of options: StoreOptions, version: Bool = false) throws {
    let store = try options.store()
    if let problem = store.fileError { throw failure(problem) }
    // Strict JSON, whatever comments the file holds, and numbers as the file has them.
    Output.line(store.exactText(version: version))
  }
}

struct PathCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "path", abstract: "Print the settings file's path (the file need not exist).",
    discussion: """
      Where the file is on a file system whose changes inotify does not all see (NFS, SMB, 9p, FUSE, ...), a note \
      on standard error says that programs following it find changes by polling.
      """)

  @OptionGroup var options: StoreOptions

  func run() throws {
    let store = try options.store()
    Output.line(store.fileURL.path)
    // Told beside the path, which stays alone on standard output for scripts.
    if let reason = store.unwatchableFileSystem {
      Output.problem(
        "splintctl: note: changes other programs make to this file are found by polling (every second, unless a "
          + "program sets another interval), not at once: \(reason).", remedy: nil)
    }
  }
}

struct WatchCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Print each change to the settings, one line per key, as it happens, until interrupted.",
    discussion: """
      A line reads `KEY VALUE` (VALUE as compact JSON), or `KEY removed`. With --json, each line is a JSON object: \
      {"key": KEY, "value": VALUE} or {"key": KEY, "removed": true}. Changes made by any process, and hand edits, \
      are seen; with --suite, so are edits of the system-wide defaults, and VALUE is the value in effect (a key \
      removed from the user's file shows the system value, if a system file holds one). Problems with the files \
      are told on standard error.
      """)

  @OptionGroup var options: StoreOptions

  @Argument(help: "The keys to watch; every key when none are given.")
  var keys: [String] = []

  @Flag(help: "Print one JSON object per line.")
  var json = false

  func run() async throws {
    let store = try options.store()
    let changes = store.changes()
    let errors = store.errors()
    Task {
      for await error in errors { Output.problem("splintctl: warning: \(error.summary)", remedy: error.remedy) }
    }
    let wanted = Set(keys.map { JSONKey($0) })
    for await changed in changes {
      for key in changed.sorted() where wanted.isEmpty || wanted.contains(key) {
        Output.line(line(for: key.text, value: store.value(forKey: key.text)))
      }
    }
  }

  private func line(for key: String, value: JSONValue?) -> String {
    switch (json, value) {
    case (false, let value?): "\(key) \(value)"
    case (false, nil): "\(key) removed"
    case (true, let value?): JSONValue.object(["key": .string(key), "value": value]).description
    case (true, nil): JSONValue.object(["key": .string(key), "removed": .bool(true)]).description
    }
  }
}

struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Print the settings the file holds, as one JSON object with sorted keys, for splintctl import.",
    discussion: """
      `splintctl export --suite com.example.sync > sync.json` on one machine, and `splintctl import --suite \
      com.example.sync sync.json` on another, carry the settings over. Only what the user set is printed: a \
      program's defaults, which are not in the file, stay with the program. When the file records the version of \
      its settings' shape ("$version", kept by the program's migrations), the object holds it too, so that an \
      import can tell whether the keys mean the same.
      """)

  @OptionGroup var options: StoreOptions

  func run() throws { try ListCommand.printSettings(of: options, version: true) }
}

struct ImportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Set the settings a JSON object holds, read from a file or standard input, with one write.",
    discussion: """
      The object is what `splintctl export` prints: `splintctl import --suite com.example.sync sync.json`, or \
      `... < sync.json`. Each of its keys is set, and the file's other keys are kept; with --replace they are \
      removed, so that the settings are exactly the object's. A value is set whole: an object is not merged \
      into the one stored.

      The text is checked whole before anything is written: text that is not a JSON object is refused, with \
      the line and column where it goes wrong, and the settings are left exactly as they were (exit status 64, \
      as for a file that cannot be read). Other processes see the import as one change.

      An object that records the version of its settings' shape ("$version", as export writes it when the file \
      records one) goes only into a file at that version, a file holding no settings, or with --replace; it is \
      refused otherwise (exit status 64), since the same keys may mean something else in another version. An \
      object without "$version" is imported as it is.
      """)

  @OptionGroup var options: StoreOptions

  @Argument(
    help: ArgumentHelp(
      "The file holding the JSON object; standard input when absent or -.", valueName: "json-file"),
    completion: .file(extensions: ["json"]))
  var input: String?

  @Flag(help: "Remove the settings the object does not hold.")
  var replace = false

  func run() throws {
    let source = input.flatMap { $0 == "-" ? nil : $0 }
    let text: Data
    if let source {
      do throws(Output.ReadError) {
        text = try Output.readAll(path: source)
      } catch {
        throw failure("cannot read \(source): \(error.reason).", remedy: "Nothing was written.", ExitStatus.usage)
      }
    } else {
      text = Output.readAll()
    }
    do {
      try options.storeForChange().importSettings(from: text, replacing: replace)
    } catch let error as SettingsError {
      if case .invalidJSON(let reason) = error.situation {
        throw failure(
          "cannot import \(source ?? "standard input"): \(reason).", remedy: "Nothing was written.", error.status)
      }
      throw failure(error)
    }
  }
}

struct ResetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "reset",
    abstract: "Remove settings, so that programs read their defaults; print each key removed, one a line.",
    discussion: """
      `splintctl reset --suite com.example.sync interval mode` removes those keys, `--all` every key the file \
      holds, with one write that other processes see as one change. It asks for no confirmation: to keep a \
      copy to import back, run `splintctl export` first. Keys that are not set are passed over, and not printed.
      """)

  @OptionGroup var options: StoreOptions

  @Argument(help: "The keys to remove.")
  var keys: [String] = []

  @Flag(help: "Remove every setting the file holds.")
  var all = false

  func validate() throws {
    if all, !keys.isEmpty { throw ValidationError("Give the keys to remove, or --all, not both.") }
    if !all, keys.isEmpty { throw ValidationError("Give the keys to remove, or --all to remove every setting.") }
  }

  func run() throws {
    let removed: [String]
    do {
      let store = try options.storeForChange()
      var broken: String?
      if case .corruptFile(let url, let reason)? = store.fileError?.situation, url == store.fileURL { broken = reason }
      removed = try all ? store.resetAll() : store.reset(keys: keys)
      if let broken {
        Output.problem(
          "splintctl: \(store.fileURL.path) was not a JSON object (\(broken)).",
          remedy:
            "It starts over empty; the bad file is kept beside it as \(store.fileURL.lastPathComponent).corrupt-<time>."
        )
      }
    } catch let error as SettingsError {
      throw failure(error)
    }
    for key in removed { Output.line(key) }
  }
}
