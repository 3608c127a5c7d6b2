#if canImport(Glibc)
  package import Glibc
#endif

/// What a path names when it is not a regular file.
package enum FileKind: Sendable, Equatable, CustomStringConvertible {
  case directory, fifo, socket, characterDevice, blockDevice, symbolicLink

  /// The kind of file `mode` (from stat or lstat) describes, or nil for a regular file.
  package init?(mode: mode_t) {
    switch mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: self = .directory
    case S_IFIFO: self = .fifo
    case S_IFSOCK: self = .socket
    case S_IFBLK: self = .blockDevice
    case S_IFLNK: self = .symbolicLink
    default: self = .characterDevice  // S_IFCHR: nothing else is left
    }
  }

  package var description: String {
    switch self {
    case .directory: "a directory"
    case .fifo: "a FIFO (named pipe)"
    case .socket: "a socket"
    case .characterDevice: "a character device"
    case .blockDevice: "a block device"
    case .symbolicLink: "a symbolic link"
    }
  }
}
