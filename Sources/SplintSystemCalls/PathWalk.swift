#if canImport(Glibc)
  package import Glibc
#endif

/// Why a call on a file or a walk failed: a system call failed, or the walk's rules refused a step.
package enum FileSystemError: Error, Equatable, Sendable {
  /// A system call failed (ENOENT and ENOTDIR: nothing is there).
  case system(SystemCallError)
  /// The rules refused to use `path`, for `reason`: a sentence that names what was found there and the rule.
  case refused(path: String, reason: String)
}

/// What a walk may do, judged at each step before it is taken: the walk holds every directory open and looks at
/// what each name is on the descriptor it opened, so what the rules judge is what the walk then uses.
package protocol PathRules {
  /// `child` (its status, not following a link), named `path`, found in `directory` (named `directoryPath`), is
  /// about to be used: entered, followed, or ended at.
  mutating func enter(
    _ child: stat, at path: String, in directory: stat, at directoryPath: String
  ) throws(FileSystemError)

  /// The symbolic link `link`, named `path`, is about to be followed to `target`.
  mutating func follow(_ link: stat, at path: String, to target: String) throws(FileSystemError)

  /// `..` is about to lead from `directory` (named `path`) to `parent`.
  mutating func ascend(from directory: stat, at path: String, to parent: stat) throws(FileSystemError)

  /// The directory `name` (to be named `path`) is missing on the way: make it in `directory` and return true, or
  /// return false to end the walk there (ENOENT). The walk then looks it up, and shows it to ``enter``, as any other.
  mutating func makeDirectory(
    _ name: String, at path: String, in directory: Descriptor, _ status: stat, at directoryPath: String
  ) throws(FileSystemError) -> Bool
}

extension PathRules {
  /// Makes nothing: a missing directory ends the walk.
  package mutating func makeDirectory(
    _ name: String, at path: String, in directory: Descriptor, _ status: stat, at directoryPath: String
  ) throws(FileSystemError) -> Bool { false }
}

/// Where a walk ended: the directory the last name is in, held open, and what that name is in it now.
package struct PathEnd: Sendable {
  /// The directory, as an `O_PATH` descriptor.
  package let directory: Descriptor
  /// The directory's status.
  package let directoryStatus: stat
  /// The directory's path as the walk found it (links resolved), for messages.
  package let directoryPath: String
  /// The last name, which is no symbolic link.
  package let name: String
  /// What has that name: an `O_PATH` descriptor and its status; nil when nothing has.
  package let file: (descriptor: Descriptor, status: stat)?

  /// The path of the last name, as the walk found it.
  package var path: String { PathWalk.join(directoryPath, name) }
}

/// Resolves a path one component at a time, the way the kernel would, but from descriptors and under rules: each
/// directory is opened relative to the one before (`O_PATH | O_NOFOLLOW`), each symbolic link is read from the
/// descriptor of the link itself and followed by hand, and every step is shown to a ``PathRules`` first. Names
/// swapped by someone else while it walks can only make it see another file, which its rules then judge; they
/// cannot make a step already judged lead elsewhere. (systemd's `chase()` works the same way.)
package enum PathWalk {
  /// The most symbolic links a walk follows, as Linux's own limit (ELOOP beyond).
  package static let linkLimit = 40

  /// Walks `path` (absolute or not: either way from `start`, unless a link is absolute) and returns where it ends.
  ///
  /// - Parameters:
  ///   - path: The components to walk: `a/b/c`; `.`, `..` and empty components mean what they do in a path.
  ///   - start: The directory to start from, as a descriptor; `startPath` names it in messages ("" for `/`).
  ///   - rules: Judge each step, and make directories that are missing on the way (or not).
  /// - Throws: ``FileSystemError/refused(path:reason:)`` for a step the rules refuse;
  ///   ``FileSystemError/system(_:)``: ENOENT or ENOTDIR for a directory on the way that is missing or no directory,
  ///   ELOOP past ``linkLimit`` links, EISDIR when the path ends with `.` or `..`, or another failed call.
  package static func walk(
    _ path: String, from start: Descriptor, at startPath: String, rules: inout some PathRules
  ) throws(FileSystemError) -> PathEnd {
    var directory = start
    var directoryPath = startPath
    var directoryStatus = try directory.status(path: startPath.isEmpty ? "/" : startPath)
    var todo = Array(path.split(separator: "/").reversed())
    var links = 0
    while let component = todo.popLast().map(String.init) {
      if component == "." || component == ".." {
        if component == ".." {
          let parent = try directory.open("..", LinuxFlags.openPath | O_DIRECTORY | O_NOFOLLOW, path: directoryPath)
          let parentStatus = try parent.status(path: directoryPath)
          try rules.ascend(from: directoryStatus, at: directoryPath, to: parentStatus)
          (directory, directoryStatus) = (parent, parentStatus)
          directoryPath = parentPath(of: directoryPath)
        }
        guard !todo.isEmpty else {
          throw .system(SystemCallError("open", directoryPath.isEmpty ? "/" : directoryPath, EISDIR))
        }
        continue
      }
      let childPath = join(directoryPath, component)
      var child: Descriptor
      do throws(FileSystemError) {
        child = try directory.open(component, LinuxFlags.openPath | O_NOFOLLOW, path: childPath)
      } catch .system(let error) where error.code == ENOENT {
        if todo.isEmpty {
          return PathEnd(
            directory: directory, directoryStatus: directoryStatus, directoryPath: directoryPath, name: component,
            file: nil)
        }
        guard try rules.makeDirectory(component, at: childPath, in: directory, directoryStatus, at: directoryPath)
        else { throw .system(error) }
        child = try directory.open(component, LinuxFlags.openPath | O_NOFOLLOW, path: childPath)
      }
      let childStatus = try child.status(path: childPath)
      try rules.enter(childStatus, at: childPath, in: directoryStatus, at: directoryPath)
      switch childStatus.type {
      case S_IFLNK:
        links += 1
        guard links <= linkLimit else { throw .system(SystemCallError("open", childPath, ELOOP)) }
        let target = try child.linkTarget(path: childPath)
        try rules.follow(childStatus, at: childPath, to: target)
        if target.hasPrefix("/") {
          directory = try Descriptor.root()
          directoryStatus = try directory.status(path: "/")
          directoryPath = ""
        }
        todo += target.split(separator: "/").reversed()
      case _ where todo.isEmpty:
        return PathEnd(
          directory: directory, directoryStatus: directoryStatus, directoryPath: directoryPath, name: component,
          file: (child, childStatus))
      case S_IFDIR:
        (directory, directoryStatus, directoryPath) = (child, childStatus, childPath)
      default:
        throw .system(SystemCallError("open", childPath, ENOTDIR))
      }
    }
    // Only an empty path (or "/") ends here, naming the start itself.
    throw .system(SystemCallError("open", startPath.isEmpty ? "/" : startPath, EISDIR))
  }

  /// `directory/name`, where the root directory is "".
  package static func join(_ directory: String, _ name: String) -> String { directory + "/" + name }

  /// The path above `path`, lexically ("" for the root).
  private static func parentPath(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
  }
}
