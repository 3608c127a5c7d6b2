import Dispatch
import Glibc
import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A fleet copy (see ``FleetCopy``) as stores read it: its file, which of its keys it may enforce, and how its
/// follower fares, told through ``SettingsStore/errors()`` as it changes. One instance per copy in a process, shared
/// by every store that reads it, so that each change is judged, and each problem told, once.
final class FleetLayer: Sendable {
  /// The copy, read as a layer (never written by a store).
  let file: SettingsFile
  let url: URL

  /// Whether the copy may enforce keys, judged for the file whose content is in use (see ``trustProblem(of:)``).
  private let trust = Mutex<(identity: FileIdentity, problem: String?)?>(nil)
  /// Whether the copy is a user's own (in `$XDG_STATE_HOME/splint-fleet`, which a user's follower writes): never a
  /// system copy, whoever owns it.
  private let isUsersOwnCopy: Bool
  /// The problems last told, so that a copy rewritten with the same state tells each once.
  private let told = Mutex<[SettingsError]>([])
  /// Tells this layer when the follower's lock file is closed: the follower ended or died.
  private let liveness: Liveness
  /// Whether the lock file's name is watched (``startWatching()``).
  private let watching = Atomic(false)
  /// The identifier this layer hears the copy's changes under.
  private let changeObserver = Atomic<UInt64>(0)

  private struct WeakLayer {
    weak var layer: FleetLayer?
  }

  private static let registry = Mutex<[String: WeakLayer]>([:])

  /// The layer for the copy at `url`, made on first use.
  static func shared(for url: URL, options: SettingsStore.Options) -> FleetLayer {
    let file = SettingsFile.shared(for: url, asSystemLayer: true, options: options)
    return registry.withLock { registry in
      let key = file.path
      if let layer = registry[key]?.layer, layer.file === file { return layer }
      let layer = FleetLayer(file: file)
      registry[key] = WeakLayer(layer: layer)
      return layer
    }
  }

  private init(file: SettingsFile) {
    self.file = file
    url = file.url
    isUsersOwnCopy = FleetCopy.isUsersOwnCopy(file.path)
    liveness = Liveness()
    liveness.layer.withLock { $0 = WeakLayerReference(layer: self) }
    let id = file.tellChanges { [weak self] keys in
      guard let self else { return }
      if keys.contains(JSONKey(FleetCopy.metadataKey)) || keys.contains(JSONKey(FleetCopy.enforcedKey)) {
        tellProblem()
      }
    }
    changeObserver.store(id, ordering: .relaxed)
  }

  /// Starts watching the copy's follower lock file and presence, once, so that a follower that ends, or a new one,
  /// is told of at once.
  func startWatching() {
    guard !watching.exchange(true, ordering: .relaxed) else { return }
    let names = [FileIO.followerLockSuffix, FileIO.presenceSuffix].map { file.path + $0 }
    SettingsWatcher.shared.watch(
      liveness, at: names.map { (FileIO.directory(of: $0), FileIO.name(of: $0)) }, interval: .seconds(1))
  }

  deinit {
    file.stopTelling(changeObserver.load(ordering: .relaxed))
    if watching.load(ordering: .relaxed) { SettingsWatcher.shared.unwatch(ObjectIdentifier(liveness)) }
  }

  // MARK: - Reading

  /// What the copy's `"$enforced"` lists, from memory.
  private var listed: FleetCopy.EnforcedKeys {
    FleetCopy.EnforcedKeys(file.storedValue(JSONKey(FleetCopy.enforcedKey)))
  }

  /// The keys the copy marks as enforced, if it may enforce any: empty for a copy that is not a system copy. From
  /// memory.
  var enforcedKeys: Set<JSONKey> {
    let stored = file.storedValues([JSONKey(FleetCopy.enforcedKey)])
    let keys = FleetCopy.EnforcedKeys(stored.values[0]).keys
    return keys.isEmpty || trustProblem(of: stored.identity) != nil ? [] : Set(keys.map { JSONKey($0) })
  }

  /// The copy's value of `key` when the copy enforces it, else nil; from memory, as ``SettingsFile/storedValue(_:)``.
  /// The list of enforced keys, the value and the file they were read from are taken together, so that the trust
  /// judged is that of the file the value came from.
  func enforcedValue(_ key: JSONKey) -> JSONValue? {
    let stored = file.storedValues([JSONKey(FleetCopy.enforcedKey), key])
    guard FleetCopy.EnforcedKeys(stored.values[0]).contains(key), trustProblem(of: stored.identity) == nil
    else { return nil }
    return stored.values[1]
  }

  /// The keys the copy enforces now, with their values: those its `"$enforced"` lists and that it holds, if it may
  /// enforce keys; from memory. As in ``enforcedValue(_:)``, the list, the values and the file they were read from
  /// are taken together: read again, with the keys it lists, until the list read is the one its values were read for.
  func enforcedValues() -> [JSONKey: JSONValue] {
    let list = JSONKey(FleetCopy.enforcedKey)
    var keys: [JSONKey] = []
    var stored = file.storedValues([list])
    var listed = FleetCopy.EnforcedKeys(stored.values[0]).keys.map { JSONKey($0) }
    while listed != keys {
      keys = listed
      stored = file.storedValues([list] + keys)
      listed = FleetCopy.EnforcedKeys(stored.values[0]).keys.map { JSONKey($0) }
    }
    guard !keys.isEmpty, trustProblem(of: stored.identity) == nil else { return [:] }
    var values: [JSONKey: JSONValue] = [:]
    for (key, value) in zip(keys, stored.values.dropFirst()) {
      if let value { values[key] = value }
    }
    return values
  }

