#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The settings file's content inside ``SettingsStore/update(_:)``: read it and change it by key, raw or through a
/// ``Setting``. The changes are written when the update's body returns.
///
/// Raw access by key sees the user's file only. Access through a ``Setting`` reads as the setting does: the fleet's
/// value of a key it enforces, else the user's value, else the fleet's, else the store's first system file's, else
/// the default; so `settings[launches] += 1` counts on from the value an administrator set. A key the fleet
/// enforces cannot be set: the update then fails with ``SettingsError/enforcedByFleet(key:copy:)``.
public struct SettingsTransaction {
  var document: SettingsDocument
  /// The store whose layers below the user's file a setting reads, from memory (brought up to date before the
  /// update took its lock); nil for an import, which reads none.
  let store: SettingsStore?
  /// The keys the fleet enforces, with the copy that does, as they were when the update began.
  let enforced: [JSONKey: URL]
  /// The first change that cannot be made (a value that cannot be stored, the reserved key); the update then
  /// writes nothing.
  private(set) var invalid: SettingsError?

  init(document: SettingsDocument, store: SettingsStore? = nil, enforced: [JSONKey: URL] = [:]) {
    self.document = document
    self.store = store
    self.enforced = enforced
  }

  /// The keys the user's file holds, in file order (not the reserved `"$version"`, which records the settings'
  /// schema version for ``SettingsMigration``s).
  public var keys: [String] { document.keys }

  /// The value the user's file holds for `key`; setting nil removes the key. The reserved key `"$version"` reads
  /// nil, and setting it fails the update with ``SettingsError/reservedKey(_:)``: migrations keep it.
  public subscript(key: String) -> JSONValue? {
    get { key == SettingsDocument.versionKey ? nil : document[key] }
    set {
      if key == SettingsDocument.versionKey {
        invalid = invalid ?? .reservedKey(key)
      } else if newValue != nil, let copy = enforced[JSONKey(key)] {
        invalid = invalid ?? .enforcedByFleet(key: key, copy: copy)
      } else if let newValue, !newValue.isFinite {
        invalid = invalid ?? .unencodableValue(key: key, reason: "JSON has no NaN or infinity")
      } else {
        document[key] = newValue
      }
    }
  }

  /// Sets `key` to the JSON `text`, written to the file as given when its numbers have more digits than a `Double`
  /// keeps (so that a number typed on a command line is never rounded), else as its value would be.
  ///
  /// - Throws: ``SettingsError/invalidJSON(reason:)`` when `text` is not one JSON value.
  package mutating func set(jsonText text: String, forKey key: String) throws(SettingsError) {
    let parsed: (value: JSONValue, exact: Bool)
    do {
      parsed = try JSONParser.valueAndExactness(from: Array(text.utf8))
    } catch {
      throw .invalidJSON(reason: error.description)
    }
    self[key] = parsed.value
    if !parsed.exact, key != SettingsDocument.versionKey {
      let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
      let trimmed = text.utf8.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
      document.set(parsed.value, writtenAs: String(decoding: trimmed, as: UTF8.self), forKey: key)
    }
  }

  /// A setting's value as the setting would read it (the fleet's when it enforces the key, else the user's value,
  /// else the first fleet copy's or system file's, when it decodes; else the setting's default); setting it stores
  /// the value under the setting's key in the user's file.
  public subscript<Value: SettingValue>(setting: Setting<Value>) -> Value {
    get {
      let key = JSONKey(setting.key)
      var json = self[setting.key]
      if let store {
        if enforced[key] != nil, let forced = store.fleetLayers.lazy.compactMap({ $0.enforcedValue(key) }).first {
          json = forced
        }
        json = json ?? store.lowerLayers(for: setting.key).lazy.compactMap { $0.storedValue(key) }.first
      }
      return json.flatMap { try? Value(jsonValue: $0) } ?? setting.defaultValue
    }
    set {
      do {
        self[setting.key] = try newValue.storedJSON()
      } catch {
        invalid = invalid ?? .unencodableValue(key: setting.key, reason: "\(error)")
      }
    }
  }
}
