// Every socket call lives in this file: a process's presence, published as a Unix datagram socket bound to a name
// in a directory, which others may test (connect) but not hold, block or fill.

#if canImport(Glibc)
  package import Glibc
#endif

/// A process's presence at a name: a Unix datagram socket bound there for as long as the process keeps it, which
/// anyone the socket file's mode lets in can test with `connect(2)`: a process holds it (connected), or none does
/// (`ECONNREFUSED`: the file outlived the process that bound it, which the kernel closed when it ended or died).
///
/// Unlike a lock on a file others may open, a test leaves nothing behind that could be held: a datagram socket has
/// no queue of connections, connecting takes nothing of the owner's, and the owner shuts its receiving side, so
/// that nothing sent to it is kept (a sender gets `EPIPE`). The socket file's modification time is moved by
/// ``touch(_:in:path:)``: when the owner was last seen.
///
/// Names are reached through `/proc/self/fd/N`, so that the 108 bytes of `sun_path` bound neither the directory's
/// path nor the name: a socket is bound to a short name in the directory held open, then renamed to its own.
package enum PresenceSocket {
  /// Binds a new socket to `name` in `directory` (replacing what the name held), with `mode` (who may test it), and
  /// returns it: the presence lasts as long as the descriptor. `path` names it in messages.
  package static func publish(
    _ name: String, in directory: Descriptor, mode: mode_t, path: String
  ) throws(FileSystemError) -> Descriptor {
    let socket = try Descriptor(
      taking: SystemCall.retrying(
        { Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) },
        orThrow: { FileSystemError.system(SystemCallError("make a socket for", path, $0)) }))
    let temporary = ".presence.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
    try withAddress("/proc/self/fd/\(directory.raw)/\(temporary)") { (address, length) throws(FileSystemError) in
      try SystemCall.retrying(
        { bind(socket.raw, address, length) },
        orThrow: { FileSystemError.system(SystemCallError("bind a socket to", path, $0)) })
    }
    var renamed = false
    defer { if !renamed { try? directory.unlink(temporary, path: path) } }
    try SystemCall.retrying(
      { fchmodat(directory.raw, temporary, mode, 0) },
      orThrow: { FileSystemError.system(SystemCallError("chmod", path, $0)) })
    // Nothing sent to it is read: its receiving side is shut, so that a sender's datagrams are refused, not kept.
    _ = shutdown(socket.raw, Int32(SHUT_RD))
    try directory.rename(temporary, to: name, path: path)
    renamed = true
    return socket
  }

  /// Whether a process holds the socket `file` (an `O_PATH` descriptor of a socket file) now: true when a connection
  /// is taken, false when it is refused (no process has it bound) or cannot be tried.
  package static func isHeld(_ file: Descriptor) -> Bool {
    let socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { return false }  // coverage:ignore — no descriptor left for a socket
    defer { close(socket) }
    let connected = try? withAddress("/proc/self/fd/\(file.raw)") { (address, length) throws(FileSystemError) in
      try SystemCall.retrying(
        { connect(socket, address, length) }, orThrow: { FileSystemError.system(SystemCallError("connect", "", $0)) })
    }
    return connected != nil
  }

  /// Sets the modification time of the socket file `name` in `directory` to now: its owner is there.
  package static func touch(_ name: String, in directory: Descriptor, path: String) throws(FileSystemError) {
    try SystemCall.retrying(
      { utimensat(directory.raw, name, nil, AT_SYMLINK_NOFOLLOW) },
      orThrow: { FileSystemError.system(SystemCallError("touch", path, $0)) })
  }

  /// Runs `body` with `text` as a Unix socket address (which these short paths always fit).
  @discardableResult
  private static func withAddress<T, E: Error>(
    _ text: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> T
  ) throws(E) -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(text.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      buffer.copyBytes(from: bytes)
      buffer[bytes.count] = 0
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    return try withUnsafePointer(to: &address) { (pointer) throws(E) -> T in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(E) -> T in
        try body(address, length)
      }
    }
  }
}
