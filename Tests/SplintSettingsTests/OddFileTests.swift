import Foundation
import SplintSystemCalls
import TestSupport
import Testing

@testable import SplintSettings

/// Settings paths that are not regular files: directories, FIFOs, sockets, devices. They are reported, never read
/// from a blocking open, never written, and nothing is made beside them.
@Suite struct OddFileTests {
  let scratch = Scratch()

  /// What `path` is, as `ls -l` would show its first letter (`-`, `d`, `p`, `s`, `c`), or nil when nothing is there.
  func type(of path: String) -> Character? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    switch status.st_mode & S_IFMT {
    case S_IFDIR: return "d"
    case S_IFIFO: return "p"
    case S_IFSOCK: return "s"
    case S_IFCHR: return "c"
    case S_IFLNK: return "l"
    default: return "-"
    }
  }

  @Test(
    "every kind of file stat reports is named, and only a regular file is one",
    arguments: [
      (S_IFREG, nil), (S_IFDIR, "a directory"), (S_IFIFO, "a FIFO (named pipe)"), (S_IFSOCK, "a socket"),
      (S_IFCHR, "a character device"), (S_IFBLK, "a block device"), (S_IFLNK, "a symbolic link"),
    ] as [(mode_t, String?)])
  func kinds(mode: mode_t, name: String?) {
    #expect(FileKind(mode: mode | 0o644)?.description == name)
  }

  @Test("a directory at the settings path is reported and refused; nothing is made beside it")
  func directory() async throws {
    let path = scratch.url("settings.json").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let store = scratch.store()
    let expected = SettingsError.notARegularFile(store.fileURL, kind: "a directory")
    #expect(await take(1, from: store.errors()) == [expected])
    #expect(throws: expected) { try store.set(.int(1), forKey: "a") }
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["settings.json"])
  }

  @Test("a FIFO at the settings path: another process neither hangs nor writes; it is told what the path is")
  func fifoInAnotherProcess() async throws {
    let path = scratch.url("settings.json").path
    #expect(mkfifo(path, 0o600) == 0)
    // Bounded: before this was fixed, opening the FIFO waited for a writer forever.
    let output = try await Programs.run([Programs.helper("SettingsProbe"), "set", path, "a", "1"], seconds: 10)
    #expect(output.status == 1, "\(output)")
    #expect(output.stdout.hasPrefix("error The settings file \(path) is a FIFO (named pipe), not a regular file"))
    #expect(type(of: path) == "p")
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["settings.json"])
  }

  @Test("a FIFO that takes the file's place under a running process: reported, and other files keep changing")
  func fifoUnderAWatcher() async throws {
    let other = scratch.store("other.json")
    let volume = Setting("volume", default: 0, store: other)
    let updates = volume.updates(initial: false)
    let store = scratch.store()
    try store.set(.int(1), forKey: "a")
    let errors = store.errors()
    // The FIFO is made elsewhere and renamed over the file, as any atomic replacement is.
    let fifo = scratch.url("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(rename(fifo, store.fileURL.path) == 0)
    #expect(await take(1, from: errors) == [.notARegularFile(store.fileURL, kind: "a FIFO (named pipe)")])
    #expect(store.value(forKey: "a") == .int(1), "the last good content stays in use")
    // The watcher was not left waiting on the FIFO: another file's change still arrives.
    try await probe("set", other.fileURL.path, "volume", "7")
    #expect(await collect(updates) { $0 == 7 } == [7])
  }

  @Test("a socket at the settings path is reported and refused")
  func socket() async throws {
    let path = scratch.url("settings.json").path
    let bind = "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])"
    #expect(try await Programs.run([Programs.python, "-c", bind, path]).status == 0)
    let store = scratch.store()
    let expected = SettingsError.notARegularFile(store.fileURL, kind: "a socket")
    #expect(await take(1, from: store.errors()) == [expected])
    #expect(throws: expected) { try store.set(.int(1), forKey: "a") }
    #expect(type(of: path) == "s")
  }

  @Test("a symlink to a device node (a config discarded to /dev/null): refused; the device stays a device")
  func deviceNode() async throws {
    // A device node of our own, in a private mount namespace: /dev/null bound over a scratch file, never the
    // machine's /dev itself.
    let output = try await inNamespace(
      """
      cd "$0"
      touch device && mount --bind /dev/null device
      ln -s device settings.json
      "$1" set "$0/settings.json" volume 3
      echo "status $?"
      [ -c device ] && echo "still a character device"
      ls -a
      """, arguments: [scratch.directory.path, Programs.helper("SettingsProbe")])
    guard let output else {
      print("skipped: this system does not permit user and mount namespaces (unshare), so no device node")
      return
    }
    let path = scratch.url("settings.json").path
    #expect(
      output.lines.first?.hasPrefix(
        "error The settings file \(path) is a character device (\(scratch.url("device").path)), not a regular file")
        == true, "\(output)")
    #expect(output.lines.contains("status 1"))
    #expect(output.lines.contains("still a character device"))
    #expect(Array(output.lines.suffix(4)) == [".", "..", "device", "settings.json"], "no lock file beside it")
  }

  @Test("a link to .., and the root directory itself: directories, reported and refused")
  func directoriesReachedOtherwise() async throws {
    try FileManager.default.createSymbolicLink(atPath: scratch.url("settings.json").path, withDestinationPath: "..")
    let store = scratch.store()
    let parent = scratch.directory.deletingLastPathComponent().path
    let expected = SettingsError.notARegularFile(store.fileURL, kind: "a directory (\(parent))")
    #expect(store.fileError == expected)
    #expect(throws: expected) { try store.set(.int(1), forKey: "a") }

    let root = SettingsStore(fileURL: URL(fileURLWithPath: "/"))
    #expect(root.fileError == .notARegularFile(root.fileURL, kind: "a directory"))
  }

  @Test("a lock file that is a symbolic link or a FIFO is refused; nothing is made where the link points")
  func lockFilesThatAreNoFiles() async throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: "a")
    let lock = store.fileURL.path + ".lock"
    #expect(unlink(lock) == 0)
    #expect(symlink(scratch.url("elsewhere").path, lock) == 0)
    #expect(throws: SettingsError.notARegularFile(store.fileURL, kind: "a symbolic link (\(lock))")) {
      try store.set(.int(2), forKey: "a")
    }
    #expect(type(of: scratch.url("elsewhere").path) == nil)
    #expect(unlink(lock) == 0)
    #expect(mkfifo(lock, 0o600) == 0)
    #expect(throws: SettingsError.notARegularFile(store.fileURL, kind: "a FIFO (named pipe) (\(lock))")) {
      try store.set(.int(2), forKey: "a")
    }
    #expect(store.value(forKey: "a") == .int(1))
  }
}
