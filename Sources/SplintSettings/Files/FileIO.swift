// Every POSIX call on settings files and their locks lives in this file, and the calls themselves in
// SplintSystemCalls' `Descriptor`: finding the file (`PathWalk` under `OwnershipRules`), reading it, replacing it
// crash-safely, locking it. Which file is decided once per operation, on descriptors: the file's directory is held
// open, and every later step names the file relative to it, so a name swapped by someone else cannot redirect it.
// The rest of the module speaks Swift types: paths as Strings, contents as [UInt8], and `FileIOError` failures.

import Glibc
import SplintSystemCalls
import Synchronization
import SystemPackage

/// Why a file operation failed: what the error a store reports is made of.
enum FileIOError: Error, Equatable {
  /// A system call failed.
  case system(SystemCallError)
  /// `path` is `kind`, which settings are never read from or written to.
  case notRegular(path: String, kind: FileKind)
  /// `OwnershipRules` (or the lock file's own rule) refused `path`, for `reason`.
  case refused(path: String, reason: String)
  /// `path` holds `size` bytes, more than the `limit` a settings file may.
  case tooLarge(path: String, size: Int64, limit: Int)
  /// Another process held the lock file `path` for the whole of `waited`.
  case lockTimeout(path: String, waited: Duration)
  /// `path` could not be used, for `reason`: a sentence that says what to do.
  case failed(path: String, reason: String)
  /// No file could be made in the directory `path`: the kernel said `code` (EACCES, EPERM, EROFS).
  case unwritableDirectory(path: String, code: Int32)

  init(_ error: FileSystemError) {
    switch error {
    case .system(let error) where error.code == EISDIR: self = .notRegular(path: error.path, kind: .directory)
    case .system(let error): self = .system(error)
    case .refused(let path, let reason): self = .refused(path: path, reason: reason)
    }
  }
}

extension SystemCallError {
  /// What happened, in words, to the settings file `file` (whose path the error names already: it is left out) or to
  /// another path on the way: "this user may not open it (Permission denied)", "write failed: No space left on
  /// device".
  func reason(settingsFile file: String) -> String {
    let cause = String(cString: strerror(code))
    let subject = path == file ? nil : path
    switch code {
    case EACCES, EPERM: return "this user may not \(operation) \(subject ?? "it") (\(cause))"
    case EROFS: return "\(subject.map { "the file system of " + $0 } ?? "its file system") is read-only"
    default: return "\(operation)\(subject.map { " " + $0 } ?? "") failed: \(cause)"
    }
  }

  /// What to do, for the common causes.
  var remedy: String? {
    switch code {
    case EROFS: "Point the store at a file on a writable file system (SettingsStore(fileURL:))."
    case ENOSPC, EDQUOT: "Free some space on the disk, then try again."
    case EACCES, EPERM: "Check the owner and mode of \(path) (a settings file belongs to its user, mode 0600)."
    default: nil
    }
  }
}

/// Who a settings file belongs to, and its permissions: what a replacement must have too.
struct Ownership: Equatable, Sendable {
  let user: uid_t
  let group: gid_t
  let mode: mode_t
}

/// What identifies one version of a file: a rename swaps the inode, an edit in place changes size or times.
struct FileIdentity: Equatable, Sendable {
  let device: UInt64
  let inode: UInt64
  let owner: uid_t
  let size: Int64
  let modified: timespec
  let changed: timespec

  static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
    lhs.isSameFile(as: rhs) && lhs.size == rhs.size
      && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
      && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
  }

  /// Whether both are versions of the same file (device, inode and owner), whatever was written to it since.
  func isSameFile(as other: FileIdentity) -> Bool {
    device == other.device && inode == other.inode && owner == other.owner
  }

  init(_ status: stat) {
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    owner = status.st_uid
    size = Int64(status.st_size)
    modified = status.st_mtim
    changed = status.st_ctim
  }
}

