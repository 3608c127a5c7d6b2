#if SplintFleet
  import NIOHTTP1
  import SplintSecrets
  import SplintSettings
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// etcd's v3 API, through the JSON gateway every member serves on its client port, over the fleet's one HTTP
  /// client: ranges, puts, deletes and transactions with a deadline each, and the watch's stream. It moves to the next
  /// endpoint when a member cannot be reached, has no leader or does not answer in time, and authenticates (again,
  /// when a token expires) when the cluster has a user.
  final class EtcdGateway: Sendable {
    let cluster: EtcdCluster
    private let client: FleetHTTPClient
    /// The endpoints, as URLs without a trailing slash.
    let endpoints: [String]
    /// The endpoint to try first: the one that answered last.
    private let preferred = Atomic<Int>(0)
    /// The token `authenticate` got, per endpoint's cluster (one cluster: one token), while it is valid.
    private let token = Mutex<String?>(nil)
    /// This machine's clock minus the cluster's, in seconds, as the last answer's `Date` header told it.
    private let offset = Mutex<Double?>(nil)

    /// This machine's clock minus the cluster's (the `Date` header of the member that answered last, to half a
    /// second, and the time its answer took), in seconds; nil before a member's answer had one.
    var clockOffset: Double? { offset.withLock { $0 } }

    init(cluster: EtcdCluster) throws(FleetError) {
      self.cluster = cluster
      guard !cluster.endpoints.isEmpty else {
        throw FleetError(.invalidConfiguration("no endpoint is given: name the cluster's client URLs (--endpoints)."))
      }
      var endpoints: [String] = []
      for endpoint in cluster.endpoints {
        do throws(FleetServerURL.Problem) {
          endpoints.append(try FleetServerURL(endpoint).base)
        } catch .notAServerURL {
          throw FleetError(
            .invalidConfiguration(
              "\(endpoint) is not a client URL of an etcd member: use http(s)://HOST:PORT, such as https://10.0.0.1:2379."
            ))
        } catch {
          // Plain HTTP only where nothing but this machine is on the way: anyone else on it could read a password,
          // and change every value (and what is enforced) on every machine.
          throw FleetError(.insecureEndpoint(endpoint))
        }
      }
      self.endpoints = endpoints
      do {
        client = FleetHTTPClient(tls: try cluster.tls.configuration())
      } catch {
        throw FleetError(.invalidConfiguration(error.description))
      }
    }

    // MARK: - Unary calls

    /// Calls `path` with `request`, on the preferred endpoint and then each other in turn, until one answers: its
    /// response, decoded, and the endpoint that answered.
    ///
    /// - Throws: ``FleetError/Code/unreachable`` when none answered; what the cluster answered otherwise (a refused
    ///   password, a permission it does not give).
    func call<Request: Encodable, Response: Decodable>(
      _ path: String, _ request: Request, as: Response.Type, timeout: Duration? = nil
    ) async throws(FleetError) -> (response: Response, endpoint: Int) {
      try await call(path, body: Self.encode(request), as: Response.self, timeout: timeout)
    }

    /// ``call(_:_:as:timeout:)`` with a request already written: `body`, which the caller wipes when it holds a
    /// password.
    func call<Response: Decodable>(
      _ path: String, body: [UInt8], as: Response.Type, timeout: Duration? = nil
    ) async throws(FleetError) -> (response: Response, endpoint: Int) {
      var failures: [String] = []
      var tls: FleetError?
      var onlyTLS = true
      let first = preferred.load(ordering: .relaxed)
      for offset in endpoints.indices {
        let index = (first + offset) % endpoints.count
        do throws(FleetError) {
          let response = try await call(path, body: body, as: Response.self, on: index, timeout: timeout)
          preferred.store(index, ordering: .relaxed)
          return (response, index)
        } catch  where error.movesOn {
          failures.append("\(endpoints[index]): \(error.shortReason)")
          if error.code == .tls { tls = error } else { onlyTLS = false }
        }
      }
      // Every member failed TLS: that is what to tell (the CA, the client certificate), not "unreachable".
      if onlyTLS, let tls { throw tls }
      throw FleetError(.unreachable(failures))
    }

    /// Calls `path` on endpoint `index` alone, authenticating first when the cluster has a user and no token is held,
    /// and once more when the token has expired.
    func call<Request: Encodable, Response: Decodable>(
      _ path: String, _ request: Request, as: Response.Type, on index: Int, timeout: Duration? = nil
    ) async throws(FleetError) -> Response {
      try await call(path, body: Self.encode(request), as: Response.self, on: index, timeout: timeout)
    }

    /// ``call(_:_:as:on:timeout:)`` with a request already written.
    private func call<Response: Decodable>(
      _ path: String, body: [UInt8], as: Response.Type, on index: Int, timeout: Duration?
    ) async throws(FleetError) -> Response {
      guard let response = try await call(path, body: body, as: Response.self, on: index, timeout: timeout, limit: nil)
      else { preconditionFailure("without a limit, no answer is too large") }  // coverage:ignore — see the line above
      return response
    }

    /// ``call(_:_:as:on:timeout:)`` with an answer of at most `limit` bytes (8 MiB unless given): nil when the
    /// member's answer is larger, which the caller asks again in smaller parts.
    func call<Request: Encodable, Response: Decodable>(
      _ path: String, _ request: Request, as: Response.Type, on index: Int, timeout: Duration? = nil, limit: Int?
    ) async throws(FleetError) -> Response? {
      try await call(path, body: Self.encode(request), as: Response.self, on: index, timeout: timeout, limit: limit)
    }

    /// ``call(_:_:as:on:timeout:limit:)`` with a request already written.
    private func call<Response: Decodable>(
      _ path: String, body: [UInt8], as: Response.Type, on index: Int, timeout: Duration?, limit: Int?
    ) async throws(FleetError) -> Response? {
      var retried = false
      while true {
        let headers = try await headers(on: index)
        let answer: FleetHTTPResponse
        let sent = Date()
        do throws(FleetTransportError) {
          answer = try await client.send(
            .POST, endpoints[index] + path, headers: headers, body: body, timeout: timeout ?? cluster.requestTimeout,
            maximumBodySize: limit ?? Self.maximumAnswer)
        } catch {
          if limit != nil, error.kind == .tooLarge { return nil }
          throw FleetError(transport: error, timeout: timeout ?? cluster.requestTimeout)
        }
        if answer.status == 200 {
          if let date = answer.date {
            // The member's clock was between the header's second and the next one as it answered, between `sent`
            // and now.
            let answered = sent.timeIntervalSince1970 + Date().timeIntervalSince(sent) / 2
            offset.withLock { $0 = answered - (date.timeIntervalSince1970 + 0.5) }
          }
          return try Self.decode(answer.body, as: Response.self, answering: path, server: endpoints[index])
        }
        let failure = Self.failure(in: answer)
        if failure.code == EtcdFailure.unauthenticated || failure.isStaleToken, cluster.user != nil, !retried {
          // The token expired (etcd's simple tokens do after 5 minutes unused), the member restarted, or a user or
          // role changed since it was made (a JWT token).
          token.withLock { $0 = nil }
          retried = true
          continue
        }
        throw FleetError(failure: failure, server: endpoints[index], user: cluster.user)
      }
    }  // coverage:ignore — the loop above returns or throws

    /// The largest answer read whole, unless a call says otherwise.
    static let maximumAnswer = 8 << 20

    /// The headers of every request: the token when the cluster has a user (authenticating for one first).
    private func headers(on index: Int) async throws(FleetError) -> HTTPHeaders {
      var headers: HTTPHeaders = ["Content-Type": "application/json"]
      guard let user = cluster.user else { return headers }
      if let token = token.withLock({ $0 }) {
        headers.add(name: "Authorization", value: token)
        return headers
      }
      let fresh = try await authenticate(user: user, on: index)
      token.withLock { $0 = fresh }
      headers.add(name: "Authorization", value: fresh)
      return headers
    }

    /// Authenticates `user` with its password, read through its `Credential` now (never kept): a token.
    private func authenticate(user: String, on index: Int) async throws(FleetError) -> String {
      let credential = cluster.password ?? Credential(service: "etcd", account: user)
      var password: Data
      do {
        guard let stored = try await credential.readData() else {
          throw FleetError(
            .noPassword(user: user, reason: "no store holds \(credential.service)/\(credential.account)."))
        }
        password = stored
      } catch let error as FleetError {
        throw error
      } catch {
        throw FleetError(.noPassword(user: user, reason: "\(error)"))
      }
      defer { password.resetBytes(in: 0..<password.count) }
      // The body is made from the password's bytes, never a String (which cannot be wiped), and wiped after use.
      guard var body = Self.authenticationBody(user: user, password: password) else {
        throw FleetError(.noPassword(user: user, reason: "it is not UTF-8 text."))
      }
      defer { body.withUnsafeMutableBufferPointer { $0.initialize(repeating: 0) } }
      let answer: FleetHTTPResponse
      do throws(FleetTransportError) {
        answer = try await client.send(
          .POST, endpoints[index] + "/v3/auth/authenticate", headers: ["Content-Type": "application/json"], body: body,
          timeout: cluster.requestTimeout)
      } catch {
        throw FleetError(transport: error, timeout: cluster.requestTimeout)
      }
      guard answer.status == 200 else {
        throw FleetError(failure: Self.failure(in: answer), server: endpoints[index], user: user)
      }
      return try Self.decode(
        answer.body, as: EtcdAuthenticateResponse.self, answering: "/v3/auth/authenticate", server: endpoints[index]
      ).token
    }

    /// `{"name": user, "password": password}`, written from the password's bytes; nil when they are not UTF-8.
    static func authenticationBody(user: String, password: Data) -> [UInt8]? {
      var iterator = password.makeIterator()
      var decoder = UTF8()
      decoding: while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: break decoding
        case .error: return nil
        }
      }
      var body = Array("{\"name\":".utf8) + encode(user) + Array(",\"password\":\"".utf8)
      // Room for the worst case, so that no growth leaves a copy of part of the password behind in freed memory.
      body.reserveCapacity(body.count + password.count * 6 + 2)
      for byte in password {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
          body += [UInt8(ascii: "\\"), byte]
        case 0..<0x20:
          body += Array("\\u00".utf8) + [hexDigit(byte >> 4), hexDigit(byte & 0xF)]
        default:
          body.append(byte)
        }
      }
      body += Array("\"}".utf8)
      return body
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
      value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// What a failed call's body says, or what its status says when the body is no etcd failure.
    private static func failure(in answer: FleetHTTPResponse) -> EtcdFailure {
      (try? JSONDecoder().decode(EtcdFailure.self, from: Data(answer.body)))
        ?? EtcdFailure(
          message: "HTTP status \(answer.status)",
          code: answer.status == 404 ? EtcdFailure.unimplemented : EtcdFailure.unknown)
    }

    /// `body`, a member's answer to `path`, as etcd's `Response`; an answer that is not one is an error naming
    /// `server`.
    static func decode<Response: Decodable>(
      _ body: [UInt8], as: Response.Type, answering path: String, server: String
    ) throws(FleetError) -> Response {
      guard let response = try? JSONDecoder().decode(Response.self, from: Data(body)) else {
        throw FleetError(.invalidResponse(server: server, reason: "its answer to \(path) is not etcd's"))
      }
      return response
    }

    /// `value` as the gateway's JSON.
    private static func encode(_ value: some Encodable) -> [UInt8] {
      // Encoding these plain structs cannot fail.
      Array((try? JSONEncoder().encode(value)) ?? Data())
    }

    // MARK: - Watching

    /// Starts a watch of `key`..<`rangeEnd` from `revision` on endpoint `index`, with progress notifications, and
    /// the header that makes a member without a leader end it (etcd #10819): its lines, once the member has
    /// answered. With `prevKV`, each event carries the key as it was before.
    func watch(
      from revision: Int64, key: [UInt8], rangeEnd: [UInt8], on index: Int, prevKV: Bool = false
    ) async throws(FleetError) -> FleetHTTPClient.Lines {
      let request = EtcdWatchRequest(
        createRequest: .init(
          key: EtcdBytes(key), rangeEnd: EtcdBytes(rangeEnd), startRevision: String(revision), prevKV: prevKV))
      var headers = try await headers(on: index)
      headers.add(name: "Grpc-Metadata-Hasleader", value: "true")
      let stream: FleetHTTPClient.Stream
      do throws(FleetTransportError) {
        stream = try await client.stream(
          .POST, endpoints[index] + "/v3/watch", headers: headers, body: Self.encode(request),
          timeout: cluster.requestTimeout, maximumLineSize: Self.maximumWatchLine)
      } catch {
        throw FleetError(transport: error, timeout: cluster.requestTimeout)
      }
      // etcd's gateway answers every watch 200, and reports its failures in the stream, as lines. (The fake member's
      // faults meet whichever request comes, so whether one meets a watch varies from run to run.)
      guard stream.status == 200 else {
        let reason = "it answered a watch with HTTP status \(stream.status)"  // coverage:ignore — a lying member
        let server = endpoints[index]  // coverage:ignore — a lying member
        throw FleetError(.invalidResponse(server: server, reason: reason))  // coverage:ignore — a lying member
      }
      return stream.lines
    }

    /// The longest line of a watch read: one revision's changes (a transaction's) come in one line, and etcd takes
    /// requests of 1.5 MiB unless told otherwise. A longer line is not read: the follower reads the keys again
    /// instead, in bounded parts.
    static let maximumWatchLine = 16 << 20

    /// The endpoint tried first: the one that answered last.
    var preferredEndpoint: Int { preferred.load(ordering: .relaxed) }

    /// Makes the endpoint after `index` the one tried first, unless another already is: `index` failed while it was
    /// being watched.
    func avoid(_ index: Int) {
      _ = preferred.compareExchange(expected: index, desired: (index + 1) % endpoints.count, ordering: .relaxed)
    }

    /// Forgets the token, so that the next call authenticates again (a watch cancelled for an expired token).
    func forgetToken() {
      token.withLock { $0 = nil }
    }

    /// The key just past every key that starts with `prefix`: etcd's range end for a prefix.
    static func rangeEnd(ofPrefix prefix: [UInt8]) -> [UInt8] {
      var end = prefix
      while let last = end.last {
        if last < 0xFF {
          end[end.count - 1] = last + 1
          return end
        }
        end.removeLast()
      }
      return [0]  // every key: etcd's "\0" range end
    }
  }

  extension FleetError {
    /// The error of a request that got no HTTP answer within `timeout`.
    init(transport error: FleetTransportError, timeout: Duration) {
      switch error.kind {
      case .timedOut: self.init(.timedOut(server: error.server, after: timeout))
      case .tls: self.init(.tls(server: error.server, reason: error.reason))
      case .invalidResponse, .tooLarge: self.init(.invalidResponse(server: error.server, reason: error.reason))
      case .cancelled: self.init(.cancelled)
      case .unreachable: self.init(.unreachable(["\(error.server): \(error.reason)"]))
      }
    }

    /// The error an etcd failure stands for. Its message is the server's: escaped and cut to a line's length before
    /// it is shown, logged or kept anywhere.
    init(failure: EtcdFailure, server: String, user: String?) {
      let message = failure.message.replacingPrefix("etcdserver: ").shown()
      switch failure.code {
      case EtcdFailure.permissionDenied:
        self.init(.permissionDenied(server: server, what: "read or write these keys (\(message))"))
      case EtcdFailure.unauthenticated:
        self.init(.authenticationFailed(user: user ?? "(none)", server: server))
      case _ where message.contains("authentication failed"):
        self.init(.authenticationFailed(user: user ?? "(none)", server: server))
      case _ where message.contains("user name is empty"):
        self.init(
          .permissionDenied(
            server: server, what: "read without a user: the cluster has authentication on (give --user)"))
      case _ where message.contains("no leader") || message.contains("leader changed"):
        self.init(.noLeader(server: server))
      case _ where message.contains("request timed out"):
        self.init(.noLeader(server: server))
      case EtcdFailure.unimplemented:
        self.init(.invalidResponse(server: server, reason: "it does not serve etcd's v3 gateway here (\(message))"))
      case EtcdFailure.unknown, EtcdFailure.canceled, EtcdFailure.deadlineExceeded, EtcdFailure.resourceExhausted,
        EtcdFailure.aborted, EtcdFailure.internal, EtcdFailure.unavailable, EtcdFailure.dataLoss:
        // The member's own state (starting, stopping, overloaded, cut off), or a proxy in front of it: another
        // member, or the same one later, may answer.
        self.init(.unreachable(["\(server): \(message)"]))
      default:
        self.init(.rejected(server: server, message: message))
      }
    }

    /// Whether a call that failed so should be tried on the next endpoint: the member is down, slow, without a
    /// leader, answers what etcd does not, or fails TLS (its certificate may be the one that is wrong).
    var movesOn: Bool {
      switch situation {
      case .unreachable, .timedOut, .noLeader, .invalidResponse, .tls: true
      default: false
      }
    }

    /// The reason, short, for a list of endpoints' failures.
    var shortReason: String {
      switch situation {
      case .unreachable(let failures): failures.map { $0.drop(while: { $0 != " " }).dropFirst() }.joined()
      case .timedOut: "no answer in time"
      case .noLeader: "no leader"
      case .invalidResponse(_, let reason), .tls(_, let reason): reason
      default: description
      }
    }
  }

  extension String {
    /// The string without `prefix`, when it starts with it.
    fileprivate func replacingPrefix(_ prefix: String) -> String {
      hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
  }
#endif
