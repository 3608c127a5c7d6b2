public import Foundation
import Glibc

/// A directory of its own for one test, removed when the test's suite instance goes away.
public final class Scratch: Sendable {
  /// The directory.
  public let directory: URL

  /// Makes a new, empty directory under the temporary directory, or in memory (`/dev/shm`, where it may be written):
  /// for servers whose every write is an fsync, which a disk busy with another writer holds up for seconds.
  public init(inMemory: Bool = false) {
    directory = Self.base(inMemory: inMemory).appendingPathComponent("splint-test-\(UUID())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: directory)
  }

  /// The directory test directories are made in: `/dev/shm` for one `inMemory` where this user may write there, the
  /// temporary directory otherwise.
  public static func base(inMemory: Bool) -> URL {
    let memory = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
    return inMemory && access(memory.path, W_OK) == 0 ? memory : FileManager.default.temporaryDirectory
  }

  /// A path inside the directory.
  public func url(_ components: String...) -> URL {
    components.reduce(directory) { $0.appendingPathComponent($1) }
  }
}

/// Waits until `condition` holds, checking every few milliseconds, for at most `seconds`. This bounds a wait for
/// something asynchronous (another process's write, an inotify event); it is not a speed check, which is the
/// benchmark's job. Returns whether the condition came to hold. The default is generous because the whole suite, some
/// 400 tests started at once on two cores, has held every task of the test process up for over 15 seconds.
public func eventually(within seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while await !condition() {
    // A cancelled test (its time limit passed) ends its waits, rather than spinning to each deadline.
    if Date() > deadline || Task.isCancelled { return false }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return true
}