/// Where a settings file is, decided once: its directory held open, its name there, what the name held when it was
/// looked up, and the rules that led there, which judge the file again whenever it is opened.
struct SettingsLocation {
  let end: PathEnd
  let rules: OwnershipRules

  /// The file's path, as the walk found it (links resolved), for messages.
  var path: String { end.path }
}

/// A settings file opened for reading, and what it is.
struct OpenedFile {
  let descriptor: Descriptor
  let status: stat

  var identity: FileIdentity { FileIdentity(status) }
}

enum FileIO {
  /// Runs a call on a descriptor, turning its failure into a ``FileIOError``.
  private static func attempt<T>(_ body: () throws(FileSystemError) -> T) throws(FileIOError) -> T {
    do throws(FileSystemError) { return try body() } catch { throw FileIOError(error) }
  }

  // MARK: - Finding

  /// Finds the file `path` leads to, under `OwnershipRules`; with `makingDirectories`, directories missing on the
  /// way are made (under the same rules).
  ///
  /// - Throws: ``FileIOError/refused(path:reason:)`` for a step the rules refuse; ``FileIOError/system(_:)`` with
  ///   ENOENT or ENOTDIR when a directory on the way is missing or is no directory (nothing is there), and for a
  ///   directory that may not be searched, a loop of links, or any other failure.
  static func locate(_ path: String, makingDirectories: Bool = false) throws(FileIOError) -> SettingsLocation {
    var rules = OwnershipRules(makesDirectories: makingDirectories)
    return try attempt { () throws(FileSystemError) in
      let end = try PathWalk.walk(path, from: Descriptor.root(), at: "", rules: &rules)
      try rules.requireWorkable(end.directoryStatus, at: end.directoryPath)
      return SettingsLocation(end: end, rules: rules)
    }
  }

  // MARK: - Reading

  /// What ``read(_:unless:limit:)`` found.
  enum ReadResult {
    /// No file.
    case absent
    /// The file is one of the versions given as known.
    case unchanged
    /// The file's bytes, and the identity of what they were read from.
    case contents([UInt8], FileIdentity)
  }

  /// Reads the settings file at `path`, unless it is still one of the versions `known`.
  ///
  /// - Throws: What ``locate(_:makingDirectories:)`` and ``open(_:checkingWriteAccess:)`` throw;
  ///   ``FileIOError/tooLarge(path:size:limit:)`` past `limit` bytes, before anything is allocated.
  static func read(_ path: String, unless known: [FileIdentity], limit: Int) throws(FileIOError) -> ReadResult {
    let location: SettingsLocation
    do throws(FileIOError) {
      location = try locate(path)
    } catch .system(let error) where error.isAbsence {
      return .absent
    }
    if let found = location.end.file?.status, found.type == S_IFREG, known.contains(FileIdentity(found)) {
      return .unchanged
    }
    guard let file = try open(location) else { return .absent }
    return .contents(try read(file, path: location.path, limit: limit), file.identity)
  }

  /// Opens the file the location's name holds now, judged by the location's rules again (it may be another file
  /// than when it was looked up); nil when there is none.
  ///
  /// - Throws: What the rules throw; ``FileIOError/notRegular(path:kind:)`` for anything but a regular file
  ///   (looked at before it is opened: opening a FIFO waits for a writer, and opening a device can act on it); with
  ///   `checkingWriteAccess`, a failed "write" when this process may not write it.
  static func open(_ location: SettingsLocation, checkingWriteAccess: Bool = false) throws(FileIOError) -> OpenedFile? {
    guard let (file, status) = try openRegular(location, O_RDONLY) else { return nil }
    if checkingWriteAccess {
      try attempt { () throws(FileSystemError) in try file.requireAccess(W_OK, for: "write", path: location.path) }
    }
    return OpenedFile(descriptor: file, status: status)
  }

