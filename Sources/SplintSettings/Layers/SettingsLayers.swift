import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The files a ``SettingsStore`` reads, in the order their values win, and the one place that says which of them a
/// key's value in effect comes from.
///
/// For a key, the files are: the user's file; the fleet's copies, first wins, unless the key is reserved
/// (``FleetCopy/isReserved(_:)``: a copy never holds such a key as a setting); the system files, first wins. A copy
/// that enforces the key (it may enforce keys, its `"$enforced"` lists the key, and it holds a value for it) goes
/// above them all, the first such copy first. The first file that holds the key gives its value; none, and a
/// ``Setting`` reads its default.
///
/// Everything that asks which file a key is read from, or whether a change of a file changes what anyone reads, asks
/// this type: the store's reads, writes and ``SettingsStore/changes()``, each ``Setting``, a transaction's reads.
struct SettingsLayers: Sendable {
  /// The user's file, which every write changes.
  let user: SettingsFile
  /// The fleet's copies, first wins; never written by a store.
  let copies: [FleetLayer]
  /// The system files, first wins; never written.
  let system: [SettingsFile]

  /// Where a file stands among the layers.
  enum Place: Sendable, Hashable {
    /// The user's file.
    case user
    /// The fleet copy at this index of ``SettingsLayers/copies``.
    case copy(Int)
    /// The system file at this index of ``SettingsLayers/system``.
    case system(Int)
  }

  /// A key's value in effect, and where it comes from.
  struct Source {
    let value: JSONValue
    let place: Place
    /// The file that holds the value.
    let file: SettingsFile
    /// What the file is to the store.
    let origin: SettingsOrigin
  }

  /// What a copy enforces for a key: its value there, and the copy's index in ``copies``.
  typealias Enforcement = (value: JSONValue, copy: Int)

  /// Every file, first wins: the user's, the copies, the system files.
  var files: [SettingsFile] { [user] + copies.map(\.file) + system }

  /// The files `key` is read from, first wins, and where each stands: the user's file, the copies unless the key is
  /// reserved, the system files. (A copy that enforces the key goes above them: see ``enforcement(of:refreshing:)``.)
  func places(for key: String) -> [(place: Place, file: SettingsFile)] {
    var places: [(place: Place, file: SettingsFile)] = [(.user, user)]
    if !FleetCopy.isReserved(key) {
      places += copies.enumerated().map { (.copy($0.offset), $0.element.file) }
    }
    places += system.enumerated().map { (.system($0.offset), $0.element) }
    return places
  }

  /// The copies that may enforce `key`: every copy, or none for a reserved key.
  func enforcers(of key: String) -> [FleetLayer] {
    FleetCopy.isReserved(key) ? [] : copies
  }

  /// The value a copy enforces for `key` now, and the copy: the first that enforces it. From memory, after a look at
  /// each copy that is not watched (unless `refreshing` is false, as inside a write, which takes no other file's
  /// lock).
  func enforcement(of key: String, refreshing: Bool = true) -> Enforcement? {
    let enforcers = enforcers(of: key)
    guard !enforcers.isEmpty else { return nil }
    let key = JSONKey(key)
    for (index, copy) in enforcers.enumerated() {
      if refreshing { copy.file.refreshUnlessWatched() }
      if let value = copy.enforcedValue(key) { return (value, index) }
    }
    return nil
  }

  /// The value in effect for `key`, and where it comes from: `enforced`'s, else the first value `value` gives for the
  /// files of ``places(for:)``, in order (it is asked for each until one holds the key); nil when none does.
  func resolve(
    _ key: String, enforced: Enforcement?, value: (_ index: Int, _ file: SettingsFile) -> JSONValue?
  ) -> Source? {
    if let enforced { return source(enforced.value, at: .copy(enforced.copy)) }
    return first(key, value).map { source($0.value, at: $0.place) }
  }

