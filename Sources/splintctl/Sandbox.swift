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
  /// GNOME_KEYRING_CONTROL removed, so that nothing reaches the caller's session or prompts on its screen.
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
    self.environment = environment
  }

  /// Ends every process whose environment names ``root`` (a bus, keyring daemons, anything a command left running,
  /// however it ended: a daemon stopped with SIGSTOP too), then removes ``root``.
  package func end() {
    for pid in Self.processes(naming: root) { kill(pid, SIGKILL) }
    try? FileManager.default.removeItem(atPath: root)
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
