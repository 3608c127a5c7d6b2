#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A JSON Schema (draft 2020-12) for a settings file, made from a program's declared keys (see ``SettingKeys``):
/// each key's JSON type and its default, so that nobody writes the obvious part by hand. Add the rules the types do
/// not say (a range, a pattern) to its text, then give the file to `splintctl schema --suite NAME --from FILE`, which
/// puts it beside the settings file and points the file's `"$schema"` at it: VS Code then checks and completes the
/// settings file as it is edited (the SharingAPreference guide shows it).
///
/// ```swift
/// enum Mode: String, CaseIterable, SettingValue { case fast, thorough }
///
/// extension SettingKeys {
///   static let interval = SettingKey("interval", default: 30)
///   static let mode = SettingKey("mode", default: Mode.fast)
///   static let hosts = SettingKey("hosts", default: ["a.example.com"])
/// }
///
/// print(SettingsSchema(keys: [.interval, .mode, .hosts]).jsonText)
/// ```
///
/// prints (the `$schema` and `$version` members of the file described too, so that `"additionalProperties": false`
/// can be added without making them wrong):
///
/// ```json
/// {
///   "$schema": "https://json-schema.org/draft/2020-12/schema",
///   "type": "object",
///   "properties": {
///     "$schema": {
///       "description": "Where editors find this schema (splintctl schema sets it).",
///       "type": "string"
///     },
///     "$version": {
///       "description": "The version of the settings' shape, which the program's migrations keep.",
///       "type": "integer",
///       "minimum": 0,
///       "doNotSuggest": true
///     },
///     "hosts": {
///       "type": "array",
///       "default": ["a.example.com"],
///       "items": {
///         "type": "string"
///       }
///     },
///     "interval": {
///       "type": "integer",
///       "default": 30
///     },
///     "mode": {
///       "enum": ["fast", "thorough"],
///       "default": "fast"
///     }
///   },
///   "additionalProperties": true
/// }
/// ```
///
/// What each type becomes: `Bool` a boolean; the integer types an integer, within their range (`UInt8` from 0 to
/// 255; `UInt` and `UInt64` up to `Int.max`, the most a file holds); `Double` and `Float` a number; `String`, `URL`
/// and `Date` a string, `Data` a string of base64; an `Optional` also `null`; an `Array` or a `Set` an array of its
/// elements' schema; a `[String: Value]` an object of its values' schema; a `CaseIterable` type stored by its raw
/// values an `enum` of them; another `RawRepresentable` type its raw value's; ``JSONValue`` anything; another type
/// (a `Codable` struct) the kind of JSON its default is, with the members its default has. Other keys are allowed
/// (`"additionalProperties": true`): a newer version of the program may add some, and another program sharing the
/// file may have its own.
public struct SettingsSchema: Sendable, Hashable, CustomStringConvertible {
  /// The schema.
  public let json: JSONValue

  /// A schema for the settings `keys` declare, each key described by its type and its default.
  ///
  /// - Parameter keys: The program's declared keys (`[.interval, .mode]`); of two with one name, the first.
  public init(keys: [SettingKeys]) {
    var properties: [JSONKey: JSONValue] = [:]
    for case let key as any DescribedSettingKey in keys where properties[JSONKey(key.name)] == nil {
      properties[JSONKey(key.name)] = .object(key.propertySchema)
    }
    self.init(properties: properties)
  }

  /// A starting schema for the settings `values` hold, from the kinds of JSON they are (a number is a number, not an
  /// integer, which a value in the file cannot tell), for a file whose program declares no keys.
  package init(values: [JSONKey: JSONValue]) {
    self.init(properties: values.mapValues { .object(ValueSchemas.inferred(from: $0)) })
  }

  private init(properties: [JSONKey: JSONValue]) {
    var all = properties
    all["$schema"] = [
      "type": "string", "description": "Where editors find this schema (splintctl schema sets it).",
    ]
    all[JSONKey(SettingsDocument.versionKey)] = [
      "type": "integer", "minimum": 0, "doNotSuggest": true,
      "description": "The version of the settings' shape, which the program's migrations keep.",
    ]
    json = [
      "$schema": .string(JSONSchema.draft), "type": "object", "properties": .object(all),
      "additionalProperties": true,
    ]
  }

