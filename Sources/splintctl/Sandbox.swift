#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// A throw-away place to run things in: a directory of its own with XDG directories (and a HOME when asked) inside,
/// an environment that names them and has no display and no session bus of the caller's, and an end that stops every
/// process that environment reached and removes the directory.
///
/// `splintctl sandbox` runs its command in one; the failure-state tests run their private D-Bus sessions in one too.
package final class Sandbox: Sendable {
  /// Why a sandbox could not be made.
  package struct Failure: Error, CustomStringConvertible {
    /// What went wrong, and where.
    package let description: String
  }

  /// The directory everything lives in.
  package let root: String

  /// The caller's environment with XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR
  /// and TMPDIR (and HOME when asked) inside ``root``, and DISPLAY, WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS and
  /// GNOME_KEYRING_CONTROL removed, so that nothing reaches the caller's session or prompts on its screen; and
  /// SPLINT_SANDBOX set to ``root``, so that what runs there can tell.
  package let environment: [String: String]

  /// Makes the directories, under TMPDIR (or /tmp).
  ///
  /// - Parameter home: Whether HOME is a throw-away directory too.
  package init(home: Bool) throws(Failure) {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(base)/splintctl-sandbox.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      throw Failure(description: "cannot make a directory in \(base): \(String(cString: strerror(errno))).")
    }
    root = String(cString: made)
    var environment = ProcessInfo.processInfo.environment
    for name in ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL"] {
      environment[name] = nil
    }
    var directories = [
      ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
      ("XDG_STATE_HOME", "state"), ("XDG_RUNTIME_DIR", "run"), ("TMPDIR", "tmp"),
    ]
    if home { directories.append(("HOME", "home")) }
    for (name, directory) in directories {
      let path = "\(root)/\(directory)"
      mkdir(path, 0o700)
      environment[name] = path
    }
    // So that a test can tell it runs here, with a Secret Service of its own, and turn itself on only here.
    environment["SPLINT_SANDBOX"] = root
    self.environment = environment
  }

  /// Ends every process whose environment names ``root`` (a bus, keyring daemons, anything a command left running,
  /// however it ended: a daemon stopped with SIGSTOP too), unmounts what they mounted beneath ``root`` (the document
  /// portal's FUSE file system in `run/doc`), then removes ``root``.
  ///
  /// The processes get SIGTERM first, and a second to act on it, so that a FUSE daemon unmounts its own file system
  /// as it exits; what still runs then gets SIGKILL. A mount left behind is detached (or, for a user's FUSE mount,
  /// unmounted with fusermount). Nothing is removed beneath a mount that cannot be undone: removing would reach into
  /// the mounted file system; the mount is named on standard error instead.
  ///
  /// - Returns: The mount points that are left, and the directory with them (empty when everything is gone).
  @discardableResult
  package func end() -> [String] {
    let running = Self.processes(naming: root)
    for pid in running {
      kill(pid, SIGTERM)
      kill(pid, SIGCONT)
    }
    let deadline = ContinuousClock.now + .seconds(1)
    while !Self.processes(naming: root).isEmpty, ContinuousClock.now < deadline { usleep(10_000) }
    for pid in Self.processes(naming: root) { kill(pid, SIGKILL) }
    let left = Self.unmount(beneath: root)
    guard left.isEmpty else {
      for mount in left {
        Output.error("splintctl: cannot unmount \(mount), so \(root) is left in place; unmount it, then remove it.")
      }
      return left
    }
    try? FileManager.default.removeItem(atPath: root)
    return []
  }

  /// Unmounts every mount at or beneath `directory`, the deepest first, and returns those that are still there.
  static func unmount(beneath directory: String) -> [String] {
    for mount in mounts(beneath: directory) where umount2(mount, Int32(MNT_DETACH)) != 0 {
      // A FUSE mount of this (unprivileged) user: only fusermount, which is setuid root, may take it down.
      for tool in ["/usr/bin/fusermount3", "/usr/bin/fusermount", "/bin/fusermount"]
      where FileManager.default.isExecutableFile(atPath: tool) {
        if run([tool, "-u", "-z", mount]) == 0 { break }
      }
    }
    return mounts(beneath: directory)
  }

  /// Runs `arguments` (a program's path first) with standard output and error discarded, and returns its exit
  /// status; nil when it could not start.
  private static func run(_ arguments: [String]) -> Int32? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
  }

  /// The mount points at or beneath `directory` in this process's mount namespace, the deepest first.
  package static func mounts(beneath directory: String) -> [String] {
    let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
    let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
    return table.split(separator: "\n").compactMap { line -> String? in
      // The fifth field is the mount point, with space, tab, newline and backslash written as \ooo.
      let fields = line.split(separator: " ")
      guard fields.count > 4 else { return nil }
      let point = unescaped(fields[4])
      return point == resolved || point.hasPrefix(resolved + "/") ? point : nil
    }
    .sorted { $0.count > $1.count }
  }

  /// A mountinfo field with its octal escapes (`\040` for a space) turned back into bytes.
  private static func unescaped(_ field: Substring) -> String {
    var bytes: [UInt8] = []
    var rest = Array(field.utf8)[...]
    while let byte = rest.popFirst() {
      if byte == UInt8(ascii: "\\"), rest.count >= 3,
        let value = UInt8(String(decoding: rest.prefix(3), as: UTF8.self), radix: 8)
      {
        bytes.append(value)
        rest = rest.dropFirst(3)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The live processes, other than this one, whose environment holds `text`.
  package static func processes(naming text: String) -> [Int32] {
    let needle = Data(text.utf8)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
      pid != getpid() && FileManager.default.contents(atPath: "/proc/\(pid)/environ")?.firstRange(of: needle) != nil
    }
  }
}
