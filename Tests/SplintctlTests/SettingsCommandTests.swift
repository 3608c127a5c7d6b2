import Foundation
import SplintSecrets
import TestSupport
import Testing

/// `splintctl get`, `set`, `delete`, `list`, `path` and `watch`, on files in a temporary directory.
@Suite("splintctl settings")
struct SettingsCommandTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  @Test func setTakesJSONWhenItIsJSONAndAStringOtherwise() async throws {
    for (key, value) in [
      ("retries", "3"), ("ratio", "0.5"), ("enabled", "true"), ("hosts", #"["a", "b"]"#), ("name", "Alice"),
    ] {
      #expect(try await splintctl("set", "--file", file, key, value).status == 0)
    }
    #expect(try await splintctl("set", "--file", file, "--string", "zip", "02134").status == 0)
    #expect(try await splintctl("get", "--file", file, "retries").stdout == "3\n")
    #expect(try await splintctl("get", "--file", file, "ratio").stdout == "0.5\n")
    #expect(try await splintctl("get", "--file", file, "enabled").stdout == "true\n")
    #expect(try await splintctl("get", "--file", file, "hosts").stdout == "[\n  \"a\",\n  \"b\"\n]\n")
    #expect(try await splintctl("get", "--file", file, "name").stdout == "\"Alice\"\n")
    #expect(try await splintctl("get", "--file", file, "zip").stdout == "\"02134\"\n")
    #expect(
      try await splintctl("list", "--file", file).stdout
        == "{\n  \"enabled\": true,\n  \"hosts\": [\n    \"a\",\n    \"b\"\n  ],\n  \"name\": \"Alice\",\n  \"ratio\": 0.5,\n  \"retries\": 3,\n  \"zip\": \"02134\"\n}\n"
    )
  }

  @Test("a number is written as it was given, never rounded to a Double, and exact ones as usual")
  func numbersAreWrittenAsGiven() async throws {
    #expect(try await splintctl("set", "--file", file, "big", "123456789012345678901234567890").status == 0)
    #expect(try await splintctl("set", "--file", file, "pi", " [3.141592653589793238462643383279]\n").status == 0)
    #expect(try await splintctl("set", "--file", file, "exact", "[0.10, 1e2]").status == 0)
    #expect(
      try String(contentsOfFile: file, encoding: .utf8)
        == "{\n  \"big\": 123456789012345678901234567890,\n  \"pi\": [3.141592653589793238462643383279],\n"
        + "  \"exact\": [\n    0.1,\n    100.0\n  ]\n}\n")
    // get, list and export print what is stored, digit for digit, as strict JSON.
    #expect(try await splintctl("get", "--file", file, "big").stdout == "123456789012345678901234567890\n")
    #expect(try await splintctl("get", "--file", file, "pi").stdout == "[\n  3.141592653589793238462643383279\n]\n")
    let listed =
      "{\n  \"big\": 123456789012345678901234567890,\n  \"exact\": [\n    0.1,\n    100.0\n  ],\n"
      + "  \"pi\": [\n    3.141592653589793238462643383279\n  ]\n}\n"
    #expect(try await splintctl("list", "--file", file).stdout == listed)
    #expect(try await splintctl("export", "--file", file).stdout == listed)
    #expect(try await splintctl("set", "--file", file, "big", "7").status == 0, "a later value is written as usual")
    #expect(try String(contentsOfFile: file, encoding: .utf8).hasPrefix("{\n  \"big\": 7,\n"))
    let reserved = try await splintctl("set", "--file", file, "$version", "12345678901234567890123")
    #expect(reserved.status == 64, "the reserved key stays the migrations': \(reserved)")
  }

  @Test("export prints strict JSON from a file with comments and trailing commas, and keeps the file as it is")
  func exportIsStrictJSON() async throws {
    let text = "// about\n{\n  \"a\": [1, 2,], // two\n  /* b */ \"b\": {\"c\": true,},\n}\n"
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    let exported = try await splintctl("export", "--file", file)
    #expect(exported.stdout == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": true\n  }\n}\n")
    #expect(try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) is [String: Any], "strict JSON")
    #expect(try await splintctl("get", "--file", file, "b").stdout == "{\n  \"c\": true\n}\n")
    #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
  }

  @Test func aValueStartingWithADashGoesAfterTheTerminator() async throws {
    #expect(try await splintctl("set", "--file", file, "offset", "-5").status == 64)
    #expect(try await splintctl("set", "--file", file, "offset", "--", "-5").status == 0)
    #expect(try await splintctl("get", "--file", file, "offset").stdout == "-5\n")
    #expect(try await splintctl("set", "--help").stdout.contains("goes after --"))
  }

  @Test func getOfAnAbsentKeyExitsOneWithNothingOnStdout() async throws {
    let output = try await splintctl("get", "--file", file, "missing")
    #expect(output.status == 1)
    #expect(output.stdout.isEmpty)
    #expect(output.stderr == "splintctl: missing is not set in \(file).\n")
  }

  @Test func deleteRemovesTheKey() async throws {
    try await splintctl("set", "--file", file, "a", "1")
    #expect(try await splintctl("delete", "--file", file, "a").status == 0)
    #expect(try await splintctl("delete", "--file", file, "a").status == 0)
    #expect(try await splintctl("get", "--file", file, "a").status == 1)
  }

  @Test func suitesLiveUnderXDGConfigHome() async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    let path = try await Programs.run(
      [Programs.helper("splintctl"), "path", "--suite", "app"], environment: environment)
    #expect(path.stdout == scratch.url("app/settings.json").path + "\n")
  }

  @Test func badChoicesOfFileAreUsageErrors() async throws {
    let neither = try await splintctl("get", "k")
    #expect(neither.status == 64)
    #expect(neither.stderr.contains("Name the settings with --suite NAME or --file PATH"))
    #expect(try await splintctl("get", "--suite", "a", "--file", file, "k").status == 64)
    let suite = try await splintctl("get", "--suite", "../escape", "k")
    #expect(suite.status == 64)
    #expect(suite.stderr.contains("cannot name a settings suite"))
  }

  @Test("a corrupt file: get and list fail, set and reset of keys refuse it, reset --all starts over and keeps it")
  func aCorruptFileIsRefusedUntilResetOnPurpose() async throws {
    try "{oops".write(toFile: file, atomically: true, encoding: .utf8)
    let get = try await splintctl("get", "--file", file, "a")
    #expect(get.status == 70)
    #expect(
      get.errorText.contains("is not a JSON object (line 1, column 2: 'o' where a key in double quotes should be)"))
    #expect(get.errorText.components(separatedBy: "is not a JSON object").count == 2, "told once: \(get.stderr)")
    #expect(!get.stderr.contains("last good"), "a new process holds no last good settings")
    #expect(try await splintctl("list", "--file", file).status == 70)
    for change in [["set", "--file", file, "a", "1"], ["reset", "--file", file, "b"]] {
      let refused = try await splintctl(change, bytes: Data())
      #expect(refused.status == 70)
      #expect(refused.errorText.components(separatedBy: "is not a JSON object").count == 2, "told once: \(refused)")
      #expect(refused.errorText.contains("(line 1, column 2: 'o' where a key in double quotes should be)"))
      #expect(refused.errorText.contains("start over on purpose with `splintctl reset --all`"))
    }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "{oops")
    let reset = try await splintctl("reset", "--file", file, "--all")
    #expect(reset.status == 0)
    #expect(
      reset.errorText.contains("was not a JSON object (line 1, column 2: 'o' where a key in double quotes should be)"))
    #expect(try await splintctl("set", "--file", file, "a", "1").status == 0)
    #expect(try await splintctl("get", "--file", file, "a").stdout == "1\n")
    let kept = try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).filter {
      $0.contains("corrupt")
    }
    #expect(kept.count == 1)
    #expect(try String(contentsOfFile: scratch.url(kept[0]).path, encoding: .utf8) == "{oops")
  }

  @Test("a negative number without -- is said to go after --, rather than reported missing; after --, it is stored")
  func aNegativeNumberGoesAfterTheSeparator() async throws {
    let dropped = try await splintctl("set", "--file", file, "offset", "-5")
    #expect(dropped.status == 64)
    #expect(dropped.stderr.contains("-5 was taken for an option. A value that starts with \"-\" goes after --"))
    #expect(dropped.stderr.contains("splintctl set ... offset -- -5"))
    #expect(try await splintctl("set", "--file", file, "offset", "--", "-5").status == 0)
    #expect(try await splintctl("get", "--file", file, "offset").stdout == "-5\n")
  }

  @Test func aWriteThatFailsExitsSeventy() async throws {
    try Data().write(to: scratch.directory.appendingPathComponent("blocker"))
    let output = try await splintctl("set", "--file", scratch.url("blocker/settings.json").path, "a", "1")
    #expect(output.status == 70)
    #expect(output.stderr.contains("Could not write the settings file"))
  }

  @Test("watch prints each change by another process and by a hand edit, at once")
  func watchSeesChanges() async throws {
    let watcher = try await Programs.start([Programs.helper("splintctl"), "watch", "--file", file, "theme", "size"])
    defer { watcher.send(SIGTERM) }
    // The watcher may not be watching yet: write until it reports, then carry on.
    var attempt = 0
    let started = await eventually {
      attempt += 1
      _ = try? await splintctl("set", "--file", file, "theme", "\"attempt-\(attempt)\"")
      return watcher.stdoutSoFar.contains("theme \"attempt-")
    }
    #expect(started)
    try await splintctl("set", "--file", file, "ignored", "1")
    try await splintctl("set", "--file", file, "size", "12")
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("size 12\n") })
    try #"{"size": 14}"#.write(toFile: file, atomically: false, encoding: .utf8)  // by hand, in place
    #expect(await eventually { watcher.stdoutSoFar.contains("size 14\ntheme removed\n") })
    watcher.send(SIGTERM)
    let output = await watcher.wait()
    #expect(!output.stdout.contains("ignored"))
  }

  @Test func watchJSONPrintsOneObjectALine() async throws {
    let watcher = try await Programs.start([Programs.helper("splintctl"), "watch", "--file", file, "--json"])
    defer { watcher.send(SIGTERM) }
    var attempt = 0
    #expect(
      await eventually {
        attempt += 1
        _ = try? await splintctl("set", "--file", file, "n", String(attempt))
        return watcher.stdoutSoFar.contains(#"{"key":"n","value":"#)
      })
    try await splintctl("delete", "--file", file, "n")
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("{\"key\":\"n\",\"removed\":true}\n") })
  }
}

