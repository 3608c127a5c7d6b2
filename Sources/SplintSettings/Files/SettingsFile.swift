import Dispatch
import Glibc
import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One settings file as this process sees it, shared by every `SettingsStore` and `Setting` on that file.
///
/// It keeps the file's last good content in memory, writes under an exclusive `flock` (re-reading the file under
/// the lock and changing only the keys asked for), and tells observers of each key about every change, in order.
///
/// The file is watched only once something may want to hear of changes (``startWatching()``: a `Setting` read or
/// observed, a stream of changes or errors). From then on it reloads when the watcher says the file may have
/// changed, and readers never touch the disk. Until then nothing runs in the background, no thread, no inotify,
/// and each read first looks at the file (one `stat`, and a read when it changed), so that a command-line tool's
/// one-shot read or write costs no more than the read or write itself.
final class SettingsFile: WatchedFile {
  /// What a change calls: the snapshot's version (later changes have higher versions) and the key's new value,
  /// nil when the key is gone.
  typealias Observer = @Sendable (_ version: UInt64, _ value: JSONValue?) -> Void

  /// The path as given; it may be a symlink, which writes follow.
  let path: String
  /// The file's URL, made when asked (for messages and `SettingsStore.fileURL`): Foundation's URL costs a command
  /// that reads one key a fifth of its instructions the first time it is made in a process.
  var url: URL { URL(fileURLWithPath: path) }
  /// Whether writes are made durable with fsync (always, but for the benchmark that measures what that costs).
  let syncsToDisk: Bool
  /// What the instance is registered under (see ``shared(for:syncsToDisk:asSystemLayer:options:)``).
  private let key: String
  /// The largest file read, in bytes: the largest any store on this file allows (see `SettingsStore.Options`).
  private let maximumFileSize = Atomic<Int>(0)
  /// How long a write waits for the lock, in nanoseconds: the longest any store on this file allows.
  private let lockTimeout = Atomic<Int64>(0)
  /// How often the file is looked at where inotify does not see every change, in nanoseconds: the shortest any
  /// store on this file asks for.
  private let pollInterval = Atomic<Int64>(.max)

  /// File I/O state. Held for the whole of each write or reload, so that those happen one at a time in order.
  private let io: Mutex<IOState>
  /// What readers and observers see. Held only briefly, never during I/O.
  private let shared: Mutex<Shared>
  /// Where this file's reloads run, one at a time, so that a reload waiting for a write of this file (which may
  /// itself wait for another process's lock) holds up no other file's.
  private let reloads = DispatchQueue(label: "splint.settings.file", target: .global(qos: .userInitiated))
  /// How stores use this file (the raw value of its ``Roles``): a file used only as a system layer reports its
  /// problems with the remedies for one.
  private let roles = Atomic<UInt8>(0)
  /// Whether a reload is queued and has not started yet; more news of a change then need not queue another.
  private let reloadQueued = Mutex(false)
  /// Whether the watcher keeps `shared` up to date, so that readers need not look at the file. Set once, under
  /// `io`, after the catch-up load that follows arming the watches; never cleared.
  private let watched = Atomic(false)
  /// The thread running an update's body, which holds `io`: a read or a `Setting` it touches must not take `io`
  /// again. 0 when none.
  private let writingThread = Atomic<UInt>(0)
  /// Whether something asked to watch from inside an update's body; the write starts watching once it is done.
  private let watchRequested = Atomic(false)
  /// The version of the content in use, stored after its values (under `shared`'s lock): whoever loads a version
  /// here finds at least that content in `shared`. What a `Setting`'s read compares its own versions with, so that a
  /// change of several keys is never seen half-way (see ``publishedVersion``).
  private let published = Atomic<UInt64>(1)

  private struct IOState {
    /// Whether the file is watched (``startWatching()`` was called). Before, nothing is handed to the watcher.
    var watching = false
    /// The names the watcher watches for this file: every symlink on the way to it, and where it ends (see
    /// `FileIO.namesAlong`). Looked at again on every reload, so that a link re-pointed re-aims the watches.
    var watched: [String] = []
    /// The identity of the file `document` was read from or written to; nil when there was no file.
    var identity: FileIdentity?
    /// The last good content.
    var document = SettingsDocument()
    /// The identity of a file that could not be used, once reported, so that it is reported once.
    var reportedProblem: FileIdentity?
    /// The problem last reported, so that one found again (a path refused, a directory that may not be searched,
    /// which have no file to tell them by) is reported once.
    var reportedError: SettingsError?
    /// Whether a reload is waiting to look again at a file that was blank, gone or unparsable.
    var retryPending = false
    /// Counts the contents adopted, so that a look again scheduled before the latest one is dropped: the file was
    /// whole in between, and a new doubt gets a grace of its own.
    var adoptions: UInt64 = 0
    /// Files written by this process, for tests that count them.
    var writes = 0
  }

