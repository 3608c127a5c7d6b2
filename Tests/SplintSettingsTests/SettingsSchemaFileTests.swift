import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// The schema file beside a settings file, and the reserved `"$schema"` member that points at it.
@Suite struct SettingsSchemaFileTests {
  let scratch = Scratch()

  @Test("\"$schema\" is not a setting: keys, values, export, reset and import leave it alone, and set refuses it")
  func reservedMember() throws {
    let store = scratch.store()
    try #"{"$schema": "./settings.schema.json", "a": 1}"#.write(to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(store.keys == ["a"])
    #expect(store.values == ["a": 1])
    #expect(store.value(forKey: "$schema") == nil)
    #expect(store.exactText(version: true) == "{\n  \"a\": 1\n}")
    #expect(throws: SettingsError.reservedKey("$schema")) { try store.set("x", forKey: "$schema") }
    #expect(
      SettingsError.reservedKey("$schema").description
        == """
        "$schema" is reserved: it tells editors where the settings' JSON Schema is. Set it with `splintctl schema`, \
        which writes the schema beside the file. Nothing was written.
        """)
    try store.update { settings in #expect(settings["$schema"] == nil) }
    try store.importSettings(from: Data(#"{"$schema": "elsewhere", "b": 2}"#.utf8), replacing: true)
    #expect(store.values == ["b": 2])
    #expect(try SettingsDocument(parsing: Array(store.text.utf8)).schemaReference == "./settings.schema.json")
    #expect(try store.resetAll() == ["b"])
    #expect(try SettingsDocument(parsing: Array(store.text.utf8)).schemaReference == "./settings.schema.json")
  }

  @Test("installing writes the schema beside the file and points \"$schema\" at it, keeping the file's comments")
  func install() throws {
    let store = scratch.store()
    try "// mine\n{\n  \"a\": 1, // one\n}\n".write(to: store.fileURL, atomically: true, encoding: .utf8)
    #expect(store.schemaFileURL == scratch.url("settings.schema.json"))
    #expect(store.schemaReference == "./settings.schema.json")
    #expect(try store.readSchemaFile() == nil)
    let schema = Array("{\"type\": \"object\"}\n".utf8)
    #expect(try store.installSchema(schema) == nil)
    #expect(try store.readSchemaFile() == schema)
    #expect(FileManager.default.contents(atPath: store.schemaFileURL.path) == Data(schema))
    #expect(store.text == "// mine\n{\n  \"a\": 1, // one\n  \"$schema\": \"./settings.schema.json\",\n}\n")
    let attributes = try FileManager.default.attributesOfItem(atPath: store.schemaFileURL.path)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    // Again: the same reference, nothing to write in the settings file.
    let writes = store.writeCount
    #expect(try store.installSchema(nil) == "./settings.schema.json")
    #expect(store.writeCount == writes)
    #expect(try store.readSchemaFile() == schema)
  }

  @Test("where the schema goes for other names")
  func names() {
    #expect(SettingsStore(filePath: "/etc/app/app.json").schemaFileURL.path == "/etc/app/app.schema.json")
    #expect(SettingsStore(filePath: "/etc/app/config").schemaFileURL.path == "/etc/app/config.schema.json")
    #expect(SettingsStore(filePath: "/etc/app/config").schemaReference == "./config.schema.json")
  }

  @Test("a schema path that is not a regular file, or a settings file that is not JSON: nothing is written")
  func failures() throws {
    let store = scratch.store()
    try #"{"a": 1}"#.write(to: store.fileURL, atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(at: store.schemaFileURL, withIntermediateDirectories: false)
    let unreadable = #expect(throws: SettingsError.self) { try store.readSchemaFile() }
    #expect(unreadable?.code == .notARegularFile)
    #expect(unreadable?.summary.contains(store.schemaFileURL.path) == true)
    let unwritable = #expect(throws: SettingsError.self) { try store.installSchema(Array("{}".utf8)) }
    #expect(unwritable?.code == .notARegularFile)
    #expect(store.text == #"{"a": 1}"#)

    // A schema file that cannot be read: a link that leads to itself.
    let looped = scratch.store("looped.json")
    try FileManager.default.createSymbolicLink(
      atPath: looped.schemaFileURL.path, withDestinationPath: looped.schemaFileURL.lastPathComponent)
    let loop = #expect(throws: SettingsError.self) { try looped.readSchemaFile() }
    #expect(loop?.code == .unreadableFile)
    #expect(loop?.summary.contains(looped.schemaFileURL.path) == true)

    let broken = scratch.store("broken.json")
    try "{".write(to: broken.fileURL, atomically: true, encoding: .utf8)
    #expect(throws: SettingsError.self) { try broken.installSchema(Array("{}".utf8)) }
    #expect(broken.fileError?.code == .corruptFile)
    #expect(!FileManager.default.fileExists(atPath: broken.schemaFileURL.path))
  }
}