@Suite("splintctl help")
struct HelpTests {
  @Test func helpDocumentsTheExitStatuses() async throws {
    let help = try await splintctl("--help")
    #expect(help.status == 0)
    for line in [
      "1   absent", "64  usage error", "69  the Secret Service is unavailable or locked", "70  any other failure",
      "75  a fleet change found the cluster changed",
    ] {
      #expect(help.stdout.contains(line), "\(line)")
    }
  }

  @Test(arguments: ["bash", "zsh", "fish"])
  func completionScripts(shell: String) async throws {
    let script = try await splintctl("--generate-completion-script", shell)
    #expect(script.status == 0)
    #expect(script.stdout.contains("sandbox") && script.stdout.contains("secret"))
  }

  @Test(
    "completions offer the store names for --store, and JSON files (and directories) for --file and import",
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/fish"), "fish is not installed (apt-get install fish)")
  )
  func completionsOfferValues() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("completions-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(
      at: directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
    for name in ["a.json", "b.txt"] {
      try Data().write(to: directory.appendingPathComponent(name))
    }
    let splintctl = Programs.helper("splintctl")
    let script = """
      cd '\(directory.path)'; '\(splintctl)' --generate-completion-script fish | source
      complete -C 'splintctl secret read --store '; echo ---; complete -C 'splintctl get --file '; echo ---
      complete -C 'splintctl import --suite x '
      """
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] =
      URL(fileURLWithPath: splintctl).deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
    let output = try await Programs.run(["fish", "--no-config", "-c", script], environment: environment)
    let parts = output.stdout.components(separatedBy: "---\n").map { part in
      part.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" }
    }
    #expect(parts.count == 3, "\(output)")
    #if SplintFleet
      let fleet = ["vault"]  // splintctl built with SplintFleet has OpenBao's and Vault's store
    #else
      let fleet: [String] = []
    #endif
    #expect(parts.first == DefaultCredentialStore.storeNames + fleet)
    #expect(parts.dropFirst().allSatisfy { $0 == ["a.json", "sub/"] }, "\(parts)")
  }
}

