// Every *at system call SplintSettings and SplintSecrets make on files and directories lives in this file: they act
// on a directory held open, so that a name swapped by someone else between two calls cannot redirect the second.

#if canImport(Glibc)
  package import Glibc
#endif

/// Flags of `<fcntl.h>` that Swift's Glibc module leaves out (they need `_GNU_SOURCE`); their values are the same on
/// every Linux architecture Swift runs on (asm-generic).
package enum LinuxFlags {
  /// `O_PATH`: a descriptor that names a file without opening it for reading or writing. Opening one acts on
  /// nothing: no FIFO waits, no device is touched.
  package static let openPath: Int32 = 0o10_000_000
  /// `AT_EMPTY_PATH`: the call acts on the descriptor itself.
  package static let emptyPath: Int32 = 0x1000
}

/// A failed system call: which one, on what path, and errno.
package struct SystemCallError: Error, Equatable, Sendable {
  /// What was being done: "open", "read", "rename", ….
  package let operation: String
  /// The path it was done on, for messages.
  package let path: String
  /// errno.
  package let code: Int32

  package init(_ operation: String, _ path: String, _ code: Int32) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  /// Whether the error means that nothing is there: ENOENT, or ENOTDIR (a file where a directory was expected).
  package var isAbsence: Bool { code == ENOENT || code == ENOTDIR }

}

