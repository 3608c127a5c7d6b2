import Foundation
import Glibc
import SplintSystemCalls
import TestSupport
import Testing

@testable import SplintSettings

/// A file written whole for another program (a follower's metrics file): replaced atomically, its mode kept, and
/// found under the rules of every settings path.
struct PublishedFileTests {
  let scratch = Scratch()

  /// The mode of the file at `url`.
  func mode(_ url: URL) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? -1
  }

  @Test("a published file is replaced whole, keeps its mode, and leaves nothing beside it")
  func replaced() throws {
    let file = scratch.url("m.prom")
    try PublishedFile.write(Array("a 1\n".utf8), to: file.path)
    #expect(try String(contentsOf: file, encoding: .utf8) == "a 1\n")
    #expect(try mode(file) == 0o644)
    #expect(chmod(file.path, 0o640) == 0)
    try PublishedFile.write(Array("a 2\n".utf8), to: file.path)
    #expect(try String(contentsOf: file, encoding: .utf8) == "a 2\n")
    #expect(try mode(file) == 0o640)
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["m.prom"])
  }

  @Test("a missing directory, and a name that holds no regular file, are refused, saying what to do")
  func refused() throws {
    let missing = #expect(throws: PublishedFile.Failure.self) {
      try PublishedFile.write([], to: scratch.url("none", "m.prom").path)
    }
    #expect(missing?.description.contains("is missing") == true, "\(String(describing: missing))")
    try FileManager.default.createDirectory(at: scratch.url("d.prom"), withIntermediateDirectories: false)
    let directory = #expect(throws: PublishedFile.Failure.self) {
      try PublishedFile.write([], to: scratch.url("d.prom").path)
    }
    #expect(
      directory?.description.hasSuffix("is a directory, not a regular file (remove it)") == true,
      "\(String(describing: directory))")
  }

  @Test(
    "a link another user put in a shared directory is not followed: the file it points to stays as it was",
    .enabled("other users' links need root") { geteuid() == 0 })
  func plantedLink() throws {
    let shared = scratch.url("shared"), target = scratch.url("target")
    try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
    #expect(chmod(shared.path, 0o1777) == 0)
    try Data("root's\n".utf8).write(to: target)
    let link = shared.appendingPathComponent("m.prom")
    #expect(symlink(target.path, link.path) == 0 && lchown(link.path, 1000, 1000) == 0)
    let refused = #expect(throws: PublishedFile.Failure.self) {
      try PublishedFile.write(Array("a 1\n".utf8), to: link.path)
    }
    #expect(refused?.description.contains("belongs to user 1000") == true, "\(String(describing: refused))")
    #expect(try String(contentsOf: target, encoding: .utf8) == "root's\n")
  }

  @Test(
    "each failure says what happened",
    arguments: [
      (FileIOError.system(SystemCallError("open", "/d", ENOENT)), "/d is missing, or a directory on the way to it is"),
      (.system(SystemCallError("write", "/d/f", EIO)), "write /d/f failed: Input/output error"),
      (.notRegular(path: "/d/f", kind: .fifo), "/d/f is a FIFO (named pipe), not a regular file"),
      (.refused(path: "/d/f", reason: "no, because"), "no, because"),
      (.failed(path: "/d/f", reason: "it kept changing"), "it kept changing"),
      (.unwritableDirectory(path: "/d", code: EROFS), "no file may be made in /d (Read-only file system)"),
      (.tooLarge(path: "/d/f", size: 2, limit: 1), "/d/f is not a file this write reads or locks"),
      (.lockTimeout(path: "/d/f", waited: .seconds(1)), "/d/f is not a file this write reads or locks"),
    ])
  func reasons(error: FileIOError, words: String) {
    #expect(PublishedFile.reason(error).hasPrefix(words), "\(PublishedFile.reason(error))")
  }
}
