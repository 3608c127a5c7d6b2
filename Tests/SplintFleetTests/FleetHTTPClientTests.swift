#if SplintFleet
  import NIOHTTP1
  import Testing
  @testable import SplintFleet

  @Suite struct FleetHTTPClientTests {
    @Test func errorsNameTheServerOnly() {
      #expect(
        FleetHTTPClient.server(of: "https://vault.example.com:8200/v1/secret/data/a?token=x")
          == "https://vault.example.com:8200")
      #expect(FleetHTTPClient.server(of: "http://[::1]:2379/v3/watch") == "http://[::1]:2379")
      #expect(FleetHTTPClient.server(of: "http://127.0.0.1/v3/kv/range") == "http://127.0.0.1")
      #expect(FleetHTTPClient.server(of: "not a url") == "the server")
    }

    @Test func aClosedPortIsUnreachable() async throws {
      let client = FleetHTTPClient()
      // Port 1 on loopback: nothing listens there, and the kernel refuses at once.
      await #expect(throws: FleetTransportError.self) {
        try await client.send(.GET, "http://127.0.0.1:1/", timeout: .seconds(2))
      }
      do {
        _ = try client.sendBlocking(.GET, "http://127.0.0.1:1/", timeout: .seconds(2))
        Issue.record("a closed port answered")
      } catch {
        #expect(error.kind == .unreachable)
        #expect(error.server == "http://127.0.0.1:1")
      }
    }
  }
#endif