  /// The value in effect for `key`, as ``resolve(_:enforced:value:)`` finds it, without where it comes from: what a
  /// `Setting` resolves at every change of its files, which must cost no list of the layers and no file's URL (each
  /// made anew, they tripled the time an assignment takes to reach 10,000 settings: script/bench's fan-out rows).
  func value(
    of key: String, enforced: Enforcement?, value: (_ index: Int, _ file: SettingsFile) -> JSONValue?
  ) -> JSONValue? {
    enforced?.value ?? first(key, value)?.value
  }

  /// The first value `value` gives for the files of ``places(for:)``, in their order (walked here without making
  /// that list), and where that file stands.
  private func first(
    _ key: String, _ value: (_ index: Int, _ file: SettingsFile) -> JSONValue?
  ) -> (value: JSONValue, place: Place)? {
    if let found = value(0, user) { return (found, .user) }
    var index = 1
    if !FleetCopy.isReserved(key) {
      for (offset, copy) in copies.enumerated() {
        if let found = value(index, copy.file) { return (found, .copy(offset)) }
        index += 1
      }
    }
    for (offset, file) in system.enumerated() {
      if let found = value(index, file) { return (found, .system(offset)) }
      index += 1
    }
    return nil
  }

  /// The value in effect for `key` now, and where it comes from, each file looked at first when it is not watched
  /// (see ``SettingsFile/refreshUnlessWatched()``); nil when no file holds it.
  func resolve(_ key: String) -> Source? {
    resolve(key, enforced: enforcement(of: key)) { $1[key] }
  }

  /// The value in effect for `key` now, as ``resolve(_:)`` finds it, without where it comes from.
  func value(of key: String) -> JSONValue? {
    value(of: key, enforced: enforcement(of: key)) { $1[key] }
  }

  /// The source of `value`, held by the file at `place`.
  private func source(_ value: JSONValue, at place: Place) -> Source {
    switch place {
    case .user: Source(value: value, place: place, file: user, origin: .user(user.url))
    case .copy(let index):
      Source(value: value, place: place, file: copies[index].file, origin: .fleet(copies[index].url))
    case .system(let index): Source(value: value, place: place, file: system[index], origin: .system(system[index].url))
    }
  }

  /// The keys a copy enforces now, and the copy that does (the first, when several do): a write of one fails.
  func enforcedKeys() -> [JSONKey: URL] {
    var enforced: [JSONKey: URL] = [:]
    for copy in copies.reversed() {
      copy.file.refreshUnlessWatched()
      for key in copy.enforcedKeys { enforced[key] = copy.url }
    }
    return enforced
  }

  // MARK: - Changes

  /// Tells `continuation` the keys whose value in effect may have changed, once for each change of any file that
  /// changes one: a change of a key that a file above holds changes nothing anyone reads, and is not told; nor is a
  /// change of what a copy enforces that leaves every key's value as it was. The user's file's changes are told from
  /// inside the change, in order.
  ///
  /// - Returns: What stops telling.
  func tellChanges(to continuation: AsyncStream<Set<JSONKey>>.Continuation) -> @Sendable () -> Void {
    let seen = SeenEnforcement(copies.map { ($0.file.snapshotVersion, $0.enforcedValues()) })
    var telling: [(file: SettingsFile, id: UInt64)] = []
    // The user's file: every change but of a key a copy enforces (its value in effect is the copy's).
    let userID = user.tellChanges(
      to: continuation,
      filter: { keys in
        guard !copies.isEmpty else { return keys }
        let enforced = seen.current
        return keys.filter { !isShadowed($0, below: .user, enforced: enforced) }
      })
    telling.append((user, userID))
    for (index, copy) in copies.enumerated() {
      let id = copy.file.tellChanges { keys in
        let shown = changed(keys, inCopy: index, seen: seen)
        if !shown.isEmpty { continuation.yield(shown) }
      }
      telling.append((copy.file, id))
    }
    for (index, file) in system.enumerated() {
      let id = file.tellChanges { keys in
        let enforced = seen.current
        let shown = keys.filter { !isShadowed($0, below: .system(index), enforced: enforced) }
        if !shown.isEmpty { continuation.yield(shown) }
      }
      telling.append((file, id))
    }
    return { [telling] in
      for (file, id) in telling { file.stopTelling(id) }
    }
  }

