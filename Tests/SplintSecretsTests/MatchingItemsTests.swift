import Foundation
import Testing

@testable import SplintSecrets

/// Which Secret Service items are a credential's, and which of several a read returns (``SecretServiceStore``'s
/// rules, on the attributes and times the real providers give; `InteropTests` runs them against gnome-keyring).
@Suite("The items of a credential, and the newest of them")
struct MatchingItemsTests {
  let alice = Credential(service: "api.example.com", account: "alice")

  @Test("ours, secret-tool's, Python keyring's, oo7's and KeePassXC's items are the credential's")
  func knownClientsItems() {
    let base = ["service": "api.example.com", "username": "alice"]
    let known: [[String: String]] = [
      base,
      base.merging(["xdg:schema": "org.freedesktop.Secret.Generic"]) { $1 },
      base.merging(["xdg:schema": "org.freedesktop.Secret.Generic", "application": "Python keyring library"]) { $1 },
      base.merging(["xdg:content-type": "text/plain"]) { $1 },
      base.merging([
        "Title": "t", "UserName": "", "URL": "", "Notes": "", "Uuid": "0a", "Path": "/t",
        "FDO_SECRETS_CONTENT_TYPE": "application/octet-stream",
      ]) { $1 },
    ]
    for attributes in known { #expect(SecretServiceStore.isItem(attributes, of: alice), "\(attributes)") }
  }

  @Test("a third program's item that shares the two attributes is not: another schema, application or attribute")
  func thirdProgramsItems() {
    let base = ["service": "api.example.com", "username": "alice"]
    let foreign: [[String: String]] = [
      base.merging(["xdg:schema": "org.gnome.keyring.NetworkPassword"]) { $1 },
      base.merging(["application": "rust-keyring"]) { $1 },
      base.merging(["protocol": "https"]) { $1 },
      ["service": "api.example.com", "username": "bob"],
      ["service": "other", "username": "alice"],
    ]
    for attributes in foreign { #expect(!SecretServiceStore.isItem(attributes, of: alice), "\(attributes)") }
  }

  /// An item as a provider describes it, at `modified` and `created` seconds.
  func item(_ path: String, modified: Int, created: Int = 0, python: Bool = false) -> SecretServiceItem {
    SecretServiceItem(
      path: path, label: "", attributes: python ? ["application": "Python keyring library"] : [:],
      created: Date(timeIntervalSince1970: TimeInterval(created)),
      modified: Date(timeIntervalSince1970: TimeInterval(modified)), isLocked: false)
  }

  func newest(_ items: [SecretServiceItem]) -> String? {
    // Whatever order the provider lists them in.
    let choices = Set([items, items.reversed()].map { $0.max(by: SecretServiceStore.isOlder)?.path })
    #expect(choices.count == 1)
    return choices.first ?? nil
  }

  @Test("the one modified last; in the same second, the one created last")
  func modifiedThenCreated() {
    #expect(newest([item("/c/1", modified: 20), item("/c/2", modified: 10, python: true)]) == "/c/1")
    #expect(newest([item("/c/1", modified: 20, created: 5), item("/c/2", modified: 20, created: 4)]) == "/c/1")
  }

  @Test("in the same second, Python keyring's before ours; then the D-Bus path that sorts last, numbers by length")
  func sameSecond() {
    #expect(newest([item("/c/2", modified: 20), item("/c/1", modified: 20, python: true)]) == "/c/1")
    #expect(newest([item("/c/9", modified: 20), item("/c/10", modified: 20)]) == "/c/10")
    #expect(newest([item("/c/a", modified: 20), item("/c/b", modified: 20)]) == "/c/b")
  }
}
