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

  /// Whether the copy may enforce keys, judged for the file's content `version` (see ``isTrusted``).
  private let trust = Mutex<(version: UInt64, problem: String?)?>(nil)
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

  /// Starts watching the copy's follower lock file, once, so that a follower that ends is told of at once.
  func startWatching() {
    guard !watching.exchange(true, ordering: .relaxed) else { return }
    let path = file.path + FileIO.followerLockSuffix
    SettingsWatcher.shared.watch(
      liveness, at: [(FileIO.directory(of: path), FileIO.name(of: path))], interval: .seconds(1))
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
    let keys = listed.keys
    return keys.isEmpty || !isTrusted ? [] : Set(keys.map { JSONKey($0) })
  }

  /// The copy's value of `key` when the copy enforces it, else nil; from memory, as ``SettingsFile/storedValue(_:)``.
  func enforcedValue(_ key: JSONKey) -> JSONValue? {
    guard listed.contains(key), isTrusted else { return nil }
    return file.storedValue(key)
  }

  /// The keys the copy enforces now, with their values: those its `"$enforced"` lists and that it holds, if it may
  /// enforce keys; from memory.
  func enforcedValues() -> [JSONKey: JSONValue] {
    let listed = listed.keys
    guard !listed.isEmpty, isTrusted else { return [:] }
    var values: [JSONKey: JSONValue] = [:]
    for key in listed.map({ JSONKey($0) }) {
      if let value = file.storedValue(key) { values[key] = value }
    }
    return values
  }

  /// Whether the copy may enforce keys: judged again whenever its content changes (``FleetCopy/trustProblem(ofCopyAt:)``).
  var isTrusted: Bool { trustProblem == nil }

  /// Why the copy may not enforce keys, or nil when it may.
  var trustProblem: String? {
    let version = file.snapshotVersion
    if let judged = trust.withLock({ $0 }), judged.version == version { return judged.problem }
    let problem = FleetCopy.trustProblem(ofCopyAt: file.path)
    trust.withLock { $0 = (version, problem) }
    return problem
  }

  /// What the copy says of itself, or nil when there is no copy, or it does not describe itself.
  var status: FleetCopyStatus? {
    guard let metadata = FleetCopy.Metadata(file[FleetCopy.metadataKey]) else { return nil }
    return FleetCopyStatus(
      url: url, metadata: metadata, keys: file.keys.filter { !FleetCopy.isReserved($0) },
      enforcedKeys: listed.keys, isFollowed: FileIO.isFollowed(file.path + FileIO.followerLockSuffix),
      isTrusted: isTrusted)
  }

  /// What is wrong with the copy now, from a reader's view: its follower has lost the cluster, no follower keeps it,
  /// or it marks keys it may not enforce. Nil when nothing is, or there is no copy.
  var problem: SettingsError? {
    guard let metadata = FleetCopy.Metadata(file[FleetCopy.metadataKey]) else { return nil }
    if !FileIO.isFollowed(file.path + FileIO.followerLockSuffix) {
      return .noFleetFollower(url, since: metadata.state == .stopped ? metadata.since : metadata.written)
    }
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
  /// dies: the kernel closes its descriptor).
  private final class Liveness: WatchedFile {
    let layer = Mutex(WeakLayerReference())

    func contentMayHaveChanged() {
      layer.withLock { $0.layer }?.tellProblem()
    }

    // The copy's own file tells its readers when it is polled; its follower lock has nothing to add.
    func followed(byPollingEvery interval: Duration, because reason: String?) {}  // coverage:ignore — nothing to do
  }
}
