import Foundation
import TestSupport
import Testing

@testable import SplintSecrets

/// Items written by `Credential` are the ones `secret-tool` and Python keyring write and read, both ways.
@Suite("Interoperability with secret-tool and Python keyring", TestKeyring.required)
struct InteropTests {
  let service = TestKeyring.uniqueService()

  @Test func credentialReadsWhatSecretToolStored() async throws {
    try await SecretTool.store(service: service, account: "alice", secret: "from secret-tool", label: "Mine")
    #expect(try await Credential(service: service, account: "alice").read() == "from secret-tool")
  }

  @Test func secretToolReadsWhatCredentialSaved() async throws {
    try await Credential(service: service, account: "alice").save("from Splint")
    #expect(try await SecretTool.lookup(service: service, account: "alice") == "from Splint")
  }

  @Test func credentialReadsWhatPythonKeyringSet() async throws {
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "from Python ✓")
    #expect(try await Credential(service: service, account: "alice").read() == "from Python ✓")
  }

  @Test func pythonKeyringGetsWhatCredentialSaved() async throws {
    try await Credential(service: service, account: "alice").save("from Splint ✓")
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "from Splint ✓")
    try await Credential(service: service, account: "alice").delete()
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == nil)
  }

  /// (gnome-keyring 42 answers `text/plain` for every item's content type, so `ProtocolTests` checks the content
  /// types we send on the bus instead.)
  @Test func itemsCarryTheAttributesAndLabelOtherToolsWrite() async throws {
    try await Credential(service: service, account: "alice").save("text")
    try await Credential(service: service, account: "bob").save(Data([0, 1]))
    let items = try await PythonKeyring.items(service: service).sorted { $0.label < $1.label }
    #expect(items.map(\.label) == ["Password for 'alice' on '\(service)'", "Password for 'bob' on '\(service)'"])
    #expect(
      items.map(\.attributes) == [
        ["service": service, "username": "alice", "xdg:schema": "org.freedesktop.Secret.Generic"],
        ["service": service, "username": "bob", "xdg:schema": "org.freedesktop.Secret.Generic"],
      ])
  }

  @Test("saving over items other tools wrote updates them in place, so every tool reads the new secret")
  func saveUpdatesForeignItemsInPlace() async throws {
    try await SecretTool.store(service: service, account: "alice", secret: "old", label: "Mine")
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "old")
    let before = try await PythonKeyring.items(service: service)

    try await Credential(service: service, account: "alice").save("new")

    #expect(try await SecretTool.lookup(service: service, account: "alice") == "new")
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "new")
    let after = try await PythonKeyring.items(service: service)
    // Compared without xdg:schema, which gnome-keyring may add to schema-less items on its own at any time.
    func attributes(_ items: [PythonKeyring.Item]) -> Set<[String: String]> {
      Set(items.map { $0.attributes.filter { $0.key != "xdg:schema" } })
    }
    #expect(attributes(after) == attributes(before))
    #expect(attributes(after).map(\.count).sorted() == [2, 3])  // secret-tool's item, and Python's with "application"
    #expect(after.map(\.label).sorted() == ["Mine", "Password for 'alice' on '\(service)'"])
  }

  @Test(
    "Python keyring saving after us makes its own item beside ours: we read its secret, and our next save reaches every client",
    arguments: [false, true])
  func pythonKeyringSavesAfterUs(aSecondApart: Bool) async throws {
    let credential = Credential(service: service, account: "alice")
    try await credential.save("first, ours")
    // In the same second the two items' Modified times are equal; a second apart, Python's is later.
    if aSecondApart { try await Task.sleep(for: .milliseconds(1_100)) }
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "second, Python's")
    #expect(try await PythonKeyring.items(service: service).count == 2)
    #expect(try await credential.read() == "second, Python's")
    // (Python keyring and secret-tool now read whichever of the two items gnome-keyring lists first.)
    try await credential.save("third, ours")
    #expect(try await credential.read() == "third, ours")
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "third, ours")
    #expect(try await SecretTool.lookup(service: service, account: "alice") == "third, ours")
  }

  @Test("we saving after Python keyring: its item gets our secret, for every client; its next save is ours to read")
  func weSaveAfterPythonKeyring() async throws {
    let credential = Credential(service: service, account: "alice")
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "first, Python's")
    try await credential.save("second, ours")
    #expect(try await PythonKeyring.items(service: service).count == 1)  // updated in place: none beside it
    #expect(try await credential.read() == "second, ours")
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "second, ours")
    #expect(try await SecretTool.lookup(service: service, account: "alice") == "second, ours")
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "third, Python's")
    #expect(try await credential.read() == "third, Python's")
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "third, Python's")
    #expect(try await SecretTool.lookup(service: service, account: "alice") == "third, Python's")
  }

  @Test("a third program's item that merely shares the service and username is left alone by our saves and deletes")
  func thirdProgramsItemIsLeftAlone() async throws {
    let credential = Credential(service: service, account: "alice")
    let theirs = ["service": service, "username": "alice", "protocol": "https"]
    try await SecretTool.store(attributes: theirs, secret: "theirs", label: "Theirs")
    // The only item with the two attributes: read, as libsecret's lookup reads it.
    #expect(try await credential.read() == "theirs")
    try await credential.save("ours")  // beside it, not over it
    #expect(try await credential.read() == "ours")
    #expect(try await SecretTool.lookup(attributes: theirs) == "theirs")
    try await SecretTool.store(attributes: theirs, secret: "theirs, changed", label: "Theirs")
    #expect(try await credential.read() == "ours")  // newer, but not the credential's
    try await credential.save("ours, changed")
    #expect(try await SecretTool.lookup(attributes: theirs) == "theirs, changed")
    try await credential.delete()
    #expect(try await SecretTool.lookup(attributes: theirs) == "theirs, changed")
    #expect(try await PythonKeyring.items(service: service).map(\.label) == ["Theirs"])
  }

  @Test func deleteRemovesTheItemsOfEveryTool() async throws {
    try await SecretTool.store(service: service, account: "alice", secret: "a", label: "Mine")
    try await PythonKeyring.setPassword(service: service, account: "alice", secret: "b")
    try await Credential(service: service, account: "alice").delete()
    #expect(try await SecretTool.lookup(service: service, account: "alice") == nil)
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == nil)
  }

  @Test func accountsListsItemsOfEveryTool() async throws {
    try await SecretTool.store(service: service, account: "carol", secret: "c", label: "Carol")
    try await PythonKeyring.setPassword(service: service, account: "bob", secret: "b")
    try await Credential(service: service, account: "alice").save("a")
    #expect(try await Credential.accounts(service: service) == ["alice", "bob", "carol"])
  }

  @Test("an empty account, as go-keyring programs use for a service's default item, works both ways with every tool")
  func emptyAccount() async throws {
    try await SecretTool.store(service: service, account: "", secret: "from secret-tool", label: "Default")
    #expect(try await Credential(service: service, account: "").read() == "from secret-tool")
    try await Credential(service: service, account: "").save("from Splint")
    #expect(try await SecretTool.lookup(service: service, account: "") == "from Splint")
    #expect(try await PythonKeyring.getPassword(service: service, account: "") == "from Splint")
    try await PythonKeyring.setPassword(service: service, account: "", secret: "from Python")
    #expect(try await Credential(service: service, account: "").read() == "from Python")
    try await Credential(service: service, account: "alice").save("a")
    #expect(try await Credential.accounts(service: service) == ["", "alice"])
    try await Credential(service: service, account: "").delete()
    #expect(try await SecretTool.lookup(service: service, account: "") == nil)
    #expect(try await PythonKeyring.getPassword(service: service, account: "") == nil)
  }

  @Test("an empty service is a name too: gnome-keyring and secret-tool store and match it")
  func emptyService() async throws {
    let account = "splint-\(UUID().uuidString)"
    try await SecretTool.store(service: "", account: account, secret: "under no service", label: "x")
    #expect(try await Credential(service: "", account: account).read() == "under no service")
    try await Credential(service: "", account: account).delete()
    #expect(try await SecretTool.lookup(service: "", account: account) == nil)
  }
}
