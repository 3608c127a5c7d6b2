/// A JSON Schema (draft 2020-12), compiled once, that checks many values: the rules a fleet's values and a
/// settings file are held to.
///
/// It checks `type`, `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
/// `minLength`, `maxLength`, `pattern` (see ``SchemaPattern``), `items`, `prefixItems`, `minItems`, `maxItems`,
/// `properties`, `additionalProperties`, and `$ref` to a place in the same schema (`#`, `#/$defs/name`, any JSON
/// Pointer to a subschema; `$defs` and `definitions` hold them). Annotations are allowed and change nothing:
/// `title`, `description`, `default`, `examples`, `$comment`, `deprecated`, `readOnly`, `writeOnly`, `content*`,
/// the keywords VS Code reads (`markdownDescription`, `enumDescriptions`, `doNotSuggest`, ...), and any member whose
/// name starts with `x-`. `$schema` (draft 2020-12's) and `$id` are read at the top.
///
/// Everything else is refused when the schema is compiled, with a ``JSONSchemaError`` that names the keyword and
/// where it is: a keyword that changes what is valid and is not checked here (`oneOf`, `anyOf`, `allOf`, `not`,
/// `if`, `patternProperties`, `unevaluatedProperties`, `contains`, `format`, `required`, ...), since a check that
/// is silently left out lets through what it forbids; `required` at the top level with a reason of its own (a
/// fleet's values are a partial layer); a member that is no keyword (`maximun`); `$ref`s to other documents or
/// anchors, to no schema, or in a loop.
///
/// Values are compared as JSON Schema says, exactly, on the values the settings files hold (``JSONValue``): 1 and
/// 1.0 are equal and both integers; a string's length counts Unicode scalars; `multipleOf` is decimal, as numbers are
/// written.
///
/// Checking a value visits each of its members once for each subschema that applies there, following `$ref`s in a
/// loop, not by recursion, so its cost is about the value's size times the schema's, plus the patterns' (each
/// linear in the string's length).
package struct JSONSchema: Sendable {
  /// The dialect `$schema` may name.
  package static let draft = "https://json-schema.org/draft/2020-12/schema"

  /// The keywords checked, for messages.
  static let checkedKeywords = [
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "pattern", "items", "prefixItems", "minItems", "maxItems", "properties", "additionalProperties",
    "$ref", "$defs",
  ]

  /// The keywords that structure a schema or name it, read but checking nothing of a value themselves.
  static let structuralKeywords: Set = ["$defs", "definitions", "$schema", "$id"]

  /// Members that annotate a schema and change nothing of what is valid.
  static let annotations: Set = [
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly",
    "contentEncoding", "contentMediaType", "contentSchema",
    // VS Code's own, which its editor reads (completion, hovers, messages).
    "markdownDescription", "enumDescriptions", "markdownEnumDescriptions", "deprecationMessage", "errorMessage",
    "patternErrorMessage", "defaultSnippets", "doNotSuggest", "suggestSortText", "allowComments",
    "allowTrailingCommas",
  ]

  /// Keywords of JSON Schema that change what is valid and are not checked here, with what to do instead.
  static let unsupportedKeywords: [String: String] = [
    "allOf": "list the rules in one schema", "anyOf": "use enum, or one type with its rules",
    "oneOf": "use enum, or one type with its rules", "not": "use enum or the bounds",
    "if": "use one schema for the key", "then": "use one schema for the key", "else": "use one schema for the key",
    "dependentSchemas": "check it in the program", "dependentRequired": "check it in the program",
    "patternProperties": "name each key under properties", "propertyNames": "name each key under properties",
    "unevaluatedItems": "use items", "unevaluatedProperties": "use additionalProperties",
    "contains": "use items", "minContains": "use items", "maxContains": "use items",
    "uniqueItems": "check it in the program", "minProperties": "check it in the program",
    "maxProperties": "check it in the program",
    "required": "give the program a default for the key, or check it in the program",
    "format": "write the form as a pattern", "$anchor": "refer by a pointer, such as #/$defs/name",
    "$dynamicRef": "use $ref", "$dynamicAnchor": "use $ref with a pointer", "$vocabulary": "leave it out",
    "$recursiveRef": "use $ref", "$recursiveAnchor": "use $ref with a pointer",
  ]

  /// The subschemas, the top one first.
  private let nodes: [Node]

  /// Compiles a schema.
  ///
  /// - Throws: ``JSONSchemaError`` for anything that is not checked here or is not a schema (see ``JSONSchema``),
  ///   naming the first, by the order of the keywords' names.
  package init(_ schema: JSONValue) throws(JSONSchemaError) {
    var compiler = Compiler()
    _ = try compiler.compile(schema, at: [])
    try compiler.resolveReferences()
    try compiler.refuseRequired()
    nodes = compiler.nodes
  }

  /// What is wrong with `value`, at most `limit` violations, in the order of the value's members (keys sorted) and
  /// the schema's keywords; empty when it is valid.
  package func validate(_ value: JSONValue, limit: Int = 20) -> [JSONSchemaViolation] {
    var checker = Checker(nodes: nodes, limit: limit)
    checker.check(value, against: 0)
    return checker.violations
  }

  /// What is wrong with `value` as the value of `key` in an object the schema describes (a settings file, a fleet's
  /// values): the schema's `properties` for the key, or its `additionalProperties`, apply; what the schema says of
  /// the object as a whole (its type, const or enum) does not, since one key's value is checked. Paths start with the
  /// key.
  package func validate(_ value: JSONValue, forKey key: String, limit: Int = 20) -> [JSONSchemaViolation] {
    var checker = Checker(nodes: nodes, limit: limit)
    checker.path = [.key(key)]
    var next: Int? = 0
    while let index = next, !checker.isFull {
      let node = nodes[index]
      if node.allowsNothing {
        checker.report("false", "must not be here: the schema allows no value", value)
      } else if let property = node.properties[JSONKey(key)] {
        checker.check(value, against: property)
      } else if let additional = node.additionalProperties {
        checker.check(value, against: additional, asAdditional: true)
      }
      next = node.reference
    }
    return checker.violations
  }

  /// Whether `value` is valid.
  package func isValid(_ value: JSONValue) -> Bool { validate(value, limit: 1).isEmpty }
}

