// Only where swift-testing is: a release build with the Swift runtime linked in (script/torture's and script/leaks',
// made as the installed splintctl is) has no Testing module, and its programs use none of this.
#if canImport(Testing)
  import Foundation
  public import Testing

  /// The keyring the in-process tests share: the throw-away, unlocked gnome-keyring that `script/test` starts in a
  /// private D-Bus session. Outside `script/test` these tests are skipped rather than run against your own keyring.
  public enum TestKeyring {
    /// Set by `script/test` inside its private session.
    public static let isPrivate = ProcessInfo.processInfo.environment["SPLINT_TEST_KEYRING"] == "private"

    /// Enables a test only inside `script/test`'s private session.
    public static let required = Testing.ConditionTrait.enabled(
      if: isPrivate, "needs script/test's private gnome-keyring; tests never touch your own keyring")

    /// A service name no other test uses, so that tests running in parallel never see each other's items.
    public static func uniqueService(_ name: String = #function) -> String {
      "splint-test.\(name.prefix { $0 != "(" }).\(UUID().uuidString)"
    }
  }
#endif
