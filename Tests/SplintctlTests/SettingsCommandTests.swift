import Foundation
import TestSupport
import Testing

/// `splintctl get`, `set`, `delete`, `list`, `path` and `watch`, on files in a temporary directory.
@Suite("splintctl settings")
struct SettingsCommandTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  @Test func setTakesJSONWhenItIsJSONAndAStringOtherwise() throws {
    for (key, value) in [
      ("retries", "3"), ("ratio", "0.5"), ("enabled", "true"), ("hosts", #"["a", "b"]"#), ("name", "Alice"),
    ] {
      #expect(try splintctl("set", "--file", file, key, value).status == 0)
    }
    #expect(try splintctl("set", "--file", file, "--string", "zip", "02134").status == 0)
    #expect(try splintctl("get", "--file", file, "retries").stdout == "3\n")
    #expect(try splintctl("get", "--file", file, "ratio").stdout == "0.5\n")
    #expect(try splintctl("get", "--file", file, "enabled").stdout == "true\n")
    #expect(try splintctl("get", "--file", file, "hosts").stdout == "[\n  \"a\",\n  \"b\"\n]\n")
    #expect(try splintctl("get", "--file", file, "name").stdout == "\"Alice\"\n")
    #expect(try splintctl("get", "--file", file, "zip").stdout == "\"02134\"\n")
    #expect(
      try splintctl("list", "--file", file).stdout
        == "{\n  \"enabled\": true,\n  \"hosts\": [\n    \"a\",\n    \"b\"\n  ],\n  \"name\": \"Alice\",\n  \"ratio\": 0.5,\n  \"retries\": 3,\n  \"zip\": \"02134\"\n}\n"
    )
  }

  @Test func aValueStartingWithADashGoesAfterTheTerminator() throws {
    #expect(try splintctl("set", "--file", file, "offset", "-5").status == 64)
    #expect(try splintctl("set", "--file", file, "offset", "--", "-5").status == 0)
    #expect(try splintctl("get", "--file", file, "offset").stdout == "-5\n")
    #expect(try splintctl("set", "--help").stdout.contains("goes after --"))
  }

  @Test func getOfAnAbsentKeyExitsOneWithNothingOnStdout() throws {
    let output = try splintctl("get", "--file", file, "missing")
    #expect(output.status == 1)
    #expect(output.stdout.isEmpty)
    #expect(output.stderr == "splintctl: missing is not set in \(file).\n")
  }

  @Test func deleteRemovesTheKey() throws {
    try splintctl("set", "--file", file, "a", "1")
    #expect(try splintctl("delete", "--file", file, "a").status == 0)
    #expect(try splintctl("delete", "--file", file, "a").status == 0)
    #expect(try splintctl("get", "--file", file, "a").status == 1)
  }

  @Test func suitesLiveUnderXDGConfigHome() throws {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    let path = try Programs.run([Programs.helper("splintctl"), "path", "--suite", "app"], environment: environment)
    #expect(path.stdout == scratch.url("app/settings.json").path + "\n")
  }

  @Test func badChoicesOfFileAreUsageErrors() throws {
    let neither = try splintctl("get", "k")
    #expect(neither.status == 64)
    #expect(neither.stderr.contains("Name the settings with --suite NAME or --file PATH"))
    #expect(try splintctl("get", "--suite", "a", "--file", file, "k").status == 64)
    let suite = try splintctl("get", "--suite", "../escape", "k")
    #expect(suite.status == 64)
    #expect(suite.stderr.contains("cannot name a settings suite"))
  }

  @Test func aCorruptFileIsReportedAndTheNextSetKeepsIt() throws {
    try "{oops".write(toFile: file, atomically: true, encoding: .utf8)
    let get = try splintctl("get", "--file", file, "a")
    #expect(get.status == 70)
    #expect(get.stderr.contains("is not a JSON object (line 1, column 2: expected a key in double quotes)"))
    #expect(get.stderr.split(separator: "\n").count == 1, "told once: \(get.stderr)")
    #expect(try splintctl("list", "--file", file).status == 70)
    let set = try splintctl("set", "--file", file, "a", "1")
    #expect(set.status == 0)
    #expect(set.stderr.hasPrefix("splintctl: warning: The settings file"))
    #expect(try splintctl("get", "--file", file, "a").stdout == "1\n")
    let kept = try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).filter {
      $0.contains("corrupt")
    }
    #expect(kept.count == 1)
  }

  @Test func aWriteThatFailsExitsSeventy() throws {
    try Data().write(to: scratch.directory.appendingPathComponent("blocker"))
    let output = try splintctl("set", "--file", scratch.url("blocker/settings.json").path, "a", "1")
    #expect(output.status == 70)
    #expect(output.stderr.contains("Could not write the settings file"))
  }

  @Test("watch prints each change by another process and by a hand edit, at once")
  func watchSeesChanges() async throws {
    let watcher = try Programs.start([Programs.helper("splintctl"), "watch", "--file", file, "theme", "size"])
    defer { watcher.send(SIGTERM) }
    // The watcher may not be watching yet: write until it reports, then carry on.
    var attempt = 0
    let started = await eventually {
      attempt += 1
      _ = try? splintctl("set", "--file", file, "theme", "\"attempt-\(attempt)\"")
      return watcher.stdoutSoFar.contains("theme \"attempt-")
    }
    #expect(started)
    try splintctl("set", "--file", file, "ignored", "1")
    try splintctl("set", "--file", file, "size", "12")
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("size 12\n") })
    try #"{"size": 14}"#.write(toFile: file, atomically: false, encoding: .utf8)  // by hand, in place
    #expect(await eventually { watcher.stdoutSoFar.contains("size 14\ntheme removed\n") })
    watcher.send(SIGTERM)
    let output = watcher.wait()
    #expect(!output.stdout.contains("ignored"))
  }

  @Test func watchJSONPrintsOneObjectALine() async throws {
    let watcher = try Programs.start([Programs.helper("splintctl"), "watch", "--file", file, "--json"])
    defer { watcher.send(SIGTERM) }
    var attempt = 0
    #expect(
      await eventually {
        attempt += 1
        _ = try? splintctl("set", "--file", file, "n", String(attempt))
        return watcher.stdoutSoFar.contains(#"{"key":"n","value":"#)
      })
    try splintctl("delete", "--file", file, "n")
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("{\"key\":\"n\",\"removed\":true}\n") })
  }
}

