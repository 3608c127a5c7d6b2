import Glibc
import SplintSystemCalls

/// Whose files a settings path may lead to: the rules every look-up of a settings file follows, step by step (see
/// `PathWalk`), so that a user with fewer rights than this process cannot steer it into files that are not theirs.
///
/// Root, and this process's own user, are trusted. Any other user who has chosen where the path leads (by owning a
/// directory on it, whose names they choose, or a symbolic link, whose target they choose) is its *steerer*:
/// 1. From then on the path may lead only to the steerer's own files, directories and links, and through root's
///    directories and links (which the steerer cannot change); never to root's files, the caller's, or a third
///    user's. This is systemd's `CHASE_SAFE` rule, with root's directories on the way allowed so that a user's
///    absolute link into their own tree works for root too.
/// 2. The directory the settings file is in must then be the steerer's, or one that others may write: this process
///    never creates a file, a lock or a directory in someone else's private directory on the steerer's behalf.
/// 3. In a directory that others may write with the sticky bit (such as `/tmp`), only what belongs to this
///    process's user or to the directory's owner is used (the kernel's `protected_symlinks` and
///    `protected_regular`, here whatever the kernel's settings, and for directories too).
/// 4. In a directory that others may write, a file or link of root's or this process's user with more than one
///    hard link is refused: someone else may have linked it there.
///
/// Where a directory on the way is missing, a write makes it (``makesDirectories``): with mode 0700, and when root
/// makes it in a directory of another user, it is given to that user.
struct OwnershipRules: PathRules {
  /// This process's user.
  let caller = geteuid()
  /// Whether missing directories on the way are made (writes), or end the walk (reads).
  let makesDirectories: Bool
  /// The user, neither root nor the caller, whose choices the path follows, and what of theirs led there (for
  /// messages): nil while the path is the caller's and root's alone.
  private(set) var steerer: (user: uid_t, place: String)?

  init(makesDirectories: Bool) {
    self.makesDirectories = makesDirectories
  }

  /// Whether `user` is root or the caller.
  private func isTrusted(_ user: uid_t) -> Bool { user == 0 || user == caller }

  mutating func enter(
    _ child: stat, at path: String, in directory: stat, at directoryPath: String
  ) throws(FileSystemError) {
    if directory.othersMayWrite {
      // Rule 4, then rule 3; the name is then what its owner made it.
      if child.type != S_IFDIR, isTrusted(child.st_uid), child.st_nlink > 1 {
        throw .refused(
          path: path,
          reason: """
            \(path) has \(child.st_nlink) links, in \(directoryPath), which users other than its owner may write \
            (mode \(directory.modeText)): another link may be someone else's file. Remove it, or let only the \
            directory's owner write \(directoryPath)
            """)
      }
      if directory.st_mode & S_ISVTX != 0, child.st_uid != caller, child.st_uid != directory.st_uid {
        throw .refused(
          path: path,
          reason: """
            \(path) belongs to \(Users.name(child.st_uid)), in \(directoryPath), a directory that others may \
            write with the sticky bit set (as /tmp): there, only what belongs to \(Users.name(caller)) (this \
            process) or to the directory's owner, \(Users.name(directory.st_uid)), is used. Use a file in a \
            directory of your own
            """)
      }
      steer(by: child.st_uid, place: "\(path), which \(Users.name(child.st_uid)) may have put in \(directoryPath)")
    } else {
      steer(by: directory.st_uid, place: "the directory \(directoryPath) of \(Users.name(directory.st_uid))")
    }
    try requireSteerers(child, at: path)
  }

  mutating func follow(_ link: stat, at path: String, to target: String) throws(FileSystemError) {
    steer(by: link.st_uid, place: "the symbolic link \(path) of \(Users.name(link.st_uid))")
  }

  func ascend(from directory: stat, at path: String, to parent: stat) throws(FileSystemError) {
    try requireSteerers(parent, at: path + "/..")
  }

  func makeDirectory(
    _ name: String, at path: String, in directory: Descriptor, _ status: stat, at directoryPath: String
  ) throws(FileSystemError) -> Bool {
    guard makesDirectories else { return false }
    try requireWorkable(status, at: directoryPath)
    do throws(FileSystemError) {
      try directory.makeDirectory(name, mode: 0o700, path: path)
    } catch .system(let error) where error.code == EEXIST {
      return true  // coverage:ignore — made by another process since the look; the walk judges it as any other
    }
    // Root gives what it makes in another user's directory to that user: this directory, if it is still the empty
    // one just made (someone who may change names here could have put another in its place).
    if let owner = Self.creationOwner(in: status) {
      let made = try directory.open(name, LinuxFlags.openPath | O_DIRECTORY | O_NOFOLLOW, path: path)
      let madeStatus = try made.status(path: path)
      if madeStatus.st_uid == caller, madeStatus.st_nlink == 2 {
        try made.changeOwner(to: owner.user, group: owner.group, path: path)
      }
    }
    return true
  }

  /// Who gets what this process creates in `directory`: for root in another user's directory, that user (and the
  /// directory's group); nil for the process's own user and group.
  static func creationOwner(in directory: stat) -> (user: uid_t, group: gid_t)? {
    geteuid() == 0 && directory.st_uid != 0 ? (directory.st_uid, directory.st_gid) : nil
  }

  /// Rule 2: the settings file's directory, where a write makes its lock and temporary files, must be the
  /// steerer's, or one others may write, when a steerer led there.
  func requireWorkable(_ directory: stat, at path: String) throws(FileSystemError) {
    guard let steerer, directory.st_uid != steerer.user, !directory.othersMayWrite else { return }
    throw .refused(
      path: path,
      reason: """
        \(path) belongs to \(Users.name(directory.st_uid)), but \(steerer.place) leads to it: a settings file is \
        used only in a directory of the user who chose the way to it. Point the store at a file in a directory of \
        \(Users.name(steerer.user)), or remove what leads elsewhere
        """)
  }

  /// Makes `user` the steerer, unless they are trusted or a steerer chose the way already (a second one is
  /// refused by ``requireSteerers``, as the first did not choose what the second owns).
  private mutating func steer(by user: uid_t, place: String) {
    if steerer == nil, !isTrusted(user) { steerer = (user, place) }
  }

  /// Rule 1: once a steerer chose the way, only their own things, and root's directories and links, are used.
  private func requireSteerers(_ child: stat, at path: String) throws(FileSystemError) {
    guard let steerer, child.st_uid != steerer.user else { return }
    if child.st_uid == 0, child.type == S_IFDIR || child.type == S_IFLNK { return }
    throw .refused(
      path: path,
      reason: """
        \(path) belongs to \(Users.name(child.st_uid)), but \(steerer.place) leads to it: what a user controls may \
        lead only to that user's own files (and through root's directories). Point the store at a file of \
        \(Users.name(steerer.user)), or remove what leads elsewhere; if \(path) is theirs, give it to them (chown)
        """)
  }
}

/// Names of users for messages.
enum Users {
  /// "root", "user 1000 (alice)", or "user 1000" for a user the password database does not know.
  static func name(_ user: uid_t) -> String {
    if user == 0 { return "root" }
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(user, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name
    else { return "user \(user)" }
    return "user \(user) (\(String(cString: name)))"
  }

  /// The user ID of the user called `name`, or nil where the password database has no such user.
  static func id(named name: String) -> uid_t? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
    return entry.pw_uid
  }
}