  private struct Shared {
    var values: [JSONKey: JSONValue] = [:]
    var keys: [String] = []
    var version: UInt64 = 1
    /// The identity of the file `values` were read from or written to; nil when there was no file.
    var identity: FileIdentity?
    var nextID: UInt64 = 0
    var observers: [JSONKey: [UInt64: Observer]] = [:]
    var changeStreams: [UInt64: ChangeStream] = [:]
    /// Told of each change after the locks are released: the stores that use this file as a system layer, which
    /// look at other files before they announce a change.
    var changeObservers: [UInt64: @Sendable (Set<JSONKey>) -> Void] = [:]
    var errorStreams: [UInt64: AsyncStream<SettingsError>.Continuation] = [:]
    /// The file's current problem (corrupt, unreadable), which a new error stream hears first.
    var problem: SettingsError?
    /// What the content in use holds under `SettingsDocument.versionKey`: its schema version.
    var versionValue: JSONValue?
    /// The newest version the migrations of a store on this file know, once one was opened with migrations: files
    /// this process creates record it, and a file newer than it is reported.
    var migrationTarget: Int?
    /// What keeps the file from the migrations' version (a newer file, a failed migration), which a new error
    /// stream hears after ``problem``, until the file is at that version.
    var migrationProblem: SettingsError?
    /// Why changes to the file are found by polling (``SettingsError/watchedByPolling(_:interval:reason:)``), which a
    /// new error stream hears last, while it lasts.
    var polling: SettingsError?
    /// Stored values that do not decode as a setting on them expects (``SettingsError/undecodableValue(key:expected:reason:)``),
    /// by key and expected type, which a new error stream hears after the file's problems, until they decode.
    var undecodable: [Expectation: SettingsError] = [:]
  }

  /// A stream that hears each change from inside it, and which of the changed keys it is told (all, without a
  /// filter).
  private struct ChangeStream {
    let continuation: AsyncStream<Set<JSONKey>>.Continuation
    let filter: (@Sendable (Set<JSONKey>) -> Set<JSONKey>)?
  }

  /// A key, and the type a setting on it expects.
  private struct Expectation: Hashable {
    let key: JSONKey
    let type: String
  }

  /// What to tell observers after a change, once the locks are released.
  private struct Notification: Sendable {
    let version: UInt64
    let calls: [(Observer, JSONValue?)]
    let changed: Set<JSONKey>
    let changeObservers: [@Sendable (Set<JSONKey>) -> Void]

    func deliver() {
      for (observer, value) in calls { observer(version, value) }
      for observer in changeObservers { observer(changed) }
    }
  }

  // MARK: - One instance per file

  private struct WeakFile {
    weak var file: SettingsFile?
  }

  private static let registry = Mutex<[String: WeakFile]>([:])

  /// The instance for the file at `url`, made on first use. Paths that lead to the same file under
  /// `OwnershipRules` (through a symlink, a `..`) share one instance; a path the rules refuse (say, another user's
  /// link to a file that is not theirs) has one of its own, so that it never shares what a trusted path to that file
  /// reads and writes.
  ///
  /// - Parameters:
  ///   - syncsToDisk: For a file made here; an instance that exists already keeps its own.
  ///   - asSystemLayer: Whether a store uses the file as a system layer (read-only), rather than as its user's file.
  ///   - options: The store's limits; the file keeps the largest any store on it gives.
  static func shared(
    for url: URL, syncsToDisk: Bool = true, asSystemLayer: Bool = false, options: SettingsStore.Options = .init()
  ) -> SettingsFile {
    shared(
      forPath: url.standardizedFileURL.path, syncsToDisk: syncsToDisk, asSystemLayer: asSystemLayer, options: options)
  }