@Suite("splintctl help")
struct HelpTests {
  @Test func helpDocumentsTheExitStatuses() throws {
    let help = try splintctl("--help")
    #expect(help.status == 0)
    for line in [
      "1   absent", "64  usage error", "69  the Secret Service is unavailable or locked", "70  any other failure",
    ] {
      #expect(help.stdout.contains(line), "\(line)")
    }
  }

  @Test(arguments: ["bash", "zsh", "fish"])
  func completionScripts(shell: String) throws {
    let script = try splintctl("--generate-completion-script", shell)
    #expect(script.status == 0)
    #expect(script.stdout.contains("sandbox") && script.stdout.contains("secret"))
  }
}

/// `splintctl set KEY --stdin` and `splintctl set KEY -`.
@Suite("splintctl set from standard input")
struct SetFromStandardInputTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  @Test func aValueTooLongForTheCommandLineRoundTrips() throws {
    let long = String(repeating: "abcdé", count: 50_000)  // 300,000 bytes; one argument may hold 131,072
    #expect(long.utf8.count == 300_000)
    #expect(try splintctl("set", "--file", file, "long", "--stdin", input: long).status == 0)
    #expect(try splintctl("get", "--file", file, "long").stdout == "\"\(long)\"\n")
    let json = "[" + String(repeating: "1234567,", count: 37_499) + "123456]"  // 300,000 bytes of JSON
    #expect(json.utf8.count == 300_000)
    #expect(try splintctl("set", "--file", file, "numbers", "-", input: json).status == 0)
    let numbers = try splintctl("get", "--file", file, "numbers").stdout
    #expect(numbers.split(separator: "\n").count == 37_500 + 2)
    #expect(numbers.hasPrefix("[\n  1234567,\n") && numbers.hasSuffix(",\n  123456\n]\n"))
  }

  @Test func theValueIsTakenAsVALUEWouldBe() throws {
    try splintctl("set", "--file", file, "retries", "--stdin", input: "3\n")
    try splintctl("set", "--file", file, "zip", "--string", "-", input: "02134\n")
    try splintctl("set", "--file", file, "name", "-", input: "Alice")
    try splintctl("set", "--file", file, "empty", "--stdin", input: "")
    #expect(try splintctl("get", "--file", file, "retries").stdout == "3\n")
    #expect(try splintctl("get", "--file", file, "zip").stdout == "\"02134\"\n")
    #expect(try splintctl("get", "--file", file, "name").stdout == "\"Alice\"\n")
    #expect(try splintctl("get", "--file", file, "empty").stdout == "\"\"\n")
  }

  @Test func oneTrailingNewlineIsDroppedAsSecretStoreDropsIt() throws {
    for (key, input, stored) in [
      ("echoed", "text\n", #""text""#), ("printf", "text", #""text""#), ("windows", "text\r\n", #""text""#),
      ("blank-line", "text\n\n", #""text\n""#), ("json", "\"text\\n\"\n", #""text\n""#),
    ] {
      #expect(try splintctl("set", "--file", file, key, "--stdin", input: input).status == 0)
      #expect(try splintctl("get", "--file", file, key).stdout == stored + "\n", "\(key)")
    }
    let help = try splintctl("set", "--help").stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(help.contains("one trailing newline (\\n or \\r\\n, as echo and editors add) is dropped"))
  }

  @Test func stdinTogetherWithAValueIsAUsageError() throws {
    let output = try splintctl("set", "--file", file, "k", "--stdin", "1", input: "2")
    #expect(output.status == 64)
    #expect(output.stderr.contains("Give the value as VALUE or on standard input with --stdin, not both."))
    let neither = try splintctl("set", "--file", file, "k")
    #expect(neither.status == 64)
    #expect(neither.stderr.contains("on standard input with --stdin (or - as VALUE)"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test func standardInputThatIsNotUTF8IsAUsageError() throws {
    for arguments in [["set", "--file", file, "k", "--stdin"], ["set", "--file", file, "k", "-"]] {
      let output = try splintctl(arguments, bytes: Data([0x63, 0x61, 0x66, 0xE9, 0x0A]))
      #expect(output.status == 64)
      #expect(
        output.stderr
          == "splintctl: standard input is not valid UTF-8 at byte 4: \"caf\\xe9\\x0a\". splintctl reads values as "
          + "UTF-8 text: convert it first, for example with iconv -f LATIN1 -t UTF-8.\n")
    }
    #expect(!FileManager.default.fileExists(atPath: file))
  }
}
