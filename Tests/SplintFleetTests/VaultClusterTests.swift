#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import TestSupport
  import Testing
  @testable import SplintFleet

  /// A real HA set-up: three OpenBao servers in one raft cluster on loopback.
  @Suite(.startsServers) struct VaultClusterTests {
    @Test(
      "redirects only to configured members; a standby behind is asked later; the active member killed, reads and saves go on"
    )
    func cluster() async throws {
      let cluster = try await OpenBaoCluster.start()
      let root = cluster.nodes[0].rootToken
      func store(
        _ nodes: [OpenBaoServer], timeout: Duration, refusesForwarding: Bool = false
      ) throws -> VaultCredentialStore {
        var configuration = VaultConfiguration(addresses: nodes.map(\.address), login: .token(root))
        configuration.timeout = timeout
        return try VaultCredentialStore(configuration, refusesForwarding: refusesForwarding)
      }
      let all = try store(cluster.nodes, timeout: .seconds(30))
      try await credential("a", all).save("before")
      let active = try #require(await cluster.active())
      let standby = cluster.nodes[(active + 1) % cluster.nodes.count]

      // A standby answers reads itself, and may be a moment behind the active member's last write: a save whose
      // check-and-set read it answered would then be refused as a conflict, before any redirect. Wait until it has
      // the first save.
      let onStandby = try store([standby], timeout: .seconds(10))
      let caughtUp = await eventually { (try? await credential("a", onStandby).read()) == "before" }
      #expect(caughtUp)

      // A standby that does not forward answers a write with a redirect to the active member: followed only to a
      // member the store was given.
      let alone = try store([standby], timeout: .seconds(3), refusesForwarding: true)
      let refused = await failure { () throws(CredentialError) in try credential("a", alone).save("x") }
      #expect(refused?.code == .unreachable)
      #expect(
        refused?.description.contains(
          "redirected to \(cluster.nodes[active].address), which is not one of the addresses")
          == true, "\(String(describing: refused))")
      let followed = try store([standby, cluster.nodes[active]], timeout: .seconds(10), refusesForwarding: true)
      try await credential("a", followed).save("through a redirect")
      #expect(try await credential("a", all).read() == "through a redirect")
      #expect(all.server.lastIndex != nil, "the store keeps the newest X-Vault-Index it saw, to send it back")

      // A standby that has not caught up with an index the store saw answers 429 (Retry-After: 1): the store asks
      // the next member, or asks again after the wait when it knows no other, until its deadline.
      let health = try cluster.nodes[active].api(.GET, "sys/health").json
      let clusterID = try #require(health["cluster_id"] as? String)
      let future = Data(#"{"cluster":"\#(clusterID)","value":"999999999"}"#.utf8).base64EncodedString()
      let ahead = try store([standby, cluster.nodes[active]], timeout: .seconds(10))
      ahead.server.lastIndex = future
      #expect(try await credential("a", ahead).read() == "through a redirect")
      let otherStandby = cluster.nodes[(active + 2) % cluster.nodes.count]
      let behind = try store([standby, otherStandby], timeout: .seconds(3))
      behind.server.lastIndex = future
      let started = ContinuousClock.now
      let late = await failure { () throws(CredentialError) in try credential("a", behind).read() }
      #expect(late?.code == .unreachable)
      #expect(late?.description.contains("429") == true, "\(String(describing: late))")
      #expect(ContinuousClock.now - started >= .seconds(2), "Retry-After was not waited for")

      // The active member killed: reads and saves go on once the others have elected one (within the timeout).
      await cluster.nodes[active].crash()
      let killed = ContinuousClock.now
      try await credential("a", all).save("after")
      #expect(try await credential("a", all).read() == "after")
      print("a save went through \(ContinuousClock.now - killed) after the active member was killed")
      await cluster.stop()
    }
  }
#endif
