// Every inotify call lives in this file. One inotify instance serves the whole process, however many stores and
// settings exist; it watches directories, not files, because an atomic save renames a new file over the old one
// and a watch on the old file would fire once and be gone.

import Dispatch
import Glibc
import SplintSystemCalls
import Synchronization

/// A file whose content may have changed: the watcher calls these on its own serial queue, which serves every file,
/// or on the thread that asked it to watch, never holding its own lock; they must return at once.
protocol WatchedFile: AnyObject, Sendable {
  func contentMayHaveChanged()
  /// The file is now found to change by polling, every `interval`, for `reason` (nil: inotify alone serves again).
  func followed(byPollingEvery interval: Duration, because reason: String?)
}

/// Tells files when something in their directory changed, through inotify, and by polling `stat` where inotify
/// cannot see every change: where it cannot serve at all (the per-user limit of instances, or of watches, is used
/// up), and, beside it, on file systems whose files change without this kernel seeing it (NFS, SMB, 9p, FUSE: see
/// `UnwatchableFileSystem`). A directory that does not exist (`/etc/xdg/<suite>` on most systems) is waited for
/// through its nearest existing ancestor, watched for the next component on the way, and watched itself once it
/// appears: a process that never sees it made wakes up for nothing. Event bursts and queue overflows become one
/// "may have changed" per file; the file itself checks whether its content really changed.
///
/// Polling is one timer on the watcher's queue for every polled file, each at its own interval: a tick `stat`s the
/// files that are due and tells only those whose identity (device, inode, size, change and modification times)
/// changed, so that an idle poll costs a system call a name.
final class SettingsWatcher: Sendable {
  static let shared = SettingsWatcher()

