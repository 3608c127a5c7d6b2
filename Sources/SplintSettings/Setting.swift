public import Observation
import Synchronization

/// One typed preference in a ``SettingsStore``, live across every instance in this process and every process that
/// uses the same file.
///
/// ```swift
/// let refresh = Setting("refreshInterval", default: 30, store: SettingsStore(suite: "com.example.reader"))
/// refresh.value = 60                          // written to the file before this returns
///
/// for await seconds in refresh.updates() {    // the current value, then every change, from any process
///   print("refresh every \(seconds) s")
/// }
/// ```
///
/// Reading returns the stored value when there is one that decodes (the user's, else that of the store's first system
/// file that holds the key), else the default; the default is never written, so changing it in code later takes
/// effect. A `Setting` is `Observable` (`withObservationTracking` fires on changes made here and elsewhere) and
/// usable from any thread or actor.
///
/// The first read of ``value`` (or ``updates(initial:)``) starts watching the file, so that changes made by other
/// processes arrive as they happen; from then on reads come from memory and never block on the disk. A `Setting`
/// made only to be saved (``save(_:)``, ``reset()``) starts nothing in the background.
///
/// Programs that share a setting, such as a command-line tool and a daemon, name its suite. The default store,
/// ``SettingsStore/standard``, is named after the executable, as `UserDefaults.standard` is, so two programs that
/// each write `Setting("interval", default: 30)` use two files:
///
/// ```swift
/// let shared = SettingsStore(suite: "com.example.sync")  // ~/.config/com.example.sync/settings.json
/// let interval = Setting("interval", default: 30, store: shared)
/// ```
///
/// A change of several keys at once (a batch ``SettingsStore/update(_:)``, another process's write of the file, a
/// fleet transaction) is seen whole: once any `Setting` of a store shows one of its keys' new values, every `Setting`
/// of that store shows the change's other keys at their new values too, whichever setting hears of it first; and
/// when ``SettingsStore/changes()`` yields, every `Setting` already shows the change it announces. (Two reads are
/// still two reads: a change may come between them, so read a pair that must agree after the change, as a
/// `changes()` element or an observer's call tells of it.)
///
/// Assigning nil to an optional setting removes its key, as `UserDefaults`' `set(nil, forKey:)` does, so that the
/// default applies again (a `Setting<Int?>` with a default of 5 reads 5).
public final class Setting<Value: SettingValue>: Observable, Sendable {
  /// The key in the settings file.
  public let key: String
  /// The value while the file has none for ``key``.
  public let defaultValue: Value
  /// Where the value is kept.
  public let store: SettingsStore

  private let state: Mutex<SettingState>
  /// The streams of ``updates(initial:)``, by identifier; taken inside `state`'s lock where both are, so that a
  /// stream starts with the value then current and hears every change after it.
  private let streams = Mutex<[UInt64: AsyncStream<Value>.Continuation]>([:])
  private let registrar = ObservationRegistrar()
  /// The files the key is read from, first wins (the store's layers say which), and the observer's identifier in each.
  private let files: [SettingsFile]
  private let observers: [UInt64]
  /// The fleet copies that may enforce the key, and the observer's identifier in each, for what the copy enforces
  /// (see ``SettingsStore/fleetCopyURLs``).
  private let enforcers: [(copy: SettingsFile, id: UInt64)]
  /// Whether the file is known to be watched, so that a read need not ask it: one load of this setting's own
  /// memory, where asking the store's file would cost retains of both (a read's time would double).
  private let watching = Atomic(false)
  /// `\.value`, made once: a generic class's key path literal is built anew on every use (about 1.6 µs here),
  /// which would dominate every read.
  private let valuePath: any KeyPath<Setting<Value>, Value> & Sendable

  /// A setting for `key` in `store`.
  ///
  /// - Parameters:
  ///   - key: The key in the settings file.
  ///   - defaultValue: The value while the file has none for `key`, or one that does not decode. Never written.
  ///   - store: Where the value is kept: ``SettingsStore/standard`` unless given another.
  public init(_ key: String, default defaultValue: Value, store: SettingsStore = .standard) {
    self.key = key
    self.defaultValue = defaultValue
    self.store = store
    valuePath = \Setting<Value>.value
    let files = store.layers.places(for: key).map(\.file)
    self.files = files
    state = Mutex(SettingState(boxed: Boxed(defaultValue), layers: Array(repeating: (0, nil), count: files.count)))
    observers = files.map { $0.makeObserverID() }
    enforcers = store.layers.enforcers(of: key).map { ($0.file, $0.file.makeObserverID()) }
    for (layer, file) in files.enumerated() {
      let (version, json) = file.observe(key, id: observers[layer], watching: false) { [weak self] version, json in
        self?.apply(json, version: version, layer: layer)
      }
      apply(json, version: version, layer: layer)
    }
    // A copy that starts or stops enforcing the key changes which layer's value is read.
    for (copy, id) in enforcers {
      _ = copy.observe(FleetCopy.enforcedKey, id: id, watching: false) { [weak self] _, _ in self?.resolve() }
    }
    if !enforcers.isEmpty { resolve() }
  }

