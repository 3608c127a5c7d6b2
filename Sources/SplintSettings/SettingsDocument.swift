/// The content of a settings file: a JSON object whose members keep their order and, until changed, their exact
/// text, so that writing the file back changes only the keys that were set.
///
/// The member ``versionKey`` records the settings' schema version (see `SettingsMigration`): it is not a setting,
/// so ``keys`` and ``values`` leave it out, and only ``schemaVersion`` reads and sets it.
struct SettingsDocument: Sendable, Equatable {
  /// The reserved key under which a file records its settings' schema version.
  static let versionKey = "$version"
  private static let reservedKey = JSONKey(versionKey)

  private struct Member: Sendable, Equatable {
    let key: JSONKey
    var value: JSONValue
    /// The member's value exactly as the file held it; nil once the value is set here.
    var text: String?
  }

  private var members: [Member] = []
  private var positions: [JSONKey: Int] = [:]

  /// An empty document.
  init() {}

  /// Parses a settings file's bytes.
  init(parsing bytes: [UInt8]) throws(JSONSyntaxError) {
    for (key, value, text) in try JSONParser.members(from: bytes) {
      positions[JSONKey(key)] = members.count
      members.append(Member(key: JSONKey(key), value: value, text: text))
    }
  }

  /// The keys in file order, but for the reserved ``versionKey``.
  var keys: [String] { members.compactMap { $0.key == Self.reservedKey ? nil : $0.key.text } }

  /// Every key's value, but for the reserved ``versionKey``'s.
  var values: [JSONKey: JSONValue] {
    Dictionary(uniqueKeysWithValues: members.compactMap { $0.key == Self.reservedKey ? nil : ($0.key, $0.value) })
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

  /// A key's value; setting nil removes the key. A new key goes last. Keys are the same only when their Unicode
  /// scalars are (see ``JSONKey``).
  subscript(text: String) -> JSONValue? {
    get { positions[JSONKey(text)].map { members[$0].value } }
    set {
      let key = JSONKey(text)
      switch (positions[key], newValue) {
      case (let position?, let value?):
        members[position] = Member(key: key, value: value, text: nil)
      case (nil, let value?):
        positions[key] = members.count
        members.append(Member(key: key, value: value, text: nil))
      case (let position?, nil):
        members.remove(at: position)
        positions[key] = nil
        for index in position..<members.count { positions[members[index].key] = index }
      case (nil, nil):
        break
      }
    }
  }

  /// Sets `key` to `value`, to be written as `text` (JSON that reads as `value`, such as a number with more digits
  /// than a `Double` keeps) rather than as the value's own JSON.
  mutating func set(_ value: JSONValue, writtenAs text: String, forKey key: String) {
    self[key] = value
    if let position = positions[JSONKey(key)] { members[position].text = text }
  }

  /// The file's text: one member a line, unchanged values as they were, new ones indented two spaces a level.
  func rendered() -> [UInt8] {
    guard !members.isEmpty else { return Array("{}\n".utf8) }
    var output: [UInt8] = [UInt8(ascii: "{")]
    for (index, member) in members.enumerated() {
      output.append(contentsOf: (index == 0 ? "\n  " : ",\n  ").utf8)
      JSONValue.writeString(member.key.text, to: &output)
      output.append(contentsOf: ": ".utf8)
      if let text = member.text {
        output.append(contentsOf: text.utf8)
      } else {
        member.value.write(to: &output, indentation: 2)
      }
    }
    output.append(contentsOf: "\n}\n".utf8)
    return output
  }
}
