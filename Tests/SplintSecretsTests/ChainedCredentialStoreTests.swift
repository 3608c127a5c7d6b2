import Foundation
import SplintSecrets
import Testing

@Suite struct ChainedCredentialStoreTests {
  let first = InMemoryCredentialStore()
  let second = InMemoryCredentialStore()

  private func credential(_ account: String, in store: any CredentialStore) -> Credential {
    Credential(service: "svc", account: account, store: store)
  }

  @Test("reads take the first store that has the secret, and the chain says which one that is")
  func readsInOrder() throws {
    let chain = ChainedCredentialStore([first, second])
    try credential("both", in: first).save("from first")
    try credential("both", in: second).save("from second")
    try credential("second", in: second).save("only second")
    #expect(try credential("both", in: chain).read() == "from first")
    #expect(try credential("second", in: chain).read() == "only second")
    #expect(try credential("none", in: chain).read() == nil)
    #expect(try chain.answeringStore(for: credential("second", in: chain)) === second)
    #expect(try chain.answeringStore(for: credential("none", in: chain)) == nil)
  }

  @Test(
    "a store that fails stops the read, even when a later store has the secret: a locked keyring is never passed over")
  func errorsStopTheRead() throws {
    try credential("alice", in: second).save("stale")
    first.failure = .locked
    for skipping in [false, true] {
      let chain = ChainedCredentialStore([first, second], skippingUnavailable: skipping)
      #expect(throws: CredentialError.locked) { try credential("alice", in: chain).read() }
      #expect(throws: CredentialError.locked) { try Credential.accounts(service: "svc", store: chain) }
    }
  }

  @Test("a store that cannot be reached here is passed over only when the chain says so")
  func unavailableStoresAreSkippedOnRequest() throws {
    try credential("alice", in: second).save("token")
    first.failure = .noSessionBus
    let strict = ChainedCredentialStore([first, second])
    #expect(throws: CredentialError.noSessionBus) { try credential("alice", in: strict).read() }
    let skipping = ChainedCredentialStore([first, second], skippingUnavailable: true)
    #expect(try credential("alice", in: skipping).read() == "token")
    // Not in the stores that answered, but one could not be reached and might have it: the chain fails closed, and
    // a list of accounts without that store's is no list.
    #expect(throws: CredentialError.noSessionBus) { try credential("bob", in: skipping).read() }
    #expect(throws: CredentialError.noSessionBus) { try Credential.accounts(service: "svc", store: skipping) }
  }

  @Test("when no store can be reached, the error names every store and why, or is the one store's own")
  func noStoreAnswered() throws {
    first.failure = .noSessionBus
    second.failure = .storeUnavailable(store: "other", reason: "It is not set up here.")
    let chain = ChainedCredentialStore([first, second], skippingUnavailable: true)
    let expected = CredentialError.noStoreAnswered([
      .init(store: "InMemoryCredentialStore", error: .noSessionBus),
      .init(
        store: "InMemoryCredentialStore", error: .storeUnavailable(store: "other", reason: "It is not set up here.")),
    ])
    #expect(throws: expected) { try credential("alice", in: chain).read() }
    #expect(throws: expected) { try Credential.accounts(service: "svc", store: chain) }
    #expect(chain.availability() == .unavailable(expected))
    #expect(expected.description.contains("InMemoryCredentialStore: No D-Bus session bus is reachable"))
    let alone = ChainedCredentialStore([first], skippingUnavailable: true)
    #expect(throws: CredentialError.noSessionBus) { try credential("alice", in: alone).read() }
    #expect(alone.availability() == .unavailable(.noSessionBus))
  }

  @Test("available when one of its stores is")
  func availability() {
    first.failure = .noSessionBus
    #expect(ChainedCredentialStore([first, second]).availability() == .available)
  }

  @Test("writes go to the first store that can write; delivered secrets are never written")
  func writesGoToTheFirstWritableStore() throws {
    let delivered = ReadOnlyStore(["alice": Data("delivered".utf8)])
    let chain = ChainedCredentialStore([delivered, first, second])
    #expect(chain.isWritable)
    try credential("bob", in: chain).save("saved")
    #expect(try credential("bob", in: first).read() == "saved")
    #expect(try credential("bob", in: second).read() == nil)
    try credential("bob", in: chain).delete()
    #expect(try credential("bob", in: first).read() == nil)
    #expect(try Credential.accounts(service: "svc", store: chain) == ["alice"])
  }

  @Test("a save or delete that a read-only store's secret would shadow fails with readOnly, naming that store")
  func shadowedWritesAreRefused() async throws {
    let chain = ChainedCredentialStore([ReadOnlyStore(["alice": Data("delivered".utf8)]), first])
    let refused = try #require(throws: CredentialError.self) { try credential("alice", in: chain).save("rotated") }
    #expect(refused.code == .readOnly)
    #expect(refused.description.hasPrefix("read-only delivers its secrets read-only"))
    #expect(
      refused.description.contains(
        "Every read takes it from read-only first, so a change in InMemoryCredentialStore would never be seen"))
    #expect(throws: refused) { try credential("alice", in: chain).delete() }
    await #expect(throws: refused) { try await credential("alice", in: chain).save("rotated") }
    await #expect(throws: refused) { try await credential("alice", in: chain).delete() }
    #expect(try await credential("alice", in: first).read() == nil, "nothing was written where no read would see it")
    #expect(try await credential("alice", in: chain).read() == "delivered")