  /// The schema as JSON text: keywords in a readable order (`$schema`, `type`, `enum`, `default`, the rules, then
  /// subschemas), settings' names sorted, two spaces a level, short arrays of plain values on one line, a newline
  /// at the end. The same schema is always written the same way.
  public var jsonText: String {
    var text = ""
    SchemaWriter.write(json, role: .schema, indent: "", into: &text)
    return text + "\n"
  }

  /// ``jsonText``.
  public var description: String { jsonText }
}

/// A declared key, whatever the type of its value: what ``SettingsSchema`` reads of it.
private protocol DescribedSettingKey {
  var name: String { get }
  /// The schema of the key's value, with its default.
  var propertySchema: [JSONKey: JSONValue] { get }
}

extension SettingKey: DescribedSettingKey {
  fileprivate var propertySchema: [JSONKey: JSONValue] {
    let example = try? defaultValue.jsonValue()
    var schema = ValueSchemas.schema(for: Value.self, example: example)
    schema["default"] = example
    return schema
  }
}

// MARK: - Types' schemas

/// A type whose schema the type alone tells.
private protocol SchemaDescribedValue {
  static var valueSchema: [JSONKey: JSONValue] { get }
}

enum ValueSchemas {
  /// The schema of values of `type`, whose default (or other value) is `example`.
  static func schema(for type: any SettingValue.Type, example: JSONValue?) -> [JSONKey: JSONValue] {
    if let described = type as? any SchemaDescribedValue.Type { return described.valueSchema }
    if let iterable = type as? any CaseIterable.Type {
      let values = caseValues(of: iterable)
      if !values.isEmpty { return ["enum": .array(values)] }
    }
    if let representable = type as? any RawRepresentable.Type, let schema = rawSchema(of: representable) {
      return schema
    }
    return inferred(from: example)
  }

  /// The JSON of every case, in order, of a type stored as its cases' JSON.
  private static func caseValues<T: CaseIterable>(of type: T.Type) -> [JSONValue] {
    T.allCases.compactMap { try? ($0 as? any SettingValue)?.jsonValue() }
  }

  /// The schema of the raw value, when it is a setting's value.
  private static func rawSchema<T: RawRepresentable>(of type: T.Type) -> [JSONKey: JSONValue]? {
    (T.RawValue.self as? any SettingValue.Type).map { schema(for: $0, example: nil) }
  }

  /// The schema of the kind of JSON `example` is (an object with its members' kinds); no rule for no example.
  static func inferred(from example: JSONValue?) -> [JSONKey: JSONValue] {
    switch example {
    case .bool?: ["type": "boolean"]
    case .int?, .double?: ["type": "number"]
    case .string?: ["type": "string"]
    case .array?: ["type": "array"]
    case .object(let members)?:
      ["type": "object", "properties": .object(members.mapValues { .object(inferred(from: $0)) })]
    case .null?, nil: [:]
    }
  }

  /// `schema`, allowing `null` too.
  static func orNull(_ schema: [JSONKey: JSONValue]) -> [JSONKey: JSONValue] {
    var schema = schema
    switch schema["type"] {
    case .string(let type)?: schema["type"] = [.string(type), "null"]
    case .array(let types)? where !types.contains("null"): schema["type"] = .array(types + ["null"])
    default: break
    }
    if case .array(let values)? = schema["enum"], !values.contains(.null) { schema["enum"] = .array(values + [.null]) }
    return schema
  }
}

extension Bool: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "boolean"] }
}

extension SchemaDescribedValue where Self: FixedWidthInteger {
  /// An integer in the type's range, as far as a settings file holds integers (up to `Int.max`).
  fileprivate static var valueSchema: [JSONKey: JSONValue] {
    var schema: [JSONKey: JSONValue] = ["type": "integer"]
    if let minimum = Int(exactly: Self.min), minimum != Int.min {
      schema["minimum"] = .int(minimum)
    }
    if let maximum = Int(exactly: Self.max), maximum != Int.max {
      schema["maximum"] = .int(maximum)
    } else if !Self.isSigned {
      schema["maximum"] = .int(Int.max)
    }
    return schema
  }
}

extension Int: SchemaDescribedValue {}
extension Int8: SchemaDescribedValue {}
extension Int16: SchemaDescribedValue {}
extension Int32: SchemaDescribedValue {}
extension Int64: SchemaDescribedValue {}
extension UInt: SchemaDescribedValue {}
extension UInt8: SchemaDescribedValue {}
extension UInt16: SchemaDescribedValue {}
extension UInt32: SchemaDescribedValue {}
extension UInt64: SchemaDescribedValue {}