  /// ``shared(for:syncsToDisk:asSystemLayer:options:)`` for the file at `path`, absolute and without `.` or `..`
  /// (see ``FileIO/standardized(_:)``).
  static func shared(
    forPath path: String, syncsToDisk: Bool = true, asSystemLayer: Bool = false,
    options: SettingsStore.Options = .init()
  ) -> SettingsFile {
    let key = FileIO.canonicalPath(path)
    let file = registry.withLock { registry in
      if let file = registry[key]?.file { return file }
      let file = SettingsFile(path: path, key: key, syncsToDisk: syncsToDisk)
      registry[key] = WeakFile(file: file)
      return file
    }
    file.roles.bitwiseOr((asSystemLayer ? Roles.systemLayer : .usersFile).rawValue, ordering: .relaxed)
    file.maximumFileSize.max(options.maximumFileSize, ordering: .relaxed)
    file.lockTimeout.max(options.lockTimeout.nanoseconds, ordering: .relaxed)
    file.pollInterval.min(max(options.pollInterval.nanoseconds, 1_000_000), ordering: .relaxed)
    return file
  }

  /// How stores use a file: as a user's file, as a system layer, or, when stores differ, both.
  struct Roles: OptionSet {
    let rawValue: UInt8
    /// A store's own file, which its writes change.
    static let usersFile = Roles(rawValue: 1)
    /// A layer of system-wide defaults below a user's file, which no store writes.
    static let systemLayer = Roles(rawValue: 2)
  }

  /// Whether every store on this file uses it as a system layer, which is never written.
  private var isSystemLayer: Bool { Roles(rawValue: roles.load(ordering: .relaxed)) == .systemLayer }

  /// Touches nothing on disk: the file is read at the first read, write or ``startWatching()``.
  private init(path: String, key: String, syncsToDisk: Bool) {
    self.path = path
    self.key = key
    self.syncsToDisk = syncsToDisk
    io = Mutex(IOState())
    shared = Mutex(Shared())
  }

  /// Whether the watcher keeps this file's content up to date (for tests).
  var isWatching: Bool { watched.load(ordering: .acquiring) }

  /// Starts watching the file, once: from now on changes made by any process reach observers as they happen, and
  /// reads come from memory. Called by everything that may wait for a change: a `Setting` read or observed, a
  /// stream of changes or errors, an observer. Costs one atomic load once watching. Makes nothing on disk: a
  /// directory that does not exist yet is waited for through the nearest one that does.
  ///
  /// - Returns: Whether the file is watched now; false only inside an update's body on this thread, which starts
  ///   watching once its write is done.
  @discardableResult
  func startWatching() -> Bool {
    guard !watched.load(ordering: .acquiring) else { return true }
    if isWriting {
      watchRequested.store(true, ordering: .relaxed)
      return false
    }
    let notification = io.withLock { io -> Notification? in
      guard !io.watching else { return nil }
      io.watching = true
      // Watched first, so that no change slips between loading and watching.
      aim(&io)
      // The catch-up load reports a broken file at once, as an unwatched read does; should it be an editor's save
      // caught halfway, the save's own event brings the good content a moment later.
      let notification = load(&io, retrying: true, after: nil)
      watched.store(true, ordering: .releasing)
      return notification
    }
    notification?.deliver()
    return true
  }

  /// Brings the content in memory up to date with the file when no watcher does: one `stat`, and a read when the
  /// file changed since it was last read or written here. Nothing is left to look at again later (no timer, no
  /// thread): what the file holds now is believed, as a one-shot reader must.
  func refreshUnlessWatched() {
    // Inside an update's body, this thread holds `io` already: the content in memory is what it reads, as it always
    // was (the body itself sees the file as it is, under the lock).
    guard !watched.load(ordering: .acquiring), !isWriting else { return }
    io.withLock { io in load(&io, retrying: true, after: nil) }?.deliver()
  }

  /// Watches the names that lead to the file now, unless they are the ones watched already: a link re-pointed (the
  /// file's own, or one among its directories, as `ln -sf`, `ln -sfn` and dotfile managers do) re-aims the watches
  /// at where the path leads now. Nothing before ``startWatching()``.
  private func aim(_ io: inout IOState) {
    guard io.watching else { return }
    let names = FileIO.namesAlong(path)
    guard names != io.watched else { return }
    io.watched = names
    SettingsWatcher.shared.watch(
      self, at: names.map(Self.location), interval: .nanoseconds(pollInterval.load(ordering: .relaxed)))
  }

  /// Whether this thread is running an update's body.
  private var isWriting: Bool { writingThread.load(ordering: .relaxed) == UInt(pthread_self()) }

  private static func location(of path: String) -> (directory: String, name: String) {
    (FileIO.directory(of: path), FileIO.name(of: path))
  }

  deinit {
    // A file never watched leaves the watcher unmade: asking it to unwatch would start it.
    if watched.load(ordering: .acquiring) { SettingsWatcher.shared.unwatch(ObjectIdentifier(self)) }
    Self.registry.withLock { registry in
      if registry[key]?.file == nil { registry[key] = nil }
    }
  }