    // A read-only chain of its own (delivered secrets from two sources, say) is asked as interruptibly as it reads.
    let nested = ChainedCredentialStore(
      [
        ChainedCredentialStore([ReadOnlyStore(), ReadOnlyStore(["alice": Data("delivered".utf8)])], name: "sources"),
        first,
      ])
    let shadowed = try await #require(throws: CredentialError.self) {
      try await credential("alice", in: nested).save("rotated")
    }
    #expect(shadowed.code == .readOnly)
    #expect(shadowed.description.hasPrefix("sources delivers its secrets read-only"), "\(shadowed)")
    await #expect(throws: shadowed) { try await credential("alice", in: nested).delete() }
    try await credential("bob", in: nested).save("not shadowed")
    #expect(try await credential("bob", in: first).read() == "not shadowed")

    // A read-only store that cannot be reached holds nothing here; one that fails otherwise stops the write, as a
    // read through the chain would stop there.
    let unreachable = ChainedCredentialStore([ReadOnlyStore(failure: .serviceUnavailable), first])
    #expect(throws: Never.self) { try credential("alice", in: unreachable).save("saved") }
    #expect(try await credential("alice", in: first).read() == "saved")
    try await credential("alice", in: unreachable).save("saved again")
    #expect(try await credential("alice", in: first).read() == "saved again")
    let locked = ChainedCredentialStore([ReadOnlyStore(failure: .locked), first])
    #expect(throws: CredentialError.locked) { try credential("alice", in: locked).delete() }
    await #expect(throws: CredentialError.locked) { try await credential("alice", in: locked).delete() }
    #expect(try await credential("alice", in: first).read() == "saved again")
  }

  @Test("a chain of read-only stores refuses writes, naming itself")
  func readOnlyChain() throws {
    let chain = ChainedCredentialStore([ReadOnlyStore(), ReadOnlyStore()])
    #expect(!chain.isWritable)
    #expect(chain.name == "read-only, then read-only")
    #expect(ChainedCredentialStore([first], name: "mine").name == "mine")
    let refused = try #require(throws: CredentialError.self) { try credential("alice", in: chain).save("x") }
    #expect(refused.code == .readOnly)
    #expect(refused.description.hasPrefix("read-only, then read-only delivers its secrets read-only"))
    #expect(throws: refused) { try credential("alice", in: chain).delete() }
  }

  @Test("accounts are merged from every store, sorted, without duplicates")
  func accountsAreMerged() throws {
    try credential("carol", in: first).save("c")
    try credential("alice", in: first).save("a")
    try credential("alice", in: second).save("a")
    try credential("bob", in: second).save("b")
    let chain = ChainedCredentialStore([first, second])
    #expect(try Credential.accounts(service: "svc", store: chain) == ["alice", "bob", "carol"])
  }

  @Test("the Secret Service in a chain keeps its interruptible calls")
  func secretServiceInAChain() async throws {
    let chain = ChainedCredentialStore([ReadOnlyStore(), SecretServiceStore.shared])
    let token = Credential(service: "splint-chain-test-\(UUID())", account: "alice", store: chain)
    try await token.save("through the chain")
    #expect(try await token.read() == "through the chain")
    #expect(try await Credential.accounts(service: token.service, store: chain) == ["alice"])
    try await token.delete()
    #expect(try await token.read() == nil)
  }

  @Test("the asynchronous API walks the chain as the synchronous one does")
  func asynchronousVariants() async throws {
    let delivered = ReadOnlyStore(["alice": Data("delivered".utf8)])
    let chain = ChainedCredentialStore([delivered, first, second], skippingUnavailable: true)
    #expect(try await credential("alice", in: chain).read() == "delivered")
    #expect(try await credential("none", in: chain).read() == nil)
    try await credential("bob", in: chain).save("saved")
    #expect(first.contentType(for: credential("bob", in: first)) == .text)
    #expect(try await Credential.accounts(service: "svc", store: chain) == ["alice", "bob"])
    try await credential("bob", in: chain).delete()
    #expect(try await credential("bob", in: chain).read() == nil)
    first.failure = .noSessionBus
    #expect(try await credential("alice", in: chain).read() == "delivered")
    second.failure = .locked
    await #expect(throws: CredentialError.locked) { try await credential("carol", in: chain).read() }
    await #expect(throws: CredentialError.locked) { try await Credential.accounts(service: "svc", store: chain) }
    let unreachable = ChainedCredentialStore([first, first], skippingUnavailable: true)
    await #expect(
      throws: CredentialError.noStoreAnswered([
        .init(store: "InMemoryCredentialStore", error: .noSessionBus),
        .init(store: "InMemoryCredentialStore", error: .noSessionBus),
      ])
    ) { try await credential("alice", in: unreachable).read() }
    let readOnly = ChainedCredentialStore([delivered])
    let refused = CredentialError.readOnly(
      store: "read-only",
      remedy: "Add a store that can write to the chain, such as the Secret Service, or save with that store.")
    await #expect(throws: refused) { try await credential("alice", in: readOnly).save("x") }
    await #expect(throws: refused) { try await credential("alice", in: readOnly).delete() }
  }
}
