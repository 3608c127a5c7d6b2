// Every POSIX call on delivered secret files lives in this file (the calls on descriptors in SplintSystemCalls):
// opening and reading one beneath its directory, listing and probing the directory. The rest of the module speaks
// Swift types: paths as Strings, secrets as wiping `Data`, and `DeliveredFileError` failures with the errno they
// came from.

import Glibc
import SplintSystemCalls

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A failed system call on a delivered file or its directory, or a file that cannot be a secret.
enum DeliveredFileError: Error, Equatable, CustomStringConvertible {
  /// `operation` on `path` failed with errno `code`.
  case system(operation: String, path: String, code: Int32)
  /// `path` is not a regular file but `kind`.
  case notRegular(path: String, kind: FileKind)
  /// `path` holds more than `limit` bytes.
  case tooLarge(path: String, limit: Int)
  /// `path` was not read, for `reason`: it leads out of its directory.
  case refused(path: String, reason: String)

  /// What happened, in a sentence that names the path.
  var description: String {
    switch self {
    case .system(let operation, let path, let code): "\(operation) \(path) failed: \(String(cString: strerror(code)))."
    case .notRegular(let path, let kind): "\(path) is \(kind), not a regular file."
    case .tooLarge(let path, let limit):
      "\(path) holds more than \(limit) bytes, more than a secret may; it was not read."
    case .refused(_, let reason): "\(reason)."
    }
  }
}

extension DeliveredFileError {
  init(_ error: FileSystemError) {
    switch error {
    case .system(let error): self = .system(operation: error.operation, path: error.path, code: error.code)
    case .refused(let path, let reason): self = .refused(path: path, reason: reason)
    }
  }
}

/// Keeps a walk beneath the directory it starts from: a link that leads out of it, absolute or by `..` above it, is
/// refused, as `openat2`'s `RESOLVE_BENEATH` would; links that stay inside (Kubernetes' `..data`) are followed.
struct Beneath: PathRules {
  /// The file asked for, and its directory, for messages.
  let file: String
  let directory: String
  /// The directory's status, to tell it again: a directory on the way moved out meanwhile would make `..` lead
  /// elsewhere.
  let start: stat
  /// How many directories below the start the walk is.
  private var depth = 0

  init(file: String, directory: String, start: stat) {
    self.file = file
    self.directory = directory
    self.start = start
  }

  private var outside: FileSystemError {
    .refused(
      path: file,
      reason: """
        \(file) leads out of \(directory): a delivered secret is read only from the directory it is delivered to, \
        following links that stay inside it. Deliver the secret into \(directory) itself
        """)
  }

  mutating func enter(_ child: stat, at path: String, in directory: stat, at directoryPath: String) {
    if child.type == S_IFDIR { depth += 1 }
  }

  func follow(_ link: stat, at path: String, to target: String) throws(FileSystemError) {
    if target.hasPrefix("/") { throw outside }
  }

  mutating func ascend(from directory: stat, at path: String, to parent: stat) throws(FileSystemError) {
    guard depth > 0 else { throw outside }
    depth -= 1
    if depth == 0, !parent.isSameFile(as: start) { throw outside }  // coverage:ignore — a directory moved out meanwhile
  }
}

enum DeliveredFiles {
  /// Runs a system call that returns -1 and sets errno on failure, again while a signal interrupts it.
  @discardableResult
  private static func retrying<T: SignedInteger>(
    _ operation: String, _ path: String, _ call: () -> T
  ) throws(DeliveredFileError) -> T {
    try SystemCall.retrying(call) { DeliveredFileError.system(operation: operation, path: path, code: $0) }
  }

  /// The bytes of the regular file `name` in `directory`, or nil when nothing is there (a dangling link included).
  /// A name that holds another file by the time it is opened (someone replaced it between the look and the open)
  /// is looked at again, `tries` times in all.
  /// Links are followed only while they stay beneath `directory` (Kubernetes' `..data` and the like); one that leads
  /// out of it, absolute or through `..`, is refused. Looked up anew at every call. The returned `Data` is wiped
  /// when freed.
  ///
  /// - Throws: ``DeliveredFileError/notRegular(path:kind:)`` for anything but a regular file (looked at before it is
  ///   opened, so a FIFO never waits and a device is never opened); ``DeliveredFileError/tooLarge(path:limit:)``
  ///   past `limit` bytes; ``DeliveredFileError/refused(path:reason:)`` for a link out of the directory;
  ///   ``DeliveredFileError/system(operation:path:code:)`` when it cannot be looked up, opened or read.
  static func read(
    _ name: String, in directory: String, limit: Int, tries: Int = 3
  ) throws(DeliveredFileError) -> Data? {
    guard tries > 0 else { throw .system(operation: "open", path: directory + "/" + name, code: EAGAIN) }
    guard let end = try find(name, in: directory), let (_, status) = end.file else { return nil }
    if let kind = FileKind(mode: status.st_mode) { throw .notRegular(path: end.path, kind: kind) }
    if status.st_size > limit { throw .tooLarge(path: end.path, limit: limit) }
    let file = try attempt { () throws(FileSystemError) in
      try end.directory.open(end.name, O_RDONLY, ifSameAs: status, path: end.path)
    }
    if let file { return try readAll(file.raw, end.path, limit: limit) }
    return try read(name, in: directory, limit: limit, tries: tries - 1)  // coverage:ignore — a swap race
  }