  /// The bytes of `file`, at most `limit`.
  ///
  /// - Throws: ``FileIOError/tooLarge(path:size:limit:)`` past `limit` bytes, checked before anything is allocated
  ///   and while reading.
  static func read(_ file: OpenedFile, path: String, limit: Int) throws(FileIOError) -> [UInt8] {
    if file.status.st_size > limit { throw .tooLarge(path: path, size: Int64(file.status.st_size), limit: limit) }
    let bytes = try attempt { () throws(FileSystemError) in try file.descriptor.read(upTo: limit, path: path) }
    // The file grew past the limit after fstat, or is one whose size the kernel does not tell.
    if bytes.count > limit { throw .tooLarge(path: path, size: Int64(bytes.count), limit: limit) }
    return bytes
  }

  /// Opens the regular file the location's name holds now with `flags`, without following a link, waiting or
  /// acting on a device: it is first looked at through an `O_PATH` descriptor and judged (rules, kind), then
  /// opened, and used only if that is the same file; if the name was swapped between the two, it looks again
  /// (`tries` times in all). Nil when there is none.
  private static func openRegular(
    _ location: SettingsLocation, _ flags: Int32, tries: Int = 3
  ) throws(FileIOError) -> (Descriptor, stat)? {
    let (directory, name, path) = (location.end.directory, location.end.name, location.path)
    guard tries > 0 else { throw .failed(path: path, reason: "\(path) kept changing while it was opened; try again") }
    let look: Descriptor
    do throws(FileIOError) {
      look = try attempt { () throws(FileSystemError) in
        try directory.open(name, LinuxFlags.openPath | O_NOFOLLOW, path: path)
      }
    } catch .system(let error) where error.code == ENOENT {
      return nil
    }
    let status = try attempt { () throws(FileSystemError) in try look.status(path: path) }
    var rules = location.rules
    try attempt { () throws(FileSystemError) in
      try rules.enter(status, at: path, in: location.end.directoryStatus, at: location.end.directoryPath)
    }
    // A link here now (swapped in since the walk) is refused too: what the name leads to was judged by the walk.
    if let kind = FileKind(mode: status.st_mode) { throw .notRegular(path: path, kind: kind) }
    let file = try attempt { () throws(FileSystemError) in
      try directory.open(name, flags, ifSameAs: status, path: path)
    }
    if let file { return (file, status) }
    return try openRegular(location, flags, tries: tries - 1)  // coverage:ignore — swapped since the look
  }

  // MARK: - Writing

  /// The owner, group and mode a replacement of `file` must get (its own), or, for a new file, what a file made in
  /// the location's directory gets: mode 0600, and, for root in another user's directory, that user.
  ///
  /// - Throws: When the replacement could not keep its owner and group: only root may give a file to another user,
  ///   or to a group it is not in. (Whether this process may write the file at all is checked as it is opened:
  ///   replacing it would only need the directory, but a file one may not write is not one's to replace.)
  static func replacementOwnership(
    of file: OpenedFile?, in location: SettingsLocation, newFileMode: mode_t = 0o600
  ) throws(FileIOError) -> Ownership {
    guard let file else {
      let owner = OwnershipRules.creationOwner(in: location.end.directoryStatus)
      return Ownership(user: owner?.user ?? geteuid(), group: owner?.group ?? getegid(), mode: newFileMode)
    }
    let path = location.path
    let ownership = Ownership(user: file.status.st_uid, group: file.status.st_gid, mode: file.status.st_mode & 0o7777)
    let user = geteuid()
    guard user == 0 || (ownership.user == user && isMember(of: ownership.group)) else {
      throw .failed(
        path: path,
        reason: """
          \(path) belongs to user \(ownership.user) and group \(ownership.group): a write by user \(user) would \
          give it to user \(user). Write it as its owner, or as root, which keeps the owner
          """)
    }
    return ownership
  }

  /// Whether this process may give a file to `group`: its own, or one of its supplementary groups.
  private static func isMember(of group: gid_t) -> Bool {
    if getegid() == group { return true }
    var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
    let count = getgroups(Int32(groups.count), &groups)
    return groups.prefix(Int(max(count, 0))).contains(group)
  }

