import Foundation
import Testing

@testable import SplintSettings

/// `JSONSchema`: what it refuses when compiled, and what it says of values that break it. The official test suite's
/// cases are in JSONSchemaTestSuiteTests.
@Suite struct JSONSchemaTests {
  /// The schema `text` is, compiled.
  func schema(_ text: String) throws -> JSONSchema {
    try JSONSchema(try JSONValue(parsing: text))
  }

  /// Why `text` is refused, or nil.
  func refusal(_ text: String) throws -> JSONSchemaError? {
    let value = try JSONValue(parsing: text)
    do {
      _ = try JSONSchema(value)
      return nil
    } catch {
      return error
    }
  }

  /// What `schema` says of `value`, one description a violation.
  func violations(_ schema: String, _ value: String, limit: Int = 20) throws -> [String] {
    try self.schema(schema).validate(try JSONValue(parsing: value), limit: limit).map(\.description)
  }

  // MARK: - Refused

  @Test("every keyword that changes validation and is not checked is refused, naming itself and where it is")
  func unsupportedKeywords() throws {
    for keyword in JSONSchema.unsupportedKeywords.keys where keyword != "required" {
      let error = try #require(try refusal(#"{"properties": {"mode": {"\#(keyword)": true}}}"#), "\(keyword)")
      #expect(error.kind == .unsupportedKeyword)
      #expect(error.keyword == keyword)
      #expect(error.location == "#/properties/mode")
      #expect(error.reason.hasPrefix("\"\(keyword)\" is not supported: a rule that would not be checked is refused"))
    }
    let oneOf = try #require(try refusal(#"{"properties": {"mode": {"oneOf": [{"const": 1}]}}}"#))
    #expect(
      oneOf.description
        == """
        #/properties/mode: "oneOf" is not supported: a rule that would not be checked is refused rather than \
        ignored (use enum, or one type with its rules). The keywords checked are type, enum, const, minimum, \
        maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, items, prefixItems, \
        minItems, maxItems, properties, additionalProperties, $ref, $defs.
        """)
  }

  @Test("required: refused at the top level with a reason of its own, and as unsupported below it")
  func required() throws {
    let top = try #require(try refusal(#"{"required": ["interval"]}"#))
    #expect(top.kind == .requiredAtTopLevel)
    #expect(top.location == "#")
    #expect(top.reason.hasPrefix("\"required\" is refused at the top level: the fleet's values are a partial layer"))
    // What the top's $refs lead to applies at the top too.
    let referred = try #require(
      try refusal(
        ##"{"$ref": "#/$defs/settings", "$defs": {"settings": {"$ref": "#/$defs/inner"}, "inner": {"required": []}}}"##)
    )
    #expect(referred.kind == .requiredAtTopLevel)
    #expect(referred.location == "#/$defs/inner")
    let nested = try #require(try refusal(#"{"properties": {"window": {"required": ["width"]}}}"#))
    #expect(nested.kind == .unsupportedKeyword)
    #expect(nested.keyword == "required")
    #expect(nested.location == "#/properties/window")
  }

  @Test("a member that is no keyword is refused (a misspelling); annotations and x- members are allowed")
  func unknownKeywords() throws {
    let misspelt = try #require(try refusal(#"{"properties": {"interval": {"maximun": 5}}}"#))
    #expect(misspelt.kind == .unknownKeyword)
    #expect(misspelt.keyword == "maximun")
    #expect(
      misspelt.description
        == """
        #/properties/interval: "maximun" is no keyword of JSON Schema draft 2020-12 (misspelt, or from another \
        draft?): a member that is not checked is refused rather than ignored; an annotation of your own may start \
        with "x-"
        """)
    for keyword in ["additionalItems", "dependencies", "definition"] {
      #expect(try refusal(#"{"\#(keyword)": {}}"#)?.kind == .unknownKeyword)
    }
    var annotated = ""
    for keyword in JSONSchema.annotations.sorted() { annotated += #""\#(keyword)": {"x": [1]}, "# }
    let schema = try schema("{\(annotated) \"x-owner\": \"ops\", \"type\": \"integer\"}")
    #expect(schema.isValid(3))
    #expect(!schema.isValid("3"))
    #expect(try self.schema(#"{"contentSchema": {"required": ["x"]}}"#).isValid(1), "an annotation's content")
  }

  @Test("a keyword's value that is not what the keyword takes is refused, saying what it takes")
  func invalidValues() throws {
    let cases: [(String, String, String)] = [
      (
        #"{"type": "strin"}"#, "type",
        #""type" must be a type's name, or an array of different types' names, found "strin""#
      ),
      (#"{"type": []}"#, "type", #""type" must be a type's name, or an array of different types' names, found []"#),
      (
        #"{"type": ["string", "string"]}"#, "type",
        #""type" must be a type's name, or an array of different types' names, found ["string","string"]"#
      ),
      (#"{"type": [1]}"#, "type", #""type" must be a type's name, or an array of different types' names, found [1]"#),
      (#"{"enum": "a"}"#, "enum", #""enum" must be an array of the values allowed, found "a""#),
      (#"{"minimum": "5"}"#, "minimum", #""minimum" must be a number, found "5""#),
      (#"{"exclusiveMaximum": null}"#, "exclusiveMaximum", #""exclusiveMaximum" must be a number, found null"#),
      (#"{"multipleOf": 0}"#, "multipleOf", #""multipleOf" must be a number above 0, found 0"#),
      (#"{"multipleOf": -0.5}"#, "multipleOf", #""multipleOf" must be a number above 0, found -0.5"#),
      (#"{"multipleOf": "1"}"#, "multipleOf", #""multipleOf" must be a number above 0, found "1""#),
      (#"{"minLength": -1}"#, "minLength", #""minLength" must be a whole number from 0, found -1"#),
      (#"{"maxItems": 1.5}"#, "maxItems", #""maxItems" must be a whole number from 0, found 1.5"#),
      (#"{"pattern": 5}"#, "pattern", #""pattern" must be a regular expression, as a string, found 5"#),
      (
        #"{"items": [{}]}"#, "items",
        #""items" must be one schema for every element (prefixItems has one per position), found [{}]"#
      ),
      (#"{"prefixItems": []}"#, "prefixItems", #""prefixItems" must be a non-empty array of schemas, found []"#),
      (#"{"properties": []}"#, "properties", #""properties" must be an object of schemas, found []"#),
      (#"{"$defs": 1}"#, "$defs", #""$defs" must be an object of schemas, found 1"#),
      (#"{"$ref": 1}"#, "$ref", #""$ref" must be a string: a reference such as #/$defs/name, found 1"#),
      (
        #"{"$schema": "http://json-schema.org/draft-07/schema#"}"#, "$schema",
        #""$schema" must be https://json-schema.org/draft/2020-12/schema: only JSON Schema draft 2020-12 is read, found "http://json-schema.org/draft-07/schema#""#
      ),
      (
        #"{"$id": "http://example.com/s#anchor"}"#, "$id",
        #""$id" must be a URI without a fragment, found "http://example.com/s#anchor""#
      ),
      (#"{"$id": 5}"#, "$id", #""$id" must be a URI without a fragment, found 5"#),
    ]
    for (text, keyword, reason) in cases {
      let error = try #require(try refusal(text), "\(text)")
      #expect(error.kind == .invalidValue, "\(text)")
      #expect(error.keyword == keyword, "\(text)")
      #expect(error.reason == reason, "\(text)")
    }
    for text in [
      #"{"minLength": 2.0}"#, #"{"maxLength": 1e300}"#,
      #"{"$schema": "https://json-schema.org/draft/2020-12/schema#"}"#, #"{"$id": "http://example.com/s#"}"#,
    ] {
      #expect(try refusal(text) == nil, "\(text)")
    }
  }

  @Test("what is not a schema where a schema must be is refused")
  func notSchemas() throws {
    let error = try #require(try refusal(#"{"additionalProperties": 5}"#))
    #expect(error.kind == .notASchema)
    #expect(error.keyword == nil)
    #expect(error.description == "#/additionalProperties: a schema must be an object, true or false, found 5")
    #expect(try refusal(#""a""#)?.description == #"#: a schema must be an object, true or false, found "a""#)
    #expect(try refusal(#"{"prefixItems": [true, 3]}"#)?.location == "#/prefixItems/1")
  }

  @Test("$schema and $id are read at the top only: an embedded schema is refused")
  func embeddedResources() throws {
    for keyword in ["$schema", "$id"] {
      let error = try #require(try refusal(#"{"$defs": {"a": {"\#(keyword)": "x"}}}"#))
      #expect(error.kind == .unsupportedKeyword)
      #expect(error.location == "#/$defs/a")
      #expect(
        error.reason
          == "\"\(keyword)\" is read at the top of the schema only: schemas embedded in another are not supported")
    }
  }

  @Test("pattern: one the matcher refuses refuses the schema, with the matcher's reason")
  func patterns() throws {
    let error = try #require(try refusal(#"{"properties": {"name": {"pattern": "(a)\\1"}}}"#))
    #expect(error.kind == .pattern(.unsupported))
    #expect(
      error.description
        == ##"#/properties/name: the pattern "(a)\\1" is refused: at character 4, backreferences (\1) are not supported"##
    )
    #expect(try refusal(#"{"pattern": "(a"}"#)?.kind == .pattern(.invalid))
  }

  @Test("$ref: pointers within the schema are followed; other documents, anchors, no schema and loops refused")
  func references() throws {
    let remote = try #require(try refusal(#"{"$ref": "other.json#/a"}"#))
    #expect(remote.kind == .remoteReference)
    #expect(
      remote.description
        == #"#: "$ref": "other.json#/a" leads to another document: only references within the schema (#/$defs/name) are followed"#
    )
    #expect(try refusal(#"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"#)?.kind == .remoteReference)
    let anchor = try #require(try refusal(##"{"$ref": "#named"}"##))
    #expect(anchor.kind == .remoteReference)
    #expect(anchor.reason == ##""$ref": "#named" names an anchor: refer by a pointer, such as #/$defs/name"##)
    let missing = try #require(try refusal(##"{"properties": {"a": {"$ref": "#/$defs/nope"}}}"##))
    #expect(missing.kind == .unresolvedReference)
    #expect(missing.description == ##"#/properties/a: "$ref": "#/$defs/nope" leads to no schema in this one"##)
    #expect(
      try refusal(##"{"$ref": "#/enum/0", "enum": [{}]}"##)?.kind == .unresolvedReference, "a value, not a schema")
    let encoding = try #require(try refusal(##"{"$ref": "#/%zz"}"##))
    #expect(encoding.kind == .unresolvedReference)
    #expect(encoding.reason.hasSuffix("is not a JSON Pointer (a % must start a UTF-8 byte in hex)"))
    #expect(try refusal(##"{"$ref": "#/%ff"}"##)?.kind == .unresolvedReference, "not UTF-8")
    #expect(try refusal(##"{"$ref": "#/%+1"}"##)?.kind == .unresolvedReference, "not hexadecimal")

    let loop = try #require(try refusal(##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}"##))
    #expect(loop.kind == .referenceLoop)
    #expect(
      loop.description == ##"#/$defs/a: this "$ref" leads back here through 2 reference(s) without reaching a value"##)
    #expect(try refusal(##"{"$ref": "#"}"##)?.kind == .referenceLoop)

    // A loop through a value (a property) is a tree, not a loop.
    let tree = try schema(
      ##"{"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}"##
    )
    #expect(tree.isValid(try JSONValue(parsing: #"{"name": "a", "children": [{"name": "b", "children": []}]}"#)))
    #expect(
      tree.validate(try JSONValue(parsing: #"{"children": [{"children": [{"name": 1}]}]}"#)).map(\.description)
        == ["children[0].children[0].name: must be a string (type), found 1"])

    // Pointers with escapes, percent-encoding, and the top's $id.
    let escaped = try schema(
      ##"{"$id": "http://example.com/root.json", "$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}, "e%f": {"minimum": 3}, "g\"h": {"maximum": 1}}, "prefixItems": [{"$ref": "#/$defs/a~1b"}, {"$ref": "http://example.com/root.json#/$defs/c~0d"}, {"$ref": "#/$defs/e%25f"}, {"$ref": "#/$defs/g%22h"}], "items": {"$ref": "http://example.com/root.json"}}"##
    )
    #expect(escaped.isValid(try JSONValue(parsing: #"[1, "x", 3, 1, [2]]"#)))
    #expect(
      escaped.validate(try JSONValue(parsing: #"["1", 2, 2, 2, {}]"#)).map(\.description) == [
        #"[0]: must be an integer (type), found "1""#, "[1]: must be a string (type), found 2",
        "[2]: must be at least 3 (minimum), found 2", "[3]: must be at most 1 (maximum), found 2",
      ])
  }

  // MARK: - Violations

  @Test("each rule broken says where, the rule and the value")
  func eachRule() throws {
    let cases: [(String, String, String)] = [
      (#"{"type": ["integer", "null"]}"#, "1.5", "the value: must be an integer or null (type), found 1.5"),
      (#"{"type": "object"}"#, "[]", "the value: must be an object (type), found []"),
      (#"{"type": "boolean"}"#, "0", "the value: must be a boolean (type), found 0"),
      (#"{"type": "array"}"#, "{}", "the value: must be an array (type), found {}"),
      (#"{"type": "number"}"#, #""1""#, #"the value: must be a number (type), found "1""#),
      (#"{"type": "null"}"#, "false", "the value: must be null (type), found false"),
      (#"{"type": "string"}"#, "null", "the value: must be a string (type), found null"),
      (#"{"const": {"a": [1]}}"#, #"{"a": [2]}"#, #"the value: must be {"a":[1]} (const), found {"a":[2]}"#),
      (
        #"{"enum": ["fast", "slow"]}"#, #""fastest""#,
        #"the value: must be one of ["fast","slow"] (enum), found "fastest""#
      ),
      (#"{"minimum": 1}"#, "0.5", "the value: must be at least 1 (minimum), found 0.5"),
      (#"{"exclusiveMinimum": 1}"#, "1.0", "the value: must be more than 1 (exclusiveMinimum), found 1.0"),
      (#"{"maximum": 300}"#, "600", "the value: must be at most 300 (maximum), found 600"),
      (#"{"exclusiveMaximum": 0.5}"#, "0.5", "the value: must be less than 0.5 (exclusiveMaximum), found 0.5"),
      (#"{"multipleOf": 0.01}"#, "0.125", "the value: must be a multiple of 0.01 (multipleOf), found 0.125"),
      (#"{"minLength": 2}"#, #""é""#, #"the value: must be at least 2 characters long (minLength), found "é""#),
      (#"{"minLength": 1}"#, #""""#, #"the value: must be at least 1 character long (minLength), found """#),
      (#"{"maxLength": 1}"#, #""ab""#, #"the value: must be at most 1 character long (maxLength), found "ab""#),
      (#"{"maxLength": 2}"#, #""abc""#, #"the value: must be at most 2 characters long (maxLength), found "abc""#),
      (#"{"pattern": "^[a-z]+$"}"#, #""Bob""#, #"the value: must match the pattern ^[a-z]+$ (pattern), found "Bob""#),
      (#"{"minItems": 1}"#, "[]", "the value: must have at least 1 element (minItems), found []"),
      (#"{"minItems": 2}"#, "[1]", "the value: must have at least 2 elements (minItems), found [1]"),
      (#"{"maxItems": 1}"#, "[1, 2]", "the value: must have at most 1 element (maxItems), found [1,2]"),
      (#"{"maxItems": 0}"#, "[1]", "the value: must have at most 0 elements (maxItems), found [1]"),
      (
        #"{"prefixItems": [{"type": "string"}], "items": false}"#, #"["a", 1]"#,
        "[1]: must not be here: the schema allows no value (false), found 1"
      ),
      (
        #"{"properties": {"mode": {"enum": ["fast"]}}, "additionalProperties": false}"#,
        #"{"colour": "red", "mode": "x"}"#,
        #"colour: must not be here: the schema names no such key (additionalProperties), found "red""#
      ),
      ("false", "1", "the value: must not be here: the schema allows no value (false), found 1"),
    ]
    for (schema, value, expected) in cases {
      #expect(try violations(schema, value).first == expected, "\(schema) \(value)")
    }
    #expect(
      try violations(
        #"{"properties": {"mode": {"enum": ["fast"]}}, "additionalProperties": false}"#,
        #"{"colour": "red", "mode": "x"}"#)
        == [
          #"colour: must not be here: the schema names no such key (additionalProperties), found "red""#,
          #"mode: must be one of ["fast"] (enum), found "x""#,
        ])
    // Keywords that do not apply to a kind of value pass it.
    #expect(
      try violations(#"{"minimum": 5, "minLength": 5, "minItems": 5, "properties": {"a": false}}"#, "null").isEmpty)
    #expect(
      try violations(##"{"additionalProperties": {"$ref": "#/$defs/none"}, "$defs": {"none": false}}"##, ##"{"x": 1}"##)
        == [
          "x: must not be here: the schema allows no value (false), found 1"
        ])
  }

  @Test("key paths name nested members and elements; keys that are not plain names are quoted and escaped")
  func keyPaths() throws {
    let schema = #"{"additionalProperties": {"additionalProperties": {"items": {"type": "string"}}}}"#
    #expect(
      try violations(schema, #"{"window": {"hosts": ["a", 2]}, "a.b": {"c d": [3]}, "x": {"\u202eevil\n": [4]}}"#) == [
        #"["a.b"]["c d"][0]: must be a string (type), found 3"#,
        "window.hosts[1]: must be a string (type), found 2",
        #"x["\u202eevil\n"][0]: must be a string (type), found 4"#,
      ])
    let violation = JSONSchemaViolation(
      path: [.key("a"), .index(0), .key("$b-c_9")], keyword: "k", rule: "r", found: "1")
    #expect(violation.keyPath == "a[0].$b-c_9")
    #expect(JSONSchemaViolation(path: [.key("")], keyword: "k", rule: "r", found: "1").keyPath == #"[""]"#)
  }

  @Test("a value is shown short, with control characters, line separators and reordering marks escaped")
  func shownValues() throws {
    let long = String(repeating: "x", count: 100)
    let found = try violations(#"{"maxLength": 1}"#, "\"\(long)\"").first
    #expect(
      found == #"the value: must be at most 1 character long (maxLength), found ""# + String(repeating: "x", count: 59)
        + "…")
    #expect(
      SchemaText.shown(.string("a\u{0}b\u{7F}c\u{85}d\u{2028}e\u{202E}f\u{2066}g\"h\\i\tj\rk"))
        == #""a\u0000b\u007fc\u0085d\u2028e\u202ef\u2066g\"h\\i\tj\rk""#)
    #expect(SchemaText.shown(["k\n": [1, 2, ["a": nil]]]) == #"{"k\n":[1,2,{"a":null}]}"#)
    #expect(
      SchemaText.shown(.array(Array(repeating: 12345, count: 20)))
        == "[12345,12345,12345,12345,12345,12345,12345,12345,12345,12345…")
    #expect(SchemaText.shown(["abcdefghij": "x"], limit: 10) == #"{"abcdefgh…"#)
    #expect(SchemaText.shown(["abc": "x"], limit: 6) == #"{"abc"…"#)
    #expect(SchemaText.shown(["abc": "xyz"], limit: 8) == #"{"abc":"…"#)
    #expect(SchemaText.shown([1, 2], limit: 3) == "[1,…")
    #expect(SchemaText.shown([1, 2], limit: 4) == "[1,2…")
    #expect(SchemaText.shown(.string("abc"), limit: 0) == "…")
    #expect(SchemaText.escaped("tab\there\u{1B}[31m", limit: 100) == "tab\\there\\u001b[31m")
    #expect(SchemaText.escaped(#"a"b\c"#) == #"a"b\c"#, "outside JSON, quotes and backslashes are themselves")
  }

  @Test("at most limit violations are collected")
  func limit() throws {
    let schema = #"{"items": {"type": "string"}}"#
    #expect(try violations(schema, "[1, 2, 3]").count == 3)
    #expect(try violations(schema, "[1, 2, 3]", limit: 2).count == 2)
    #expect(try violations(#"{"type": "string", "minLength": 3, "pattern": "a"}"#, #""b""#, limit: 1).count == 1)
    #expect(try violations(#"{"additionalProperties": false}"#, #"{"a": 1, "b": 2}"#, limit: 1).count == 1)
    #expect(
      try violations(##"{"type": "string", "$ref": "#/$defs/s", "$defs": {"s": {"minLength": 2}}}"##, "1", limit: 1)
        .count == 1)
  }

  @Test("one key's value is checked against properties or additionalProperties, through the top's $refs")
  func validateForKey() throws {
    let schema = try schema(
      ##"{"type": "object", "$ref": "#/$defs/settings", "$defs": {"settings": {"properties": {"interval": {"type": "integer", "maximum": 300}}, "additionalProperties": false}}}"##
    )
    #expect(schema.validate(60, forKey: "interval").isEmpty)
    #expect(
      schema.validate(600, forKey: "interval").map(\.description) == [
        "interval: must be at most 300 (maximum), found 600"
      ])
    #expect(
      schema.validate("x", forKey: "colour").map(\.description)
        == [#"colour: must not be here: the schema names no such key (additionalProperties), found "x""#])
    #expect(try self.schema(#"{"properties": {"a": {"type": "string"}}}"#).validate(1, forKey: "b").isEmpty, "open")
    #expect(
      try self.schema("false").validate(1, forKey: "a").map(\.description)
        == ["a: must not be here: the schema allows no value (false), found 1"])
    #expect(try self.schema("true").validate(1, forKey: "a").isEmpty)
    #expect(schema.validate(600, forKey: "interval", limit: 0).isEmpty)
  }

  // MARK: - Numbers

  @Test("numbers compare by value, exactly, integer or not")
  func numbers() throws {
    #expect(try violations(#"{"type": "integer"}"#, "1.0").isEmpty, "1.0 is an integer")
    #expect(try violations(#"{"type": "integer"}"#, "1e300").isEmpty)
    #expect(try violations(#"{"const": 1}"#, "1.0").isEmpty)
    #expect(try violations(#"{"enum": [[1, {"a": 2.0}]]}"#, #"[1.0, {"a": 2}]"#).isEmpty)
    #expect(try !violations(#"{"enum": [[1, {"a": 2.0}]]}"#, #"[1.0, {"b": 2}]"#).isEmpty)
    #expect(try !violations(#"{"enum": [[1, 2]]}"#, "[1]").isEmpty)
    #expect(try !violations(#"{"const": 0}"#, "false").isEmpty, "false is not 0")
    #expect(try violations(#"{"const": 0}"#, "-0.0").isEmpty)
    // Int.max is 9223372036854775807; the nearest Double is 2^63, which is above it.
    #expect(try !violations(#"{"maximum": 9223372036854775807}"#, "9223372036854775808.0").isEmpty)
    #expect(try violations(#"{"maximum": 9223372036854775808.0}"#, "9223372036854775807").isEmpty)
    #expect(try !violations(#"{"exclusiveMaximum": 9223372036854775807}"#, "9223372036854775807").isEmpty)
    #expect(try violations(#"{"minimum": -9223372036854775808}"#, "-9223372036854775808.0").isEmpty)
    #expect(try !violations(#"{"minimum": -9223372036854775807}"#, "-9223372036854775808.0").isEmpty)
    #expect(try !violations(#"{"maximum": -9223372036854777856.0}"#, "-9223372036854775808").isEmpty)
    #expect(try violations(#"{"minimum": 2.5}"#, "3").isEmpty)
    #expect(try !violations(#"{"minimum": 2.5}"#, "2").isEmpty)
    #expect(try violations(#"{"maximum": -2.5}"#, "-3").isEmpty)
    #expect(try !violations(#"{"maximum": -2.5}"#, "-2").isEmpty)
    #expect(try violations(#"{"maximum": 3}"#, "2.5").isEmpty)
    #expect(try violations(#"{"minimum": 1.5}"#, "2.5").isEmpty)
    #expect(try violations(#"{"minimum": 3}"#, "3").isEmpty)
  }

  @Test("multipleOf is decimal, as numbers are written")
  func multiples() throws {
    let multiples: [(String, String, Bool)] = [
      ("0.0001", "0.0075", true), ("0.0001", "0.00751", false), ("0.01", "19.99", true), ("1.5", "4.5", true),
      ("1.5", "35", false), ("2", "10", true), ("2", "7", false), ("1e-8", "12391239123", true),
      ("0.123456789", "1e308", false), ("1e308", "1e308", true), ("10", "1e300", true), ("3", "1e300", false),
      ("0.5", "-1.5", true), ("7", "0", true), ("7", "-0.0", true), ("1e-300", "1", true), ("3", "1e-300", false),
      ("4", "1e20", true), ("1e20", "1e19", false), ("6", "9223372036854775806", true), ("0.3", "0.9", true),
      ("100000000000000000000", "50", false), ("5e-324", "1e-323", true),
    ]
    for (divisor, value, isMultiple) in multiples {
      #expect(try violations(#"{"multipleOf": \#(divisor)}"#, value).isEmpty == isMultiple, "\(value) / \(divisor)")
    }
  }

  @Test("a schema compiled once checks values from many threads")
  func concurrentUse() async throws {
    let schema = try schema(#"{"properties": {"n": {"type": "integer", "maximum": 10}}}"#)
    let results = await withTaskGroup(of: Bool.self) { group in
      for number in 0..<20 { group.addTask { schema.isValid(["n": .int(number)]) } }
      return await group.reduce(into: 0) { count, valid in count += valid ? 1 : 0 }
    }
    #expect(results == 11)
  }
}
