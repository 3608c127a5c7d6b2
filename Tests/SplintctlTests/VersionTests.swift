import Foundation
import TestSupport
import Testing

/// `splintctl --version` and CHANGELOG.md name the same release.
@Suite struct VersionTests {
  /// The newest release CHANGELOG.md lists: the first `## X.Y.Z - YYYY-MM-DD` heading, below `## Unreleased`.
  static func newestRelease() throws -> String? {
    let changelog = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("CHANGELOG.md")
    let text = try String(contentsOf: changelog, encoding: .utf8)
    let heading = /^## (\d+\.\d+\.\d+) - \d{4}-\d{2}-\d{2}$/.anchorsMatchLineEndings()
    return text.firstMatch(of: heading).map { String($0.1) }
  }

  @Test("splintctl --version prints the newest release in CHANGELOG.md")
  func versionMatchesTheChangelog() async throws {
    let release = try #require(try Self.newestRelease(), "CHANGELOG.md lists no release")
    let output = try await splintctl("--version")
    #expect(output.status == 0)
    #expect(output.stdout == release + "\n")
  }
}
