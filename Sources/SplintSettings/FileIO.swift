// Every POSIX call on settings files and their locks lives in this file: reading, crash-safe writing, flock,
// directories, stat. The rest of the module speaks Swift types: paths as Strings, contents as [UInt8], and
// `FileIOError` failures with the errno they came from.

import Glibc
import SplintSystemCalls
import SystemPackage

/// A failed system call: which one, on what, and errno; or a path that is not a regular file.
struct FileIOError: Error, Equatable, CustomStringConvertible {
  let operation: String
  let path: String
  let code: Int32
  /// What `path` is, when the failure is that it is not a regular file.
  var kind: FileKind?
  /// Why, in words, when errno alone would not say it.
  var explanation: String?

  init(operation: String, path: String, code: Int32) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  /// `path` is `kind`, which settings are never read from or written to.
  init(path: String, is kind: FileKind) {
    self.init(operation: "use", path: path, code: EINVAL)
    self.kind = kind
  }

  /// The errno in words, with what to do for the common cases.
  var description: String {
    if let kind { return "\(path) is \(kind), not a regular file" }
    if let explanation { return explanation }
    let remedy =
      switch code {
      case EROFS: "; the file system is read-only: point the store at a writable file with SettingsStore(fileURL:)"
      case ENOSPC, EDQUOT: "; the disk is full: free some space and try again"
      case EACCES, EPERM: "; permission denied: check the owner and mode of \(path)"
      default: ""
      }
    return "\(operation) \(path) failed: \(String(cString: strerror(code)))\(remedy)"
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
  let size: Int64
  let modified: timespec
  let changed: timespec

  static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
    lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
      && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
      && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
  }

  fileprivate init(_ status: stat) {
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    size = Int64(status.st_size)
    modified = status.st_mtim
    changed = status.st_ctim
  }
}

enum FileIO {
  /// Runs a system call that returns -1 and sets errno on failure, again while it is interrupted by a signal.
  @discardableResult
  private static func retrying<T: SignedInteger>(
    _ operation: String, _ path: String, _ call: () -> T
  ) throws(FileIOError) -> T {
    try SystemCall.retrying(call) { FileIOError(operation: operation, path: path, code: $0) }
  }

  // MARK: - Reading

  /// The file's bytes and the identity of what was read, or nil when there is no file.
  ///
  /// - Throws: A ``FileIOError`` with a ``FileIOError/kind`` when `path` is not a regular file. Its type is looked
  ///   at before it is opened: opening a FIFO waits for a writer, and opening a device can act on it.
  static func read(_ path: String) throws(FileIOError) -> (bytes: [UInt8], identity: FileIdentity)? {
    guard try requireRegularOrAbsent(path) else { return nil }
    let descriptor: Int32
    do throws(FileIOError) {
      // O_NONBLOCK: should a FIFO have taken the file's place since the look, the open returns at once.
      descriptor = try retrying("open", path) { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
    } catch  where error.code == ENOENT || error.code == ENOTDIR {
      return nil  // coverage:ignore — removed between the look and the open, a window of microseconds
    }
    defer { close(descriptor) }
    var status = stat()
    try retrying("stat", path) { fstat(descriptor, &status) }
    if let kind = FileKind(mode: status.st_mode) { throw FileIOError(path: path, is: kind) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(status.st_size))
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = try retrying("read", path) {
        chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      }
      if count == 0 { break }
      bytes += chunk[..<count]
    }
    return (bytes, FileIdentity(status))
  }

  /// Returns whether a regular file is at `path` (following links), false when nothing is.
  ///
  /// - Throws: A ``FileIOError`` with a ``FileIOError/kind`` when something else is there (a directory, a FIFO, a
  ///   device, a socket).
  @discardableResult
  static func requireRegularOrAbsent(_ path: String) throws(FileIOError) -> Bool {
    try regularFileStatus(path) != nil
  }