  deinit {
    for (file, id) in zip(files, observers) { file.removeObserver(key, id: id) }
    for (copy, id) in enforcers { copy.removeObserver(FleetCopy.enforcedKey, id: id) }
    streams.withLock { streams in
      for stream in streams.values { stream.finish() }
    }
  }

  /// The stored value, or the default. Setting it writes the file before returning; a write that fails leaves
  /// the value as it was and is reported through ``SettingsStore/errors()`` (use ``save(_:)`` to have it thrown).
  public var value: Value {
    get {
      // A read may be inside withObservationTracking, which must hear of changes: the file is watched from now on.
      if !watching.load(ordering: .relaxed), store.startWatching() { watching.store(true, ordering: .relaxed) }
      registrar.access(self, keyPath: valuePath)
      // A file that changed since this setting last heard of it: its news (each key's observer, one after another)
      // is on the way, and the value is read from the files now, so that a change of several keys is never seen
      // half-way (this key's new value beside another's old one, or the reverse).
      let (boxed, behind) = state.withLock { state in
        (state.boxed, files.indices.contains { files[$0].publishedVersion > state.layers[$0].version })
      }
      let value = value(of: boxed)
      return behind ? currentValue(orElse: value) : value
    }
    set {
      try? save(newValue)
    }
  }

  /// Writes `newValue` to the file, once, and makes it the value of every `Setting` on this key in this process
  /// before returning.
  ///
  /// - Throws: ``SettingsError/unencodableValue(key:reason:)``, ``SettingsError/corruptFile(_:reason:)`` (the file
  ///   is not JSON: fix it, or start over with ``SettingsStore/resetAll()``), or
  ///   ``SettingsError/writeFailed(_:reason:)``. The value and the file stay as they were.
  public func save(_ newValue: Value) throws(SettingsError) {
    try store.save(newValue, forKey: key)
  }

  /// Removes the key from the user's file, so that every `Setting` on it reads the store's system value, or else its
  /// default. A failure is reported through ``SettingsStore/errors()``; use ``remove()`` to have it thrown.
  public func reset() {
    try? remove()
  }

  /// ``reset()``, throwing when the file cannot be written.
  ///
  /// - Throws: ``SettingsError/writeFailed(_:reason:)``; the value and the file stay as they were.
  public func remove() throws(SettingsError) {
    try store.removeValue(forKey: key)
  }

