import Glibc
import SplintSystemCalls

/// A file a process writes whole for another program to read, and that nothing else writes (a fleet follower's
/// metrics file, which node_exporter's textfile collector reads): each write replaces it atomically, so that a reader
/// sees the old content or the new, never a part. Its path is judged as a settings file's is: a name chosen by a user
/// with fewer rights never steers the write to a file that is not theirs (see `OwnershipRules`).
package enum PublishedFile {
  /// Why a write failed: a sentence that names the file, and what to do where there is something to do.
  package struct Failure: Error, Equatable, CustomStringConvertible {
    package let description: String
  }

  /// Replaces the file at `path` (absolute) with `bytes`; a new file is readable by every user (mode 0644), a
  /// replaced one keeps its owner and mode. Its directory must exist. On failure the file is as it was.
  package static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
    do throws(FileIOError) {
      try FileIO.publish(bytes, at: FileIO.standardized(path), newFileMode: 0o644)
    } catch {
      throw Failure(description: "cannot write \(path): " + Self.reason(error))
    }
  }

  /// `error` in words.
  static func reason(_ error: FileIOError) -> String {
    switch error {
    case .system(let error) where error.isAbsence:
      "\(error.path) is missing, or a directory on the way to it is (make the directory)"
    case .system(let error): "\(error.operation) \(error.path) failed: \(String(cString: strerror(error.code)))"
    case .notRegular(let path, let kind): "\(path) is \(kind), not a regular file (remove it)"
    case .refused(_, let reason), .failed(_, let reason): reason
    case .unwritableDirectory(let path, let code):
      "no file may be made in \(path) (\(String(cString: strerror(code))))"
    case .tooLarge(let path, _, _), .lockTimeout(let path, _):
      "\(path) is not a file this write reads or locks"  // what a read or a lock fails with: neither is made here
    }
  }
}