  /// The status of the regular file at `path` (following links), or nil when nothing is there.
  private static func regularFileStatus(_ path: String) throws(FileIOError) -> stat? {
    var status = stat()
    do throws(FileIOError) {
      try retrying("stat", path) { stat(path, &status) }
    } catch  where error.code == ENOENT || error.code == ENOTDIR {
      return nil
    }
    if let kind = FileKind(mode: status.st_mode) { throw FileIOError(path: path, is: kind) }
    return status
  }

  /// The owner, group and mode a replacement of the file at `path` must get, or nil when there is no file yet (a
  /// new one belongs to this process's user, mode 0600).
  ///
  /// - Throws: When the file is not a regular file; when this process may not write it (replacing it would only
  ///   need the directory, but a file one may not write is not one's to replace); or when the replacement could not
  ///   keep its owner and group: only root may give a file to another user, or to a group it is not in.
  static func replacementOwnership(_ path: String) throws(FileIOError) -> Ownership? {
    guard let status = try regularFileStatus(path) else { return nil }
    try retrying("write", path) { faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) }
    let ownership = Ownership(user: status.st_uid, group: status.st_gid, mode: status.st_mode & 0o7777)
    let user = geteuid()
    guard user == 0 || (ownership.user == user && isMember(of: ownership.group)) else {
      var error = FileIOError(operation: "keep the owner of", path: path, code: EPERM)
      error.explanation = """
        \(path) belongs to user \(ownership.user) and group \(ownership.group): a write by user \(user) would give \
        it to user \(user). Write it as its owner, or as root, which keeps the owner
        """
      throw error
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

  /// The identity of the file now, or nil when there is none.
  static func identity(_ path: String) -> FileIdentity? {
    var status = stat()
    return stat(path, &status) == 0 ? FileIdentity(status) : nil
  }

  /// Whether `path` names a directory.
  static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
  }

  // MARK: - Writing

