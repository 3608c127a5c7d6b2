/// The settings file's content inside ``SettingsStore/update(_:)``: read it and change it by key, raw or through a
/// ``Setting``. The changes are written when the update's body returns.
public struct SettingsTransaction {
  var document: SettingsDocument
  /// The first change that cannot be made (a value that cannot be stored, the reserved key); the update then
  /// writes nothing.
  private(set) var invalid: SettingsError?

  init(document: SettingsDocument) {
    self.document = document
  }

  /// The keys the file holds, in file order (not the reserved `"$version"`, which records the settings' schema
  /// version for ``SettingsMigration``s).
  public var keys: [String] { document.keys }

  /// The value stored for `key`; setting nil removes the key. The reserved key `"$version"` reads nil, and setting
  /// it fails the update with ``SettingsError/reservedKey(_:)``: migrations keep it.
  public subscript(key: String) -> JSONValue? {
    get { key == SettingsDocument.versionKey ? nil : document[key] }
    set {
      if key == SettingsDocument.versionKey {
        invalid = invalid ?? .reservedKey(key)
      } else if let newValue, !newValue.isFinite {
        invalid = invalid ?? .unencodableValue(key: key, reason: "JSON has no NaN or infinity")
      } else {
        document[key] = newValue
      }
    }
  }

  /// A setting's value as the setting would read it (stored and decodable, else its default); setting it stores the
  /// value under the setting's key.
  public subscript<Value: SettingValue>(setting: Setting<Value>) -> Value {
    get { self[setting.key].flatMap { try? Value(jsonValue: $0) } ?? setting.defaultValue }
    set {
      do {
        self[setting.key] = try newValue.jsonValue()
      } catch {
        invalid = invalid ?? .unencodableValue(key: setting.key, reason: "\(error)")
      }
    }
  }
}