  // MARK: - Reading

  var values: [JSONKey: JSONValue] {
    refreshUnlessWatched()
    return shared.withLock { $0.values }
  }

  var keys: [String] {
    refreshUnlessWatched()
    return shared.withLock { $0.keys }
  }

  subscript(key: String) -> JSONValue? {
    let key = JSONKey(key)
    refreshUnlessWatched()
    return shared.withLock { $0.values[key] }
  }

  /// The value in memory for `key`, without looking at the file: for a store looking at its other layers while
  /// one of them changes or is written (which must take no other file's I/O lock).
  func storedValue(_ key: JSONKey) -> JSONValue? {
    shared.withLock { $0.values[key] }
  }

  /// The version of the content in use: it grows with every change adopted.
  var snapshotVersion: UInt64 { shared.withLock { $0.version } }

  /// The values in memory for `keys`, in order, and the identity of the file they were read from (nil when there was
  /// no file), taken together: what a judgement of the file (a fleet copy's trust) applies to. Without looking at
  /// the file, as ``storedValue(_:)``.
  func storedValues(_ keys: [JSONKey]) -> (values: [JSONValue?], identity: FileIdentity?) {
    shared.withLock { shared in (keys.map { shared.values[$0] }, shared.identity) }
  }

  /// The version of the content in use (it grows with every change adopted), without taking a lock (one atomic
  /// load): published as soon as a change is adopted, before any observer hears of it, so that a reader may tell
  /// that news is on its way.
  var publishedVersion: UInt64 { published.load(ordering: .acquiring) }

  /// The value in memory for `key`, and the version of the content it is from, without looking at the file.
  func storedValueAndVersion(_ key: JSONKey) -> (version: UInt64, value: JSONValue?) {
    shared.withLock { ($0.version, $0.values[key]) }
  }

  /// The text the file holds for `key`'s value, as this process last read it (comments inside it too); nil when it
  /// holds none, or the value was set here since. Not to be called from inside an update's body.
  func storedText(forKey key: String) -> Substring? {
    refreshUnlessWatched()
    return io.withLock { $0.document.storedText(forKey: key) }
  }

  /// The file's current problem (corrupt, unreadable), or nil.
  var problem: SettingsError? {
    refreshUnlessWatched()
    return shared.withLock { $0.problem ?? $0.migrationProblem }
  }

  /// The schema version the file records: 0 when none, nil when its `"$version"` is not a version.
  var schemaVersion: Int? {
    refreshUnlessWatched()
    return shared.withLock { SettingsDocument.version($0.versionValue) }
  }

  /// How many times this process has written the file.
  var writeCount: Int { io.withLock { $0.writes } }

  /// Reloads the file at once when nothing else has it, and otherwise queues the reload on the file's own queue (once,
  /// however many times this is called before it starts): the watcher's queue, which serves every file, never
  /// waits for one, such as a file whose write waits for another process's lock.
  func followed(byPollingEvery interval: Duration, because reason: String?) {
    shared.withLock { shared in
      shared.polling = reason.map { SettingsError.watchedByPolling(url, interval: interval, reason: $0) }
      guard let polling = shared.polling else { return }
      for stream in shared.errorStreams.values { stream.yield(polling) }
    }
  }

  func contentMayHaveChanged() {
    if !reloadQueued.withLock({ $0 }),
      let notification = io.withLockIfAvailable({ io in load(&io, retrying: false, after: nil) })
    {
      notification?.deliver()
      return
    }
    let queued = reloadQueued.withLock { queued in
      defer { queued = true }
      return queued
    }
    guard !queued else { return }
    reloads.async { [self] in
      reloadQueued.withLock { $0 = false }
      reload()
    }
  }

  /// Loads the file if it changed since it was last read or written here, and tells observers what changed.
  ///
  /// A file that does not parse may be half-written by an editor that saves in place; it is parsed once more a
  /// moment later (``grace``) before being reported corrupt. A file that is blank, or gone, may be in the middle of
  /// a save too; it is believed only if it still is after the grace. Meanwhile the last good content stays in use,
  /// so that observers see one change from the old content to the new, never everything removed for a moment.
  func reload(retrying: Bool = false) {
    reload(retrying: retrying, after: nil)
  }

  /// ``reload(retrying:)``, for a look again scheduled when `adoptions` was as given; dropped if it has changed.
  private func reload(retrying: Bool, after adoptions: UInt64?) {
    io.withLock { io in load(&io, retrying: retrying, after: adoptions) }?.deliver()
  }

