import Foundation
import Testing

@testable import SplintSettings

private enum Mode: String, CaseIterable, SettingValue { case fast, thorough }
private enum Priority: Int, CaseIterable, SettingValue { case low = 1, high = 2 }
private enum Level: Int, SettingValue { case low = 1, high = 2 }
private struct Frame: Codable, Equatable, SettingValue {
  var width = 800
  var height = 600
  var title = "main"
  var tags: [String] = []
  var frame: [String: Bool] = ["maximized": false]
}

extension SettingKeys {
  fileprivate static let schemaInterval = SettingKey("interval", default: 30)
  fileprivate static let schemaMode = SettingKey("mode", default: Mode.fast)
  fileprivate static let schemaHosts = SettingKey("hosts", default: ["a.example.com"])
}

/// `SettingsSchema`: a starting schema from declared keys, and its text.
@Suite struct SettingsSchemaTests {
  /// The schema of one key's value.
  private func property(_ key: SettingKeys) throws -> JSONValue {
    let schema = SettingsSchema(keys: [key]).json
    guard case .object(let root) = schema, case .object(let properties)? = root["properties"] else {
      throw Failure("no properties in \(schema)")
    }
    return try #require(properties.first { !$0.key.text.hasPrefix("$") }?.value)
  }

  struct Failure: Error {
    let text: String
    init(_ text: String) { self.text = text }
  }

