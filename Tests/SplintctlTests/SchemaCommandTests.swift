import Foundation
import TestSupport
import Testing

/// `splintctl schema`: a JSON Schema beside the settings file, and the file's `"$schema"` pointing at it.
@Suite("splintctl schema")
struct SchemaCommandTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }
  var schemaFile: String { scratch.url("settings.schema.json").path }

  func write(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

  let schema = """
    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "properties": {
        "interval": {"type": "integer", "minimum": 1, "maximum": 300, "default": 30, "description": "Seconds."}
      }
    }

    """

  @Test("--from FILE: the schema is written beside the file as given, and \"$schema\" points at it")
  func fromFile() async throws {
    try write("// mine\n{\n  \"interval\": 60\n}\n", to: file)
    let source = scratch.url("mine.json").path
    try write(schema, to: source)
    let output = try await splintctl("schema", "--file", file, "--from", source)
    #expect(output.status == 0, "\(output)")
    #expect(output.stdout == schemaFile + "\n")
    #expect(output.stderr.isEmpty)
    #expect(try read(schemaFile) == schema)
    #expect(try read(file) == "// mine\n{\n  \"interval\": 60,\n  \"$schema\": \"./settings.schema.json\"\n}\n")
    // "$schema" is no setting.
    #expect(try await splintctl("list", "--file", file).stdout == "{\n  \"interval\": 60\n}\n")
    #expect(try await splintctl("get", "--file", file, "$schema").status == 1)
    let refused = try await splintctl("set", "--file", file, "$schema", "x")
    #expect(refused.status == 64)
    #expect(refused.errorText.contains("\"$schema\" is reserved: it tells editors where the settings' JSON Schema is."))
  }

  @Test("--from -: the schema from standard input, replacing the one there; a value it refuses is told")
  func fromStandardInput() async throws {
    try write(#"{"interval": 600, "$schema": "https://example.com/old.json"}"#, to: file)
    try write("{}", to: schemaFile)
    let output = try await splintctl("schema", "--file", file, "--from", "-", input: schema)
    #expect(output.status == 0, "\(output)")
    #expect(try read(schemaFile) == schema)
    // Each a message of its own, told on standard error (lines longer than 160 characters broken).
    #expect(
      output.errorText
        == """
        splintctl: note: "$schema" in \(file) was "https://example.com/old.json", and is "./settings.schema.json" now. \
        splintctl: warning: \(file): interval: must be at most 300 (maximum), found 600
        """)
    #expect(try read(file) == #"{"interval": 600, "$schema": "./settings.schema.json"}"#)
  }

  @Test("a schema with a keyword that is not checked is refused, and nothing is written")
  func refusedSchema() async throws {
    try write(#"{"interval": 60}"#, to: file)
    let source = scratch.url("mine.json").path
    try write(#"{"properties": {"mode": {"oneOf": [{"const": "a"}]}}}"#, to: source)
    let output = try await splintctl("schema", "--file", file, "--from", source)
    #expect(output.status == 64)
    #expect(
      output.errorText.hasPrefix(
        "splintctl: the schema in \(source) is refused: #/properties/mode: \"oneOf\" is not supported: a rule that would"
      ))
    #expect(output.errorText.hasSuffix("Nothing was written."))
    #expect(!FileManager.default.fileExists(atPath: schemaFile))
    #expect(try read(file) == #"{"interval": 60}"#)

    try write("{", to: source)
    let broken = try await splintctl("schema", "--file", file, "--from", source)
    #expect(broken.status == 64)
    #expect(
      broken.errorText
        == "splintctl: the schema in \(source) is not JSON: line 1, column 2: the text ends where a key in double quotes should be. Nothing was written."
    )
    let missing = try await splintctl("schema", "--file", file, "--from", scratch.url("none.json").path)
    #expect(missing.status == 64)
    #expect(missing.errorText.contains("cannot read \(scratch.url("none.json").path): No such file or directory."))
  }

  @Test("without --from: the schema there is kept, or a starting one is written from the values the file holds")
  func withoutFrom() async throws {
    try write(#"{"interval": 60, "name": "a"}"#, to: file)
    let output = try await splintctl("schema", "--file", file)
    #expect(output.status == 0, "\(output)")
    let written = try read(schemaFile)
    #expect(written.contains("\"interval\": {\n      \"type\": \"number\"\n    },"))
    #expect(written.contains("\"name\": {\n      \"type\": \"string\"\n    }"))
    #expect(try read(file) == #"{"interval": 60, "name": "a", "$schema": "./settings.schema.json"}"#)

    try write(schema, to: schemaFile)
    try write(#"{"interval": 0}"#, to: file)
    let kept = try await splintctl("schema", "--file", file)
    #expect(kept.status == 0)
    #expect(kept.errorText == "splintctl: warning: \(file): interval: must be at least 1 (minimum), found 0")
    #expect(try read(schemaFile) == schema, "kept as it was")
    #expect(try read(file) == #"{"interval": 0, "$schema": "./settings.schema.json"}"#)

    try write(#"{"required": ["interval"]}"#, to: schemaFile)
    let refused = try await splintctl("schema", "--file", file)
    #expect(refused.status == 64)
    #expect(
      refused.errorText.contains(
        "splintctl: the schema in \(schemaFile) is refused: #: \"required\" is refused at the top level"))
  }

  @Test("--suite: beside the suite's file, which is made when there is none")
  func suite() async throws {
    let home = scratch.url("config").path
    let environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": home]) { $1 }
    let output = try await splintctl("schema", "--suite", "com.example.app", environment: environment)
    #expect(output.status == 0, "\(output)")
    #expect(output.stdout == "\(home)/com.example.app/settings.schema.json\n")
    #expect(try read("\(home)/com.example.app/settings.json") == "{\n  \"$schema\": \"./settings.schema.json\"\n}\n")
    #expect(try read("\(home)/com.example.app/settings.schema.json").contains("\"additionalProperties\": true"))
  }

  @Test("a schema file that cannot be read or written is told, with its path")
  func unusableSchemaFile() async throws {
    try write(#"{"interval": 60}"#, to: file)
    try FileManager.default.createDirectory(atPath: schemaFile, withIntermediateDirectories: false)
    let output = try await splintctl("schema", "--file", file)
    #expect(output.status == 70)
    #expect(output.errorText.contains(schemaFile))
    let source = scratch.url("mine.json").path
    try write(schema, to: source)
    let writing = try await splintctl("schema", "--file", file, "--from", source)
    #expect(writing.status == 70)
    #expect(try read(file) == #"{"interval": 60}"#)
  }
}
