// Every POSIX call on delivered secret files lives in this file: opening and reading one, listing and probing their
// directory. The rest of the module speaks Swift types: paths as Strings, secrets as wiping `Data`, and
// `DeliveredFileError` failures with the errno they came from.

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

  /// What happened, in a sentence that names the path.
  var description: String {
    switch self {
    case .system(let operation, let path, let code): "\(operation) \(path) failed: \(String(cString: strerror(code)))."
    case .notRegular(let path, let kind): "\(path) is \(kind), not a regular file."
    case .tooLarge(let path, let limit):
      "\(path) holds more than \(limit) bytes, more than a secret may; it was not read."
    }
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

  /// The bytes of the regular file at `path`, following symbolic links, or nil when nothing is there (a dangling
  /// link included). The path is resolved anew at every call. The returned `Data` is wiped when freed.
  ///
  /// - Throws: ``DeliveredFileError/notRegular(path:kind:)`` for anything but a regular file (a FIFO is opened
  ///   without blocking, and never read); ``DeliveredFileError/tooLarge(path:limit:)`` past `limit` bytes;
  ///   ``DeliveredFileError/system(operation:path:code:)`` when it cannot be opened or read.
  static func read(_ path: String, limit: Int) throws(DeliveredFileError) -> Data? {
    let descriptor: Int32
    do throws(DeliveredFileError) {
      descriptor = try retrying("open", path) { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
    } catch .system(_, _, let code) where code == ENOENT || code == ENOTDIR {
      return nil
    } catch {
      // open refuses a socket (ENXIO) before anything can be learnt from the descriptor: say what is there.
      throw kind(at: path).map { .notRegular(path: path, kind: $0) } ?? error
    }
    defer { close(descriptor) }
    var status = stat()
    try retrying("stat", path) { fstat(descriptor, &status) }
    if let kind = FileKind(mode: status.st_mode) { throw .notRegular(path: path, kind: kind) }
    if status.st_size > limit { throw .tooLarge(path: path, limit: limit) }
    return try readAll(descriptor, path, limit: limit)
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

  /// What is at `path`, following links, when it is not a regular file; nil for a regular file or nothing.
  private static func kind(at path: String) -> FileKind? {
    var status = stat()
    return stat(path, &status) == 0 ? FileKind(mode: status.st_mode) : nil
  }

  /// Whether anything is at `path`, following links (false for a dangling link).
  static func exists(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0
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
