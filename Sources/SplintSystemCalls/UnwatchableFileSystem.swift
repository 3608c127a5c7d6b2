import CFileSystem

#if canImport(Glibc)
  import Glibc
#endif

/// A file system on which inotify does not see every change: one whose files other machines change (NFS, SMB, 9p,
/// AFS, cluster file systems), or a FUSE file system, whose files may change beneath the mount (bindfs, sshfs,
/// virtiofs, a network drive's client). inotify reports only what goes through this kernel's own mount; changes
/// made elsewhere are seen only by looking.
package struct UnwatchableFileSystem: Sendable, Equatable, CustomStringConvertible {
  /// Its name: "NFS", "SMB/CIFS", …; for FUSE, with what /proc/self/mountinfo says of it: "FUSE (sshfs)".
  package let name: String
  /// Whether it is a FUSE file system, whose files may change beneath the mount rather than on other machines.
  package let isFUSE: Bool

  init(name: String, isFUSE: Bool = false) {
    self.name = name
    self.isFUSE = isFUSE
  }

  /// What inotify misses there, in words.
  package var description: String {
    isFUSE
      ? "it is on \(name), where inotify does not see changes made beneath the mount (or on another machine)"
      : "it is on \(name), where inotify does not see changes made on other machines"
  }

  /// The file system of `path`'s nearest existing directory (the path itself, when it is one), if it is one where
  /// inotify does not see every change; nil for a local file system, or when nothing on the way can be looked at.
  package static func of(_ path: String) -> UnwatchableFileSystem? {
    var directory = path
    var magic = splint_statfs_type(directory)
    while magic < 0 {
      guard magic == -Int64(ENOENT) || magic == -Int64(ENOTDIR), directory != "/", !directory.isEmpty else {
        return nil
      }
      directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
      if directory.isEmpty { directory = "/" }
      magic = splint_statfs_type(directory)
    }
    return kind(magic: Int(magic), directory: directory)
  }

  /// The file system with `statfs` magic number `magic` (linux/magic.h), if inotify misses changes there; FUSE's
  /// magic is told apart through the mount table, where `fuseblk` (a local disk's driver, such as ntfs-3g, whose
  /// every change goes through this mount) is not one.
  package static func kind(magic: Int, directory: String) -> UnwatchableFileSystem? {
    switch UInt32(truncatingIfNeeded: magic) {
    case 0x6969: UnwatchableFileSystem(name: "NFS")
    case 0x517B, 0xFF53_4D42, 0xFE53_4D42: UnwatchableFileSystem(name: "SMB/CIFS")
    case 0x0102_1997: UnwatchableFileSystem(name: "9p")
    case 0x5346_414F, 0x6B41_4653: UnwatchableFileSystem(name: "AFS")
    case 0x00C3_6400: UnwatchableFileSystem(name: "Ceph")
    case 0x0BD0_0BD0: UnwatchableFileSystem(name: "Lustre")
    case 0x4750_4653: UnwatchableFileSystem(name: "GPFS")
    case 0x0116_1970: UnwatchableFileSystem(name: "GFS2")
    case 0x7461_636F: UnwatchableFileSystem(name: "OCFS2")
    case 0x7375_7245: UnwatchableFileSystem(name: "Coda")
    case 0x1366_1366: UnwatchableFileSystem(name: "OrangeFS")
    case 0x1983_0326: UnwatchableFileSystem(name: "BeeGFS")
    case 0x786F_4256: UnwatchableFileSystem(name: "a VirtualBox shared folder (vboxsf)")
    case 0x6573_5546: fuse(mountType(of: directory))
    default: nil
    }
  }

  /// A FUSE file system of the mount table's `type`: `fuse.sshfs` is sshfs, `virtiofs` itself, plain `fuse` (or
  /// unknown) FUSE; nil for `fuseblk`.
  package static func fuse(_ type: String?) -> UnwatchableFileSystem? {
    switch type {
    case "fuseblk": nil
    case let type? where type.hasPrefix("fuse."):
      UnwatchableFileSystem(name: "FUSE (\(type.dropFirst(5)))", isFUSE: true)
    case let type? where type != "fuse": UnwatchableFileSystem(name: "FUSE (\(type))", isFUSE: true)
    default: UnwatchableFileSystem(name: "FUSE", isFUSE: true)
    }
  }

  /// The file system type /proc/self/mountinfo gives the mount that holds `directory` (found by its device
  /// number, which `stat` gives every file of a mount), such as `fuse.sshfs`; nil when it cannot tell.
  package static func mountType(of directory: String) -> String? {
    var status = stat()
    guard stat(directory, &status) == 0 else { return nil }
    let device = "\(splint_device_major(UInt64(status.st_dev))):\(splint_device_minor(UInt64(status.st_dev)))"
    // Each line: ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS
    return SystemCall.text(of: "/proc/self/mountinfo")?.split(separator: "\n").lazy.compactMap { line -> String? in
      let fields = line.split(separator: " ")
      guard fields.count > 2, fields[2] == device, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count
      else { return nil }
      return String(fields[dash + 1])
    }.first
  }
}
