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
