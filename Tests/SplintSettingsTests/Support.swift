import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

extension Scratch {
  /// A store on `settings.json` (or `name`) inside the directory.
  func store(_ name: String = "settings.json") -> SettingsStore {
    SettingsStore(fileURL: url(name))
  }
}

extension SettingsStore {
  /// The file's text now.
  var text: String { (try? String(contentsOf: fileURL, encoding: .utf8)) ?? "" }

  /// How many times this process has written the file.
  var writeCount: Int { file.writeCount }
}

/// The elements `stream` yields until one satisfies `last`, or those it yielded before `seconds` passed.
func collect<Element: Sendable>(
  _ stream: AsyncStream<Element>, within seconds: Double = 30, until last: @escaping @Sendable (Element) -> Bool
) async -> [Element] {
  let seen = Shared<[Element]>([])
  await withTaskGroup(of: Void.self) { group in
    group.addTask {
      for await element in stream {
        seen.value.withLock { $0.append(element) }
        if last(element) { return }
      }
    }
    group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
    await group.next()
    group.cancelAll()
  }
  return seen.value.withLock { $0 }
}

/// The first `count` elements of `stream`, or fewer when `seconds` pass first.
func take<Element: Sendable>(
  _ count: Int, from stream: AsyncStream<Element>, within seconds: Double = 30
) async
  -> [Element]
{
  let seen = Shared(0)
  return await collect(stream, within: seconds) { _ in
    seen.value.withLock { seen in
      seen += 1
      return seen == count
    }
  }
}

/// The monotonic clock (CLOCK_MONOTONIC, the one Python's `time.monotonic_ns` reads), in nanoseconds.
func monotonicNanoseconds() -> Int {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec
}

/// A value that concurrent tasks share.
final class Shared<Value: Sendable>: Sendable {
  let value: Mutex<Value>
  init(_ value: Value) { self.value = Mutex(value) }
}

/// Runs the `SettingsProbe` helper, another process using the settings file.
@discardableResult
func probe(_ arguments: String..., environment: [String: String]? = nil) async throws -> ProgramOutput {
  try await Programs.run([Programs.helper("SettingsProbe")] + arguments, environment: environment)
}

/// Starts the `SettingsProbe` helper and returns at once.
func startProbe(
  _ arguments: String..., environment: [String: String]? = nil, bounded: Bool = true
) async throws -> RunningProgram {
  try await Programs.start(
    [Programs.helper("SettingsProbe")] + arguments, environment: environment, seconds: bounded ? 60 : nil)
}

/// Runs `script` with `sh` inside a new user and mount namespace, where it may mount file systems and set inotify
/// limits without touching the machine's; `arguments` become `$0`, `$1`, …. Nil where this system does not permit
/// such namespaces.
func inNamespace(_ script: String, arguments: [String]) async throws -> ProgramOutput? {
  guard await (try? Programs.run(["unshare", "--user", "--map-root-user", "--mount", "true"]))?.status == 0 else {
    return nil
  }
  return try await Programs.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script] + arguments)
}

extension FileIO {
  /// The identity of the file at `path` now (following links), or nil when there is none: for tests that check
  /// that a file is still the same file, unwritten.
  static func identity(_ path: String) -> FileIdentity? {
    var status = stat()
    return stat(path, &status) == 0 ? FileIdentity(status) : nil
  }
}