// MARK: - Compiled subschemas

/// JSON Schema's types, as `type` names them.
private struct SchemaTypes: OptionSet, Sendable {
  let rawValue: UInt8

  static let null = SchemaTypes(rawValue: 1 << 0)
  static let boolean = SchemaTypes(rawValue: 1 << 1)
  static let object = SchemaTypes(rawValue: 1 << 2)
  static let array = SchemaTypes(rawValue: 1 << 3)
  static let number = SchemaTypes(rawValue: 1 << 4)
  static let string = SchemaTypes(rawValue: 1 << 5)
  static let integer = SchemaTypes(rawValue: 1 << 6)

  /// Each type's name and how a sentence says it, in the order messages list them.
  static let names: [(name: String, type: SchemaTypes, words: String)] = [
    ("boolean", .boolean, "a boolean"), ("object", .object, "an object"), ("array", .array, "an array"),
    ("number", .number, "a number"), ("string", .string, "a string"), ("integer", .integer, "an integer"),
    ("null", .null, "null"),
  ]

  func matches(_ value: JSONValue) -> Bool {
    switch value {
    case .null: contains(.null)
    case .bool: contains(.boolean)
    case .object: contains(.object)
    case .array: contains(.array)
    case .string: contains(.string)
    case .int, .double:
      contains(.number) || (contains(.integer) && SchemaNumbers.isInteger(value))
    }
  }

  /// "a string", "an integer or null".
  var words: String {
    Self.names.filter { contains($0.type) }.map(\.words).joined(separator: " or ")
  }
}

/// One subschema: the rules it holds, subschemas by their index.
private struct Node: Sendable {
  var allowsNothing = false
  var types: SchemaTypes?
  var constant: JSONValue?
  var enumeration: [JSONValue]?
  var minimum: JSONValue?
  var maximum: JSONValue?
  var exclusiveMinimum: JSONValue?
  var exclusiveMaximum: JSONValue?
  var multipleOf: (value: JSONValue, decimal: SchemaNumbers.Decimal)?
  var minLength: Int?
  var maxLength: Int?
  var pattern: SchemaPattern?
  var prefixItems: [Int] = []
  var items: Int?
  var minItems: Int?
  var maxItems: Int?
  var properties: [JSONKey: Int] = [:]
  var additionalProperties: Int?
  /// The subschema `$ref` leads to, which applies here too.
  var reference: Int?
}