  /// The body of a reload, holding the I/O state: what to tell observers afterwards.
  private func load(_ io: inout IOState, retrying: Bool, after adoptions: UInt64?) -> Notification? {
    aim(&io)
    if let adoptions, adoptions != io.adoptions { return nil }
    if retrying { io.retryPending = false }
    // Nothing to do when the file is the one in use, or the bad one already reported.
    let result: FileIO.ReadResult
    do throws(FileIOError) {
      let known = [io.identity, io.reportedProblem].compactMap(\.self)
      result = try FileIO.read(path, unless: known, limit: maximumFileSize.load(ordering: .relaxed))
    } catch {
      let unreadable = isSystemLayer ? SettingsError.unreadableSystemFile : SettingsError.unreadableFile
      reportProblem(settingsError(error) { url, reason, _ in unreadable(url, reason) }, identity: nil, in: &io)
      return nil
    }
    switch result {
    case .unchanged:
      return nil
    case .absent:
      if io.identity == nil, io.reportedError == nil { return nil }
      // A file that vanished may be in the middle of a save: emacs (with backups) and vim move it aside, and
      // `git checkout` unlinks it, before the new one appears. Only one still gone a moment later has no settings.
      if !retrying, !io.document.keys.isEmpty { return retryLater(&io) }
      return adopt(SettingsDocument(), identity: nil, in: &io)
    case .contents(let bytes, let identity):
      do throws(JSONSyntaxError) {
        let document = try SettingsDocument(parsing: bytes)
        // A blank file is what an editor saving in place leaves between truncating and writing: only one that
        // stays blank means "no settings" (`{}` says so at once).
        if Self.isBlank(bytes), !retrying, !io.document.keys.isEmpty { return retryLater(&io) }
        return adopt(document, identity: identity, in: &io)
      } catch {
        if !retrying { return retryLater(&io) }
        let corrupt = isSystemLayer ? SettingsError.corruptSystemFile : SettingsError.corruptFile
        reportProblem(corrupt(url, error.description), identity: identity, in: &io)
        return nil
      }
    }
  }

  /// Whether a file holds nothing but whitespace: what an editor saving in place leaves for a moment.
  private static func isBlank(_ bytes: [UInt8]) -> Bool {
    bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
  }

  /// How long a file that is blank, gone or unparsable is given to become whole before it is believed: longer than
  /// an editor takes to finish a save, short enough for a person not to notice.
  static let grace: DispatchTimeInterval = .milliseconds(100)

  /// Reads the file again after ``grace``, once; the content in use stays meanwhile.
  private func retryLater(_ io: inout IOState) -> Notification? {
    if !io.retryPending {
      io.retryPending = true
      let adoptions = io.adoptions
      reloads.asyncAfter(deadline: .now() + Self.grace) { [weak self] in
        self?.reload(retrying: true, after: adoptions)
      }
    }
    return nil
  }

  // MARK: - Writing