/// `splintctl set KEY --stdin` and `splintctl set KEY -`.
@Suite("splintctl set from standard input")
struct SetFromStandardInputTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  @Test func aValueTooLongForTheCommandLineRoundTrips() async throws {
    let long = String(repeating: "abcdé", count: 50_000)  // 300,000 bytes; one argument may hold 131,072
    #expect(long.utf8.count == 300_000)
    #expect(try await splintctl("set", "--file", file, "long", "--stdin", input: long).status == 0)
    #expect(try await splintctl("get", "--file", file, "long").stdout == "\"\(long)\"\n")
    let json = "[" + String(repeating: "1234567,", count: 37_499) + "123456]"  // 300,000 bytes of JSON
    #expect(json.utf8.count == 300_000)
    #expect(try await splintctl("set", "--file", file, "numbers", "-", input: json).status == 0)
    let numbers = try await splintctl("get", "--file", file, "numbers").stdout
    #expect(numbers.split(separator: "\n").count == 37_500 + 2)
    #expect(numbers.hasPrefix("[\n  1234567,\n") && numbers.hasSuffix(",\n  123456\n]\n"))
  }

  @Test func theValueIsTakenAsVALUEWouldBe() async throws {
    try await splintctl("set", "--file", file, "retries", "--stdin", input: "3\n")
    try await splintctl("set", "--file", file, "zip", "--string", "-", input: "02134\n")
    try await splintctl("set", "--file", file, "name", "-", input: "Alice")
    try await splintctl("set", "--file", file, "empty", "--stdin", input: "")
    #expect(try await splintctl("get", "--file", file, "retries").stdout == "3\n")
    #expect(try await splintctl("get", "--file", file, "zip").stdout == "\"02134\"\n")
    #expect(try await splintctl("get", "--file", file, "name").stdout == "\"Alice\"\n")
    #expect(try await splintctl("get", "--file", file, "empty").stdout == "\"\"\n")
  }

  @Test func oneTrailingNewlineIsDroppedAsSecretStoreDropsIt() async throws {
    for (key, input, stored) in [
      ("echoed", "text\n", #""text""#), ("printf", "text", #""text""#), ("windows", "text\r\n", #""text""#),
      ("blank-line", "text\n\n", #""text\n""#), ("json", "\"text\\n\"\n", #""text\n""#),
    ] {
      #expect(try await splintctl("set", "--file", file, key, "--stdin", input: input).status == 0)
      #expect(try await splintctl("get", "--file", file, key).stdout == stored + "\n", "\(key)")
    }
    let help = try await splintctl("set", "--help").stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(help.contains("one trailing newline (\\n or \\r\\n, as echo and editors add) is dropped"))
  }

  @Test func stdinTogetherWithAValueIsAUsageError() async throws {
    let output = try await splintctl("set", "--file", file, "k", "--stdin", "1", input: "2")
    #expect(output.status == 64)
    #expect(output.stderr.contains("Give the value as VALUE or on standard input with --stdin, not both."))
    let neither = try await splintctl("set", "--file", file, "k")
    #expect(neither.status == 64)
    #expect(neither.stderr.contains("on standard input with --stdin (or - as VALUE)"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test func standardInputThatIsNotUTF8IsAUsageError() async throws {
    for arguments in [["set", "--file", file, "k", "--stdin"], ["set", "--file", file, "k", "-"]] {
      let output = try await splintctl(arguments, bytes: Data([0x63, 0x61, 0x66, 0xE9, 0x0A]))
      #expect(output.status == 64)
      #expect(
        output.stderr
          == "splintctl: standard input is not valid UTF-8 at byte 4: \"caf\\xe9\\x0a\".\nsplintctl reads values as "
          + "UTF-8 text: convert it first, for example with iconv -f LATIN1 -t UTF-8.\n")
    }
    #expect(!FileManager.default.fileExists(atPath: file))
  }
}