  /// Where `name` leads beneath `directory`, or nil when nothing is there.
  private static func find(_ name: String, in directory: String) throws(DeliveredFileError) -> PathEnd? {
    let file = directory + "/" + name
    do throws(FileSystemError) {
      let start: Descriptor
      do throws(FileSystemError) {
        start = try Descriptor.open(directory, LinuxFlags.openPath | O_DIRECTORY)
      } catch .system(let error) {
        // Said of the file asked for: a directory on the way to it may not be searched, say.
        throw .system(SystemCallError(error.operation, file, error.code))
      }
      var rules = Beneath(file: file, directory: directory, start: try start.status(path: directory))
      return try PathWalk.walk(name, from: start, at: directory, rules: &rules)
    } catch .system(let error) where error.isAbsence {
      return nil
    } catch {
      throw DeliveredFileError(error)
    }
  }

  /// Runs a call on a descriptor, turning its failure into a ``DeliveredFileError``.
  private static func attempt<T>(_ body: () throws(FileSystemError) -> T) throws(DeliveredFileError) -> T {
    do throws(FileSystemError) { return try body() } catch { throw DeliveredFileError(error) }
  }

  /// Reads `descriptor` to its end into memory that is zeroed before it is freed. One byte more than `limit` is
  /// room to see that a file grew past the limit after fstat (or that procfs reported no size).
  private static func readAll(_ descriptor: Int32, _ path: String, limit: Int) throws(DeliveredFileError) -> Data {
    let capacity = limit + 1
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
    var count = 0
    defer {
      explicit_bzero(buffer, count)
      buffer.deallocate()
    }
    while count < capacity {
      let read = try retrying("read", path) { Glibc.read(descriptor, buffer + count, capacity - count) }
      if read == 0 { break }
      count += read
    }
    if count > limit { throw .tooLarge(path: path, limit: limit) }
    return Data.wiping(UnsafeRawBufferPointer(start: buffer, count: count))
  }

  /// Whether anything is at `name` beneath `directory` (false for a dangling link; true for a link that leads out,
  /// which a read then refuses, saying why).
  static func exists(_ name: String, in directory: String) -> Bool {
    do throws(DeliveredFileError) {
      return try find(name, in: directory)?.file != nil
    } catch {
      return true
    }
  }

  /// Whether anything is at `path`, following links (false for a dangling link).
  static func exists(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0
  }

  /// Why others than this process's user and root could change what the directory at `path` holds, if they could:
  /// its group or others may write it, or it belongs to another user. Nil when it cannot be looked at.
  static func exposure(of path: String) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    if status.othersMayWrite {
      return """
        \(path) may be written by users other than its owner (mode \(status.modeText)): any of them can put a secret \
        there, or a link (read only while it stays in the directory). Let only its owner write it (chmod go-w \(path))
        """
    }
    if status.st_uid != 0, status.st_uid != geteuid() {
      return """
        \(path) belongs to user \(status.st_uid), who is neither root nor this process's user (\(geteuid())), and can \
        change the secrets this program reads. Give it to root or to the program's user (chown)
        """
    }
    return nil
  }

  /// Whether `path` is a directory this process may list.
  ///
  /// - Throws: ``DeliveredFileError/system(operation:path:code:)``: ENOENT or ENOTDIR when it is not there or is
  ///   no directory, EACCES when it may not be listed.
  static func requireListable(_ path: String) throws(DeliveredFileError) {
    try closedir(openDirectory(path))
  }

  /// The names in the directory at `path`, `.` and `..` included.
  static func names(in path: String) throws(DeliveredFileError) -> [String] {
    let directory = try openDirectory(path)
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
    }
    return names
  }

  private static func openDirectory(_ path: String) throws(DeliveredFileError) -> OpaquePointer {
    var directory = opendir(path)
    while directory == nil, errno == EINTR { directory = opendir(path) }
    guard let directory else { throw .system(operation: "list", path: path, code: errno) }
    return directory
  }
}