  /// Changes the file: under an exclusive lock, reads its current content, lets `change` edit it, and writes the
  /// result atomically. Observers in this process hear of the change before this returns.
  ///
  /// The file is looked up once (`FileIO.locate`, under `OwnershipRules`), and its directory is held from then on:
  /// the lock, the read, the new file and the rename all name the file relative to it.
  ///
  /// A file that does not parse is not written: the write fails with ``SettingsError/corruptFile(_:reason:)`` and
  /// nothing changes, so that a typo in a hand edit costs no other setting (an editor's save that fixes it is seen
  /// as any other). Only `repairing` (a reset of the whole file, on purpose) replaces it: the edit then starts from no
  /// settings, and the bad file is kept beside the new one as `<name>.corrupt-<UTC time>`. A blank file may be an
  /// in-place save caught halfway: the edit applies to the last good content, if that was read from this very file
  /// (device, inode and owner) or the process holds none; a blank file that took another's place is no settings.
  /// When `change` leaves the content as it was, nothing is written.
  ///
  /// A file this process creates records the version of its store's migrations, if it has any: what is written to
  /// it is in their shape.
  ///
  /// - Parameters:
  ///   - failed: Converts a failure to write into the caller's error type.
  ///   - repairing: Whether a file that does not parse is set aside and replaced by what `change` makes of no
  ///     settings.
  ///   - sync: Whether the write is made durable with fsync: the file's own setting unless given (a fleet copy's
  ///     follower makes its writes durable in batches, see `FleetCopyWriter`).
  ///   - newFileMode: The mode of a file this write creates.
  func write<T: Sendable, E: Error>(
    _ change: (inout SettingsDocument) throws(E) -> T, failed: (SettingsError) -> E, repairing: Bool = false,
    sync: Bool? = nil, newFileMode: mode_t = 0o600
  ) throws(E) -> T {
    let limit = maximumFileSize.load(ordering: .relaxed)
    let timeout = Duration.nanoseconds(lockTimeout.load(ordering: .relaxed))
    let outcome = io.withLock { io -> Result<(T, Notification?), E> in
      do throws(FileIOError) {
        let location = try FileIO.locate(path, makingDirectories: true)
        // Before anything is made beside it: a link to /dev/null must not get a /dev/null.lock, and a file this
        // process may not write, or could not keep the owner of, must not get a lock its owner cannot open.
        let owner = try FileIO.replacementOwnership(
          of: FileIO.open(location, checkingWriteAccess: true), in: location, newFileMode: newFileMode)
        return try FileIO.withExclusiveLock(in: location, owner: owner, timeout: timeout) { () throws(FileIOError) in
          let found = try FileIO.open(location, checkingWriteAccess: true)
          let ownership = try FileIO.replacementOwnership(of: found, in: location, newFileMode: newFileMode)
          var document = SettingsDocument()
          var corrupt: [UInt8]?
          if let found {
            let bytes = try FileIO.read(found, path: location.path, limit: limit)
            do throws(JSONSyntaxError) {
              document = try SettingsDocument(parsing: bytes)
              // A blank file may be an in-place save caught halfway: build on the last good content, if this
              // process read it from this very file (or holds none: no file was ever read, or the last was gone).
              if Self.isBlank(bytes), io.identity.map({ $0.isSameFile(as: found.identity) }) ?? true {
                document = io.document
              }
            } catch {
              guard repairing else {
                let refusal = SettingsError.corruptFile(url, reason: error.description)
                report(refusal)
                return .failure(failed(refusal))
              }
              corrupt = bytes
            }
          }
          let original = document
          let result: T
          writingThread.store(UInt(pthread_self()), ordering: .relaxed)
          defer { writingThread.store(0, ordering: .relaxed) }
          do throws(E) {
            result = try change(&document)
          } catch {
            return .failure(error)
          }
          guard document != original || corrupt != nil else {
            return .success((result, adopt(document, identity: found?.identity, in: &io)))
          }
          if found == nil || corrupt != nil, document.versionValue == nil,
            let target = shared.withLock({ $0.migrationTarget })
          {
            document.schemaVersion = target
          }
          if let corrupt {
            let name = "\(location.end.name).corrupt-\(Self.timestamp())"
            try FileIO.keepCopy(of: corrupt, as: name, in: location, ownership: ownership)
          }
          let identity = try FileIO.replace(
            in: location, with: document.rendered(), ownership: ownership, sync: sync ?? syncsToDisk)
          io.writes += 1
          return .success((result, adopt(document, identity: identity, in: &io)))
        }
      } catch {
        let failure = settingsError(error, otherwise: SettingsError.writeFailed(_:reason:remedy:))
        report(failure)
        return .failure(failed(failure))
      }
    }
    if watchRequested.exchange(false, ordering: .relaxed) { startWatching() }
    let (result, notification) = try outcome.get()
    notification?.deliver()
    return result
  }

  /// The error to report for `error`: the situation it is, or `otherwise` with its reason and what to do.
  func settingsError(
    _ error: FileIOError, otherwise: (URL, String, String?) -> SettingsError
  ) -> SettingsError {
    switch error {
    case .notRegular(let path, let kind):
      .notARegularFile(url, kind: path == self.path ? "\(kind)" : "\(kind) (\(path))")
    case .refused(_, let reason): .unsafePath(url, reason: reason)
    case .tooLarge(_, let size, let limit): .fileTooLarge(url, size: size, limit: limit)
    case .lockTimeout(let path, let waited): .lockTimeout(url, lockFile: URL(fileURLWithPath: path), waited: waited)
    case .system(let error): otherwise(url, error.reason(settingsFile: path), error.remedy)
    case .failed(_, let reason): otherwise(url, reason, nil)
    case .unwritableDirectory(let directory, EROFS):
      otherwise(
        url, "the file system of its directory, \(directory), is read-only",
        "Point the store at a file on a writable file system (SettingsStore(fileURL:)).")
    case .unwritableDirectory(let directory, let code):
      otherwise(
        url, "its directory \(directory) does not let this user make files in it (\(String(cString: strerror(code))))",
        "Give this user write access to \(directory) (its owner and mode), or keep the settings in a directory it may write."
      )
    }
  }

