/// Where a program declares its settings' keys, once, as static members, each with its type and default:
///
/// ```swift
/// extension SettingKeys {
///   static let interval = SettingKey("interval", default: 30)
///   static let mode = SettingKey("mode", default: Mode.fast)
/// }
/// ```
///
/// Then any store reads and writes them by that name, so that a test points the same keys at a store of its own:
/// `store[.interval]`, `Setting(.interval, store: store)`, and `settings[.interval]` inside
/// ``SettingsStore/update(_:)``. This is the Defaults package's `Defaults.Keys`.
///
/// It holds nothing: it is the namespace the keys are declared in, and the class each ``SettingKey`` is, so that
/// `.interval` finds them wherever a `SettingKey` is expected. (Swift allows stored static members in extensions of a
/// class like this one, but not of a generic type such as ``Setting``.)
public class SettingKeys: @unchecked Sendable {
  // @unchecked only because Swift checks Sendable for final classes alone, and keys must subclass this one (which
  // makes Swift ask its subclass to restate it, unchecked too): it has no state at all, and its one subclass,
  // SettingKey, is final and holds nothing but constants of Sendable types.
  fileprivate init() {}
}

/// A setting's key, declared once with its type and default (see ``SettingKeys``), for use with any store.
///
/// A declared key costs nothing until it is used: a static member is made on first use, and making one touches no
/// store and no file. Reading `store[.interval]` looks at the store as ``SettingsStore/value(forKey:)`` does; a
/// ``Setting`` made from the key (`Setting(.interval, store: store)`) is the live, observable value, read from memory.
public final class SettingKey<Value: SettingValue>: SettingKeys, @unchecked Sendable {
  /// The key in the settings file.
  public let name: String
  /// The value while the file has none for the key, or one that does not decode. Never written.
  public let defaultValue: Value

  /// A key named `name` in the settings file, whose value is `defaultValue` until one is stored.
  public init(_ name: String, default defaultValue: Value) {
    self.name = name
    self.defaultValue = defaultValue
    super.init()
  }
}

extension Setting {
  /// A setting for a declared key (see ``SettingKeys``) in `store`: `Setting(.interval, store: store)`.
  ///
  /// - Parameters:
  ///   - key: The key, with its default.
  ///   - store: Where the value is kept: ``SettingsStore/standard`` unless given another.
  public convenience init(_ key: SettingKey<Value>, store: SettingsStore = .standard) {
    self.init(key.name, default: key.defaultValue, store: store)
  }
}

extension SettingsStore {
  /// A declared key's value in this store: the user's value, else the first system file's, else the key's default.
  /// Setting it writes the file before returning; a failed write leaves the file as it was, and is reported through
  /// ``errors()`` (``Setting/save(_:)`` throws it).
  ///
  /// ```swift
  /// store[.interval] = 60
  /// print(store[.interval])
  /// ```
  ///
  /// A stored value that does not decode as the key's type reads as the default, and is reported through ``errors()``
  /// (``SettingsError/undecodableValue(key:expected:reason:)``), once while it stays so.
  public subscript<Value: SettingValue>(key: SettingKey<Value>) -> Value {
    get {
      guard let json = value(forKey: key.name) else { return key.defaultValue }
      do {
        let value = try Value(jsonValue: json)
        file.valueDecodes(key: key.name, expected: "\(Value.self)")
        return value
      } catch {
        file.reportUndecodable(key: key.name, expected: "\(Value.self)", reason: "\(error)")
        return key.defaultValue
      }
    }
    set { try? save(newValue, forKey: key.name) }
  }
}