  /// Makes a new file `name` in the location's directory that no one else can have made or linked first
  /// (`O_EXCL`, not following a link), with `ownership`: the only kind of file this process ever gives away.
  private static func create(
    _ name: String, in location: SettingsLocation, _ flags: Int32, ownership: Ownership
  ) throws(FileIOError) -> Descriptor {
    let (directory, path) = (location.end.directory, location.path)
    let file: Descriptor
    do throws(FileIOError) {
      file = try attempt { () throws(FileSystemError) in
        try directory.open(name, flags | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600, path: path)
      }
    } catch .system(let error) where [EACCES, EPERM, EROFS].contains(error.code) {
      // The directory's fault, not the file's: it may not have files made in it.
      throw .unwritableDirectory(path: self.directory(of: path), code: error.code)
    }
    var made = false
    defer { if !made { try? directory.unlink(name, path: path) } }
    try attempt { () throws(FileSystemError) in
      // The owner first: a change of owner clears the set-user-ID and set-group-ID bits that the mode restores.
      if ownership.user != geteuid() || ownership.group != getegid() {
        try file.changeOwner(to: ownership.user, group: ownership.group, path: path)
      }
      try file.changeMode(to: ownership.mode, path: path)
    }
    made = true
    return file
  }

  /// A name for a temporary file beside the settings file, which no other process picks.
  private static func temporaryName(for name: String) -> String {
    ".\(name).\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
  }

  /// Replaces the settings file of `location` with `bytes`, so that a crash at any moment leaves either the old or
  /// the new content, never a mix or an empty file: write a new file beside it, fsync, rename it over the old one,
  /// fsync the directory. The new file gets `ownership`. On failure the old file is untouched. Without `sync` (for
  /// measuring what durability costs), the two fsyncs are left out: still atomic, not durable.
  ///
  /// - Returns: The identity of the file written.
  static func replace(
    in location: SettingsLocation, with bytes: [UInt8], ownership: Ownership, sync: Bool = true
  ) throws(FileIOError) -> FileIdentity {
    let (directory, path) = (location.end.directory, location.path)
    let temporary = temporaryName(for: location.end.name)
    let file = try create(temporary, in: location, O_WRONLY, ownership: ownership)
    let written: stat
    do throws(FileSystemError) {
      try file.write(bytes, path: path)
      if sync { try file.sync(path: path) }
      try directory.rename(temporary, to: location.end.name, path: path)
      written = try file.status(path: path)
    } catch {
      try? directory.unlink(temporary, path: path)
      throw FileIOError(error)
    }
    if sync {
      try attempt { () throws(FileSystemError) in
        try directory.reopen(O_RDONLY | O_DIRECTORY, path: location.end.directoryPath).sync(
          path: location.end.directoryPath)
      }
    }
    return FileIdentity(written)
  }

  /// Replaces the file at `path` with `bytes` whole, atomically, for another program to read (a follower's metrics
  /// file): found as a settings file is, under the same rules, with its owner and mode kept (`newFileMode` for a new
  /// one). No lock (one process writes it), no directory made, and not durable: it is written again at the next
  /// change.
  static func publish(_ bytes: [UInt8], at path: String, newFileMode: mode_t) throws(FileIOError) {
    let location = try locate(path)
    let found = try open(location, checkingWriteAccess: true)
    let ownership = try replacementOwnership(of: found, in: location, newFileMode: newFileMode)
    _ = try replace(in: location, with: bytes, ownership: ownership, sync: false)
  }

  /// Keeps `bytes` (a file that does not parse) beside the settings file as a new file `name`, with `ownership`, so
  /// that nothing of it is lost when the file is replaced. A copy, never a second link: a link would be to
  /// whatever the name holds by then.
  static func keepCopy(
    of bytes: [UInt8], as name: String, in location: SettingsLocation, ownership: Ownership
  ) throws(FileIOError) {
    let file = try create(name, in: location, O_WRONLY, ownership: ownership)
    try attempt { () throws(FileSystemError) in
      try file.write(bytes, path: location.path)
      try file.sync(path: location.path)
    }
  }

