// The libFuzzer target for the settings file parser. script/torture compiles it with SplintSettings' JSON sources
// (swiftc -sanitize=fuzzer,address) and runs it for a bounded time. Properties: no input crashes the parser or
// exhausts the stack; a document that parses renders, unchanged, to exactly its own text, and after an edit (values set
// in place; or a member changed, one removed, one added) to text that parses again to the edited values, in the same
// order; an object that
// imports (`JSONParser.object(from:)`, what `importSettings` and `splintctl import` read) is the same settings file
// read as a settings file, and its members written out as JSON import again to the same members.

/// libFuzzer's entry point: parses `size` bytes at `data` as a settings file and as a JSON value, and traps when a
/// property above does not hold. Returns 0, as libFuzzer asks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if var document = try? SettingsDocument(parsing: bytes) {
    if document.rendered() != bytes { fatalError("an unchanged document rendered to other text than its own") }
    // Values set in place (what a Setting's assignment does): the new values spliced into the text.
    var changed = document
    for key in changed.keys.prefix(2) { changed[key] = .object(["list": .array([.int(1), .null])]) }
    let spliced = try? SettingsDocument(parsing: changed.rendered())
    if spliced?.values != changed.values || spliced?.keys != changed.keys {
      fatalError("a document with values set in place rendered to text that parses differently")
    }
    if let first = document.keys.first { document[first] = .array([.int(1), .object(["x": .string("y")])]) }
    if document.keys.count > 1 { document[document.keys[1]] = nil }
    document["fuzz: a new member"] = .object(["nested": .array([.bool(true)])])
    let again = try? SettingsDocument(parsing: document.rendered())
    if again?.values != document.values || again?.keys != document.keys {
      fatalError("an edited document rendered to text that parses differently")
    }
  }
  if let members = try? JSONParser.object(from: bytes) {
    guard let document = try? SettingsDocument(parsing: bytes) else {
      fatalError("an object that imports does not parse as a settings file")
    }
    var imported = SettingsDocument()
    for (key, value) in members { imported[key] = value }
    if imported.values != document.values || imported.versionValue != document.versionValue {
      fatalError("an object imports other values than a settings file holding it has")
    }
    let text = JSONValue.object(Dictionary(members.map { (JSONKey($0.key), $0.value) }) { first, _ in first })
    let again = try? JSONParser.object(from: Array(text.description.utf8))
    if again.map({ Dictionary($0.map { (JSONKey($0.key), $0.value) }) { first, _ in first } }) != text.objectMembers {
      fatalError("an imported object written out imports differently")
    }
  }
  if let value = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) {
    if (try? JSONValue(parsing: value.description)) != value { fatalError("a value's text parses differently") }
  }
  return 0
}

extension JSONValue {
  /// An object's members, or nil.
  fileprivate var objectMembers: [JSONKey: JSONValue]? {
    guard case .object(let members) = self else { return nil }
    return members
  }
}