  /// Makes `document` the content in use, and returns what to tell observers.
  private func adopt(_ document: SettingsDocument, identity: FileIdentity?, in io: inout IOState) -> Notification? {
    io.document = document
    io.identity = identity
    io.reportedProblem = nil
    io.reportedError = nil
    io.retryPending = false
    io.adoptions += 1
    return shared.withLock { shared -> Notification? in
      shared.problem = nil
      shared.identity = identity
      shared.versionValue = document.versionValue
      checkVersion(in: &shared)
      let values = document.values
      let changed = Set(shared.values.keys).union(values.keys).filter { shared.values[$0] != values[$0] }
      shared.keys = document.keys
      guard !changed.isEmpty else { return nil }
      shared.values = values
      shared.version += 1
      published.store(shared.version, ordering: .releasing)
      for stream in shared.changeStreams.values {
        let told = stream.filter.map { $0(changed) } ?? changed
        if !told.isEmpty { stream.continuation.yield(told) }
      }
      // In the keys' order, so that what observers hear does not change from run to run.
      let calls = changed.sorted().flatMap { key in
        (shared.observers[key] ?? [:]).sorted { $0.key < $1.key }.map { ($0.value, values[key]) }
      }
      return Notification(
        version: shared.version, calls: calls, changed: changed, changeObservers: Array(shared.changeObservers.values))
    }
  }

  /// Updates the migration problem for the version of the content in use: a newer file, or a `"$version"` that is
  /// not a version, is one (reported when it starts); a file at the migrations' version has none; an older file
  /// keeps the failure of its migration, if one failed.
  private func checkVersion(in shared: inout Shared) {
    guard let target = shared.migrationTarget else { return }
    var problem = shared.migrationProblem
    switch SettingsDocument.version(shared.versionValue) {
    case nil:
      problem = .migrationFailed(url, version: target, reason: SettingsDocument.notAVersion(shared.versionValue))
    case let version? where version > target:
      problem = .newerVersion(url, version: version, known: target)
    case target?:
      problem = nil
    case _?:
      break
    }
    guard problem != shared.migrationProblem else { return }
    shared.migrationProblem = problem
    if let problem {
      for stream in shared.errorStreams.values { stream.yield(problem) }
    }
  }

  /// Brings the file to the newest version `migrations` know, by running those it has not had, in one write under
  /// the file's lock (see `SettingsMigration`). A file that does not exist has nothing to migrate: the first write
  /// that creates it records the version. A broken file is left alone (its problem is reported already); a failure
  /// is kept as the migration problem and reported.
  func migrate(_ migrations: [SettingsMigration]) {
    guard let target = migrations.last?.version else { return }
    precondition(SettingsMigration.areOrdered(migrations), "Migrations need versions from 1, each above the last")
    // Known first, so that the look at the file below reports a newer one.
    shared.withLock { shared in
      shared.migrationTarget = target
      checkVersion(in: &shared)
    }
    refreshUnlessWatched()
    let needed = io.withLock { io in
      io.identity != nil && io.reportedProblem == nil && (io.document.schemaVersion ?? target) < target
    }
    guard needed else { return }
    do {
      try write(
        { (document: inout SettingsDocument) throws(SettingsError) in
          try SettingsMigration.run(migrations, on: &document, url: url)
        }, failed: { $0 })
    } catch {
      // A failure to write was reported by the write, and a file found broken under the lock by the reload.
      guard error.code == .migrationFailed else { return }
      shared.withLock { shared in
        shared.migrationProblem = error
        for stream in shared.errorStreams.values { stream.yield(error) }
      }
    }
  }

  /// A problem with the file itself, which new error streams hear first until the file is fine again. Reported
  /// once: a problem found again on a path that has no file to tell it by (`identity` nil) is not told again.
  private func reportProblem(_ error: SettingsError, identity: FileIdentity?, in io: inout IOState) {
    if identity == nil, io.reportedError == error { return }
    io.reportedProblem = identity
    io.reportedError = error
    shared.withLock { $0.problem = error }
    report(error)
  }

  /// Reports that `key`'s stored value does not decode as `expected`, for `reason`: told to every error stream once
  /// (again only when the value or the reason changes), and to each new stream until ``valueDecodes(key:expected:)``.
  func reportUndecodable(key: String, expected: String, reason: String) {
    let error = SettingsError.undecodableValue(key: key, expected: expected, reason: reason)
    shared.withLock { shared in
      let expectation = Expectation(key: JSONKey(key), type: expected)
      guard shared.undecodable[expectation] != error else { return }
      shared.undecodable[expectation] = error
      for stream in shared.errorStreams.values { stream.yield(error) }
    }
  }

