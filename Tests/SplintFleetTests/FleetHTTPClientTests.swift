#if SplintFleet
  import AsyncHTTPClient
  import Glibc
  import NIOCore
  import NIOHTTP1
  import TestSupport
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

    @Test(
      "an answer past the caller's limit, a line past the stream's, and a URL that is not one are refused, typed",
      .startsServers)
    func limits() async throws {
      let etcd = try await LocalEtcd.start(size: 1)
      let client = FleetHTTPClient()
      let range = Array(#"{"key":"AA=="}"#.utf8)
      let url = etcd.endpoints[0] + "/v3/kv/range"
      let whole = try await client.send(.POST, url, body: range, timeout: .seconds(5))
      #expect(whole.status == 200 && whole.body.count > 40)
      do {
        _ = try await client.send(.POST, url, body: range, timeout: .seconds(5), maximumBodySize: 40)
        Issue.record("an answer larger than allowed was read")
      } catch {
        #expect(error.kind == .tooLarge && error.reason == "the answer is larger than allowed")
      }
      // etcd's watch sends a line as soon as it is made; here, no line may be longer than 20 bytes.
      let watch = Array(#"{"create_request":{"key":"AA=="}}"#.utf8)
      let stream = try await client.stream(
        .POST, etcd.endpoints[0] + "/v3/watch", body: watch, timeout: .seconds(5), maximumLineSize: 20)
      do {
        for try await _ in stream.lines { Issue.record("a line longer than allowed was read") }
        Issue.record("the stream ended without an error")
      } catch let error as FleetTransportError {
        #expect(error.kind == .tooLarge && error.reason.contains("longer than 20 bytes"))
      }
      do {
        _ = try await client.send(.GET, "http:///v3", timeout: .seconds(2))
        Issue.record("a URL without a host was sent")
      } catch {
        #expect(error.kind == .unreachable)
      }
      // A request to a member that stopped answering (SIGSTOP: its kernel still takes the connection) ends when its
      // task is cancelled, well before its deadline.
      etcd.pause(etcd.members[0])
      let started = ContinuousClock.now
      let waiting = Task { () async -> FleetTransportError? in
        do throws(FleetTransportError) {
          _ = try await client.send(.POST, url, body: range, timeout: .seconds(30))
          return nil
        } catch {
          return error
        }
      }
      // Cancelled once its request waits, unread, in the stopped member's socket: in flight, not before it is sent.
      #expect(
        await WaitingRequests.arrive(at: etcd.members[0].clientPort), "the request never reached the stopped member")
      waiting.cancel()
      #expect(await waiting.value?.kind == .cancelled)
      #expect(ContinuousClock.now - started < .seconds(10))
      etcd.resume(etcd.members[0])
      // A stream to a port no one listens on fails before it starts, typed.
      do {
        _ = try await client.stream(
          .POST, "http://127.0.0.1:\(freeLoopbackPort())/v3/watch", body: watch, timeout: .seconds(2))
        Issue.record("a stream started without a server")
      } catch {
        #expect(error.kind == .unreachable)
      }
      await etcd.stopAll()
    }

    @Test("what async-http-client reports becomes the kind of failure callers act on")
    func classification() {
      let url = "http://127.0.0.1:2379/v3/watch"
      let closed = FleetHTTPClient.transportError(
        HTTPClientError.remoteConnectionClosed, url: url, timeout: .seconds(1))
      #expect(closed.kind == .unreachable && closed.reason == "the server closed the connection")
      let other = FleetHTTPClient.transportError(HTTPClientError.emptyHost, url: url, timeout: .seconds(1))
      #expect(other.kind == .unreachable && other.reason.hasPrefix("cannot connect"))
      let late = FleetHTTPClient.transportError(HTTPClientError.readTimeout, url: url, timeout: .seconds(1))
      #expect(late.kind == .timedOut && late.server == "http://127.0.0.1:2379")
      // SwiftNIO's own words say the cause twice (`connection reset (error set): Connection refused) (errno: 111)`):
      // the system's, once.
      let refused = IOError(errnoCode: ECONNREFUSED, reason: "connection reset (error set)")
      let plain = FleetHTTPClient.transportError(refused, url: url, timeout: .seconds(1))
      #expect(plain.kind == .unreachable && plain.description == "http://127.0.0.1:2379: connection refused")
    }
  }
#endif
