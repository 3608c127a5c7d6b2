// Every inotify call lives in this file. One inotify instance serves the whole process, however many stores and
// settings exist; it watches directories, not files, because an atomic save renames a new file over the old one
// and a watch on the old file would fire once and be gone.

import Dispatch
import Glibc
import Synchronization

/// A file whose content may have changed: the watcher calls this on its own serial queue, which serves every file,
/// so it must return at once.
protocol WatchedFile: AnyObject, Sendable {
  func contentMayHaveChanged()
}

/// Tells files when something in their directory changed, through inotify, or by polling `stat` where inotify
/// cannot serve: when it is unavailable (the per-user limit of instances is used up) or out of watches. A directory
/// that does not exist (`/etc/xdg/<suite>` on most systems) is waited for through its nearest existing ancestor,
/// watched for the next component on the way, and watched itself once it appears: a process that never sees it
/// made wakes up for nothing. Event bursts and queue overflows become one "may have changed" per file; the file
/// itself checks whether its content really changed.
final class SettingsWatcher: Sendable {
  static let shared = SettingsWatcher()

  /// How often polled files are checked.
  static let pollInterval: DispatchTimeInterval = .milliseconds(100)

  /// What a directory watch reports: files moved or renamed in (atomic saves), closed after writing (in-place
  /// saves), created, deleted, moved away; and the directory itself being deleted or moved.
  private static let mask: UInt32 = UInt32(
    IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

  private struct Registration {
    weak var file: (any WatchedFile)?
    /// The directories and names this file is known by: its own, and its symlink target's.
    let locations: [(directory: String, name: String)]
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
    var source: (any DispatchSourceRead)?
    var registrations: [ObjectIdentifier: Registration] = [:]
    /// Which registrations each watch descriptor serves.
    var watchers: [Int32: Set<ObjectIdentifier>] = [:]
    var pollTimer: (any DispatchSourceTimer)?
  }

  private let queue = DispatchQueue(label: "splint.settings.watcher")
  private let state = Mutex(State())

  private init() {
    state.withLock { state in
      let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard descriptor >= 0 else { return }  // no inotify: every file is polled
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
  /// told about before.
  func watch(_ file: some WatchedFile, at locations: [(directory: String, name: String)]) {
    let id = ObjectIdentifier(file)
    state.withLock { state in
      disarm(id, in: &state)
      state.registrations[id] = Registration(file: file, locations: locations)
      arm(id, in: &state)
    }
  }

  /// Stops telling the file with `id` about anything, and drops watches nobody needs any more.
  func unwatch(_ id: ObjectIdentifier) {
    state.withLock { state in
      disarm(id, in: &state)
      state.registrations[id] = nil
      updatePolling(&state)
    }
  }

  // MARK: - Watches

  /// Adds a watch on each of the registration's directories (a directory watched already keeps its descriptor), or,
  /// for a directory that does not exist, on its nearest existing ancestor. Where that fails (no inotify, no watches
  /// left, a directory that cannot be watched) the registration stays incomplete and polled, and a later poll tick
  /// tries again.
  private func arm(_ id: ObjectIdentifier, in state: inout State) {
    var complete = true
    for location in state.registrations[id]?.locations ?? [] where !watchNearest(location, for: id, in: &state) {
      complete = false
    }
    state.registrations[id]?.complete = complete
    updatePolling(&state)
  }

  /// Watches `location`'s directory, or, while it does not exist, its nearest existing ancestor for the next
  /// component on the way. Returns whether that worked.
  private func watchNearest(
    _ location: (directory: String, name: String), for id: ObjectIdentifier, in state: inout State
  ) -> Bool {
    // The way up, nearest first, as far as the first directory that exists ("/" always does).
    var way = [location]
    while way.count < 4096, let last = way.last, last.directory != "/", !Self.isDirectory(last.directory) {
      way.append((FileIO.directory(of: last.directory), FileIO.name(of: last.directory)))
    }
    // Then down again from there: a directory on the way made since it was looked for is watched too, so that its
    // creation cannot slip between looking and watching. The deepest watch is the one kept.
    var deepest: (watch: Int32, directory: String, name: String)?
    while let step = way.popLast() {
      guard state.descriptor >= 0 else { return false }
      let watch = inotify_add_watch(state.descriptor, step.directory, Self.mask)
      if watch < 0 {
        // Below a watched ancestor, a directory still missing is what that watch waits for.
        guard deepest != nil, errno == ENOENT || errno == ENOTDIR else { return false }
        break
      }
      // An ancestor passed on the way down (only when a directory was made in between) is not needed, unless
      // another file's watch is on it.
      if let passed = deepest?.watch, passed != watch { dropIfUnused(passed, in: &state) }
      deepest = (watch, step.directory, step.name)
    }
    guard let deepest else { return false }
    state.watchers[deepest.watch, default: []].insert(id)
    if deepest.directory == location.directory {
      state.registrations[id]?.watches[deepest.watch, default: []].insert(deepest.name)
    } else {
      state.registrations[id]?.ancestors[deepest.watch, default: []].insert(deepest.name)
    }
    return true
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
    state.withLock { state in state.registrations[id].map { !$0.complete } ?? false }
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

  /// Runs the poll timer exactly while some registration is not completely watched.
  private func updatePolling(_ state: inout State) {
    let needed = state.registrations.values.contains { !$0.complete }
    if needed, state.pollTimer == nil {
      let timer = DispatchSource.makeTimerSource(queue: queue)
      timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
      timer.setEventHandler { [weak self] in self?.poll() }
      timer.resume()
      state.pollTimer = timer
    } else if !needed, let timer = state.pollTimer {
      timer.cancel()
      state.pollTimer = nil
    }
  }

  /// One poll tick: try to watch each polled file again (its directory may be back), and tell every one of them
  /// to check its file. A file that became watched is checked once more: it may have changed before the watch.
  private func poll() {
    let files = state.withLock { state -> [any WatchedFile] in
      let polled = state.registrations.filter { !$0.value.complete }
      for id in polled.keys { arm(id, in: &state) }
      return polled.values.compactMap(\.file)
    }
    for file in files { file.contentMayHaveChanged() }
  }

  // MARK: - Events

  private func readEvents() {
    let files = state.withLock { state -> [any WatchedFile] in
      var affected = Set<ObjectIdentifier>()
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
          affected.formUnion(handle(event, name: name, in: &state))
          offset = nameStart + Int(event.len)
        }
      }
      return affected.compactMap { state.registrations[$0]?.file }
    }
    for file in files { file.contentMayHaveChanged() }
  }

  /// The registrations one event concerns. An overflow concerns all; a vanished directory concerns all its files,
  /// which wait for it through an ancestor; a missing directory on the way appearing concerns the files waiting for
  /// it, which are watched a step nearer (and check themselves: their file may be there already).
  private func handle(_ event: inotify_event, name: String, in state: inout State) -> Set<ObjectIdentifier> {
    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
      // Lost events may include a directory's removal: watch every location afresh (a directory removed is then
      // polled, one created again is watched anew) and have every file check itself.
      for id in state.registrations.keys {
        disarm(id, in: &state)
        arm(id, in: &state)
      }
      return Set(state.registrations.keys)
    }
    guard let ids = state.watchers[event.wd] else { return [] }  // a watch already dropped
    let gone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
    if event.mask & gone != 0 {
      for id in ids {
        disarm(id, in: &state)
        arm(id, in: &state)
      }
      return ids
    }
    let appeared = ids.filter { state.registrations[$0]?.ancestors[event.wd]?.contains(name) == true }
    for id in appeared {
      disarm(id, in: &state)
      arm(id, in: &state)
    }
    return appeared.union(ids.filter { state.registrations[$0]?.watches[event.wd]?.contains(name) == true })
  }
}
