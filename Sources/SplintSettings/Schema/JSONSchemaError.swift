/// Why a JSON Schema is refused when it is compiled (``JSONSchema/init(_:)``), and where: nothing is ever checked
/// against a schema that is only partly understood.
package struct JSONSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of refusal.
  package enum Kind: Sendable, Equatable {
    /// A keyword of JSON Schema that changes what is valid, which ``JSONSchema`` does not check (`oneOf`, `if`,
    /// `required` below the top level, ...): refused, because ignoring it would let through what it forbids.
    case unsupportedKeyword
    /// `required` at the top level: the fleet's values are a partial layer, in which any key may rightly be absent.
    case requiredAtTopLevel
    /// A member that is no keyword of JSON Schema draft 2020-12, nor an annotation (a misspelling such as
    /// `maximun`, or a keyword of another draft).
    case unknownKeyword
    /// A keyword whose value is not what the keyword takes (`"minimum": "5"`).
    case invalidValue
    /// Something that is not a schema (an object, `true` or `false`) where a schema must be.
    case notASchema
    /// A `$ref` to another document, or by an anchor: only pointers within the schema are followed.
    case remoteReference
    /// A `$ref` to a place in the schema that holds no schema.
    case unresolvedReference
    /// `$ref`s that lead back where they started without reaching a value, which no check would ever end.
    case referenceLoop
    /// A `pattern` the matcher refuses (see ``SchemaPattern``).
    case pattern(SchemaPatternError.Kind)
  }

  /// What kind of refusal.
  package let kind: Kind
  /// The keyword refused, or whose value is; nil for what is not a schema at all.
  package let keyword: String?
  /// Where in the schema: a JSON Pointer as a URI fragment (`#/properties/mode`, `#` for the top).
  package let location: String
  /// What is wrong, and what to do, in words; text from the schema in it is shortened and escaped.
  package let reason: String

  init(_ kind: Kind, keyword: String?, at pointer: [String], _ reason: String) {
    self.kind = kind
    self.keyword = keyword
    self.location = JSONSchemaError.fragment(pointer)
    self.reason = reason
  }

  package var description: String { "\(SchemaText.escaped(location, limit: 200)): \(reason)" }

  /// A pointer's tokens as a URI fragment: `#/properties/a~1b`.
  static func fragment(_ pointer: [String]) -> String {
    "#" + pointer.map { "/" + $0.replacing("~", with: "~0").replacing("/", with: "~1") }.joined()
  }
}

/// A place in a value, a rule of the schema there, and what the value holds there: why it is not valid.
package struct JSONSchemaViolation: Sendable, Equatable, CustomStringConvertible {
  /// A step into a value: an object's member, or an array's element.
  package enum PathComponent: Sendable, Hashable {
    case key(String)
    case index(Int)
  }

  /// Where in the value, from its top (empty for the value itself).
  package let path: [PathComponent]
  /// The keyword whose rule is broken: `maximum`, `type`, `additionalProperties`.
  package let keyword: String
  /// The rule, as a sentence's predicate: "must be at most 300".
  package let rule: String
  /// What the value holds there, shortened, with control characters escaped.
  package let found: String

  /// The path as people write it: `interval`, `window.width`, `hosts[1]`, `["a.b"]` for a key that is not a plain
  /// name; empty for the value itself.
  package var keyPath: String {
    var text = ""
    for component in path {
      switch component {
      case .index(let index):
        text += "[\(index)]"
      case .key(let key) where Self.isPlainName(key):
        text += text.isEmpty ? key : "." + key
      case .key(let key):
        text += "[" + SchemaText.shown(.string(key)) + "]"
      }
    }
    return text
  }

  /// "interval: must be at most 300 (maximum), found 600".
  package var description: String {
    "\(path.isEmpty ? "the value" : keyPath): \(rule) (\(keyword)), found \(found)"
  }

  /// Whether `key` reads unambiguously in a dotted path: ASCII letters, digits, `_`, `-` and `$`, and not empty.
  private static func isPlainName(_ key: String) -> Bool {
    !key.isEmpty
      && key.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII
          && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-$".unicodeScalars.contains(scalar))
      }
  }
}