  /// The value, then each new value as it changes here or in another process. When values change faster than
  /// they are read, only the newest waits (earlier ones are skipped).
  ///
  /// The stream keeps what it needs alive (this `Setting` and its store) for as long as it is iterated, so it may
  /// outlive every other reference to them: `Setting("k", default: 1).updates()` goes on yielding. It ends when the
  /// task iterating it is cancelled, or once the stream and its iterator are dropped.
  ///
  /// - Parameter initial: Whether the stream starts with the current value.
  public func updates(initial: Bool = true) -> AsyncStream<Value> {
    store.startWatching()
    let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state in
      state.nextStream += 1
      if initial { continuation.yield(value(of: state.boxed)) }
      streams.withLock { $0[state.nextStream] = continuation }
      return state.nextStream
    }
    // Held strongly: the setting holds the continuation and the continuation the setting, until the stream ends
    // (cancelled, or its consumer gone), which removes the continuation and so lets the setting go.
    continuation.onTermination = { _ in
      _ = self.streams.withLock { $0.removeValue(forKey: id) }
    }
    return stream
  }

  /// The value as the files hold it in memory now, for a read that finds a file changed whose news has not reached
  /// this setting yet; `known` when the value there does not decode.
  ///
  /// When the change did not touch this key (nor what the fleet enforces), nothing is on the way for it: the
  /// setting takes the files' versions as its own, so that its next read is the fast one again.
  private func currentValue(orElse known: Value) -> Value {
    let enforced = store.layers.enforcement(of: key)
    let layers = files.map { $0.storedValueAndVersion(JSONKey(key)) }
    var current: Value?
    if let json = store.layers.value(of: key, enforced: enforced, value: { index, _ in layers[index].value }) {
      current = try? Value(jsonValue: json)
    } else {
      current = defaultValue
    }
    return state.withLock { state in
      let untouched = layers.indices.allSatisfy { index in
        layers[index].version <= state.layers[index].version || layers[index].value == state.layers[index].json
      }
      if untouched, current == value(of: state.boxed), !state.undecodable {
        for (index, layer) in layers.enumerated() where layer.version > state.layers[index].version {
          state.layers[index].version = layer.version
        }
      }
      return current ?? known
    }
  }

  /// Takes the key's value in `layer` from that file's snapshot `version`, and resolves the value anew (see
  /// ``resolve(_:)``).
  private func apply(_ json: JSONValue?, version: UInt64, layer: Int) {
    resolve { state in
      guard version > state.layers[layer].version else { return false }
      state.layers[layer] = (version, json)
      return true
    }
  }

  /// Resolves the value anew, after `change` (when it returns true), as the store's layers say: the fleet's value
  /// when a copy enforces the key (read from the copy's memory now, so that a copy's change of a value and of what it
  /// enforces are seen together), else the first layer's that holds the key, decoded, else the default. An
  /// undecodable value is reported (through the store's errors, which hear it until it decodes again) and leaves the
  /// current value as it is.
  private func resolve(_ change: (inout SettingState) -> Bool = { _ in true }) {
    let layers = store.layers
    let enforced = layers.enforcement(of: key)
    let outcome = state.withLock { state -> ApplyOutcome in
      guard change(&state) else { return .decoded(changed: false, again: false) }
      var decoded = defaultValue
      if let json = layers.value(of: key, enforced: enforced, value: { index, _ in state.layers[index].json }) {
        do {
          decoded = try Value(jsonValue: json)
        } catch {
          state.undecodable = true
          return .undecodable("\(error)")
        }
      }
      let again = state.undecodable
      state.undecodable = false
      let changed = value(of: state.boxed) != decoded
      // Taken even when equal, so that the value is exactly what is stored (-0.0 is equal to 0.0, but not the same).
      state.boxed = Boxed(decoded)
      if changed {
        streams.withLock { streams in
          for stream in streams.values { stream.yield(decoded) }
        }
      }
      return .decoded(changed: changed, again: again)
    }
    switch outcome {
    case .decoded(let changed, let again):
      if again { store.file.valueDecodes(key: key, expected: "\(Value.self)") }
      if changed { registrar.withMutation(of: self, keyPath: valuePath) {} }
    case .undecodable(let reason):
      store.file.reportUndecodable(key: key, expected: "\(Value.self)", reason: reason)
    }
  }
}

extension Setting {
  /// A value, immutable, in a class: what `SettingState` holds, so that the state itself is not generic.
  private final class Boxed: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
  }

  /// The value in `boxed`, a `SettingState`'s.
  private func value(of boxed: any AnyObject & Sendable) -> Value {
    // Unchecked (a checked cast would look up the metadata this avoids): `boxed` is only ever set to a `Boxed`.
    unsafeDowncast(boxed, to: Boxed.self).value
  }
}

/// What a read takes under the lock, in a type that is not generic: a caller in another module runs `Setting`'s
/// code unspecialized, and there every use of a generic state, and of the `Mutex` holding it, looked up their type
/// metadata at run time (three lookups a read: 154-295 ns a read against 35-58 ns without them, on the quiet
/// machine, a loop of 2,000,000 reads of a `Setting<Int>`). The value is in a box (`Setting.Boxed`), replaced whole
/// when it changes.
private struct SettingState {
  /// Always a `Setting<Value>.Boxed` of the setting's own `Value` (see `Setting.value(of:)`).
  var boxed: any AnyObject & Sendable
  /// Each layer's latest value for the key (the user's file first, then the fleet's copies and the system files
  /// in order), with the version of the file's snapshot it came from: an older change of a file arriving late is
  /// ignored. Versions of different files are not compared.
  var layers: [(version: UInt64, json: JSONValue?)]
  var nextStream: UInt64 = 0
  /// Whether this setting told the store that the stored value does not decode, and has not said since that it does.
  var undecodable = false
}

/// What applying a file's change did to a ``Setting``'s value.
private enum ApplyOutcome {
  /// The value decodes: whether it changed, and whether it decodes again after it did not.
  case decoded(changed: Bool, again: Bool)
  /// The stored value does not decode, for this reason.
  case undecodable(String)
}
