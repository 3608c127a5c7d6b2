#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The settings file's content inside ``SettingsStore/update(_:)``: read it and change it by key, raw or through a
/// ``Setting`` or a ``SettingKey``. The changes are written when the update's body returns.
///
/// Raw access by key sees the user's file only. Access through a ``Setting`` (or a ``SettingKey``) reads as the
/// setting does: the fleet's value of a key it enforces, else the user's value, else the fleet's, else the store's
/// first system file's, else the default; so `settings[launches] += 1` counts on from the value an administrator set.
/// A key the fleet enforces cannot be set: the update then fails with ``SettingsError/enforcedByFleet(key:copy:)``.
/// A stored value that does not decode is never taken for the default: reading it makes the update throw
/// ``SettingsError/undecodableValue(key:expected:reason:)`` and write nothing, so that `settings[interval] += 30`
/// over a stored `"sixty"` does not quietly store the default plus 30.
public struct SettingsTransaction {
  var document: SettingsDocument
  /// The store whose layers below the user's file a setting reads, from memory (brought up to date before the
  /// update took its lock); nil for a migration, which reads none.
  let store: SettingsStore?
  /// The keys the fleet enforces, with the copy that does, as they were when the update began.
  let enforced: [JSONKey: URL]
  /// The first change that cannot be made (a value that cannot be stored, the reserved key); the update then
  /// writes nothing.
  private(set) var invalid: SettingsError?
  /// The first stored value read through a setting that did not decode (a read, which cannot change the
  /// transaction itself, notes it here); the update then writes nothing.
  private let unreadable = Unreadable()

  private final class Unreadable {
    var error: SettingsError?
  }

  /// Why the update must write nothing: a change that cannot be made, else a stored value that did not decode.
  var failure: SettingsError? { invalid ?? unreadable.error }

  init(document: SettingsDocument, store: SettingsStore? = nil, enforced: [JSONKey: URL] = [:]) {
    self.document = document
    self.store = store
    self.enforced = enforced
  }

  /// The keys the user's file holds, in file order (not the reserved `"$version"`, which records the settings'
  /// schema version for ``SettingsMigration``s, nor `"$schema"`, which tells editors where the file's JSON Schema
  /// is).
  public var keys: [String] { document.keys }

  /// The value the user's file holds for `key`; setting nil removes the key. The reserved keys `"$version"` and
  /// `"$schema"` read nil, and setting them fails the update with ``SettingsError/reservedKey(_:)``: migrations keep
  /// the one, `splintctl schema` the other.
  public subscript(key: String) -> JSONValue? {
    get { SettingsDocument.isReserved(key) ? nil : document[key] }
    set {
      if SettingsDocument.isReserved(key) {
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
    if !parsed.exact, !SettingsDocument.isReserved(key) {
      let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
      let trimmed = text.utf8.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
      document.set(parsed.value, writtenAs: String(decoding: trimmed, as: UTF8.self), forKey: key)
    }
  }

  /// A setting's value as the setting would read it (the fleet's when it enforces the key, else the user's value,
  /// else the first fleet copy's or system file's; else the setting's default); setting it stores the value under the
  /// setting's key in the user's file.
  ///
  /// A stored value that does not decode as `Value` makes the update throw, writing nothing (see
  /// ``SettingsTransaction``); the default is read meanwhile.
  public subscript<Value: SettingValue>(setting: Setting<Value>) -> Value {
    get { value(forKey: setting.key, default: setting.defaultValue) }
    set { set(newValue, forKey: setting.key) }
  }

  /// A declared setting's value, as the subscript that takes a ``Setting`` reads and sets it (the fleet's when it
  /// enforces the key, else the user's value, else the first fleet copy's or system file's, else the key's default);
  /// a stored value that does not decode makes the update throw.
  ///
  /// ```swift
  /// try store.update { settings in settings[.interval] += 30 }
  /// ```
  public subscript<Value: SettingValue>(key: SettingKey<Value>) -> Value {
    get { value(forKey: key.name, default: key.defaultValue) }
    set { set(newValue, forKey: key.name) }
  }

  private func value<Value: SettingValue>(forKey name: String, default defaultValue: Value) -> Value {
    let key = JSONKey(name)
    let own = self[name]
    var json = own
    if let layers = store?.layers {
      // The user's value is this transaction's; the other files' are in memory, brought up to date before the update
      // took its lock (which a look at them now would have to take).
      let enforced = enforced[key] != nil ? layers.enforcement(of: name, refreshing: false) : nil
      json =
        layers.resolve(name, enforced: enforced) { _, file in file === layers.user ? own : file.storedValue(key) }?
        .value
    }
    guard let json else {
      return defaultValue
    }
    do {
      return try Value(jsonValue: json)
    } catch {
      if unreadable.error == nil {
        unreadable.error = .undecodableValue(key: name, expected: "\(Value.self)", reason: "\(error)")
      }
      return defaultValue
    }
  }

  private mutating func set<Value: SettingValue>(_ value: Value, forKey key: String) {
    do {
      self[key] = try value.storedJSON()
    } catch {
      invalid = invalid ?? .unencodableValue(key: key, reason: "\(error)")
    }
  }
}
