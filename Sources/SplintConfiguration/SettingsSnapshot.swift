#if SplintConfiguration
  public import Configuration
  public import SplintSettings
  import Synchronization

  /// The settings as they were at one moment, as swift-configuration reads them: what ``SettingsProvider`` answers
  /// from, and what its `snapshot()` returns.
  ///
  /// It holds the user's settings file as it was when it was made. A value the file does not hold comes from the
  /// store's value in effect (`SettingsStore.value(forKey:)`, which finds what system-wide files set, where the store
  /// has them), read the first time the snapshot is asked for it and kept, so that a snapshot always answers the
  /// same.
  ///
  /// Keys are dot-separated paths into the JSON, as swift-configuration's `JSONSnapshot` reads them:
  /// `{"server": {"port": 8080}}` answers `server.port`. A key the file holds whole (`{"sync.interval": 30}`, as
  /// a `Setting("sync.interval", ...)` writes it) answers too; where both spellings lead to a value, the longer
  /// member name wins. Values convert as `JSONSnapshot` converts them: numbers and booleans into each other when
  /// exact (`1` reads as `true`, `2.0` as `2`), strings into bytes through the bytes decoder (base64 by default),
  /// an empty array into an array of any type. `null` and objects read as absent, so that the next provider, or the
  /// default, answers.
  public struct SettingsSnapshot: ConfigSnapshot, CustomStringConvertible {
    /// The name of the provider that made the snapshot, with the file's path.
    public let providerName: String
    /// The user's settings file when the snapshot was made: the store's `SettingsStore.values`.
    public let values: [JSONKey: JSONValue]
    /// The values in effect that `values` does not hold.
    let layers: Layers
    /// The settings file's path, for messages.
    let file: String
    let bytesDecoder: any ConfigBytesFromStringDecoder
    let secretsSpecifier: SecretsSpecifier<String, JSONValue>

    /// `SettingsProvider[<path>][<count> values]`; never a value.
    public var description: String { "\(providerName)[\(values.count) values]" }

    /// The value for `key` converted to `type`, or a lookup result without a value when the settings hold none.
    ///
    /// - Throws: ``ConfigLookupError`` ``ConfigLookupError/Code/notConvertible`` when the value is of another type
    ///   and does not convert, ``ConfigLookupError/Code/unsupportedValue`` for an array that swift-configuration has
    ///   no type for.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
      try lookup(key, type).get()
    }

    /// The lookup, as a value that watches compare to tell a change from none.
    func lookup(_ key: AbsoluteConfigKey, _ type: ConfigType) -> Result<LookupResult, ConfigLookupError> {
      let encodedKey = Self.encode(key)
      let path = encodedKey.split(separator: ".", omittingEmptySubsequences: false)[...]
      // A key the fleet enforces is the fleet's, whatever the user's file holds; then the user's, then the layers'.
      let member = { (key: JSONKey) in layers.enforcedValue(forKey: key) ?? values[key] ?? layers.value(forKey: key) }
      guard let found = Self.find(path, member: member) else {
        return .success(LookupResult(encodedKey: encodedKey, value: nil))
      }
      return Result { () throws(ConfigLookupError) in
        let content = try convert(found, to: type, key: encodedKey)
        let isSecret = secretsSpecifier.isSecret(key: encodedKey, value: found)
        return LookupResult(encodedKey: encodedKey, value: content.map { ConfigValue($0, isSecret: isSecret) })
      }
    }

    /// The key as swift-configuration's JSON snapshot encodes it: its components joined with dots.
    static func encode(_ key: AbsoluteConfigKey) -> String { key.components.joined(separator: ".") }

    /// The value at `path` in an object whose members `member` gives: a member named by the first few components
    /// (the most first) and, for the components left, a value found the same way inside that member.
    static func find(_ path: ArraySlice<Substring>, member: (JSONKey) -> JSONValue?) -> JSONValue? {
      for count in stride(from: path.count, through: 1, by: -1) {
        guard let found = member(JSONKey(path.prefix(count).joined(separator: "."))) else { continue }
        if count == path.count {
          if case .object = found { continue }
          return found
        }
        if case .object(let inner) = found, let value = find(path.dropFirst(count), member: { inner[$0] }) {
          return value
        }
      }
      return nil
    }

    private func convert(
      _ value: JSONValue, to type: ConfigType, key: String
    ) throws(ConfigLookupError)
      -> ConfigContent?
    {
      let converted: ConfigContent?
      switch type {
      case .string: converted = value.string.map(ConfigContent.string)
      case .int: converted = value.int.map(ConfigContent.int)
      case .double: converted = value.double.map(ConfigContent.double)
      case .bool: converted = value.bool.map(ConfigContent.bool)
      case .bytes: converted = value.string.flatMap(bytesDecoder.decode).map(ConfigContent.bytes)
      case .stringArray: converted = try elements(of: value, key: key, \.string).map(ConfigContent.stringArray)
      case .intArray: converted = try elements(of: value, key: key, \.int).map(ConfigContent.intArray)
      case .doubleArray: converted = try elements(of: value, key: key, \.double).map(ConfigContent.doubleArray)
      case .boolArray: converted = try elements(of: value, key: key, \.bool).map(ConfigContent.boolArray)
      case .byteChunkArray:
        converted = try elements(of: value, key: key) { $0.string.flatMap(bytesDecoder.decode) }
          .map(ConfigContent.byteChunkArray)
      }
      switch (converted, value) {
      case (nil, .null), (nil, .object): return nil
      case (nil, _): throw .notConvertible(key: key, holding: value.kind, to: type, in: "The settings file \(file)")
      case (let content?, _): return content
      }
    }

    /// The elements of an array converted by `convert`; nil when `value` is not an array or an element does not
    /// convert. An array swift-configuration has no type for (mixed, or holding objects, arrays or nulls) throws.
    private func elements<Element>(
      of value: JSONValue, key: String, _ convert: (JSONValue) -> Element?
    ) throws(ConfigLookupError) -> [Element]? {
      guard case .array(let array) = value else { return nil }
      let strings = array.filter { $0.string != nil }.count
      let scalars = array.filter(\.isScalar).count
      guard strings == array.count || scalars == array.count else {
        let reason = "an array holding \(Set(array.map(\.kind)).sorted().joined(separator: ", "))"
        throw .unsupportedValue(key: key, reason: reason, in: "The settings file \(file)")
      }
      var converted: [Element] = []
      for element in array {
        guard let element = convert(element) else { return nil }
        converted.append(element)
      }
      return converted
    }
  }

  /// The values in effect for keys a snapshot's `values` does not hold, each read from the store the first time it is
  /// asked for and kept.
  final class Layers: Sendable {
    private let store: SettingsStore
    private let read = Mutex<[JSONKey: JSONValue?]>([:])

    init(store: SettingsStore) { self.store = store }

    func value(forKey key: JSONKey) -> JSONValue? {
      if let known = read.withLock({ $0[key] }) { return known }
      let value = store.value(forKey: key.text)
      return read.withLock { $0[key, default: value] }
    }

    /// The value a fleet copy enforces for `key` now, if one does (see `SettingsStore.origin(ofKey:)`).
    func enforcedValue(forKey key: JSONKey) -> JSONValue? {
      store.enforcedValue(forKey: key.text)?.value
    }
  }

  extension JSONValue {
    /// The string, or nil for any other value.
    fileprivate var string: String? {
      if case .string(let string) = self { return string }
      return nil
    }

    /// The number or boolean as an `Int` when exact (`true` is 1), as JSONSnapshot converts.
    fileprivate var int: Int? {
      switch self {
      case .bool(let bool): bool ? 1 : 0
      case .int(let int): int
      case .double(let double): Int(exactly: double)
      default: nil
      }
    }

    /// The number or boolean as a `Double` when exact (`true` is 1), as JSONSnapshot converts.
    fileprivate var double: Double? {
      switch self {
      case .bool(let bool): bool ? 1 : 0
      case .int(let int): Double(exactly: int)
      case .double(let double): double
      default: nil
      }
    }

    /// The boolean, or whether the number is not zero, as JSONSnapshot converts.
    fileprivate var bool: Bool? {
      switch self {
      case .bool(let bool): bool
      case .int(let int): int != 0
      case .double(let double): double != 0
      default: nil
      }
    }

    /// Whether the value is a number or a boolean, which convert into each other.
    fileprivate var isScalar: Bool {
      switch self {
      case .bool, .int, .double: true
      default: false
      }
    }

    /// What the value is, for messages: never the value itself, which may be secret.
    fileprivate var kind: String {
      switch self {
      case .null: "null"
      case .bool: "a boolean"
      case .int: "an integer"
      case .double: "a number"
      case .string: "a string"
      case .array: "an array"
      case .object: "an object"
      }
    }
  }
#endif
