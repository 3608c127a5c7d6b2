public import Foundation
import Glibc

/// Where the logs of the servers a test started (etcd members, OpenBao) are kept after the test, so that a test that
/// fails against a server says why: `$SPLINT_SERVER_LOGS/<the test's name>/`, which script/test sets (and prints for
/// each test that failed). Nothing is kept where it is unset.
public enum ServerLogs {
  /// The directory of the test running in this task, if logs are kept (set by ``ServerTests`` for each test).
  @TaskLocal public static var directory: URL?

  /// The directory for the test named `name` under `$SPLINT_SERVER_LOGS`, made, and recorded in its `INDEX` (a line
  /// `<directory name>\t<test name>`); nil when the variable is unset.
  public static func directory(forTest name: String) -> URL? {
    guard let root = ProcessInfo.processInfo.environment["SPLINT_SERVER_LOGS"], root.hasPrefix("/") else {
      return nil
    }
    let safe = String(name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" }.prefix(80))
    let base = URL(fileURLWithPath: root, isDirectory: true)
    let directory = base.appendingPathComponent(safe, isDirectory: true)
    if (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil {
      // Appended in one write(2) with O_APPEND: tests that run at once never interleave their lines.
      let descriptor = open(base.appendingPathComponent("INDEX").path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
      if descriptor >= 0 {
        let line = Array("\(safe)\t\(name)\n".utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
      }
    }
    return directory
  }

  /// Copies `file` (a server's log) into `directory` as `name`, if a directory is given; a file that is not there
  /// is left out.
  public static func keep(_ file: URL, as name: String, in directory: URL?) {
    guard let directory else { return }
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let target = directory.appendingPathComponent(name)
    try? FileManager.default.removeItem(at: target)
    try? FileManager.default.copyItem(at: file, to: target)
  }
}