  /// Why the copy may not enforce keys now, or nil when it may.
  var trustProblem: String? { trustProblem(of: file.storedValues([]).identity) }

  /// Whether the copy may enforce keys now.
  var isTrusted: Bool { trustProblem == nil }

  /// Why the content read from the file `identity` names may not enforce keys, or nil when it may: judged once per
  /// file and version of it (``FleetCopy/trust(ofCopyAt:readAs:)``), on the file itself, and kept with it.
  private func trustProblem(of identity: FileIdentity?) -> String? {
    guard let identity else { return "there is no copy" }
    if isUsersOwnCopy { return "it is a user's own copy (in \(FleetCopy.userDirectoryPath)), not the system's" }
    if let judged = trust.withLock({ $0 }), judged.identity == identity { return judged.problem }
    switch FleetCopy.trust(ofCopyAt: file.path, readAs: identity) {
    case .trusted:
      trust.withLock { $0 = (identity, nil) }
      return nil
    case .untrusted(let problem):
      trust.withLock { $0 = (identity, problem) }
      return problem
    case .replaced:
      // Not this content's file any more: nothing is enforced until the new one is read, and judged.
      return "it changed while it was judged"
    }
  }

  /// The label that gave `key`'s value in the copy, on this machine; nil for the suite's value for every machine.
  func label(ofKey key: String) -> String? {
    FleetCopy.Metadata(file[FleetCopy.metadataKey])?.origins[key]
  }

  /// What the copy says of itself, or nil when there is no copy, or it does not describe itself.
  var status: FleetCopyStatus? {
    guard let metadata = FleetCopy.Metadata(file[FleetCopy.metadataKey]) else { return nil }
    let follower = follower(metadata)
    return FleetCopyStatus(
      url: url, metadata: metadata, keys: file.keys.filter { !FleetCopy.isReserved($0) },
      enforcedKeys: listed.keys, isFollowed: follower.isFollowed, lastSeen: follower.lastSeen,
      isTrusted: isTrusted)
  }

  /// Whether a follower keeps the copy now (its presence beside the copy), and when one was last seen: its last
  /// heartbeat while it runs; when it stopped, once it stopped; its last heartbeat or write, once it died.
  private func follower(_ metadata: FleetCopy.Metadata) -> (isFollowed: Bool, lastSeen: Date) {
    let presence = FileIO.follower(ofCopy: file.path)
    let heartbeat = presence.lastSeen.map { Date(timeIntervalSince1970: Double($0.tv_sec) + Double($0.tv_nsec) / 1e9) }
    if !presence.isFollowed, metadata.state == .stopped { return (false, metadata.since) }
    return (presence.isFollowed, max(heartbeat ?? metadata.written, metadata.written))
  }

  /// What is wrong with the copy now, from a reader's view: its follower has lost the cluster, no follower keeps it,
  /// or it marks keys it may not enforce. Nil when nothing is, or there is no copy.
  var problem: SettingsError? {
    guard let metadata = FleetCopy.Metadata(file[FleetCopy.metadataKey]) else { return nil }
    let follower = follower(metadata)
    if !follower.isFollowed { return .noFleetFollower(url, since: follower.lastSeen) }
    if metadata.state == .unreachable {
      return .fleetUnreachable(url, since: metadata.since, reason: metadata.reason ?? "no member answered")
    }
    if !listed.keys.isEmpty, let trustProblem {
      return .untrustedFleetCopy(url, reason: trustProblem)
    }
    return nil
  }

  /// What is wrong with the copy's `"$enforced"`: entries that are not keys (which are ignored), or nil.
  var enforcementProblem: SettingsError? {
    listed.problem.map { .invalidEnforcement(url, reason: $0) }
  }

  /// Every problem of the copy now: ``problem``, and ``enforcementProblem``.
  var problems: [SettingsError] { [problem, enforcementProblem].compactMap(\.self) }

  /// Tells the copy's error streams its problems, each that was not told last.
  func tellProblem() {
    let problems = problems
    let new = told.withLock { told in
      defer { told = problems }
      return problems.filter { !told.contains($0) }
    }
    for problem in new { file.report(problem) }
  }

  /// A reference to the layer that does not keep it alive, for its liveness watch.
  private struct WeakLayerReference {
    weak var layer: FleetLayer?
  }

  /// What the watcher tells when the follower's lock file changes or is closed after writing (the follower ends or
  /// dies: the kernel closes its descriptor), or its presence is made.
  private final class Liveness: WatchedFile {
    let layer = Mutex(WeakLayerReference())

    /// After the lock's closing, how long after it the presence is tested again while it still seems held: a dying
    /// process's descriptors are released one by one, the lock's possibly before its presence's.
    static let againAfter: [DispatchTimeInterval] = [.milliseconds(20), .milliseconds(200), .seconds(1)]

    func contentMayHaveChanged() {
      guard let layer = layer.withLock({ $0.layer }) else { return }
      layer.tellProblem()
      for delay in Self.againAfter {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak layer] in layer?.tellProblem() }
      }
    }

    // The copy's own file tells its readers when it is polled; its follower lock has nothing to add.
    func followed(byPollingEvery interval: Duration, because reason: String?) {}  // coverage:ignore — nothing to do
  }
}