  // MARK: - Locks

  /// Runs `body` holding an exclusive `flock` on the lock file beside the settings file (`<name>.lock`), waited
  /// for at most `timeout`. The lock file is never deleted, so that every writer locks the same inode; the kernel
  /// drops a lock when its holder dies, so there is never a stale lock to clean up. (Locking the settings file
  /// itself would not do: each write renames a new inode over it.)
  ///
  /// The lock file is used only if it is a regular file with one link, of the settings file's owner (`owner`) or of
  /// this process's user; a new one is made with `O_EXCL` and given to `owner`. A lock of root's in another user's
  /// directory (one root left before) is replaced by one of that user's, under its own lock, so that the user can
  /// go on writing: a process that waited on the old one sees that the name now holds another file, and locks that.
  ///
  /// - Throws: ``FileIOError/lockTimeout(path:waited:)`` when another process held it all along;
  ///   ``FileIOError/refused(path:reason:)`` for a lock file that is not to be trusted.
  static func withExclusiveLock<T>(
    in location: SettingsLocation, owner: Ownership, timeout: Duration, _ body: () throws(FileIOError) -> T
  ) throws(FileIOError) -> T {
    let name = location.end.name + ".lock"
    let path = location.path + ".lock"
    let directory = location.end.directory
    let lockOwner = Ownership(user: owner.user, group: owner.group, mode: 0o600)
    let deadline = ContinuousClock.now + timeout
    func acquire() throws(FileIOError) -> (descriptor: Descriptor, status: stat) {
      let lock = try openLock(name, in: location, owner: lockOwner)
      try wait(for: lock.descriptor, path: path, until: deadline, timeout: timeout)
      return lock
    }
    func isCurrent(_ lock: (descriptor: Descriptor, status: stat)) -> Bool {
      (try? directory.status(of: name, path: path))?.isSameFile(as: lock.status) == true
    }
    var lock = try acquire()
    // Locked. The name may hold another file by now (a replacement, a lock removed by hand): lock that one instead.
    while !isCurrent(lock) { lock = try acquire() }  // coverage:ignore — only when replaced while this one waited
    if lock.status.st_uid != owner.user, geteuid() == 0 {
      // Root's own lock in another user's directory: that user could not open it. Put one of theirs in its place.
      let temporary = temporaryName(for: name)
      let replacement = try create(temporary, in: location, O_RDWR, ownership: lockOwner)
      try attempt { () throws(FileSystemError) in
        _ = try replacement.lockIfFree(LOCK_EX, path: path)  // no one else knows it yet
        try directory.rename(temporary, to: name, path: path)
      }
      // The old one stays locked until the body is done: a process waiting on it finds the new one after.
      return try withExtendedLifetime((lock.descriptor, replacement)) { () throws(FileIOError) in try body() }
    }
    return try withExtendedLifetime(lock.descriptor) { () throws(FileIOError) in try body() }
  }