  /// Of `keys`, which a change of the copy at `index` may have changed the value in effect of; and the keys it
  /// changed by enforcing them, or no longer, whose value in effect differs for it.
  private func changed(_ keys: Set<JSONKey>, inCopy index: Int, seen: SeenEnforcement) -> Set<JSONKey> {
    let copy = copies[index]
    let version = copy.file.snapshotVersion
    let now = copy.enforcedValues()
    // What this stream knew the copy enforced before, and what it knows now; nil when a later change was taken up
    // already, which tells its own.
    let (before, after) = seen.take(now, forCopy: index, version: version) ?? (seen.current, seen.current)
    var shown = keys.filter { key in
      !FleetCopy.isReserved(key.text)
        && (!isShadowed(key, below: .copy(index), enforced: before)
          || !isShadowed(key, below: .copy(index), enforced: after))
    }
    // A key this copy began or stopped enforcing, whose value here did not change: its value in effect changes when
    // another file's value takes the place of the copy's, or the copy's that of another.
    let moved = Set(before[index].keys).symmetricDifference(after[index].keys).subtracting(keys)
    for key in moved where valueInEffect(key, enforced: before) != valueInEffect(key, enforced: after) {
      shown.insert(key)
    }
    return shown
  }

  /// Whether a layer above the file at `place` holds `key`, so that the file's value of it is not the one in effect,
  /// with `enforced` (each copy's enforced keys and values) as what the copies enforce.
  private func isShadowed(_ key: JSONKey, below place: Place, enforced: [[JSONKey: JSONValue]]) -> Bool {
    let isEnforced = enforced.contains { $0[key] != nil }
    let inCopies = { (copies: ArraySlice<FleetLayer>) in
      !FleetCopy.isReserved(key.text) && copies.contains { $0.file.storedValue(key) != nil }
    }
    switch place {
    case .user:
      return isEnforced
    case .copy(let index) where enforced[index][key] != nil:
      return enforced[..<index].contains { $0[key] != nil }
    case .copy(let index):
      return isEnforced || user.storedValue(key) != nil || inCopies(copies[..<index])
    case .system(let index):
      return isEnforced || user.storedValue(key) != nil || inCopies(copies[...])
        || system[..<index].contains { $0.storedValue(key) != nil }
    }
  }

  /// The value in effect for `key`, from memory, with `enforced` as what the copies enforce.
  private func valueInEffect(_ key: JSONKey, enforced: [[JSONKey: JSONValue]]) -> JSONValue? {
    let enforcement = enforced.enumerated().firstNonNil { index, values in values[key].map { ($0, index) } }
    return resolve(key.text, enforced: enforcement) { $1.storedValue(key) }?.value
  }
}

/// What each copy enforced when a stream of changes last looked (its enforced keys and their values), so that a
/// change of what a copy enforces is compared with what the stream's listener was told of.
private final class SeenEnforcement: Sendable {
  private let state: Mutex<[(version: UInt64, enforced: [JSONKey: JSONValue])]>

  /// What each copy enforces, as of its content's version.
  init(_ enforced: [(version: UInt64, enforced: [JSONKey: JSONValue])]) {
    state = Mutex(enforced)
  }

  /// What every copy enforces, as last seen.
  var current: [[JSONKey: JSONValue]] { state.withLock { $0.map(\.enforced) } }

  /// Takes `enforced` as what the copy at `index` enforces as of its content `version`, and returns what every copy
  /// enforced before and after; nil when a later version was taken already.
  func take(
    _ enforced: [JSONKey: JSONValue], forCopy index: Int, version: UInt64
  ) -> (before: [[JSONKey: JSONValue]], after: [[JSONKey: JSONValue]])? {
    state.withLock { state in
      guard state[index].version < version else { return nil }
      let before = state.map(\.enforced)
      state[index] = (version, enforced)
      return (before, state.map(\.enforced))
    }
  }
}
