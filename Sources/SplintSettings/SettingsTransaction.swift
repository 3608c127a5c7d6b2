/// The settings file's content inside ``SettingsStore/update(_:)``: read it and change it by key, raw or through a
/// ``Setting``. The changes are written when the update's body returns.
public struct SettingsTransaction {
  var document: SettingsDocument
  /// The first value set that cannot be stored; the update then writes nothing.
  private(set) var unencodable: SettingsError?

  init(document: SettingsDocument) {
    self.document = document
  }

  /// The keys the file holds, in file order.
  public var keys: [String] { document.keys }

  /// The value stored for `key`; setting nil removes the key.
  public subscript(key: String) -> JSONValue? {
    get { document[key] }
    set {
      if let newValue, !newValue.isFinite {
        unencodable = unencodable ?? .unencodableValue(key: key, reason: "JSON has no NaN or infinity")
      } else {
        document[key] = newValue
      }
    }
  }

  /// A setting's value as the setting would read it (stored and decodable, else its default); setting it stores the
  /// value under the setting's key.
  public subscript<Value: SettingValue>(setting: Setting<Value>) -> Value {
    get { document[setting.key].flatMap { try? Value(jsonValue: $0) } ?? setting.defaultValue }
    set {
      do {
        self[setting.key] = try newValue.jsonValue()
      } catch {
        unencodable = unencodable ?? .unencodableValue(key: setting.key, reason: "\(error)")
      }
    }
  }
}