  /// The lock file `name` beside the settings file, opened for locking: made if missing, otherwise looked at, checked,
  /// and opened only if it is still the file looked at (looked at again otherwise, `tries` times in all).
  private static func openLock(
    _ name: String, in location: SettingsLocation, owner: Ownership, tries: Int = 3
  ) throws(FileIOError) -> (descriptor: Descriptor, status: stat) {
    let (directory, path) = (location.end.directory, location.path + ".lock")
    guard tries > 0 else { throw .failed(path: path, reason: "\(path) kept changing while it was opened; try again") }
    do throws(FileIOError) {
      let made = try create(name, in: location, O_RDWR, ownership: owner)
      return (made, try attempt { () throws(FileSystemError) in try made.status(path: path) })
    } catch .system(let error) where error.code == EEXIST {
      // There is one: look at it before opening it.
    }
    let status = try attempt { () throws(FileSystemError) in
      try directory.open(name, LinuxFlags.openPath | O_NOFOLLOW, path: path).status(path: path)
    }
    if let kind = FileKind(mode: status.st_mode) { throw .notRegular(path: path, kind: kind) }
    guard status.st_nlink == 1 else {
      throw .refused(
        path: path,
        reason: """
          the lock file \(path) has \(status.st_nlink) links: another may be a file that is not a lock, which a \
          write would lock, and could give away. Remove \(path); the next write makes a new one
          """)
    }
    guard status.st_uid == owner.user || status.st_uid == geteuid() else {
      throw .refused(
        path: path,
        reason: """
          the lock file \(path) belongs to \(Users.name(status.st_uid)), neither the settings file's owner \
          (\(Users.name(owner.user))) nor this process's user: it is not used. Remove it; the next write makes a \
          new one
          """)
    }
    let lock = try attempt { () throws(FileSystemError) in
      try directory.open(name, O_RDWR, ifSameAs: status, path: path)
    }
    if let lock { return (lock, status) }
    return try openLock(name, in: location, owner: owner, tries: tries - 1)  // coverage:ignore — swapped since the look
  }

  /// Takes an exclusive lock on `lock`, trying again with a growing pause (1 ms, doubling, at most 50 ms) while
  /// another process holds it, until `deadline`.
  private static func wait(
    for lock: Descriptor, path: String, until deadline: ContinuousClock.Instant, timeout: Duration
  ) throws(FileIOError) {
    var pause = Duration.milliseconds(1)
    while try !attempt({ () throws(FileSystemError) in try lock.lockIfFree(LOCK_EX, path: path) }) {
      let now = ContinuousClock.now
      guard now < deadline else { throw .lockTimeout(path: path, waited: timeout) }
      let nap = min(pause, deadline - now)
      usleep(UInt32(nap.components.seconds * 1_000_000 + nap.components.attoseconds / 1_000_000_000_000))
      pause = min(pause * 2, .milliseconds(50))
    }
  }

  // MARK: - Fleet followers

  /// What a fleet copy's follower holds for as long as it keeps the copy: its lock, `<copy>.follower`, which only
  /// the follower's user can open (no one else can hold it, or a lock in its way), and its presence,
  /// `<copy>.alive`, a socket every reader the mode lets in may test, but not hold (see `PresenceSocket`).
  final class FollowerHold: Sendable {
    /// The follower lock, open for writing, so that its closing tells watchers (`IN_CLOSE_WRITE`).
    private let lock: Descriptor
    /// The presence socket; given up before the lock.
    private let presence: Mutex<Descriptor?>
    /// The copy's directory, where the presence is named.
    private let directory: Descriptor
    private let name: String
    private let path: String

    init(lock: Descriptor, presence: Descriptor, directory: Descriptor, name: String, path: String) {
      self.lock = lock
      self.presence = Mutex(presence)
      self.directory = directory
      self.name = name
      self.path = path
    }

    /// Moves the presence's modification time to now: the follower was seen now.
    func touch() throws(FileIOError) {
      try FileIO.attempt { () throws(FileSystemError) in try PresenceSocket.touch(name, in: directory, path: path) }
    }

    deinit {
      // The presence first: a reader told of the lock's closing finds no one there.
      presence.withLock { $0 = nil }
    }
  }

