/// The version of Splint for Linux this is: the newest release in CHANGELOG.md (a test checks that they agree), as
/// `splintctl --version` prints it and a fleet's follower reports it.
package enum SplintVersion {
  /// Semantic versioning; the README says what is public API.
  package static let current = "0.1.0"
}
