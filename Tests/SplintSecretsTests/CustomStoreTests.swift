import Foundation
import SplintSecrets
import Synchronization
import Testing

/// A store a user might write (say, over a vault service) implements only the synchronous requirements; the
/// protocol's defaults give it the asynchronous ones.
final class VaultStore: CredentialStore {
  let secrets = Mutex<[String: Data]>([:])

  func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    secrets.withLock { $0[credential.account] }
  }

  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError) {
    secrets.withLock { $0[credential.account] = secret }
  }

  func deleteSecret(for credential: Credential) throws(CredentialError) {
    if credential.account == "forbidden" { throw .backend(domain: "vault", code: 403, message: "Forbidden.") }
    secrets.withLock { $0[credential.account] = nil }
  }

  func accounts(service: String) throws(CredentialError) -> [String] {
    secrets.withLock { $0.keys.sorted() }
  }

  func availability() -> CredentialAvailability { .available }
}

/// A store whose reads block until `parties` of them are waiting at once, or give up after ten seconds.
final class RendezvousStore: CredentialStore {
  let parties: Int
  private let arrived = Mutex(0)
  private let everyone = DispatchSemaphore(value: 0)

  init(parties: Int) { self.parties = parties }

  func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    let count = arrived.withLock { count in
      count += 1
      return count
    }
    if count == parties { for _ in 1..<parties { everyone.signal() } }
    if count < parties, everyone.wait(timeout: .now() + 10) == .timedOut { throw .timedOut }
    return Data("met \(parties)".utf8)
  }

  func saveSecret(_ secret: Data, contentType: SecretContentType, for credential: Credential) throws(CredentialError) {}
  func deleteSecret(for credential: Credential) throws(CredentialError) {}
  func accounts(service: String) throws(CredentialError) -> [String] { [] }
  func availability() -> CredentialAvailability { .available }
}

@Suite struct CustomStoreTests {
  @Test func asyncDefaultsRunTheSynchronousRequirements() async throws {
    let store = VaultStore()
    let credential = Credential(service: "vault", account: "alice", store: store)
    try await credential.save("from async")
    #expect(try await credential.read() == "from async")
    #expect(try await Credential.accounts(service: "vault", store: store) == ["alice"])
    try await credential.delete()
    #expect(try await credential.readData() == nil)
    await #expect(throws: CredentialError.backend(domain: "vault", code: 403, message: "Forbidden.")) {
      try await Credential(service: "vault", account: "forbidden", store: store).delete()
    }
  }

  @Test("blocking calls made through the async API do not hold Swift's cooperative threads")
  func blockingCallsDoNotStarveTheCooperativePool() async throws {
    // Each read blocks until all of them are blocked at once: more than the cooperative pool has threads, so
    // this completes only if every call waits on a thread of its own.
    let parties = 4 * ProcessInfo.processInfo.activeProcessorCount + 2
    let store = RendezvousStore(parties: parties)
    let results = try await withThrowingTaskGroup(of: String?.self) { group in
      for index in 0..<parties {
        group.addTask { try await Credential(service: "svc", account: "\(index)", store: store).read() }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results == Array(repeating: "met \(parties)", count: parties))
  }
}
