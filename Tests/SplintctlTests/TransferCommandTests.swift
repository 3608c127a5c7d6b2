import Foundation
import TestSupport
import Testing

/// `splintctl export`, `import` and `reset`, on files in a temporary directory, with other processes.
@Suite("splintctl export, import and reset")
struct TransferCommandTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  /// A file as a person wrote it, keys out of order: `1.50` and `{"x":1}` must stay as they are when kept.
  static let handWritten = #"{"b": {"x":1}, "a": 1.50, "c": "keep"}"#

  /// The environment with `XDG_CONFIG_HOME` in the scratch directory, where `--suite` finds its files.
  var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    return environment
  }

  @Test func exportPrintsTheFileAsPrettyJSONWithSortedKeys() async throws {
    try Self.handWritten.write(toFile: file, atomically: true, encoding: .utf8)
    let output = try await splintctl("export", "--file", file)
    #expect(output.status == 0)
    #expect(output.stderr.isEmpty)
    #expect(output.stdout == "{\n  \"a\": 1.5,\n  \"b\": {\n    \"x\": 1\n  },\n  \"c\": \"keep\"\n}\n")
    let none = try await splintctl("export", "--file", scratch.url("none.json").path)
    #expect(none.status == 0)
    #expect(none.stdout == "{}\n")
    #expect(!FileManager.default.fileExists(atPath: scratch.url("none.json").path))
  }

  @Test func exportOfACorruptFileFailsAsListDoes() async throws {
    try "{oops".write(toFile: file, atomically: true, encoding: .utf8)
    let output = try await splintctl("export", "--file", file)
    #expect(output.status == 70)
    #expect(output.stdout.isEmpty)
    #expect(
      output.errorText.contains("is not a JSON object (line 1, column 2: 'o' where a key in double quotes should be)"))
  }

  @Test("export, then import into another suite, from a file or standard input, carries everything over")
  func exportAndImportIntoAnotherSuite() async throws {
    for (key, value) in [
      ("interval", "60"), ("ratio", "0.25"), ("hosts", #"["a", "b"]"#), ("name", "Zoë"), ("e\u{301}", "two"),
      ("\u{E9}", "one"), ("nested", #"{"deep": {"list": [null, true, {}]}}"#),
    ] {
      #expect(try await splintctl("set", "--suite", "from", key, value, environment: environment).status == 0)
    }
    let exported = try await splintctl("export", "--suite", "from", environment: environment)
    #expect(exported.status == 0)
    let saved = scratch.url("from.json")
    try exported.stdout.write(to: saved, atomically: true, encoding: .utf8)
    #expect(try await splintctl("import", "--suite", "to", saved.path, environment: environment).status == 0)
    #expect(try await splintctl("export", "--suite", "to", environment: environment).stdout == exported.stdout)
    #expect(
      try await splintctl("import", "--suite", "piped", input: exported.stdout, environment: environment).status == 0)
    #expect(
      try await splintctl("import", "--suite", "dash", "-", input: exported.stdout, environment: environment).status
        == 0)
    for suite in ["piped", "dash"] {
      #expect(try await splintctl("export", "--suite", suite, environment: environment).stdout == exported.stdout)
    }
    #expect(FileManager.default.fileExists(atPath: scratch.url("to/settings.json").path))
    #expect(try await splintctl("get", "--suite", "to", "name", environment: environment).stdout == "\"Zoë\"\n")
  }

  @Test("export carries the file's schema version, list does not; import refuses another version's settings")
  func theSchemaVersionTravelsWithAnExport() async throws {
    try #"{"period": "30s", "$version": 3}"#.write(toFile: file, atomically: true, encoding: .utf8)
    let exported = try await splintctl("export", "--file", file)
    #expect(exported.stdout == "{\n  \"$version\": 3,\n  \"period\": \"30s\"\n}\n")
    #expect(try await splintctl("list", "--file", file).stdout == "{\n  \"period\": \"30s\"\n}\n")
    let copy = scratch.url("copy.json").path
    #expect(try await splintctl("import", "--file", copy, input: exported.stdout).status == 0)
    #expect(try await splintctl("export", "--file", copy).stdout == exported.stdout)
    let older = try await splintctl("import", "--file", file, input: #"{"$version": 2, "period": 30}"#)
    #expect(older.status == 64)
    #expect(
      older.errorText.hasPrefix("splintctl: The settings to import are at version 2, and \(file) is at version 3"))
    #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"period": "30s", "$version": 3}"#)
    let reserved = try await splintctl("set", "--file", file, "$version", "4")
    #expect(reserved.status == 64)
    #expect(reserved.stderr.contains(#""$version" is reserved"#))
  }

  @Test func importMergesByDefaultAndReplacesOnRequest() async throws {
    try Self.handWritten.write(toFile: file, atomically: true, encoding: .utf8)
    let merged = try await splintctl("import", "--file", file, input: #"{"b": {"y": 2}, "d": true, "a": 1.5}"#)
    #expect(merged.status == 0)
    #expect(merged.stdout.isEmpty && merged.stderr.isEmpty)
    #expect(
      try String(contentsOfFile: file, encoding: .utf8) == #"{"b": {"y": 2}, "a": 1.50, "c": "keep", "d": true}"#,
      "on one line, as the file was written")
    let replaced = try await splintctl("import", "--file", file, "--replace", input: #"{"e": null, "a": 1.5}"#)
    #expect(replaced.status == 0)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"a": 1.50, "e": null}"#)
  }

  @Test(arguments: [
    ("{\n  \"a\": 1,\n  \"b\" 2\n}\n", "line 3, column 7: '2' after the key \"b\", where ':' should be"),
    ("{\"a\": 1,,}", "line 1, column 9: two commas in a row after the value of \"a\""),
    ("{\"a\": 1}\n{\"b\": 2}\n", "line 2, column 1: '{' after the end of the JSON value"),
    ("[{\"a\": 1}]\n", "line 1, column 1: expected a JSON object of settings, found an array"),
    ("\n\n  \"text\"\n", "line 3, column 3: expected a JSON object of settings, found a string"),
    ("", "line 1, column 1: expected a JSON object of settings, found nothing"),
  ])
  func textThatIsNotAJSONObjectIsRefusedWithItsLineAndColumn(text: String, reason: String) async throws {
    try Self.handWritten.write(toFile: file, atomically: true, encoding: .utf8)
    let before = try Data(contentsOf: URL(fileURLWithPath: file))
    let input = scratch.url("input.json")
    try text.write(to: input, atomically: true, encoding: .utf8)
    for replace in [[], ["--replace"]] {
      let fromFile = try await splintctl(["import", "--file", file] + replace + [input.path], bytes: Data())
      #expect(fromFile.status == 64)
      #expect(fromFile.stdout.isEmpty)
      #expect(fromFile.errorText == "splintctl: cannot import \(input.path): \(reason). Nothing was written.")
      let fromStandardInput = try await splintctl(["import", "--file", file] + replace, bytes: Data(text.utf8))
      #expect(fromStandardInput.status == 64)
      #expect(fromStandardInput.stderr == "splintctl: cannot import standard input: \(reason).\nNothing was written.\n")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "byte for byte")
    #expect(!FileManager.default.fileExists(atPath: file + ".lock"), "not even the lock was taken")
  }

  @Test func anInputFileThatCannotBeReadIsAUsageErrorAndWritesNothing() async throws {
    let missing = try await splintctl("import", "--file", file, scratch.url("missing.json").path)
    #expect(missing.status == 64)
    #expect(
      missing.errorText
        == "splintctl: cannot read \(scratch.url("missing.json").path): No such file or directory. Nothing was written."
    )
    let directory = try await splintctl("import", "--file", file, scratch.directory.path)
    #expect(directory.status == 64)
    #expect(directory.stderr.contains("Is a directory"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test func resetRemovesTheKeysAndPrintsThoseItRemoved() async throws {
    try Self.handWritten.write(toFile: file, atomically: true, encoding: .utf8)
    let output = try await splintctl("reset", "--file", file, "c", "missing", "b")
    #expect(output.status == 0)
    #expect(output.lines == ["c", "b"])
    #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"a": 1.50}"#)
    let again = try await splintctl("reset", "--file", file, "b")
    #expect(again.status == 0)
    #expect(again.stdout.isEmpty)
  }

  @Test func resetAllRemovesEveryKeyWithoutAsking() async throws {
    try Self.handWritten.write(toFile: file, atomically: true, encoding: .utf8)
    let output = try await splintctl("reset", "--file", file, "--all")
    #expect(output.status == 0)
    #expect(output.lines == ["b", "a", "c"])
    #expect(output.stderr.isEmpty)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "{}")
    #expect(try await splintctl("reset", "--file", file, "--all").stdout.isEmpty)
    #expect(try await splintctl("export", "--file", file).stdout == "{}\n")
  }

  @Test func resetNeedsKeysOrAllButNotBoth() async throws {
    let neither = try await splintctl("reset", "--file", file)
    #expect(neither.status == 64)
    #expect(neither.stderr.contains("Give the keys to remove, or --all to remove every setting."))
    let both = try await splintctl("reset", "--file", file, "--all", "k")
    #expect(both.status == 64)
    #expect(both.stderr.contains("Give the keys to remove, or --all, not both."))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test("a Setting in another process sees splintctl import as one change")
  func anotherProcessSeesAnImportAsOneChange() async throws {
    try #"{"old": 0, "kept": 0}"#.write(toFile: file, atomically: true, encoding: .utf8)
    let ready = scratch.url("ready").path
    let watcher = try await Programs.start(
      [Programs.helper("SettingsProbe"), "changes", file, ready, "a", "b", "old", "kept"])
    #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
    let imported = try await splintctl(
      "import", "--file", file, "--replace", input: #"{"a": 1, "b": [2], "c": "three", "kept": 0}"#)
    #expect(imported.status == 0)
    #expect(try await splintctl("set", "--file", file, "done", "true").status == 0)
    let output = await watcher.wait()
    #expect(output.status == 0, "\(output)")
    #expect(output.lines == ["change a b c old", "change done", "a=1", "b=[2]", "old=absent", "kept=0"])
  }

  @Test("a writer in another process loses nothing to splintctl import and reset")
  func aConcurrentWriterLosesNothing() async throws {
    let writer = try await Programs.start(
      [Programs.helper("SettingsProbe"), "increment-until", file, "counter", "stop"])
    #expect(await eventually { (try? await splintctl("get", "--file", file, "counter"))?.status == 0 })
    let rounds = 10
    for round in 0..<rounds {
      let input = #"{"imported-\#(round)": \#(round), "scratch": \#(round)}"#
      #expect(try await splintctl("import", "--file", file, input: input).status == 0)
      #expect(try await splintctl("reset", "--file", file, "scratch").lines == ["scratch"])
    }
    let stop = try await splintctl("set", "--file", file, "stop", "true")
    #expect(stop.status == 0, "\(stop)")
    let output = await writer.wait()
    #expect(output.status == 0)
    let increments = try #require(output.lines.last.flatMap { Int($0) })
    let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
    let members = try #require(stored as? [String: Any])
    #expect(members["counter"] as? Int == increments)
    #expect(Set(members.keys) == Set((0..<rounds).map { "imported-\($0)" } + ["counter", "stop"]))
  }
}
