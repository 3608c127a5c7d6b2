/// The content of a settings file: a JSON object (with comments, as VS Code's `settings.json` may have) whose
/// members keep their order and, until changed, their exact text, so that writing the file back changes only the
/// members that were set, and keeps every comment, blank line and the file's own indentation (see
/// `CommentKeepingWriter`).
///
/// The member ``versionKey`` records the settings' schema version (see `SettingsMigration`), and ``schemaKey`` where
/// editors find the file's JSON Schema: neither is a setting, so ``keys`` and ``values`` leave them out, and only
/// ``schemaVersion`` and ``schemaReference`` read and set them.
struct SettingsDocument: Sendable, Equatable {
  /// The reserved key under which a file records its settings' schema version.
  static let versionKey = "$version"
  /// The reserved key under which a file names its JSON Schema, for editors (`"$schema": "./settings.schema.json"`).
  static let schemaKey = "$schema"
  private static let reservedKeys: Set = [JSONKey(versionKey), JSONKey(schemaKey)]

  /// Whether `key` is a reserved member, not a setting.
  static func isReserved(_ key: String) -> Bool { reservedKeys.contains(JSONKey(key)) }

  struct Member: Sendable, Equatable {
    let key: JSONKey
    var value: JSONValue
    /// The member's index among the file's members in ``source``; nil for a member added here.
    var origin: Int?
    /// Whether the value is still the file's own text (nothing set it since it was read).
    var keepsText = true
    /// What to write for the value instead of its JSON: a number with more digits than a `Double` keeps.
    var text: String?
  }

  private(set) var members: [Member] = []
  private var positions: [JSONKey: Int] = [:]
  /// The text the document was read from, with where its members are; nil for a document made here.
  private(set) var source: Source?

  /// A file's text and where its object and members are in it.
  struct Source: Sendable, Equatable {
    let bytes: [UInt8]
    /// The offsets of the object's braces; nil when the file holds none (it is blank, or comments only).
    let braces: Braces?
    let spans: [JSONParser.MemberSpan]
  }

  struct Braces: Sendable, Equatable {
    let open: Int
    let close: Int
  }

  /// An empty document.
  init() {}

  /// Parses a settings file's bytes: JSON with comments and trailing commas.
  init(parsing bytes: [UInt8]) throws(JSONSyntaxError) {
    let object = try JSONParser.settingsObject(from: bytes)
    for (origin, (key, value, _)) in object.members.enumerated() {
      positions[JSONKey(key)] = members.count
      members.append(Member(key: JSONKey(key), value: value, origin: origin))
    }
    source = Source(
      bytes: bytes, braces: object.braces.map { Braces(open: $0.open, close: $0.close) },
      spans: object.members.map(\.span))
  }

  /// The keys in file order, but for the reserved ``versionKey`` and ``schemaKey``.
  var keys: [String] { members.compactMap { Self.reservedKeys.contains($0.key) ? nil : $0.key.text } }

  /// Every key's value, but for the reserved ``versionKey``'s and ``schemaKey``'s.
  var values: [JSONKey: JSONValue] {
    Dictionary(
      uniqueKeysWithValues: members.compactMap { Self.reservedKeys.contains($0.key) ? nil : ($0.key, $0.value) })
  }

  /// What the file records under ``schemaKey``; setting nil removes it.
  var schemaReference: JSONValue? {
    get { self[Self.schemaKey] }
    set { self[Self.schemaKey] = newValue }
  }

  /// What the file records under ``versionKey``: nil when it records nothing (version 0, before any migration).
  var versionValue: JSONValue? { self[Self.versionKey] }

  /// The settings' schema version: the whole number under ``versionKey``, 0 when there is none. Nil when the
  /// key holds something else, which no migration can start from. Setting it records the version.
  var schemaVersion: Int? {
    get { Self.version(versionValue) }
    set { self[Self.versionKey] = newValue.map(JSONValue.int) }
  }

  /// The schema version `value` (what a file holds under ``versionKey``) records: 0 for none, nil when it is not a
  /// whole number from 0.
  static func version(_ value: JSONValue?) -> Int? {
    switch value {
    case nil: 0
    case .int(let version)? where version >= 0: version
    case _?: nil
    }
  }

  /// Why `value`, under ``versionKey``, stops migrations.
  static func notAVersion(_ value: JSONValue?) -> String {
    "its \"\(versionKey)\" is \(value?.description ?? "absent"), not a version number"
  }

  /// A key's value; setting nil removes the key (with the comments that belong to it). A new key goes last. Setting
  /// the value a key has already changes nothing, so that its text stays as it is. Keys are the same only when their
  /// Unicode scalars are (see ``JSONKey``).
  subscript(text: String) -> JSONValue? {
    get { positions[JSONKey(text)].map { members[$0].value } }
    set {
      let key = JSONKey(text)
      switch (positions[key], newValue) {
      case (let position?, let value?):
        guard !Self.isSame(members[position].value, value) || members[position].text != nil else { return }
        members[position].value = value
        members[position].keepsText = false
        members[position].text = nil
      case (nil, let value?):
        positions[key] = members.count
        members.append(Member(key: key, value: value, keepsText: false))
      case (let position?, nil):
        members.remove(at: position)
        positions[key] = nil
        for index in position..<members.count { positions[members[index].key] = index }
      case (nil, nil):
        break
      }
    }
  }

  /// Whether two values are the same JSON, written the same way: equal, and not 0 and -0 (which are equal).
  private static func isSame(_ first: JSONValue, _ second: JSONValue) -> Bool {
    first == second && first.description == second.description
  }

  /// Sets `key` to `value`, to be written as `text` (JSON that reads as `value`, such as a number with more digits
  /// than a `Double` keeps) rather than as the value's own JSON.
  mutating func set(_ value: JSONValue, writtenAs text: String, forKey key: String) {
    self[key] = value
    if let position = positions[JSONKey(key)] {
      members[position].keepsText = false
      members[position].text = text
    }
  }

  /// The exact text the file holds for `key`'s value (comments inside it too), or the text it is to be written as
  /// (see ``set(_:writtenAs:forKey:)``); nil for a key that is not there, or whose value was set here otherwise.
  func storedText(forKey key: String) -> Substring? {
    guard let position = positions[JSONKey(key)] else { return nil }
    if let text = members[position].text { return Substring(text) }
    guard members[position].keepsText, let origin = members[position].origin, let source else { return nil }
    let span = source.spans[origin]
    return Substring(decoding: source.bytes[span.valueStart..<span.valueEnd], as: UTF8.self)
  }

  /// The file's text: the text read, with only the members set, added or removed here changed, in the file's own
  /// layout (see `CommentKeepingWriter`); for a document made here, one member a line, indented two spaces a level.
  func rendered() -> [UInt8] {
    CommentKeepingWriter.render(self)
  }
}