  /// Takes the follower lock of a fleet copy, `<copy>.follower` beside it, if no other process holds it, and
  /// publishes this process's presence beside it, `<copy>.alive`, with `presenceMode` (0666 for a copy every user
  /// reads, 0600 otherwise). The lock is made if missing (mode 0600, in the copy's directory, made with
  /// `directoryMode` if missing), and otherwise used only if it is a regular file with one link of this process's
  /// user (as the settings lock is); one that others could open (an earlier version's) is replaced, under its lock,
  /// by a new one no one else has opened. Nil while another process holds it. Both are held for as long as the
  /// hold is: a follower keeps it for its life, and the kernel drops them when the follower dies.
  static func takeFollowerLock(
    ofCopy path: String, presenceMode: mode_t, directoryMode: mode_t
  ) throws(FileIOError) -> FollowerHold? {
    let location = try locateMakingDirectory(path, mode: directoryMode)
    let owner = Ownership(user: geteuid(), group: getegid(), mode: 0o600)
    let (lockName, lockPath) = (location.end.name + followerLockSuffix, location.path + followerLockSuffix)
    var lock = try openLock(lockName, in: location, owner: owner)
    let taken = try attempt { () throws(FileSystemError) in try lock.descriptor.lockIfFree(LOCK_EX, path: lockPath) }
    guard taken else { return nil }
    // An earlier version's lock, which others could open: replaced, under its lock, by one no one else opened.
    if lock.status.st_mode & 0o077 != 0 {
      let temporary = temporaryName(for: lockName)  // coverage:ignore — an old lock: not tested
      let replacement = try create(temporary, in: location, O_RDWR, ownership: owner)  // coverage:ignore — an old lock
      try attempt { () throws(FileSystemError) in  // coverage:ignore — as the line above
        _ = try replacement.lockIfFree(LOCK_EX, path: lockPath)  // coverage:ignore — no one else knows it yet
        try location.end.directory.rename(temporary, to: lockName, path: lockPath)  // coverage:ignore — an old lock
        lock = (replacement, try replacement.status(path: lockPath))  // coverage:ignore — as the line above
      }  // coverage:ignore — as the line above
    }
    let (presenceName, presencePath) = (location.end.name + presenceSuffix, location.path + presenceSuffix)
    let presence = try attempt { () throws(FileSystemError) in
      try PresenceSocket.publish(presenceName, in: location.end.directory, mode: presenceMode, path: presencePath)
    }
    return FollowerHold(
      lock: lock.descriptor, presence: presence, directory: location.end.directory, name: presenceName,
      path: presencePath)
  }

  /// Makes the file at `path`, and its name in its directory, durable: what a write without `sync` left to later.
  static func sync(_ path: String) throws(FileIOError) {
    let location = try locate(path)
    guard let file = try open(location) else { return }
    try attempt { () throws(FileSystemError) in
      try file.descriptor.sync(path: path)
      try location.end.directory.reopen(O_RDONLY | O_DIRECTORY, path: location.end.directoryPath).sync(
        path: location.end.directoryPath)
    }
  }

  /// The name a fleet copy's follower lock has beside the copy.
  static let followerLockSuffix = ".follower"

  /// The name a fleet copy's follower's presence has beside the copy.
  static let presenceSuffix = ".alive"

  /// Locates `path` as a writer does, but makes its directory, when missing, with `mode` rather than 0700 (a
  /// system copy's directory is for every user to read).
  static func locateMakingDirectory(_ path: String, mode: mode_t) throws(FileIOError) -> SettingsLocation {
    let directory = directory(of: path)
    let parent = try locate(directory, makingDirectories: true)
    if parent.end.file == nil {
      try attempt { () throws(FileSystemError) in
        try parent.end.directory.makeDirectory(parent.end.name, mode: mode, path: directory)
      }
    }
    return try locate(path, makingDirectories: true)
  }

  /// Whether a follower keeps the copy at `path` now (its presence, `<copy>.alive`, is held), and when a follower
  /// was last seen there (the presence's modification time, which a follower moves every few seconds); nil when
  /// there is none, or it is not a follower's presence. Nothing is opened that anyone could hold.
  static func follower(ofCopy path: String) -> (isFollowed: Bool, lastSeen: timespec?) {
    guard let location = try? locate(path + presenceSuffix), let (presence, status) = location.end.file,
      status.type == S_IFSOCK
    else { return (false, nil) }
    return (PresenceSocket.isHeld(presence), status.st_mtim)
  }