/// An open file descriptor, closed when the last reference to it goes: a directory held while names in it are
/// looked up, created, renamed; a file being read, written or locked.
///
/// A directory's descriptor may be an `O_PATH` one: every `*at` call takes it, and ``reopen(_:)`` gives a
/// descriptor for what needs more (fsync, reading).
package final class Descriptor: Sendable {
  /// The descriptor number.
  package let raw: Int32

  /// Takes ownership of `raw`, which this closes.
  package init(taking raw: Int32) { self.raw = raw }

  deinit { close(raw) }

  /// Runs a system call that returns -1 and sets errno on failure, again while a signal interrupts it.
  @discardableResult
  private static func call<T: SignedInteger>(
    _ operation: String, _ path: String, _ body: () -> T
  ) throws(FileSystemError) -> T {
    try SystemCall.retrying(body) { FileSystemError.system(SystemCallError(operation, path, $0)) }
  }

  /// The root directory, as an `O_PATH` descriptor.
  package static func root() throws(FileSystemError) -> Descriptor {
    try Descriptor(taking: call("open", "/") { Glibc.open("/", LinuxFlags.openPath | O_DIRECTORY | O_CLOEXEC) })
  }

  /// Opens `path` as the kernel resolves it (for a directory a program was given, such as a secrets directory).
  package static func open(_ path: String, _ flags: Int32) throws(FileSystemError) -> Descriptor {
    try Descriptor(taking: call("open", path) { Glibc.open(path, flags | O_CLOEXEC) })
  }

  /// Opens `name` in this directory with `flags` (`O_CLOEXEC` is added); `path` is for messages.
  package func open(
    _ name: String, _ flags: Int32, mode: mode_t = 0, path: String
  ) throws(FileSystemError) -> Descriptor {
    try Descriptor(taking: Self.call("open", path) { openat(raw, name, flags | O_CLOEXEC, mode) })
  }

  /// Opens `name` in this directory with `flags`, but only if it is the file `expected` describes (what an
  /// `O_PATH` look at the name found, and judged): not following a link, not waiting for a FIFO's writer, not
  /// becoming a controlling terminal. Nil when the name holds another file by now, or none: look again.
  package func open(
    _ name: String, _ flags: Int32, ifSameAs expected: stat, path: String
  ) throws(FileSystemError) -> Descriptor? {
    let file: Descriptor
    do throws(FileSystemError) {
      file = try open(name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, path: path)
    } catch .system(let error) where [ENOENT, ELOOP, ENXIO].contains(error.code) {
      return nil  // coverage:ignore — replaced between the look and the open, microseconds apart
    }
    return try file.status(path: path).isSameFile(as: expected) ? file : nil
  }

  /// This file again, opened with `flags`: a directory held as `O_PATH` opened to be synced, say.
  package func reopen(_ flags: Int32, path: String) throws(FileSystemError) -> Descriptor {
    try open(".", flags, path: path)
  }

  /// The status of the open file (fstat).
  package func status(path: String) throws(FileSystemError) -> stat {
    var status = stat()
    try Self.call("stat", path) { fstat(raw, &status) }
    return status
  }

  /// The status of `name` in this directory, not following a link (fstatat with `AT_SYMLINK_NOFOLLOW`).
  package func status(of name: String, path: String) throws(FileSystemError) -> stat {
    var status = stat()
    try Self.call("stat", path) { fstatat(raw, name, &status, AT_SYMLINK_NOFOLLOW) }
    return status
  }

  /// What the symbolic link this `O_PATH` descriptor holds points to.
  package func linkTarget(path: String) throws(FileSystemError) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = try Self.call("read the link", path) { readlinkat(raw, "", &buffer, buffer.count - 1) }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Creates the directory `name` in this directory.
  package func makeDirectory(_ name: String, mode: mode_t, path: String) throws(FileSystemError) {
    try Self.call("create directory", path) { mkdirat(raw, name, mode) }
  }

  /// Renames `name` to `newName`, both in this directory, replacing what `newName` named.
  package func rename(_ name: String, to newName: String, path: String) throws(FileSystemError) {
    try Self.call("rename", path) { renameat(raw, name, raw, newName) }
  }

  /// Removes the file `name` from this directory.
  package func unlink(_ name: String, path: String) throws(FileSystemError) {
    try Self.call("remove", path) { unlinkat(raw, name, 0) }
  }

  /// Gives the file this descriptor holds (an `O_PATH` one included) to `user` and `group`.
  package func changeOwner(to user: uid_t, group: gid_t, path: String) throws(FileSystemError) {
    try Self.call("change the owner of", path) { fchownat(raw, "", user, group, LinuxFlags.emptyPath) }
  }

  /// Sets the open file's mode.
  package func changeMode(to mode: mode_t, path: String) throws(FileSystemError) {
    try Self.call("chmod", path) { fchmod(raw, mode) }
  }

  /// Writes all of `bytes`.
  package func write(_ bytes: [UInt8], path: String) throws(FileSystemError) {
    var written = 0
    while written < bytes.count {
      written += try Self.call("write", path) {
        bytes[written...].withUnsafeBytes { Glibc.write(raw, $0.baseAddress, $0.count) }
      }
    }
  }

  /// Reads to the end, at most `limit` bytes (one more, where there are more, so that the caller sees it).
  package func read(upTo limit: Int, path: String) throws(FileSystemError) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while bytes.count <= limit {
      let wanted = min(chunk.count, limit + 1 - bytes.count)
      let count = try Self.call("read", path) {
        chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, wanted) }
      }
      if count == 0 { break }
      bytes += chunk[..<count]
    }
    return bytes
  }

  /// Makes what was written to the file (or, for a directory, the names made in it) survive a power loss.
  package func sync(path: String) throws(FileSystemError) {
    try Self.call("fsync", path) { fsync(raw) }
  }

  /// Checks that this process may do `access` (`W_OK`, `R_OK`) to the file this descriptor holds, as the kernel
  /// judges it (mode, ACLs, a read-only mount). Where the kernel cannot judge a descriptor (before Linux 5.8, whose
  /// faccessat knows no `AT_EMPTY_PATH`), it passes: the call that needs the access fails itself then.
  ///
  /// - Throws: `operation` on `path`, with the errno the kernel gave (EACCES, EROFS, …).
  package func requireAccess(_ access: Int32, for operation: String, path: String) throws(FileSystemError) {
    guard faccessat(raw, "", access, LinuxFlags.emptyPath | AT_EACCESS) != 0, errno != EINVAL, errno != ENOSYS
    else { return }
    throw .system(SystemCallError(operation, path, errno))
  }

  /// Takes `operation` (`LOCK_EX`, `LOCK_SH`) on the open file if no one holds a lock in its way, without waiting.
  ///
  /// - Returns: False when another open file description holds a lock in the way.
  package func lockIfFree(_ operation: Int32, path: String) throws(FileSystemError) -> Bool {
    do throws(FileSystemError) {
      try Self.call("lock", path) { flock(raw, operation | LOCK_NB) }
      return true
    } catch .system(let error) where error.code == EWOULDBLOCK {
      return false
    }
  }
}

extension stat {
  /// Whether two statuses are of the same file (device and inode).
  package func isSameFile(as other: stat) -> Bool { st_dev == other.st_dev && st_ino == other.st_ino }

  /// The file's type bits: `S_IFREG`, `S_IFDIR`, `S_IFLNK`, ….
  package var type: mode_t { st_mode & S_IFMT }

  /// Whether users other than the owner may change names in this directory: its group or others may write it.
  package var othersMayWrite: Bool { st_mode & (S_IWGRP | S_IWOTH) != 0 }

  /// The permission bits in octal, as `ls` and `chmod` write them: "0777", "1777".
  package var modeText: String {
    let text = String(st_mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - text.count)) + text
  }
}
