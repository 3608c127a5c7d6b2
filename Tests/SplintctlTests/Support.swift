import Foundation
import TestSupport

/// Runs the built `splintctl` with `arguments`, `input` on standard input.
@discardableResult
func splintctl(
  _ arguments: String..., input: String = "", environment: [String: String]? = nil
) throws -> ProgramOutput {
  try Programs.run([Programs.helper("splintctl")] + arguments, input: Data(input.utf8), environment: environment)
}

/// Runs the built `splintctl` with `arguments`, `input` as bytes on standard input.
@discardableResult
func splintctl(_ arguments: [String], bytes: Data) throws -> ProgramOutput {
  try Programs.run([Programs.helper("splintctl")] + arguments, input: bytes)
}

/// A temporary directory, removed with the test's suite instance.
final class TemporaryDirectory: Sendable {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("splintctl-test-\(UUID())")

  init() {
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Waits until `condition` holds, for at most `seconds`; a bound on waiting for another process, not a speed check.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !condition() {
    if Date() > deadline { return false }
    try? await Task.sleep(for: .milliseconds(10))
  }
  return true
}