  /// Replaces the file at `path` with `bytes`, so that a crash at any moment leaves either the old or the new
  /// content, never a mix or an empty file: write a new file beside it, fsync, rename it over the old one, fsync
  /// the directory. A new file gets mode 0600; a replaced one keeps its owner, group and mode (see
  /// ``replacementOwnership(_:)``, which also says when a file is refused). On failure the old file is untouched.
  /// Without `sync` (for measuring what durability costs), the two fsyncs are left out: still atomic, not durable.
  static func replace(_ path: String, with bytes: [UInt8], sync: Bool = true) throws(FileIOError) {
    let directory = directory(of: path)
    let name = name(of: path)
    let ownership = try replacementOwnership(path)
    let mode = ownership?.mode ?? 0o600
    let temporary = "\(directory)/.\(name).\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
    // Failures name the settings file: the temporary file is a detail of how it is replaced.
    let descriptor = try retrying("create a file beside", path) {
      open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    }
    do throws(FileIOError) {
      defer { close(descriptor) }
      // The owner first: a change of owner clears the set-user-ID and set-group-ID bits that the mode restores.
      if let ownership, ownership.user != geteuid() || ownership.group != getegid() {
        try retrying("give the new file the owner of", path) { fchown(descriptor, ownership.user, ownership.group) }
      }
      try retrying("chmod", path) { fchmod(descriptor, mode) }
      var written = 0
      while written < bytes.count {
        written += try retrying("write", path) {
          bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
      }
      if sync { try retrying("fsync", path) { fsync(descriptor) } }
      try retrying("rename", path) { rename(temporary, path) }
    } catch {
      unlink(temporary)
      throw error
    }
    if sync { try syncDirectory(directory) }
  }

  /// Makes a rename in `directory` survive a power loss.
  private static func syncDirectory(_ directory: String) throws(FileIOError) {
    let descriptor = try retrying("open", directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { close(descriptor) }
    try retrying("fsync", directory) { fsync(descriptor) }
  }

  /// Gives the file at `path` a second name, `newPath`, without copying it (the old content stays reachable after
  /// the file is replaced).
  static func link(_ path: String, as newPath: String) throws(FileIOError) {
    try retrying("link", newPath) { Glibc.link(path, newPath) }
  }

  /// Creates `path` and any missing parent, each with mode 0700 (XDG directories hold private data).
  static func createDirectory(_ path: String) throws(FileIOError) {
    guard !isDirectory(path) else { return }
    let parent = directory(of: path)
    if parent != path, !parent.isEmpty { try createDirectory(parent) }
    do throws(FileIOError) {
      try retrying("create directory", path) { mkdir(path, 0o700) }
    } catch  where error.code == EEXIST {
      // Created meanwhile by another thread or process.
    }
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

  /// Where `path` leads from `directory`: `path` itself when it is absolute, else `directory/path`.
  static func resolve(_ path: String, from directory: String) -> String {
    FilePath(directory).pushing(FilePath(path)).string
  }

  /// The path writes should replace: `path` itself, or the file it links to (through every link in a chain), so
  /// that a dotfile manager's symlink stays a symlink. A link to a file that does not exist yet resolves to where
  /// that file would be.
  ///
  /// - Throws: ELOOP for a chain of more than 40 links (Linux's own limit), such as a loop.
  static func resolvingLinks(_ path: String) throws(FileIOError) -> String {
    var current = path
    for _ in 0..<40 {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let length = readlink(current, &buffer, buffer.count - 1)
      guard length > 0 else { return current }
      let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      current = resolve(target, from: directory(of: current))
    }
    throw FileIOError(operation: "resolve", path: path, code: ELOOP)
  }

  /// Every name whose change can change what `path` leads to: each symbolic link met on the way (a link among the
  /// path's directories, or the file's own link, and every link they lead through), and the name it ends at, each
  /// with the directories before it resolved. Watching their directories sees any link re-pointed.
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
      guard length > 0, links < 40 else {
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

  /// One name for the file at `path` however it is reached (symlinks, `..`): the real path of the file, or of its
  /// directory when the file does not exist yet.
  static func canonicalPath(_ path: String) -> String {
    if let real = realPath(path) { return real }
    guard let realDirectory = realPath(directory(of: path)) else { return path }
    return resolve(name(of: path), from: realDirectory)
  }

  private static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// The user's home directory: `$HOME`, or the password database's entry when HOME is unset or empty.
  static func homeDirectory() -> String {
    if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home }
    // A user without an entry in the password database has no home at all; "/" is what login shells use then.
    let directory = getpwuid(getuid())?.pointee.pw_dir.map { String(cString: $0) }
    return directory ?? "/"
  }

  // MARK: - Locks

  /// Runs `body` holding an exclusive `flock` on the lock file at `path`. The lock file is never deleted, so that
  /// every writer locks the same inode; the kernel drops a lock when its holder dies, so there is never a stale
  /// lock to clean up. (Locking the settings file itself would not do: each write renames a new inode over it.)
  ///
  /// The lock file must be a regular file: it is not followed if it is a symlink (O_NOFOLLOW, so that nobody can
  /// make a writer create or lock another file), and a FIFO or a device there is refused without blocking.
  ///
  /// The lock file belongs to whoever the settings file belongs to (`owner`), so that root writing a user's file
  /// never leaves a lock the user cannot open; root gives one it finds to the settings file's owner.
  static func withExclusiveLock<T>(
    _ path: String, owner: Ownership?, _ body: () throws(FileIOError) -> T
  ) throws(FileIOError) -> T {
    let descriptor = try retrying("open lock", path) {
      open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600)
    }
    defer { close(descriptor) }
    var status = stat()
    try retrying("stat", path) { fstat(descriptor, &status) }
    if let kind = FileKind(mode: status.st_mode) { throw FileIOError(path: path, is: kind) }
    if let owner, owner.user != status.st_uid || owner.group != status.st_gid,
      geteuid() == 0 || status.st_uid == geteuid()
    {
      try retrying("give the lock file the owner of", path) { fchown(descriptor, owner.user, owner.group) }
    }
    try retrying("lock", path) { flock(descriptor, LOCK_EX) }
    return try body()
  }
}