  // MARK: - Paths

  /// The directory `path` is in: `/a/b` for `/a/b/c`, `/` for `/a`, and `""` for a bare name. Purely lexical, as
  /// NSString's `deletingLastPathComponent` was (a trailing slash and doubled slashes are ignored).
  static func directory(of path: String) -> String {
    FilePath(path).removingLastComponent().string
  }

  /// The last component of `path`: `c` for `/a/b/c`.
  static func name(of path: String) -> String {
    FilePath(path).lastComponent?.string ?? ""
  }

  /// Every name whose change can change what `path` leads to: each symbolic link met on the way (a link among the
  /// path's directories, or the file's own link, and every link they lead through), and the name it ends at, each
  /// with the directories before it resolved. Watching their directories sees any link re-pointed. (What is
  /// watched decides only when a file is looked at again; every look follows `OwnershipRules`.)
  static func namesAlong(_ path: String) -> [String] {
    var names: [String] = []
    var resolved = ""
    var pending = Array(path.split(separator: "/").reversed())
    var links = 0
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    while let component = pending.popLast() {
      if component == "." || component.isEmpty { continue }
      if component == ".." {
        resolved = directory(of: resolved)
        if resolved == "/" { resolved = "" }
        continue
      }
      let candidate = resolved + "/" + component
      let length = readlink(candidate, &buffer, buffer.count - 1)
      guard length > 0, links < PathWalk.linkLimit else {
        resolved = candidate
        continue
      }
      links += 1
      names.append(candidate)
      let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if target.hasPrefix("/") { resolved = "" }
      pending += target.split(separator: "/").reversed()
    }
    names.append(resolved.isEmpty ? "/" : resolved)
    return names
  }

  /// `path` made absolute (below the current directory when it is relative) and without `.`, `..`, repeated or
  /// trailing slashes, as `URL(fileURLWithPath:).standardizedFileURL.path` makes it, without Foundation: names only,
  /// no link is followed.
  /// Byte by byte, which the compiler specializes: Substring's split and join cost a walk of every conformance in the
  /// binary the first time a process uses them.
  static func standardized(_ path: String) -> String {
    let slash = UInt8(ascii: "/")
    let dot = UInt8(ascii: ".")
    var bytes = Array(path.utf8)
    if bytes.first != slash { bytes = Array(currentDirectory().utf8) + [slash] + bytes }
    var result: [UInt8] = []
    var starts: [Int] = []  // where each component in `result` begins (its slash)
    var start = 0
    while start < bytes.count {
      var end = start
      while end < bytes.count && bytes[end] != slash { end += 1 }
      switch end - start {
      case 0: break  // a repeated slash
      case 1 where bytes[start] == dot: break
      case 2 where bytes[start] == dot && bytes[start + 1] == dot:
        if let last = starts.popLast() { result.removeLast(result.count - last) }
      default:
        starts.append(result.count)
        result.append(slash)
        result.append(contentsOf: bytes[start..<end])
      }
      start = end + 1
    }
    return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
  }

  /// The current directory's path, as getcwd(3) gives it ("/" when it cannot: the directory is gone).
  private static func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return "/" }  // coverage:ignore — a removed current directory
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// One name for the file at `path` however it is reached, for telling two paths of one file apart in this process:
  /// where the path leads under `OwnershipRules` (the file, or where it would be made), or the path itself when the
  /// rules refuse it or it leads nowhere yet. A path that another user steers is never taken for one that leads to
  /// the same file without them.
  static func canonicalPath(_ path: String) -> String {
    (try? locate(path))?.path ?? path
  }

  /// The user's home directory: `$HOME`, or the password database's entry when HOME is unset or empty.
  static func homeDirectory() -> String {
    if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home }
    // A user without an entry in the password database has no home at all; "/" is what login shells use then.
    let directory = getpwuid(getuid())?.pointee.pw_dir.map { String(cString: $0) }
    return directory ?? "/"
  }
}