  /// What a directory watch reports: files moved or renamed in (atomic saves), closed after writing (in-place
  /// saves), created, deleted, moved away; and the directory itself being deleted or moved.
  private static let mask: UInt32 = UInt32(
    IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

  private struct Registration {
    weak var file: (any WatchedFile)?
    /// The directories and names this file is known by: its own, and its symlink target's.
    let locations: [(directory: String, name: String)]
    /// How often it is polled, when it is.
    let interval: Duration
    /// Why it is polled; nil while inotify alone serves.
    var pollReason: String?
    /// What `stat` said of each location at the last poll (nil: nothing there), by path; empty before the first.
    var stamps: [String: FileStamp?] = [:]
    /// When it is polled next.
    var due = ContinuousClock.now
    /// For each watch descriptor covering a location, the file names that matter in its directory.
    var watches: [Int32: Set<String>] = [:]
    /// For each watch descriptor on the nearest existing ancestor of a location's missing directory, the names of
    /// the next components on the way: one appearing re-arms the registration, a step nearer.
    var ancestors: [Int32: Set<String>] = [:]
    /// Whether every location is watched; if not, the file is also polled, and watching is tried again.
    var complete = false
  }

  private struct State {
    /// The inotify instance, or -1 where there is none.
    var descriptor: Int32 = -1
    /// Why there is none: inotify_init1's errno.
    var initFailure: Int32 = 0
    var source: (any DispatchSourceRead)?
    var registrations: [ObjectIdentifier: Registration] = [:]
    /// Which registrations each watch descriptor serves.
    var watchers: [Int32: Set<ObjectIdentifier>] = [:]
    var pollTimer: (any DispatchSourceTimer)?
    /// The timer's period: the shortest interval of the files polled when it was set.
    var pollPeriod: Duration?
  }

  /// What `stat` says of a file, as far as telling a new version from the old goes: an atomic save brings a new
  /// inode, an in-place one a new size or modification time, and a change of either shows in the change time.
  struct FileStamp: Equatable {
    let device: UInt
    let inode: UInt
    let size: Int
    let modified: timespec
    let changed: timespec

    init?(_ path: String) {
      var status = stat()
      guard stat(path, &status) == 0 else { return nil }
      device = UInt(status.st_dev)
      inode = UInt(status.st_ino)
      size = Int(status.st_size)
      modified = status.st_mtim
      changed = status.st_ctim
    }

    static func == (a: FileStamp, b: FileStamp) -> Bool {
      a.device == b.device && a.inode == b.inode && a.size == b.size
        && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
  }

  /// A change of why a file is polled, to tell the file once the watcher's lock is released.
  private typealias Transition = (file: any WatchedFile, interval: Duration, reason: String?)

  private let queue = DispatchQueue(label: "splint.settings.watcher")
  private let state = Mutex(State())

  private init() {
    state.withLock { state in
      let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard descriptor >= 0 else {
        state.initFailure = errno
        return  // no inotify: every file is polled
      }
      let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
      source.setEventHandler { [weak self] in self?.readEvents() }
      source.resume()
      state.descriptor = descriptor
      state.source = source
    }
  }

  /// Whether this process has an inotify instance (false when the per-user limit was reached before it started).
  var usesInotify: Bool { state.withLock { $0.descriptor >= 0 } }

  /// Starts telling `file` about changes to any of `locations` (directory, file name), in place of any it was
  /// told about before; polled every `interval` where inotify does not see every change.
  func watch(_ file: some WatchedFile, at locations: [(directory: String, name: String)], interval: Duration) {
    let id = ObjectIdentifier(file)
    let transitions = state.withLock { state in
      let reason = state.registrations[id]?.pollReason
      disarm(id, in: &state)
      state.registrations[id] = Registration(
        file: file, locations: locations, interval: interval, pollReason: reason)
      return arm(id, in: &state)
    }
    tell(transitions)
  }

  /// Stops telling the file with `id` about anything, and drops watches nobody needs any more.
  func unwatch(_ id: ObjectIdentifier) {
    state.withLock { state in
      disarm(id, in: &state)
      state.registrations[id] = nil
      updatePolling(&state)
    }
  }

  /// Tells files why they are polled now, if that changed.
  private func tell(_ transitions: [Transition]) {
    for transition in transitions {
      transition.file.followed(byPollingEvery: transition.interval, because: transition.reason)
    }
  }

  // MARK: - Watches

  /// Adds a watch on each of the registration's directories (a directory watched already keeps its descriptor), or,
  /// for a directory that does not exist, on its nearest existing ancestor. Where that fails (no inotify, no watches
  /// left, a directory that cannot be watched) the registration stays incomplete and polled, and a later poll tick
  /// tries again; where a directory is on a file system inotify does not see every change on, it is polled beside
  /// its watches. Returns the registration's change of why it is polled, if any, to tell its file.
  private func arm(_ id: ObjectIdentifier, in state: inout State, updatingPolling: Bool = true) -> [Transition] {
    guard let registration = state.registrations[id] else { return [] }
    var failure: Int32?
    for location in registration.locations {
      if let error = watchNearest(location, for: id, in: &state) { failure = failure ?? error }
    }
    state.registrations[id]?.complete = failure == nil
    let reason =
      failure.map(Self.inotifyFailure)
      ?? registration.locations.firstNonNil { UnwatchableFileSystem.of($0.directory)?.description }
    state.registrations[id]?.pollReason = reason
    if updatingPolling { updatePolling(&state) }
    guard reason != registration.pollReason, let file = registration.file else { return [] }
    return [(file, registration.interval, reason)]
  }

  /// Why inotify cannot serve, from the errno of `inotify_init1` or `inotify_add_watch`; looked up once a code, so
  /// that a poll that arms again reads no procfs file.
  private static func inotifyFailure(_ code: Int32) -> String {
    failures.withLock { known in
      if let reason = known[code] { return reason }
      let reason = describeInotifyFailure(code)
      known[code] = reason
      return reason
    }
  }

  private static let failures = Mutex<[Int32: String]>([:])

  private static func describeInotifyFailure(_ code: Int32) -> String {
    switch code {
    case EMFILE:
      "this process has no inotify instance: its user's limit (fs.inotify.max_user_instances"
        + "\(limit("max_user_instances"))) is used up"
    case ENOSPC:
      "no inotify watch is left: its user's limit (fs.inotify.max_user_watches\(limit("max_user_watches"))) is "
        + "used up"
    default: "inotify cannot watch its directory (\(String(cString: strerror(code))))"
    }
  }

  /// " = N", the value of /proc/sys/fs/inotify/`name`, or nothing when it cannot be read.
  private static func limit(_ name: String) -> String {
    SystemCall.text(of: "/proc/sys/fs/inotify/\(name)").flatMap { Int($0.filter(\.isNumber)) }.map { " = \($0)" } ?? ""
  }

  /// Watches `location`'s directory, or, while it does not exist, its nearest existing ancestor for the next
  /// component on the way. Returns nil when that worked, else the errno that says why not.
  private func watchNearest(
    _ location: (directory: String, name: String), for id: ObjectIdentifier, in state: inout State
  ) -> Int32? {
    // The way up, nearest first, as far as the first directory that exists ("/" always does).
    var way = [location]
    while way.count < 4096, let last = way.last, last.directory != "/", !Self.isDirectory(last.directory) {
      way.append((FileIO.directory(of: last.directory), FileIO.name(of: last.directory)))
    }
    // Then down again from there: a directory on the way made since it was looked for is watched too, so that its
    // creation cannot slip between looking and watching. The deepest watch is the one kept.
    var deepest: (watch: Int32, directory: String, name: String)?
    var failure: Int32 = ENOENT
    while let step = way.popLast() {
      guard state.descriptor >= 0 else { return state.initFailure }
      let watch = inotify_add_watch(state.descriptor, step.directory, Self.mask)
      if watch < 0 {
        failure = errno
        // Below a watched ancestor, a directory still missing is what that watch waits for.
        guard deepest != nil, failure == ENOENT || failure == ENOTDIR else { return failure }
        break
      }
      // An ancestor passed on the way down (only when a directory was made in between) is not needed, unless
      // another file's watch is on it.
      if let passed = deepest?.watch, passed != watch { dropIfUnused(passed, in: &state) }
      deepest = (watch, step.directory, step.name)
    }
    guard let deepest else { return failure }  // coverage:ignore — "/" always exists and may be watched
    state.watchers[deepest.watch, default: []].insert(id)
    if deepest.directory == location.directory {
      state.registrations[id]?.watches[deepest.watch, default: []].insert(deepest.name)
    } else {
      state.registrations[id]?.ancestors[deepest.watch, default: []].insert(deepest.name)
    }
    return nil
  }

  /// Whether `path` is a directory (or a link to one).
  private static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
  }

  /// Drops the registration's watches (and each watch nobody else needs), leaving it to be polled.
  private func disarm(_ id: ObjectIdentifier, in state: inout State) {
    let registration = state.registrations[id]
    let watches = Set(registration?.watches.keys ?? [:].keys).union(registration?.ancestors.keys ?? [:].keys)
    for watch in watches {
      state.watchers[watch]?.remove(id)
      if state.watchers[watch]?.isEmpty == true {
        state.watchers[watch] = nil
        dropIfUnused(watch, in: &state)
      }
    }
    state.registrations[id]?.watches = [:]
    state.registrations[id]?.ancestors = [:]
    state.registrations[id]?.complete = false
  }

  /// Whether the file with `id` is polled now, for tests: a file whose directory is missing must not be.
  func isPolled(_ id: ObjectIdentifier) -> Bool {
    state.withLock { state in state.registrations[id]?.pollReason != nil }
  }

  /// How many watches the file with `id` holds, on its directories and on ancestors of missing ones, for tests:
  /// however often a directory comes and goes, they must not pile up.
  func watchCount(_ id: ObjectIdentifier) -> Int {
    state.withLock { state in state.registrations[id].map { $0.watches.count + $0.ancestors.count } ?? 0 }
  }

  /// Removes `watch` from the inotify instance unless a registration still needs it.
  private func dropIfUnused(_ watch: Int32, in state: inout State) {
    guard state.watchers[watch] == nil else { return }
    inotify_rm_watch(state.descriptor, watch)
  }

  /// Runs the poll timer exactly while some registration is polled, at the shortest of their intervals.
  private func updatePolling(_ state: inout State) {
    let period = state.registrations.values.filter { $0.pollReason != nil }.map(\.interval).min()
    guard period != state.pollPeriod else { return }
    state.pollTimer?.cancel()
    state.pollTimer = nil
    state.pollPeriod = period
    guard let period else { return }
    let nanoseconds = Int(period.nanoseconds)
    let timer = DispatchSource.makeTimerSource(queue: queue)
    // A tenth of the period's leeway lets the kernel fold the wake-up into others.
    timer.schedule(
      deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
      leeway: .nanoseconds(nanoseconds / 10))
    timer.setEventHandler { [weak self] in self?.poll() }
    timer.resume()
    state.pollTimer = timer
  }

  /// One poll tick: try to watch each file inotify could not serve again (its directory may be back, a watch may
  /// have been freed), and tell each polled file that is due and whose `stat` changed since the last tick (the
  /// first tick tells it once: it may have changed before it was polled). A file that became watched is told once
  /// more too: it may have changed before the watch.
  private func poll() {
    let now = ContinuousClock.now
    let (files, transitions) = state.withLock { state -> ([any WatchedFile], [Transition]) in
      var transitions: [Transition] = []
      var files: [any WatchedFile] = []
      // Due now, or within a tenth of its interval: the timer runs at the shortest interval, with that leeway.
      for (id, registration) in state.registrations
      where registration.pollReason != nil && registration.due <= now.advanced(by: registration.interval / 10) {
        // Watched again where watches may have been freed; a process without an inotify instance gets none later.
        if !registration.complete, state.descriptor >= 0 {
          transitions += arm(id, in: &state, updatingPolling: false)
        }
        state.registrations[id]?.due = now.advanced(by: registration.interval)
        var changed = state.registrations[id]?.pollReason == nil  // watched now: it may have changed before
        for location in registration.locations {
          let path = location.directory == "/" ? "/" + location.name : location.directory + "/" + location.name
          let stamp = FileStamp(path)
          if registration.stamps[path].map({ $0 != stamp }) ?? true { changed = true }
          state.registrations[id]?.stamps[path] = .some(stamp)
        }
        if changed, let file = registration.file { files.append(file) }
      }
      if !transitions.isEmpty { updatePolling(&state) }
      return (files, transitions)
    }
    tell(transitions)
    for file in files { file.contentMayHaveChanged() }
  }

  // MARK: - Events

  private func readEvents() {
    let (files, transitions) = state.withLock { state -> ([any WatchedFile], [Transition]) in
      var affected = Set<ObjectIdentifier>()
      var transitions: [Transition] = []
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
      defer { buffer.deallocate() }
      while true {
        let count = read(state.descriptor, buffer.baseAddress, buffer.count)
        guard count > 0 else { break }  // EAGAIN: drained
        var offset = 0
        while offset < count {
          let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
          let nameStart = offset + MemoryLayout<inotify_event>.size
          let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<nameStart + Int(event.len)])
          let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
          affected.formUnion(handle(event, name: name, in: &state, &transitions))
          offset = nameStart + Int(event.len)
        }
      }
      return (affected.compactMap { state.registrations[$0]?.file }, transitions)
    }
    tell(transitions)
    for file in files { file.contentMayHaveChanged() }
  }

  /// The registrations one event concerns. An overflow concerns all; a vanished directory concerns all its files,
  /// which wait for it through an ancestor; a missing directory on the way appearing concerns the files waiting for
  /// it, which are watched a step nearer (and check themselves: their file may be there already).
  private func handle(
    _ event: inotify_event, name: String, in state: inout State, _ transitions: inout [Transition]
  ) -> Set<ObjectIdentifier> {
    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
      // Lost events may include a directory's removal: watch every location afresh (a directory removed is then
      // polled, one created again is watched anew) and have every file check itself.
      for id in state.registrations.keys {
        disarm(id, in: &state)
        transitions += arm(id, in: &state)
      }
      return Set(state.registrations.keys)
    }
    guard let ids = state.watchers[event.wd] else { return [] }  // a watch already dropped
    let gone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
    if event.mask & gone != 0 {
      for id in ids {
        disarm(id, in: &state)
        transitions += arm(id, in: &state)
      }
      return ids
    }
    let appeared = ids.filter { state.registrations[$0]?.ancestors[event.wd]?.contains(name) == true }
    for id in appeared {
      disarm(id, in: &state)
      transitions += arm(id, in: &state)
    }
    return appeared.union(ids.filter { state.registrations[$0]?.watches[event.wd]?.contains(name) == true })
  }
}
