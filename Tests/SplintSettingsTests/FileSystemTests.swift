import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// The file in trouble: corrupt, symlinked, its directory gone, unreadable, read-only, full.
@Suite struct FileSystemTests {
  let scratch = Scratch()

  @Test("a corrupt file never crashes, is never written over, and only a reset of it on purpose starts over")
  func corruptFile() async throws {
    let store = scratch.store()
    let volume = Setting("volume", default: 0, store: store)
    volume.value = 3
    let errors = store.errors()
    try Data("{\"volume\": 4, oops".utf8).write(to: store.fileURL)  // in place, as an editor might
    let reported = await take(1, from: errors)
    guard case .corruptFile(let url, let reason)? = reported.first?.situation else {
      Issue.record("expected corruptFile, got \(reported)")
      return
    }
    #expect(url == store.fileURL)
    #expect(reason == "line 1, column 15: 'o' where a key in double quotes should be")
    #expect(volume.value == 3, "the last good content stays in use")
    #expect(await take(1, from: store.errors()) == reported, "a new error stream hears the file's problem first")

    // A write over it is refused, saying where the file goes wrong: a typo costs no other setting.
    let other = Setting("other", default: 0, store: store)
    #expect(throws: SettingsError.corruptFile(store.fileURL, reason: reason)) { try other.save(1) }
    other.value = 2  // the assignment is refused alike, and reported
    #expect(await take(1, from: errors) == reported)
    #expect(throws: SettingsError.corruptFile(store.fileURL, reason: reason)) { try store.reset(keys: ["volume"]) }
    #expect(store.text == "{\"volume\": 4, oops")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).sorted() == [
        "settings.json", "settings.json.lock",
      ])
    #expect(other.value == 0 && volume.value == 3)
    #expect(reported.first?.description.contains("it is not written until it is fixed") == true)

    // Fixed by hand, it is used again, and written.
    let fixed = volume.updates(initial: false)  // before the write, which the watch may deliver at once
    try Data("{\"volume\": 4}".utf8).write(to: store.fileURL)
    #expect(await collect(fixed) { $0 == 4 } == [4])
    try other.save(1)
    #expect(store.text == #"{"volume": 4, "other": 1}"#, "written as the file was, on one line")

    // Broken again, a reset of the whole file starts over on purpose and keeps the bad bytes beside it.
    try Data("{\"volume\": 5, oops".utf8).write(to: store.fileURL)
    #expect(await eventually { store.fileError?.code == .corruptFile })
    #expect(try store.resetAll() == [])
    let corrupt = try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).filter {
      $0.hasPrefix("settings.json.corrupt-")
    }
    #expect(corrupt.count == 1)
    #expect(corrupt.first?.wholeMatch(of: /settings\.json\.corrupt-\d{4}-\d\d-\d\dT\d{6}\.\d{3}Z/) != nil)
    #expect(try String(contentsOf: scratch.url(corrupt[0]), encoding: .utf8) == "{\"volume\": 5, oops")
    #expect(store.text == "{}\n")
    #expect(store.fileError == nil)
    #expect(volume.value == 0 && other.value == 0)
  }

  @Test("a file caught blank halfway through an in-place save changes nothing; one that stays blank is empty")
  func blankFile() async throws {
    let store = scratch.store()
    let volume = Setting("volume", default: 0, store: store)
    volume.value = 3
    let updates = volume.updates(initial: false)
    try Data().write(to: store.fileURL)  // truncated, not yet written
    store.file.reload()
    #expect(volume.value == 3)
    Setting("other", default: 0, store: store).value = 1  // a write meanwhile builds on the last good content
    #expect(store.text == "{\n  \"volume\": 3,\n  \"other\": 1\n}\n")
    try Data("  \n".utf8).write(to: store.fileURL)  // blank, and it stays blank
    #expect(await collect(updates) { $0 == 0 } == [0])
    #expect(store.keys == [])
  }

  @Test("a blank or unparsable file that is another file: a write builds on nothing the process read from the old one")
  func contentInMemoryIsReusedOnlyForTheSameFile() async throws {
    let store = scratch.store()
    try store.update {
      $0["volume"] = .int(3); $0["token"] = .string("from-the-old-file")
    }
    // Another file, blank, renamed over it: what this process holds came from the old file, not from this one.
    let replacement = scratch.url("replacement")
    try Data().write(to: replacement)
    #expect(rename(replacement.path, store.fileURL.path) == 0)
    try store.set(.int(1), forKey: "other")
    #expect(store.text == "{\n  \"other\": 1\n}\n")

    // Another file that does not parse: the write is refused rather than made of what memory holds.
    try Data("{oops".utf8).write(to: replacement)
    #expect(rename(replacement.path, store.fileURL.path) == 0)
    #expect(throws: SettingsError.self) { try store.set(.int(2), forKey: "other") }
    #expect(store.text == "{oops")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).sorted() == [
        "settings.json", "settings.json.lock",
      ])
  }

  @Test("a path that cannot be looked at is an error, never an empty file: a loop of links")
  func aLoopIsAnErrorNotAbsence() throws {
    try FileManager.default.createSymbolicLink(atPath: scratch.url("a.json").path, withDestinationPath: "b.json")
    try FileManager.default.createSymbolicLink(atPath: scratch.url("b.json").path, withDestinationPath: "a.json")
    let store = scratch.store("a.json")
    #expect(store.fileError?.code == .unreadableFile)
    #expect(
      store.fileError?.description.contains("Too many levels of symbolic links") == true,
      "\(String(describing: store.fileError))")
  }

  /// How editors and tools save by moving or unlinking the old file first.
  enum RenameAwaySave: String, CaseIterable, Sendable {
    case emacs = "emacs with backups"
    case vim = "vim, backupcopy=no"
    case git = "git checkout"

    /// Saves `volume` at `path` the way this tool does, leaving no file there for 20 ms (a slow disk, a big file),
    /// and returns how long there was none, in nanoseconds (longer on a busy machine).
    func save(_ path: String, volume: Int) throws -> Int {
      let start = monotonicNanoseconds()
      if self == .git { unlink(path) } else { rename(path, path + "~") }
      usleep(20_000)
      try Data(#"{"volume": \#(volume), "other": 1}"#.utf8).write(to: URL(fileURLWithPath: path))  // in place
      let gap = monotonicNanoseconds() - start
      if self == .vim { unlink(path + "~") }
      return gap
    }
  }

  @Test(
    "saves that move or unlink the old file first show one change, never every key removed for a moment",
    arguments: RenameAwaySave.allCases)
  func renameAwaySaves(editor: RenameAwaySave) async throws {
    let store = scratch.store()
    try store.update {
      $0["volume"] = .int(1); $0["other"] = .int(1)
    }
    let changes = store.changes()
    var late = 0
    for round in 2...11 {
      // A gap past the grace (100 ms; 90 here, for the watcher's own delay) is a file really gone for a while.
      if try editor.save(store.fileURL.path, volume: round) > 90_000_000 { late += 1 }
      #expect(await eventually { store.value(forKey: "volume") == .int(round) }, "\(editor), round \(round)")
    }
    let seen = await take(10 + 2 * late, from: changes, within: 2)
    // Each save within the grace is one change of "volume" alone; one the machine stretched past the grace may show
    // as every key removed, then back.
    #expect(seen.filter { $0 == ["volume"] }.count >= 10 - late, "\(editor): \(seen)")
    if late > 0 { print("note: \(late) of 10 \(editor) saves left no file for longer than the grace (a busy machine)") }
  }

  @Test("a file that stays gone is empty once the grace has passed")
  func aFileThatStaysGoneIsEmpty() async throws {
    let store = scratch.store()
    let volume = Setting("volume", default: 0, store: store)
    volume.value = 3
    let updates = volume.updates(initial: false)
    let removed = ContinuousClock.now
    try FileManager.default.removeItem(at: store.fileURL)
    #expect(await collect(updates) { $0 == 0 } == [0])
    #expect(ContinuousClock.now - removed >= .milliseconds(100), "not before the grace")
    #expect(store.keys == [])
  }

  @Test func anEmptyObjectRemovesEverythingAtOnce() async throws {
    let store = scratch.store()
    let volume = Setting("volume", default: 0, store: store)
    volume.value = 3
    let updates = volume.updates(initial: false)
    try Data("{}".utf8).write(to: store.fileURL)
    store.file.reload()
    #expect(volume.value == 0)
    #expect(await collect(updates) { $0 == 0 } == [0])
  }

  @Test(
    "files that are not JSON objects are reported, each kind",
    arguments: [
      ("[1, 2]", "line 1, column 1: the file holds an array, not a JSON object"),
      ("\u{FF}\u{FE}", "line 1, column 1: byte 0xc3 where a value should be"),
      ("{\"a\": 1, \"a\": 2}", "line 1, column 10: the key \"a\" appears twice in one object"),
    ])
  func notAnObject(text: String, reason: String) async throws {
    try text.write(to: scratch.url("settings.json"), atomically: true, encoding: .utf8)
    let store = scratch.store()
    let reported = await take(1, from: store.errors())
    #expect(reported == [.corruptFile(store.fileURL, reason: reason)])
    #expect(store.keys == [])
  }

  @Test("a symlinked settings file (dotfile managers) stays a link; writes go to its target")
  func symlinkedFile() async throws {
    let dotfiles = scratch.url("dotfiles")
    try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
    try #"{"theme": "dark"}"#.write(
      to: dotfiles.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(at: scratch.url("config"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.url("config", "settings.json").path, withDestinationPath: "../dotfiles/settings.json")

    let store = SettingsStore(fileURL: scratch.url("config", "settings.json"))
    let theme = Setting("theme", default: "light", store: store)
    #expect(theme.value == "dark")
    theme.value = "sepia"
    let link = try FileManager.default.destinationOfSymbolicLink(atPath: scratch.url("config", "settings.json").path)
    #expect(link == "../dotfiles/settings.json")
    #expect(try String(contentsOf: dotfiles.appendingPathComponent("settings.json"), encoding: .utf8).contains("sepia"))
    #expect(FileManager.default.fileExists(atPath: dotfiles.appendingPathComponent("settings.json.lock").path))

    let updates = theme.updates(initial: false)
    try await probe("set", dotfiles.appendingPathComponent("settings.json").path, "theme", #""light""#)
    #expect(await collect(updates) { $0 == "light" } == ["light"])
  }

  @Test func aSymlinkLoopIsAWriteFailureNotAHang() throws {
    try FileManager.default.createSymbolicLink(atPath: scratch.url("a.json").path, withDestinationPath: "b.json")
    try FileManager.default.createSymbolicLink(atPath: scratch.url("b.json").path, withDestinationPath: "a.json")
    let store = scratch.store("a.json")
    #expect(
      throws: SettingsError.writeFailed(
        store.fileURL, reason: "open failed: Too many levels of symbolic links")
    ) {
      try store.set(.int(1), forKey: "a")
    }
  }

  @Test("the directory removed and created again: values return to defaults, then follow the new file")
  func directoryRemovedAndRecreated() async throws {
    let directory = scratch.url("suite")
    let store = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"))
    let volume = Setting("volume", default: 0, store: store)
    volume.value = 5
    let updates = volume.updates(initial: false)
    try FileManager.default.removeItem(at: directory)
    #expect(await collect(updates) { $0 == 0 } == [0])
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try await probe("set", store.fileURL.path, "volume", "7")
    #expect(await collect(updates) { $0 == 7 } == [7])
    volume.value = 8  // and writes work again
    #expect(store.value(forKey: "volume") == .int(8))
    try await probe("set", store.fileURL.path, "volume", "9")
    #expect(await collect(updates) { $0 == 9 }.last == 9)
  }

  @Test func aFileThatCannotBeReadIsReported() async throws {
    let path = scratch.url("settings.json").path
    try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
    #expect(chmod(path, 0) == 0)
    // Read by a process without privileges even when the tests run as root: in a user namespace of its own, with
    // no mapping, it is nobody.
    guard (try? await Programs.run(["unshare", "--user", "true"]))?.status == 0 else {
      print("skipped: this system does not permit user namespaces (unshare), so no unprivileged reader")
      return
    }
    let output = try await Programs.run(["unshare", "--user", Programs.helper("SettingsProbe"), "problem", path])
    #expect(
      output.stdout
        == SettingsError.unreadableFile(
          URL(fileURLWithPath: path),
          reason: "this user may not open it (Permission denied)"
        ).description + "\n", "\(output)")
  }

  @Test("a read-only file system: the write fails clearly, the file and the value stay as they were")
  func readOnlyFileSystem() async throws {
    let output = try await inNamespace(
      """
      set -e
      mount -t tmpfs tmpfs "$0"
      "$1" set "$0/settings.json" volume 3
      mount -o remount,ro "$0"
      "$1" set "$0/settings.json" volume 4 || true
      "$1" set "$0/new.json" volume 4 || true
      cat "$0/settings.json"
      """, arguments: [scratch.directory.path, Programs.helper("SettingsProbe")])
    guard let output else {
      print("skipped: this system does not permit user and mount namespaces (unshare), so no read-only mount")
      return
    }
    #expect(output.lines.first?.hasPrefix("error Could not write the settings file") == true, "\(output)")
    #expect(output.stdout.contains("settings.json: its file system is read-only. The file and the values"))
    #expect(output.stdout.contains("Point the store at a file on a writable file system"))
    // A new file there: its directory is what is read-only, and the error says so.
    #expect(
      output.lines.dropFirst().first
        == "error Could not write the settings file \(scratch.url("new.json").path): the file system of its directory, "
        + "\(scratch.directory.path), is read-only. The file and the values in memory are as they were. Point the "
        + "store at a file on a writable file system (SettingsStore(fileURL:)).", "\(output)")
    #expect(output.stdout.hasSuffix("{\n  \"volume\": 3\n}\n"))
  }

  @Test("a full disk: the write fails clearly, the file and the value stay as they were")
  func fullDisk() async throws {
    let output = try await inNamespace(
      """
      set -e
      mount -t tmpfs -o size=64k tmpfs "$0"
      "$1" set "$0/settings.json" volume 3
      head -c 100000 /dev/zero > "$0/filler" || true
      "$1" set "$0/settings.json" volume '"\(String(repeating: "x", count: 8000))"' || true
      cat "$0/settings.json"
      echo "temporary files: $(ls -a "$0" | grep -c '\\.tmp$' || true)"
      """, arguments: [scratch.directory.path, Programs.helper("SettingsProbe")])
    guard let output else {
      print("skipped: this system does not permit user and mount namespaces (unshare), so no tiny tmpfs")
      return
    }
    #expect(output.lines.first?.hasPrefix("error Could not write the settings file") == true, "\(output)")
    #expect(output.stdout.contains("settings.json: write failed: No space left on device. The file and the values"))
    #expect(output.stdout.contains("Free some space on the disk, then try again."))
    #expect(output.stdout.contains("{\n  \"volume\": 3\n}\n"))
    #expect(output.lines.last == "temporary files: 0")
  }
}
