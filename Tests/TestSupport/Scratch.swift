public import Foundation

/// A directory of its own for one test, removed when the test's suite instance goes away.
public final class Scratch: Sendable {
  /// The directory.
  public let directory: URL

  /// Makes a new, empty directory under the temporary directory.
  public init() {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("splint-test-\(UUID())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: directory)
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
    if Date() > deadline { return false }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return true
}