// MARK: - Compiling

private struct Compiler {
  var nodes: [Node] = []
  /// Where each subschema is, by its JSON Pointer's tokens, and back.
  var locations: [[String]: Int] = [:]
  var pointers: [[String]] = []
  /// The `$ref`s to resolve once every subschema is known: the subschema that holds each, and its text.
  var references: [(node: Int, text: String)] = []
  /// The subschemas that hold `required`, refused once it is known whether they apply at the top.
  var required: [Int] = []
  /// The top's `$id`, without a fragment: a `$ref` may name the schema by it.
  var identifier: String?

  mutating func compile(_ schema: JSONValue, at pointer: [String]) throws(JSONSchemaError) -> Int {
    let index = nodes.count
    nodes.append(Node())
    pointers.append(pointer)
    locations[pointer] = index
    var node = Node()
    switch schema {
    case .bool(let allows):
      node.allowsNothing = !allows
    case .object(let members):
      try compileKeywords(members, at: pointer, index: index, into: &node)
    default:
      throw JSONSchemaError(
        .notASchema, keyword: nil, at: pointer,
        "a schema must be an object, true or false, found \(SchemaText.shown(schema))")
    }
    nodes[index] = node
    return index
  }

  private mutating func compileKeywords(
    _ members: [JSONKey: JSONValue], at pointer: [String], index: Int, into node: inout Node
  ) throws(JSONSchemaError) {
    let sorted = members.sorted { $0.key < $1.key }
    // Refusals first, so that a schema is never half read.
    for (key, _) in sorted {
      let keyword = key.text
      if Self.isAnnotation(keyword) { continue }
      if keyword == "required" {
        guard !pointer.isEmpty else { throw Self.requiredAtTopLevel(at: pointer) }
        required.append(index)
        continue
      }
      if let instead = JSONSchema.unsupportedKeywords[keyword] {
        throw Self.unsupported(keyword, at: pointer, instead: instead)
      }
      guard JSONSchema.checkedKeywords.contains(keyword) || JSONSchema.structuralKeywords.contains(keyword) else {
        throw JSONSchemaError(
          .unknownKeyword, keyword: keyword, at: pointer,
          """
          \(SchemaText.shown(.string(keyword))) is no keyword of JSON Schema draft 2020-12 (misspelt, or from \
          another draft?): a member that is not checked is refused rather than ignored; an annotation of your own \
          may start with "x-"
          """)
      }
    }
    // Then the keywords checked, and the structural ones: what is left once annotations and required are.
    for (key, value) in sorted where !Self.isAnnotation(key.text) && key.text != "required" {
      try compile(key.text, value, at: pointer, index: index, into: &node)
    }
  }

  /// Whether `keyword` is an annotation, which changes nothing of what is valid.
  private static func isAnnotation(_ keyword: String) -> Bool {
    JSONSchema.annotations.contains(keyword) || keyword.hasPrefix("x-")
  }