extension Double: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "number"] }
}

extension Float: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "number"] }
}

extension String: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "string"] }
}

extension URL: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "string"] }
}

extension Date: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "string"] }
}

extension Data: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { ["type": "string", "contentEncoding": "base64"] }
}

extension JSONValue: SchemaDescribedValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { [:] }
}

extension Optional: SchemaDescribedValue where Wrapped: SettingValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] {
    ValueSchemas.orNull(ValueSchemas.schema(for: Wrapped.self, example: nil))
  }
}

extension Array: SchemaDescribedValue where Element: SettingValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { arraySchema(of: Element.self) }
}

extension Set: SchemaDescribedValue where Element: SettingValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] { arraySchema(of: Element.self) }
}

extension Dictionary: SchemaDescribedValue where Key == String, Value: SettingValue {
  fileprivate static var valueSchema: [JSONKey: JSONValue] {
    let values = ValueSchemas.schema(for: Value.self, example: nil)
    return values.isEmpty ? ["type": "object"] : ["type": "object", "additionalProperties": .object(values)]
  }
}

/// An array of `element`s: its schema for `items`, when it has one.
private func arraySchema(of element: any SettingValue.Type) -> [JSONKey: JSONValue] {
  let items = ValueSchemas.schema(for: element, example: nil)
  return items.isEmpty ? ["type": "array"] : ["type": "array", "items": .object(items)]
}

// MARK: - Writing

/// Writes a schema as readable JSON text (see ``SettingsSchema/jsonText``).
enum SchemaWriter {
  /// What a JSON value is to the schema: which tells how its members are ordered.
  enum Role {
    /// A schema: keywords in ``order``.
    case schema
    /// An object of schemas by name (`properties`, `$defs`): names sorted.
    case schemas
    /// An array of schemas (`prefixItems`).
    case schemaList
    /// A value (`default`, `enum`): keys sorted.
    case data
  }

  /// The order keywords are written in; others follow, sorted.
  static let order = [
    "$schema", "$id", "title", "description", "type", "enum", "const", "default", "examples", "minimum",
    "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
    "contentEncoding", "prefixItems", "items", "minItems", "maxItems", "properties", "additionalProperties", "$defs",
  ]

  /// Arrays of plain values at most this long (as compact JSON) are written on one line.
  static let inlineLength = 60

  static func write(_ value: JSONValue, role: Role, indent: String, into text: inout String) {
    let inner = indent + "  "
    switch value {
    case .array(let elements) where !elements.isEmpty:
      if role == .data, let line = inline(elements) {
        text += line
        return
      }
      text += "[\n"
      for (index, element) in elements.enumerated() {
        text += inner
        write(element, role: role == .schemaList ? .schema : .data, indent: inner, into: &text)
        text += index == elements.count - 1 ? "\n" : ",\n"
      }
      text += indent + "]"
    case .object(let members) where !members.isEmpty:
      let keys = members.keys.sorted { first, second in
        guard role == .schema else { return first < second }
        let (a, b) = (order.firstIndex(of: first.text) ?? order.count, order.firstIndex(of: second.text) ?? order.count)
        return a != b ? a < b : first < second
      }
      text += "{\n"
      for (index, key) in keys.enumerated() {
        text += inner + JSONValue.string(key.text).description + ": "
        write(members[key] ?? .null, role: memberRole(of: key.text, in: role), indent: inner, into: &text)
        text += index == keys.count - 1 ? "\n" : ",\n"
      }
      text += indent + "}"
    default:
      text += value.description
    }
  }

  /// What a member `key` of a value in `role` is.
  private static func memberRole(of key: String, in role: Role) -> Role {
    switch role {
    case .schemas: return .schema
    case .schema:
      switch key {
      case "properties", "$defs", "definitions": return .schemas
      case "items", "additionalProperties": return .schema
      case "prefixItems": return .schemaList
      default: return .data
      }
    case .schemaList, .data: return .data
    }
  }

  /// `elements` on one line (`["a", "b"]`), when they are plain values and short enough.
  private static func inline(_ elements: [JSONValue]) -> String? {
    for element in elements {
      switch element {
      case .array, .object: return nil
      default: continue
      }
    }
    let line = "[" + elements.map(\.description).joined(separator: ", ") + "]"
    return line.count <= inlineLength ? line : nil
  }
}
