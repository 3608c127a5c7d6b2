import Foundation
import TestSupport
import Testing

/// `splintctl --version` and CHANGELOG.md name the same release.
@Suite struct VersionTests {
  /// The newest release CHANGELOG.md lists: the first `## X.Y.Z - YYYY-MM-DD` heading, below `## Unreleased`.
  static func newestRelease() throws -> String? {
    // The checkout the tests were built in: the first directory above the test bundle that holds the manifest (not
    // this file's path when it was compiled: script/test-distro sees the checkout at another path).
    var checkout = Programs.buildDirectory
    while !FileManager.default.fileExists(atPath: checkout.appendingPathComponent("Package.swift").path),
      checkout.path != "/"
    {
      checkout.deleteLastPathComponent()
    }
    let changelog = checkout.appendingPathComponent("CHANGELOG.md")
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