  private mutating func compile(
    _ keyword: String, _ value: JSONValue, at pointer: [String], index: Int, into node: inout Node
  ) throws(JSONSchemaError) {
    func invalid(_ expected: String) -> JSONSchemaError {
      JSONSchemaError(
        .invalidValue, keyword: keyword, at: pointer,
        "\"\(keyword)\" must be \(expected), found \(SchemaText.shown(value))")
    }
    switch keyword {
    case "type":
      guard let types = types(value) else { throw invalid("a type's name, or an array of different types' names") }
      node.types = types
    case "enum":
      guard case .array(let values) = value else { throw invalid("an array of the values allowed") }
      node.enumeration = values
    case "const":
      node.constant = value
    case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
      guard SchemaNumbers.isNumber(value) else { throw invalid("a number") }
      switch keyword {
      case "minimum": node.minimum = value
      case "maximum": node.maximum = value
      case "exclusiveMinimum": node.exclusiveMinimum = value
      default: node.exclusiveMaximum = value
      }
    case "multipleOf":
      guard let decimal = SchemaNumbers.Decimal(value), SchemaNumbers.compare(value, .int(0)) == 1 else {
        throw invalid("a number above 0")
      }
      node.multipleOf = (value, decimal)
    case "minLength", "maxLength", "minItems", "maxItems":
      guard let count = Self.count(value) else { throw invalid("a whole number from 0") }
      switch keyword {
      case "minLength": node.minLength = count
      case "maxLength": node.maxLength = count
      case "minItems": node.minItems = count
      default: node.maxItems = count
      }
    case "pattern":
      guard case .string(let source) = value else { throw invalid("a regular expression, as a string") }
      do {
        node.pattern = try SchemaPattern(source)
      } catch {
        throw JSONSchemaError(
          .pattern(error.kind), keyword: keyword, at: pointer,
          "the pattern \(SchemaText.shown(value)) is refused: \(error)")
      }
    case "items":
      if case .array = value { throw invalid("one schema for every element (prefixItems has one per position)") }
      node.items = try compile(value, at: pointer + [keyword])
    case "prefixItems":
      guard case .array(let schemas) = value, !schemas.isEmpty else { throw invalid("a non-empty array of schemas") }
      for (position, schema) in schemas.enumerated() {
        node.prefixItems.append(try compile(schema, at: pointer + [keyword, String(position)]))
      }
    case "properties", "$defs", "definitions":
      guard case .object(let schemas) = value else { throw invalid("an object of schemas") }
      for (name, schema) in schemas.sorted(by: { $0.key < $1.key }) {
        let compiled = try compile(schema, at: pointer + [keyword, name.text])
        if keyword == "properties" { node.properties[name] = compiled }
      }
    case "additionalProperties":
      node.additionalProperties = try compile(value, at: pointer + [keyword])
    case "$ref":
      guard case .string(let text) = value else { throw invalid("a string: a reference such as #/$defs/name") }
      references.append((index, text))
    case "$schema":
      guard pointer.isEmpty else { throw Self.embedded(keyword, at: pointer) }
      guard case .string(let uri) = value, uri == JSONSchema.draft || uri == JSONSchema.draft + "#" else {
        throw invalid("\(JSONSchema.draft): only JSON Schema draft 2020-12 is read")
      }
    default:  // $id, the one keyword left
      guard pointer.isEmpty else { throw Self.embedded(keyword, at: pointer) }
      guard case .string(let uri) = value, uri.firstIndex(of: "#").map({ uri[$0...] == "#" }) ?? true else {
        throw invalid("a URI without a fragment")
      }
      identifier = uri.hasSuffix("#") ? String(uri.dropLast()) : uri
    }
  }

  /// The types `value` names: a type's name, or a non-empty array of different ones; nil for anything else.
  private func types(_ value: JSONValue) -> SchemaTypes? {
    let names: [JSONValue]
    switch value {
    case .string: names = [value]
    case .array(let elements) where !elements.isEmpty: names = elements
    default: return nil
    }
    var types: SchemaTypes = []
    for name in names {
      guard case .string(let text) = name, let type = SchemaTypes.names.first(where: { $0.name == text })?.type,
        !types.contains(type)
      else { return nil }
      types.insert(type)
    }
    return types
  }

  /// A count: a whole number from 0 (1.0 too), as large as `Int` holds.
  private static func count(_ value: JSONValue) -> Int? {
    switch value {
    case .int(let number) where number >= 0: number
    case .double(let number) where number >= 0 && number == number.rounded(.towardZero):
      number >= 0x1p63 ? Int.max : Int(number)
    default: nil
    }
  }

  private static func unsupported(_ keyword: String, at pointer: [String], instead: String) -> JSONSchemaError {
    JSONSchemaError(
      .unsupportedKeyword, keyword: keyword, at: pointer,
      """
      "\(keyword)" is not supported: a rule that would not be checked is refused rather than ignored (\(instead)). \
      The keywords checked are \(JSONSchema.checkedKeywords.joined(separator: ", ")).
      """)
  }

  private static func requiredAtTopLevel(at pointer: [String]) -> JSONSchemaError {
    JSONSchemaError(
      .requiredAtTopLevel, keyword: "required", at: pointer,
      """
      "required" is refused at the top level: the fleet's values are a partial layer over each machine's own \
      settings and each program's defaults, so a key may rightly be absent from them. Give the program a default \
      for the key instead.
      """)
  }

  private static func embedded(_ keyword: String, at pointer: [String]) -> JSONSchemaError {
    JSONSchemaError(
      .unsupportedKeyword, keyword: keyword, at: pointer,
      "\"\(keyword)\" is read at the top of the schema only: schemas embedded in another are not supported")
  }

