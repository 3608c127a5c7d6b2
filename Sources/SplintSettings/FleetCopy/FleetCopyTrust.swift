import Glibc
import SplintSystemCalls

extension FleetCopy {
  /// What a judgement of a copy's trust found (``trust(ofCopyAt:readAs:)``).
  enum Trust: Equatable {
    /// The copy may enforce keys.
    case trusted
    /// It may not, for this reason (a phrase: "its directory /x belongs to user 1000 (alice), not root").
    case untrusted(String)
    /// The file at the copy's path is no longer the one whose content is in use: judged again once that is read.
    case replaced
  }

  /// Who may have written a system copy: root, and the follower's system user.
  private static func mayWriteSystemCopies(_ user: uid_t) -> Bool { user == 0 || user == systemUserID }

  /// "root", or "root or splint-fleet" where the system has that user.
  private static var systemOwners: String { systemUserID == nil ? "root" : "root or \(systemUser)" }

  /// Whether the copy at `path`, whose content in use was read from the file `identity` names, may enforce keys:
  /// only a file that no user but root and the follower's system user can have written, as it was read.
  ///
  /// The copy's directory is found as every file of the module is (`PathWalk`, under `OwnershipRules`), from the
  /// root, one component at a time on descriptors, and every step on the way must be one that no one else can
  /// change: each directory and link belongs to root or the system user, and a directory others may write has the
  /// sticky bit (as `/tmp`: no one else can move root's things in it). The copy's own directory may be written by
  /// its owner alone. The copy is then looked at in that directory by its own name, without following a link (a
  /// follower writes the file itself there): a regular file of root or the system user that neither group nor
  /// others may write, judged with `fstat` on the descriptor that names it, and only if it is the very file
  /// (device, inode, owner, size and times) whose content is in use; otherwise ``Trust/replaced``.
  static func trust(ofCopyAt path: String, readAs identity: FileIdentity) -> Trust {
    let (directoryPath, name) = (FileIO.directory(of: path), FileIO.name(of: path))
    var rules = TrustRules()
    let directory: (descriptor: Descriptor, status: stat)
    do throws(FileSystemError) {
      let root = try Descriptor.root()
      let rootStatus = try root.status(path: "/")
      if !mayWriteSystemCopies(rootStatus.st_uid) || rootStatus.othersMayWrite {
        return .untrusted("/ may be changed by others than \(systemOwners)")  // coverage:ignore — a broken system
      }
      guard let found = try PathWalk.walk(directoryPath, from: root, at: "", rules: &rules).file else {
        return .untrusted("its directory \(directoryPath) cannot be found")  // coverage:ignore — read a moment ago
      }
      directory = found
    } catch {
      switch error {
      case .refused(_, let reason): return .untrusted(reason)
      // Root walks any directory; a name missing on the way ends the walk as refused or not found.
      case .system(let error):
        let reason = String(cString: strerror(error.code))  // coverage:ignore — an I/O error on the way
        return .untrusted("\(directoryPath) cannot be looked at (\(reason))")  // coverage:ignore — an I/O error
      }
    }
    guard directory.status.type == S_IFDIR else { return .untrusted("\(directoryPath) is not a directory") }
    // Its owner was judged by TrustRules as the walk entered it (root or splint-fleet); what is left is its mode.
    guard !directory.status.othersMayWrite else {
      return .untrusted(
        "its directory \(directoryPath) may be written by others than its owner (mode \(directory.status.modeText))")
    }
    let status: stat
    do throws(FileSystemError) {
      status = try directory.descriptor.open(name, LinuxFlags.openPath | O_NOFOLLOW, path: path).status(path: path)
    } catch {
      return .replaced  // coverage:ignore — the copy removed between its read and this look: a race
    }
    guard FileIdentity(status) == identity else { return .replaced }
    guard status.type != S_IFLNK else {
      return .untrusted("it is a symbolic link, not the file a follower writes in \(directoryPath)")
    }
    guard status.type == S_IFREG else { return .untrusted("it is not a regular file") }
    guard mayWriteSystemCopies(status.st_uid) else {
      return .untrusted("it belongs to \(Users.name(status.st_uid)), not \(systemOwners)")
    }
    guard status.st_mode & 0o022 == 0 else {
      return .untrusted("it may be written by others than its owner (mode \(status.modeText))")
    }
    return .trusted
  }

  /// The rules of the walk to a copy's directory when its trust is judged: `OwnershipRules` (which every look-up
  /// follows), and then nothing on the way that anyone but root and the system user could change.
  struct TrustRules: PathRules {
    private var ownership = OwnershipRules(makesDirectories: false)

    mutating func enter(
      _ child: stat, at path: String, in directory: stat, at directoryPath: String
    ) throws(FileSystemError) {
      try ownership.enter(child, at: path, in: directory, at: directoryPath)
      if directory.othersMayWrite, directory.st_mode & S_ISVTX == 0 {
        throw .refused(
          path: path,
          reason:
            "\(directoryPath), on the way to it, may be written by others than its owner (mode \(directory.modeText))")
      }
      guard FleetCopy.mayWriteSystemCopies(child.st_uid) else {
        let what = child.type == S_IFLNK ? "the symbolic link \(path)" : path
        throw .refused(
          path: path,
          reason: "\(what), on the way to it, belongs to \(Users.name(child.st_uid)), not \(FleetCopy.systemOwners)")
      }
    }

    // A link on the way to the copy's directory, and a link's "..": not tested (the tests use real directories).
    mutating func follow(  // coverage:ignore — a link on the way
      _ link: stat, at path: String, to target: String  // coverage:ignore — a link on the way
    ) throws(FileSystemError) {  // coverage:ignore — a link on the way
      try ownership.follow(link, at: path, to: target)  // coverage:ignore — a link on the way
    }  // coverage:ignore — a link on the way

    func ascend(  // coverage:ignore — a link's ".."
      from directory: stat, at path: String, to parent: stat  // coverage:ignore — a link's ".."
    ) throws(FileSystemError) {  // coverage:ignore — a link's ".."
      try ownership.ascend(from: directory, at: path, to: parent)  // coverage:ignore — a link's ".."
    }  // coverage:ignore — a link's ".."
  }
}
