/// The settings file's content inside ``SettingsStore/update(_:)``: read it and change it by key, raw or through a
/// ``Setting``. The changes are written when the update's body returns.
///
/// Raw access by key sees the user's file only. Access through a ``Setting`` reads as the setting does: the user's
/// value, else the store's first system file's, else the default; so `settings[launches] += 1` counts on from the
/// value an administrator set.
public struct SettingsTransaction {
  var document: SettingsDocument
  /// The store's system layers, read from memory (brought up to date before the update took its lock).
  let systemFiles: [SettingsFile]
  /// The first value set that cannot be stored; the update then writes nothing.
  private(set) var unencodable: SettingsError?

  init(document: SettingsDocument, systemFiles: [SettingsFile] = []) {
    self.document = document
    self.systemFiles = systemFiles
  }

  /// The keys the user's file holds, in file order.
  public var keys: [String] { document.keys }

  /// The value the user's file holds for `key`; setting nil removes the key.
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

  /// A setting's value as the setting would read it (the user's value, else the first system file's, when it
  /// decodes; else the setting's default); setting it stores the value under the setting's key in the user's file.
  public subscript<Value: SettingValue>(setting: Setting<Value>) -> Value {
    get {
      let key = JSONKey(setting.key)
      let json = document[setting.key] ?? systemFiles.lazy.compactMap { $0.storedValue(key) }.first
      return json.flatMap { try? Value(jsonValue: $0) } ?? setting.defaultValue
    }
    set {
      do {
        self[setting.key] = try newValue.jsonValue()
      } catch {
        unencodable = unencodable ?? .unencodableValue(key: setting.key, reason: "\(error)")
      }
    }
  }
}