  /// Resolves every `$ref` to its subschema, and refuses loops of `$ref`s.
  mutating func resolveReferences() throws(JSONSchemaError) {
    for (index, text) in references {
      nodes[index].reference = try resolve(text, from: pointers[index])
    }
    // Each subschema has one $ref at most: follow each chain, marking what is on it (1) and what is done (2).
    var state = Array(repeating: 0, count: nodes.count)
    for start in nodes.indices where state[start] == 0 {
      var chain: [Int] = []
      var next: Int? = start
      while let index = next, state[index] == 0 {
        state[index] = 1
        chain.append(index)
        next = nodes[index].reference
      }
      if let index = next, state[index] == 1 {
        throw JSONSchemaError(
          .referenceLoop, keyword: "$ref", at: pointers[index],
          "this \"$ref\" leads back here through \(chain.count) reference(s) without reaching a value")
      }
      for index in chain { state[index] = 2 }
    }
  }

  /// The subschema a `$ref` of the subschema at `pointer` names.
  private func resolve(_ text: String, from pointer: [String]) throws(JSONSchemaError) -> Int {
    var fragment: Substring
    if text.hasPrefix("#") {
      fragment = text.dropFirst()
    } else if let identifier, text == identifier || text.hasPrefix(identifier + "#") {
      fragment = text.dropFirst(identifier.count).drop { $0 == "#" }
    } else {
      throw JSONSchemaError(
        .remoteReference, keyword: "$ref", at: pointer,
        """
        "$ref": \(SchemaText.shown(.string(text))) leads to another document: only references within the schema \
        (#/$defs/name) are followed
        """)
    }
    if fragment.isEmpty { return 0 }
    guard fragment.first == "/" else {
      throw JSONSchemaError(
        .remoteReference, keyword: "$ref", at: pointer,
        "\"$ref\": \(SchemaText.shown(.string(text))) names an anchor: refer by a pointer, such as #/$defs/name")
    }
    guard let decoded = Self.percentDecoded(fragment.dropFirst()) else {
      throw JSONSchemaError(
        .unresolvedReference, keyword: "$ref", at: pointer,
        "\"$ref\": \(SchemaText.shown(.string(text))) is not a JSON Pointer (a % must start a UTF-8 byte in hex)")
    }
    var tokens: [String] = []
    for token in decoded.split(separator: "/", omittingEmptySubsequences: false) {
      tokens.append(String(token).replacing("~1", with: "/").replacing("~0", with: "~"))
    }
    guard let target = locations[tokens] else {
      throw JSONSchemaError(
        .unresolvedReference, keyword: "$ref", at: pointer,
        "\"$ref\": \(SchemaText.shown(.string(text))) leads to no schema in this one")
    }
    return target
  }

  /// `text` with each `%HH` replaced by its byte; nil when that is not UTF-8.
  private static func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var rest = Array(text.utf8)[...]
    while let byte = rest.popFirst() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      let digits = rest.prefix(2)
      guard digits.count == 2, digits.allSatisfy({ UInt8(ascii: "+") != $0 && UInt8(ascii: "-") != $0 }),
        let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
      rest = rest.dropFirst(2)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// Refuses `required`: at the top level (where the top's `$ref`s lead too) with its own reason, elsewhere as a
  /// keyword not supported.
  func refuseRequired() throws(JSONSchemaError) {
    guard let first = required.first else { return }
    var top: Set<Int> = []
    var next: Int? = 0
    while let index = next, top.insert(index).inserted { next = nodes[index].reference }
    if let atTop = required.first(where: top.contains) { throw Self.requiredAtTopLevel(at: pointers[atTop]) }
    throw Self.unsupported("required", at: pointers[first], instead: JSONSchema.unsupportedKeywords["required"] ?? "")
  }
}

// MARK: - Checking

private struct Checker {
  let nodes: [Node]
  let limit: Int
  var path: [JSONSchemaViolation.PathComponent] = []
  var violations: [JSONSchemaViolation] = []

  init(nodes: [Node], limit: Int) {
    self.nodes = nodes
    self.limit = limit
  }

  var isFull: Bool { violations.count >= limit }

  mutating func report(_ keyword: String, _ rule: String, _ value: JSONValue) {
    guard !isFull else { return }
    violations.append(JSONSchemaViolation(path: path, keyword: keyword, rule: rule, found: SchemaText.shown(value)))
  }

