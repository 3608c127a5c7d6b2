#if SplintFleet
  import Glibc
  import NIOHTTP1
  import SplintSecrets
  import SplintSettings
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// The server's addresses, and one request sent to them the way a cluster wants it: to the address that answered
  /// last, then the others; a standby's redirect followed only to a configured address; 429 (after its
  /// `Retry-After`), 412 and an election's 500 or 503 tried again on another address until the call's deadline;
  /// sealed only when every address is. Asynchronous, over the HTTP client's asynchronous API: a caller that waits
  /// holds no thread, and cancelling its task ends the request at once.
  final class VaultServer: Sendable {
    /// One address: its scheme, host and port, as requests and redirects are compared.
    struct Address: Sendable, Hashable {
      /// `https://vault.example.com:8200`, without a trailing slash.
      let base: String

      /// `text` as an address (``FleetServerURL``'s rule), or why it cannot be one.
      init(_ text: String) throws(CredentialError) {
        do throws(FleetServerURL.Problem) {
          base = try FleetServerURL(text).base
        } catch .notAServerURL {
          throw .invalidConfiguration(
            "\"\(text)\" is not a server address: give its scheme, host and port, such as https://vault.example.com:8200."
          )
        } catch {
          throw .invalidConfiguration(
            """
            \(text) is reached without TLS, so its tokens and secrets would cross the network in the clear: use \
            https (plain http is allowed only to a literal loopback address, 127.0.0.1 or [::1]).
            """)
        }
      }
    }

    /// A request's answer, or why no address gave one.
    enum Failure: Error {
      /// Every address is sealed.
      case sealed([String])
      /// No address answered; what happened at each.
      case unreachable(String)
      /// The task waiting for the answer was cancelled.
      case cancelled
    }

    let addresses: [Address]
    let client: FleetHTTPClient
    let namespace: String?
    let timeout: Duration
    /// The store's name, for messages.
    let name: String
    /// Whether requests ask a standby to redirect rather than forward (`X-Vault-No-Request-Forwarding`), as a client
    /// that wants to reach the active node itself does; the tests use it to see redirects followed.
    let refusesForwarding: Bool

    /// The address that answered last, asked first; the newest `X-Vault-Index` seen, sent back so that a standby that
    /// has not caught up with this process's own writes says so (429) rather than answer from the past; when each
    /// address may be asked again after a 429.
    private let state = Mutex<(preferred: Int, index: String?, notBefore: [ContinuousClock.Instant])>((0, nil, []))

    init(
      addresses: [Address], client: FleetHTTPClient, namespace: String?, timeout: Duration, name: String,
      refusesForwarding: Bool = false
    ) {
      self.addresses = addresses
      self.client = client
      self.namespace = namespace
      self.timeout = timeout
      self.name = name
      self.refusesForwarding = refusesForwarding
      let now = ContinuousClock.now
      state.withLock { $0.notBefore = Array(repeating: now, count: addresses.count) }
    }

    /// The newest `X-Vault-Index` the store saw; the tests set one a standby has not reached.
    var lastIndex: String? {
      get { state.withLock { $0.index } }
      set { state.withLock { $0.index = newValue } }
    }

    /// `method /v1/path?query` with `token` and `body`, its answer from the first address that gives one, within
    /// the call's deadline. `path` is the API's (a KV path as the server keeps it): it is percent-encoded here.
    func send(
      _ method: HTTPMethod, _ path: String, query: String? = nil, token: String?, body: Data? = nil
    ) async throws(Failure) -> FleetHTTPResponse {
      let target = Self.percentEncoded(path) + (query.map { "?" + $0 } ?? "")
      let deadline = ContinuousClock.now + timeout
      var headers = HTTPHeaders()
      if let token { headers.add(name: "X-Vault-Token", value: token) }
      if let namespace { headers.add(name: "X-Vault-Namespace", value: namespace) }
      if refusesForwarding { headers.add(name: "X-Vault-No-Request-Forwarding", value: "true") }
      if body != nil { headers.add(name: "Content-Type", value: "application/json") }
      let (first, index) = state.withLock { ($0.preferred, $0.index) }
      if let index { headers.add(name: "X-Vault-Index", value: index) }
      var backoff = Duration.milliseconds(50)
      var said: [String] = []  // what the addresses said in the last round in which any was asked
      while ContinuousClock.now < deadline, !Task.isCancelled {
        var notes: [String] = []
        var sealed: [String] = []
        var again = false
        for step in 0..<addresses.count {
          let slot = (first + step) % addresses.count
          let address = addresses[slot]
          let now = ContinuousClock.now
          guard state.withLock({ $0.notBefore[slot] }) <= now else {
            again = true
            continue
          }
          let attempt = min(deadline - now, addresses.count > 1 ? max(timeout / 3, .seconds(1)) : timeout)
          guard attempt > .zero else { break }
          switch try await answer(method, address.base, target, headers, body, attempt) {
          case .answer(let response):
            state.withLock { state in
              state.preferred = slot
              if let index = response.header("X-Vault-Index") { state.index = index }
            }
            return response
          case .sealed:
            sealed.append(address.base)
          case .failed(let note):
            notes.append(note)
          case .later(let note, let wait):
            notes.append(note)
            again = true
            if let wait { state.withLock { $0.notBefore[slot] = ContinuousClock.now + wait } }
          }
        }
        if sealed.count == addresses.count { throw .sealed(sealed) }
        if !notes.isEmpty || !sealed.isEmpty { said = notes + sealed.map { "\($0) is sealed." } }
        guard again else { throw .unreachable(said.joined(separator: " ")) }
        // Every address said "later": wait for the first that may be asked again (a 429's Retry-After), or a short,
        // growing pause (an election), within the deadline.
        let earliest = state.withLock { $0.notBefore.min() ?? .now } - ContinuousClock.now
        await CallerThread.pause(
          max(.zero, min(deadline - ContinuousClock.now, max(min(backoff, .seconds(1)), earliest))))
        backoff *= 2
      }
      guard !Task.isCancelled else { throw .cancelled }
      throw .unreachable((said + ["No address answered within \(timeout)."]).joined(separator: " "))
    }

    /// `path` as a URL's path: every byte but RFC 3986's unreserved characters and `/` written `%XX`, so that a
    /// secret's name (`alice%40example.com`, `a b`) reaches the server as it is written.
    static func percentEncoded(_ path: String) -> String {
      VaultConfiguration.percentEncoded(path) { VaultConfiguration.isUnreserved($0) || $0 == UInt8(ascii: "/") }
    }

    /// What one address made of a request.
    enum Outcome {
      /// An answer to give the caller.
      case answer(FleetHTTPResponse)
      /// The address is sealed.
      case sealed
      /// The address cannot answer (unreachable, a redirect elsewhere); the note says what happened.
      case failed(String)
      /// The address asks to be asked later (a standby behind, an election), after `wait` when it said.
      case later(String, wait: Duration?)
    }

    /// Sends the request to `base`, following one redirect to a configured address.
    ///
    /// - Throws: ``Failure/cancelled`` when the task is cancelled: no other address is asked then.
    private func answer(
      _ method: HTTPMethod, _ base: String, _ path: String, _ headers: HTTPHeaders, _ body: Data?, _ attempt: Duration
    ) async throws(Failure) -> Outcome {
      var response: FleetHTTPResponse
      switch try await request(method, base + "/v1/" + path, headers, body, attempt) {
      case .success(let answer): response = answer
      case .failure(let error): return .failed("\(error.description.prefixSentence).")
      }
      if [301, 302, 307, 308].contains(response.status) {
        let location = response.header("Location") ?? ""
        let target = FleetHTTPClient.server(of: location)
        guard addresses.contains(where: { $0.base == target }) else {
          return .failed(
            """
            \(base) redirected to \(target), which is not one of the addresses configured: a redirect is followed \
            only to those. Add it to the store's addresses if it is a member of the cluster.
            """)
        }
        switch try await request(method, location, headers, body, attempt) {
        case .success(let answer): response = answer
        case .failure(let error):
          // A standby that sends clients to an active member that is gone: the others are electing a new one.
          return .later("\(base) redirected to \(error.description.prefixSentence).", wait: nil)
        }
      }
      return Self.outcome(of: response, from: base)
    }

    /// The HTTP client's answer to one request, or its failure.
    ///
    /// - Throws: ``Failure/cancelled`` when the task is cancelled. A request that fails once its task is cancelled
    ///   is cancelled, whatever error the HTTP client gives (one still waiting for a connection of the client's pool
    ///   can fail as the pool's).
    private func request(
      _ method: HTTPMethod, _ url: String, _ headers: HTTPHeaders, _ body: Data?, _ attempt: Duration
    ) async throws(Failure) -> Result<FleetHTTPResponse, FleetTransportError> {
      do {
        return .success(try await client.send(method, url, headers: headers, body: body, timeout: attempt))
      } catch  where error.kind == .cancelled || Task.isCancelled {
        throw .cancelled
      } catch {
        return .failure(error)
      }
    }

    /// What an answer means for the request loop.
    static func outcome(of response: FleetHTTPResponse, from base: String) -> Outcome {
      switch response.status {
      case 503:
        let text = errors(in: response.body).joined(separator: " ")
        if text.contains("sealed") || saysSealed(response.body) { return .sealed }
        return .later("\(base) is unavailable (503\(text.isEmpty ? "" : ": \(text)")).", wait: nil)
      case 429:
        let wait = response.header("Retry-After").flatMap(Int.init).map { Duration.seconds(min(max($0, 0), 30)) }
        return .later(
          "\(base) asked to be asked later (429: a standby behind the active node, or a limit).", wait: wait)
      case 412:
        return .later("\(base) has not caught up with this process's last write (412).", wait: nil)
      case 500 where errors(in: response.body).contains(where: isElection):
        return .later("\(base) has no active node yet (an election).", wait: nil)
      default:
        return .answer(response)
      }
    }

    /// The `errors` of an answer's JSON body, as shown: control characters escaped, each cut to a line's length,
    /// at most ten (the server's words, printed, logged and put in errors).
    static func errors(in body: [UInt8]) -> [String] {
      (VaultJSON.parse(body)?["errors"]?.elements.prefix(10).compactMap { $0.text(in: body)?.shown() }) ?? []
    }

    /// Whether a health or seal-status body says `"sealed": true`.
    private static func saysSealed(_ body: [UInt8]) -> Bool {
      VaultJSON.parse(body)?["sealed"]?.isTrue ?? false
    }

    /// Whether a 500's error is a cluster's election, when a standby has no active node to forward to.
    private static func isElection(_ error: String) -> Bool {
      ["not active", "active cluster node not found", "leadership", "no active node"].contains { error.contains($0) }
    }
  }

  extension String {
    /// The text without a final period, to go on in a sentence of its own.
    var prefixSentence: String { hasSuffix(".") ? String(dropLast()) : self }
  }
#endif