  @Test("the guide's sample: each key's type and default, in a stable, readable text")
  func sample() throws {
    let schema = SettingsSchema(keys: [.schemaInterval, .schemaMode, .schemaHosts])
    let expected = """
      {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
          "$schema": {
            "description": "Where editors find this schema (splintctl schema sets it).",
            "type": "string"
          },
          "$version": {
            "description": "The version of the settings' shape, which the program's migrations keep.",
            "type": "integer",
            "minimum": 0,
            "doNotSuggest": true
          },
          "hosts": {
            "type": "array",
            "default": ["a.example.com"],
            "items": {
              "type": "string"
            }
          },
          "interval": {
            "type": "integer",
            "default": 30
          },
          "mode": {
            "enum": ["fast", "thorough"],
            "default": "fast"
          }
        },
        "additionalProperties": true
      }

      """
    #expect(schema.jsonText == expected)
    #expect(schema.description == expected)
    #expect(SettingsSchema(keys: [.schemaHosts, .schemaMode, .schemaInterval]).jsonText == expected, "in any order")
    #expect(try JSONValue(parsing: schema.jsonText) == schema.json)
    let compiled = try JSONSchema(schema.json)
    #expect(compiled.isValid(["interval": 60, "mode": "thorough", "hosts": [], "$schema": "./s.json", "$version": 2]))
    #expect(
      compiled.validate(["interval": 1.5, "mode": "slow", "hosts": [1]]).map(\.description) == [
        "hosts[0]: must be a string (type), found 1", "interval: must be an integer (type), found 1.5",
        #"mode: must be one of ["fast","thorough"] (enum), found "slow""#,
      ])
  }

  @Test("each type's schema")
  func types() throws {
    let cases: [(SettingKeys, JSONValue)] = [
      (SettingKey("k", default: true), ["type": "boolean", "default": true]),
      (SettingKey("k", default: Int8(1)), ["type": "integer", "minimum": -128, "maximum": 127, "default": 1]),
      (SettingKey("k", default: Int16(1)), ["type": "integer", "minimum": -32768, "maximum": 32767, "default": 1]),
      (
        SettingKey("k", default: Int32(1)),
        ["type": "integer", "minimum": -2_147_483_648, "maximum": 2_147_483_647, "default": 1]
      ),
      (SettingKey("k", default: Int64(1)), ["type": "integer", "default": 1]),
      (SettingKey("k", default: 1), ["type": "integer", "default": 1]),
      (SettingKey("k", default: UInt8(1)), ["type": "integer", "minimum": 0, "maximum": 255, "default": 1]),
      (SettingKey("k", default: UInt16(1)), ["type": "integer", "minimum": 0, "maximum": 65535, "default": 1]),
      (SettingKey("k", default: UInt32(1)), ["type": "integer", "minimum": 0, "maximum": 4_294_967_295, "default": 1]),
      (SettingKey("k", default: UInt64(1)), ["type": "integer", "minimum": 0, "maximum": .int(Int.max), "default": 1]),
      (SettingKey("k", default: UInt(1)), ["type": "integer", "minimum": 0, "maximum": .int(Int.max), "default": 1]),
      (SettingKey("k", default: 0.5), ["type": "number", "default": 0.5]),
      (SettingKey("k", default: Float(0.5)), ["type": "number", "default": 0.5]),
      (SettingKey("k", default: Double.nan), ["type": "number"]),
      (SettingKey("k", default: "x"), ["type": "string", "default": "x"]),
      (
        SettingKey("k", default: URL(string: "https://example.com")!),
        ["type": "string", "default": "https://example.com"]
      ),
      (
        SettingKey("k", default: Date(timeIntervalSince1970: 0)),
        ["type": "string", "default": "1970-01-01T00:00:00.000Z"]
      ),
      (SettingKey("k", default: Data([1, 2])), ["type": "string", "contentEncoding": "base64", "default": "AQI="]),
      (SettingKey("k", default: JSONValue.array([1])), ["default": [1]]),
      (SettingKey("k", default: Int?.none), ["type": ["integer", "null"], "default": nil]),
      (SettingKey("k", default: Int??.none), ["type": ["integer", "null"], "default": nil]),
      (SettingKey("k", default: Mode?.none), ["enum": ["fast", "thorough", nil], "default": nil]),
      (SettingKey("k", default: JSONValue?.none), ["default": nil]),
      (SettingKey("k", default: ["a"]), ["type": "array", "items": ["type": "string"], "default": ["a"]]),
      (SettingKey("k", default: Set([2])), ["type": "array", "items": ["type": "integer"], "default": [2]]),
      (SettingKey("k", default: [JSONValue]()), ["type": "array", "default": []]),
      (
        SettingKey("k", default: ["a": 0.5]),
        ["type": "object", "additionalProperties": ["type": "number"], "default": ["a": 0.5]]
      ),
      (SettingKey("k", default: [String: JSONValue]()), ["type": "object", "default": [:]]),
      (SettingKey("k", default: Priority.high), ["enum": [1, 2], "default": 2]),
      (SettingKey("k", default: Level.high), ["type": "integer", "default": 2]),
      (
        SettingKey("k", default: Frame()),
        [
          "type": "object",
          "properties": [
            "width": ["type": "number"], "height": ["type": "number"], "title": ["type": "string"],
            "tags": ["type": "array"], "frame": ["type": "object", "properties": ["maximized": ["type": "boolean"]]],
          ],
          "default": ["width": 800, "height": 600, "title": "main", "tags": [], "frame": ["maximized": false]],
        ]
      ),
    ]
    for (key, expected) in cases {
      let property = try property(key)
      #expect(property == expected, "\(type(of: key))")
      // Every schema made compiles, and its default is valid.
      let schema = try JSONSchema(SettingsSchema(keys: [key]).json)
      if case .object(let members) = property, let value = members["default"] {
        #expect(schema.validate(value, forKey: "k").isEmpty, "\(type(of: key))")
      }
    }
  }

  @Test("of two keys with one name, the first is described")
  func duplicateNames() throws {
    let schema = SettingsSchema(keys: [SettingKey("k", default: 1), SettingKey("k", default: "x")])
    #expect(try JSONSchema(schema.json).validate("x", forKey: "k").count == 1)
  }

  @Test("a starting schema from the values a file holds: each value's kind, numbers as numbers")
  func fromValues() throws {
    let schema = SettingsSchema(values: ["a": 1, "b": "x", "c": [1], "d": ["e": true], "f": nil, "g": 1.5])
    guard case .object(let root) = schema.json, case .object(let properties)? = root["properties"] else {
      throw Failure("no properties")
    }
    #expect(properties["a"] == ["type": "number"])
    #expect(properties["b"] == ["type": "string"])
    #expect(properties["c"] == ["type": "array"])
    #expect(properties["d"] == ["type": "object", "properties": ["e": ["type": "boolean"]]])
    #expect(properties["f"] == [:])
    #expect(properties["g"] == ["type": "number"])
    #expect(try JSONSchema(schema.json).isValid(["a": 2.5, "b": "y", "c": [], "d": ["e": false], "f": 3]))
    #expect(schema.jsonText.contains("\n    \"f\": {},\n"))
  }

  @Test("the writer: keywords in order, names sorted, short arrays of plain values on one line")
  func writer() {
    var text = ""
    let schema: JSONValue = [
      "zeta": 1, "type": "array", "$defs": ["b": true, "a": ["maxItems": 2, "$ref": "#"]],
      "prefixItems": [["const": ["b": 1, "a": [1, [2]]]], false],
      "examples": [.string(String(repeating: "x", count: 70))],
    ]
    SchemaWriter.write(schema, role: .schema, indent: "", into: &text)
    let expected = """
      {
        "type": "array",
        "examples": [
          "\(String(repeating: "x", count: 70))"
        ],
        "prefixItems": [
          {
            "const": {
              "a": [
                1,
                [2]
              ],
              "b": 1
            }
          },
          false
        ],
        "$defs": {
          "a": {
            "maxItems": 2,
            "$ref": "#"
          },
          "b": true
        },
        "zeta": 1
      }
      """
    #expect(text == expected)
  }
}