  /// Checks `value` against the subschema `start` and those its `$ref`s lead to; `asAdditional` when it applies as
  /// `additionalProperties`, to a key the schema does not name.
  mutating func check(_ value: JSONValue, against start: Int, asAdditional: Bool = false) {
    var next: Int? = start
    var additional = asAdditional
    while let index = next, !isFull {
      check(value, nodes[index], asAdditional: additional)
      additional = false
      next = nodes[index].reference
    }
  }

  private mutating func check(_ value: JSONValue, _ node: Node, asAdditional: Bool) {
    if node.allowsNothing {
      if asAdditional {
        report("additionalProperties", "must not be here: the schema names no such key", value)
      } else {
        report("false", "must not be here: the schema allows no value", value)
      }
      return
    }
    if let types = node.types, !types.matches(value) { report("type", "must be \(types.words)", value) }
    if let constant = node.constant, !SchemaNumbers.equal(value, constant) {
      report("const", "must be \(SchemaText.shown(constant))", value)
    }
    if let values = node.enumeration, !values.contains(where: { SchemaNumbers.equal(value, $0) }) {
      report("enum", "must be one of \(SchemaText.shown(.array(values)))", value)
    }
    switch value {
    case .int, .double: checkNumber(value, node)
    case .string(let text): checkString(text, value, node)
    case .array(let elements): checkArray(elements, value, node)
    case .object(let members): checkObject(members, node)
    case .null, .bool: break
    }
  }

  private mutating func checkNumber(_ value: JSONValue, _ node: Node) {
    // Each bound, and how the value must compare with it (-1, 0 or 1).
    let bounds: [(bound: JSONValue?, keyword: String, words: String, allowed: Set<Int>)] = [
      (node.minimum, "minimum", "at least", [0, 1]), (node.exclusiveMinimum, "exclusiveMinimum", "more than", [1]),
      (node.maximum, "maximum", "at most", [-1, 0]), (node.exclusiveMaximum, "exclusiveMaximum", "less than", [-1]),
    ]
    for case (let bound?, let keyword, let words, let allowed) in bounds
    where !allowed.contains(SchemaNumbers.compare(value, bound) ?? 0) {
      report(keyword, "must be \(words) \(bound)", value)
    }
    if let multiple = node.multipleOf, SchemaNumbers.Decimal(value)?.isMultiple(of: multiple.decimal) == false {
      report("multipleOf", "must be a multiple of \(multiple.value)", value)
    }
  }

  private mutating func checkString(_ text: String, _ value: JSONValue, _ node: Node) {
    if node.minLength != nil || node.maxLength != nil {
      let length = text.unicodeScalars.count
      if let minimum = node.minLength, length < minimum {
        report("minLength", "must be at least \(minimum) character\(minimum == 1 ? "" : "s") long", value)
      }
      if let maximum = node.maxLength, length > maximum {
        report("maxLength", "must be at most \(maximum) character\(maximum == 1 ? "" : "s") long", value)
      }
    }
    if let pattern = node.pattern, !pattern.matches(text) {
      report("pattern", "must match the pattern \(SchemaText.escaped(pattern.source))", value)
    }
  }

  private mutating func checkArray(_ elements: [JSONValue], _ value: JSONValue, _ node: Node) {
    if let minimum = node.minItems, elements.count < minimum {
      report("minItems", "must have at least \(minimum) element\(minimum == 1 ? "" : "s")", value)
    }
    if let maximum = node.maxItems, elements.count > maximum {
      report("maxItems", "must have at most \(maximum) element\(maximum == 1 ? "" : "s")", value)
    }
    for (position, element) in elements.enumerated() where !isFull {
      let schema = position < node.prefixItems.count ? node.prefixItems[position] : node.items
      guard let schema else { continue }
      path.append(.index(position))
      check(element, against: schema)
      path.removeLast()
    }
  }

  private mutating func checkObject(_ members: [JSONKey: JSONValue], _ node: Node) {
    guard !node.properties.isEmpty || node.additionalProperties != nil else { return }
    for (key, member) in members.sorted(by: { $0.key < $1.key }) where !isFull {
      path.append(.key(key.text))
      if let property = node.properties[key] {
        check(member, against: property)
      } else if let additional = node.additionalProperties {
        check(member, against: additional, asAdditional: true)
      }
      path.removeLast()
    }
  }
}