  /// Says that `key`'s stored value decodes as `expected` (again): new error streams no longer hear it did not.
  func valueDecodes(key: String, expected: String) {
    shared.withLock { _ = $0.undecodable.removeValue(forKey: Expectation(key: JSONKey(key), type: expected)) }
  }

  /// Sends `error` to every error stream.
  func report(_ error: SettingsError) {
    shared.withLock { shared in
      for stream in shared.errorStreams.values { stream.yield(error) }
    }
  }

  /// Now in UTC, to the millisecond, without colons (which some tools take for a host name in a path):
  /// `2026-11-22T101500.123Z`.
  private static func timestamp() -> String {
    Date().isoTimestamp.replacing(":", with: "")
  }

  // MARK: - Observing

  /// A new identifier for ``observe(_:id:_:)``.
  func makeObserverID() -> UInt64 {
    shared.withLock { shared in
      shared.nextID += 1
      return shared.nextID
    }
  }

  /// Calls `observer` on every change of `key`, and returns the key's value and version now.
  ///
  /// - Parameter watching: Whether changes made by other processes must reach `observer` as they happen, which
  ///   starts watching the file. A `Setting` passes false, and starts watching when it is first read or observed:
  ///   one made only to be saved starts nothing. Unwatched, `observer` hears this process's writes, and the
  ///   changes reads find.
  func observe(
    _ text: String, id: UInt64, watching: Bool = true, _ observer: @escaping Observer
  ) -> (version: UInt64, value: JSONValue?) {
    if watching { startWatching() }
    let key = JSONKey(text)
    return shared.withLock { shared in
      shared.observers[key, default: [:]][id] = observer
      return (shared.version, shared.values[key])
    }
  }

  func removeObserver(_ text: String, id: UInt64) {
    let key = JSONKey(text)
    shared.withLock { shared in
      shared.observers[key]?[id] = nil
      if shared.observers[key]?.isEmpty == true { shared.observers[key] = nil }
    }
  }

  /// Yields the set of keys that changed to `continuation`, once per change, from inside the change (so in order).
  ///
  /// - Parameter filter: Which of the keys that changed to yield (nothing is yielded when it keeps none); called
  ///   inside the change, under this file's lock, so it must take no other file's.
  /// - Returns: The identifier that ``stopTelling(_:)`` takes.
  func tellChanges(
    to continuation: AsyncStream<Set<JSONKey>>.Continuation,
    filter: (@Sendable (Set<JSONKey>) -> Set<JSONKey>)? = nil
  ) -> UInt64 {
    let id = makeObserverID()
    shared.withLock { $0.changeStreams[id] = ChangeStream(continuation: continuation, filter: filter) }
    return id
  }

  /// Calls `observer` with the set of keys that changed, once per change, after the file's locks are released (so
  /// that it may look at other files), in no guaranteed order between two changes close together.
  ///
  /// - Returns: The identifier that ``stopTelling(_:)`` takes.
  func tellChanges(to observer: @escaping @Sendable (Set<JSONKey>) -> Void) -> UInt64 {
    let id = makeObserverID()
    shared.withLock { $0.changeObservers[id] = observer }
    return id
  }

  /// Yields each error to `continuation`, starting with the file's current problem if it has one.
  ///
  /// - Returns: The identifier that ``stopTelling(_:)`` takes.
  func tellErrors(to continuation: AsyncStream<SettingsError>.Continuation) -> UInt64 {
    let id = makeObserverID()
    shared.withLock { shared in
      let undecodable = shared.undecodable.sorted { ($0.key.key, $0.key.type) < ($1.key.key, $1.key.type) }.map(\.value)
      for problem in [shared.problem, shared.migrationProblem].compactMap(\.self) + undecodable
        + [shared.polling].compactMap(\.self)
      {
        continuation.yield(problem)
      }
      shared.errorStreams[id] = continuation
    }
    return id
  }

  /// Stops what `tellChanges` or `tellErrors` started.
  func stopTelling(_ id: UInt64) {
    shared.withLock { shared in
      shared.changeStreams[id] = nil
      shared.changeObservers[id] = nil
      shared.errorStreams[id] = nil
    }
  }
}

extension Duration {
  /// The duration in whole nanoseconds, as the atomics and timers here keep it.
  var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
