#if SplintFleet
  import AsyncHTTPClient
  import Glibc
  import NIOCore
  import NIOHTTP1
  import NIOPosix
  import NIOSSL

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A response read whole: its status, headers and body (at most the request's limit).
  struct FleetHTTPResponse: Sendable {
    /// The HTTP status code.
    let status: Int
    /// The response's headers.
    let headers: HTTPHeaders
    /// The body's bytes.
    let body: [UInt8]

    /// The first value of header `name`, if the response has one.
    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The time the `Date` header names, in HTTP's one form (IMF-fixdate, RFC 9110: "Sun, 29 Nov 2026 03:55:00
    /// GMT"); nil without one, or for another form.
    var date: Date? { header("Date").flatMap(Self.date(header:)) }

    /// The time `text`, a `Date` header, names in IMF-fixdate; nil for another form.
    static func date(header text: String) -> Date? {
      let parts = text.split(separator: " ", omittingEmptySubsequences: false)
      let clock = parts.count == 6 ? parts[4].split(separator: ":", omittingEmptySubsequences: false) : []
      let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
      func number(_ text: Substring, _ digits: Int, _ range: ClosedRange<Int>) -> Int? {
        guard text.count == digits, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text),
          range.contains(value)
        else { return nil }
        return value
      }
      guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT", clock.count == 3,
        let month = months.firstIndex(of: String(parts[2])), let year = number(parts[3], 4, 1970...9999),
        let hour = number(clock[0], 2, 0...23), let minute = number(clock[1], 2, 0...59),
        let second = number(clock[2], 2, 0...60)
      else { return nil }
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
      guard let day = number(parts[1], 2, 1...lengths[month]) else { return nil }
      // Days since 1970-01-01, as Howard Hinnant's days_from_civil counts them (years from March).
      let (shifted, march) = month < 2 ? (year - 1, month + 10) : (year, month - 2)
      let (era, yearOfEra) = (shifted / 400, shifted % 400)
      let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + (153 * march + 2) / 5 + day - 1
      let days = era * 146_097 + dayOfEra - 719_468
      return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

  }

  /// Why a request got no HTTP response: the server is unreachable, did not answer in time, or spoke something else.
  /// Each engine turns it into its own typed error, naming the server.
  struct FleetTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    enum Kind: Sendable, Hashable {
      /// No connection could be made (refused, no route, a name that does not resolve).
      case unreachable
      /// The connection or the answer took longer than the request's deadline.
      case timedOut
      /// TLS failed: an untrusted or mismatched certificate, a handshake the server refused.
      case tls
      /// The answer was not HTTP.
      case invalidResponse
      /// The answer's body, or a streamed line, was longer than the request allows.
      case tooLarge
      /// The task waiting for the answer was cancelled.
      case cancelled
    }

    /// What kind of failure it is.
    let kind: Kind
    /// The server's address, as the request named it (scheme, host and port; never a path or query).
    let server: String
    /// What happened, in words (never a header or body, which may hold a token).
    let reason: String

    init(_ kind: Kind, server: String, reason: String) {
      self.kind = kind
      self.server = server
      self.reason = reason
    }

    /// The server and what happened.
    var description: String { "\(server): \(reason)" }
  }

  /// The one HTTP client of SplintFleet, for etcd's JSON gateway and for OpenBao's and Vault's API alike: a single
  /// async-http-client `HTTPClient` for the process (HTTP/1.1, its connections pooled per server and TLS
  /// configuration, redirects never followed by itself: an engine decides which it follows), with a deadline on
  /// every request.
  ///
  /// A value holds a server's TLS configuration, made once from the files named (see ``FleetTLS``), and is cheap to
  /// copy.
  struct FleetHTTPClient: Sendable {
    /// The process's client. It lives as long as the process, so it is never shut down (async-http-client asks that
    /// a client be shut down before it is released; this one never is).
    private static let client: HTTPClient = {
      var configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        // Connecting is bounded here; an answer is bounded by each request's deadline, and a watch's stream by its
        // engine's own liveness checks, so no read timeout applies to every request alike.
        timeout: .init(connect: .seconds(3), read: nil),
        proxy: nil,
        decompression: .disabled)
      // etcd serves gRPC and its JSON gateway on one port and would take an HTTP/2 connection for gRPC.
      configuration.httpVersion = .http1Only
      configuration.connectionPool = .init(idleTimeout: .seconds(30))
      // A refused connection fails the request at once, so that an engine moves on to the next server, rather than
      // being tried again until the request's deadline.
      configuration.connectionPool.retryConnectionEstablishment = false
      return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// The event loop every request is made on, and so the loop its pooled connection is made on: the client would
    /// otherwise give each request the group's next loop, one after the other, while the connection it takes from
    /// the pool stays on the loop it was made on: every other request of a caller that makes one at a time would
    /// cross between the two loops' threads at each step (`SplintBench vault`'s row measures it).
    private static let loop = client.eventLoopGroup.next()

    /// The TLS configuration for `https` servers; nil for the system's trust store and no client certificate.
    let tls: TLSConfiguration?

    /// A client for servers reached with `tls` (see ``FleetTLS/configuration()``).
    init(tls: TLSConfiguration? = nil) {
      self.tls = tls
    }

    /// `method url` with `headers` and `body`, its whole response, or a transport error, within `timeout`; blocking
    /// the calling thread (for the synchronous `CredentialStore` calls). It waits on SwiftNIO's event loop, not on
    /// a task, so it never needs a free thread of Swift's cooperative pool to finish.
    ///
    /// - Parameters:
    ///   - body: The request's body: any bytes, such as a `Data` that wipes itself when freed, for a secret (the
    ///     client copies it into buffers of its own, which are not wiped).
    ///   - maximumBodySize: The longest response body read; a longer one fails as `invalidResponse`.
    func sendBlocking(
      _ method: HTTPMethod, _ url: String, headers: HTTPHeaders = [:],
      body: (any RandomAccessCollection<UInt8> & Sendable)? = nil, timeout: Duration,
      maximumBodySize: Int = 8 << 20
    ) throws(FleetTransportError) -> FleetHTTPResponse {
      let task = try start(method, url, headers: headers, body: body, timeout: timeout, limit: maximumBodySize)
      do {
        return try Self.response(task.futureResult.wait())
      } catch {
        throw Self.transportError(error, url: url, timeout: timeout)
      }
    }

    /// ``sendBlocking(_:_:headers:body:timeout:maximumBodySize:)`` for async callers: cancelling the task ends the request
    /// (`cancelled`).
    func send(
      _ method: HTTPMethod, _ url: String, headers: HTTPHeaders = [:],
      body: (any RandomAccessCollection<UInt8> & Sendable)? = nil, timeout: Duration,
      maximumBodySize: Int = 8 << 20
    ) async throws(FleetTransportError) -> FleetHTTPResponse {
      let task = try start(method, url, headers: headers, body: body, timeout: timeout, limit: maximumBodySize)
      do {
        return try await withTaskCancellationHandler {
          try Self.response(await task.futureResult.get())
        } onCancel: {
          task.cancel()
        }
      } catch {
        throw Self.transportError(error, url: url, timeout: timeout, cancelled: Task.isCancelled)
      }
    }

    /// Starts a request whose response is read whole, at most `limit` bytes of body.
    private func start(
      _ method: HTTPMethod, _ url: String, headers: HTTPHeaders, body: (any RandomAccessCollection<UInt8> & Sendable)?,
      timeout: Duration, limit: Int
    ) throws(FleetTransportError) -> HTTPClient.Task<HTTPClient.Response> {
      let request: HTTPClient.Request
      do {
        request = try HTTPClient.Request(
          url: url, method: method, headers: headers, body: body.map { .bytes($0) }, tlsConfiguration: tls)
      } catch {
        throw FleetTransportError(.unreachable, server: Self.server(of: url), reason: "\(error)")
      }
      let delegate = ResponseAccumulator(request: request, maxBodySize: limit)
      return Self.client.execute(
        request: request, delegate: delegate, eventLoop: .delegate(on: Self.loop), deadline: .now() + .init(timeout))
    }

    /// The whole response, as the engines read it.
    private static func response(_ response: HTTPClient.Response) -> FleetHTTPResponse {
      FleetHTTPResponse(
        status: Int(response.status.code), headers: response.headers,
        body: response.body.map { Array($0.readableBytesView) } ?? [])
    }

    /// A streamed response: its status and headers, and its body as it arrives, split into lines (for etcd's watch,
    /// which sends one JSON object a line for as long as it lasts).
    struct Stream: Sendable {
      /// The HTTP status code.
      let status: Int
      /// The response's headers.
      let headers: HTTPHeaders
      /// The body's lines, without their line feeds, read as they are asked for.
      let lines: Lines
    }

    /// A response body's lines, read from the connection only as they are asked for: a server that sends faster
    /// than its reader takes lines waits (SwiftNIO stops reading the socket once async-http-client's few buffers
    /// are full), so that what a stream holds in memory at any time is a few buffers and the line being put
    /// together, whatever the server sends. Cancelling the task that iterates ends the request.
    struct Lines: AsyncSequence, Sendable {
      typealias Element = [UInt8]

      fileprivate let body: HTTPClientResponse.Body
      /// The longest line read; a longer one ends the stream with `tooLarge` (the line is not kept).
      let maximumLineSize: Int
      fileprivate let url: String
      fileprivate let timeout: Duration

      func makeAsyncIterator() -> Iterator {
        Iterator(lines: self, body: body.makeAsyncIterator())
      }

      struct Iterator: AsyncIteratorProtocol {
        fileprivate let lines: Lines
        fileprivate var body: HTTPClientResponse.Body.AsyncIterator
        /// What the last buffer read holds past the lines already given.
        private var buffer = ByteBuffer()
        /// The part of a line read so far.
        private var pending: [UInt8] = []

        fileprivate init(lines: Lines, body: HTTPClientResponse.Body.AsyncIterator) {
          self.lines = lines
          self.body = body
        }

        /// The next line, or nil once the server ended the body (a last line without a line feed is dropped: a
        /// watch's lines always end with one).
        mutating func next() async throws -> [UInt8]? {
          while true {
            let view = buffer.readableBytesView
            if let newline = view.firstIndex(of: UInt8(ascii: "\n")) {
              try take(view[..<newline])
              buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
              defer { pending.removeAll(keepingCapacity: pending.capacity <= 64 << 10) }
              return pending
            }
            try take(view[...])
            buffer.clear()
            do {
              guard let next = try await body.next() else { return nil }
              buffer = next
            } catch {
              throw FleetHTTPClient.transportError(
                error, url: lines.url, timeout: lines.timeout, cancelled: Task.isCancelled)
            }
          }
        }  // coverage:ignore — a function left only from inside its endless loop

        /// Adds `bytes` to the line being put together, within the limit.
        private mutating func take(_ bytes: ByteBufferView.SubSequence) throws(FleetTransportError) {
          guard pending.count + bytes.count <= lines.maximumLineSize else {
            pending = []
            throw FleetTransportError(
              .tooLarge, server: FleetHTTPClient.server(of: lines.url),
              reason: "a line of the stream is longer than \(lines.maximumLineSize) bytes")
          }
          pending += bytes
        }
      }
    }

    /// Starts `method url` and returns once the response's head has arrived (within `timeout`); the body is then
    /// read line by line, with no deadline of its own: whoever reads it decides how long silence may last.
    ///
    /// - Parameters:
    ///   - maximumLineSize: The longest line read; a longer one ends the stream with `tooLarge`.
    func stream(
      _ method: HTTPMethod, _ url: String, headers: HTTPHeaders = [:], body: [UInt8]? = nil, timeout: Duration,
      maximumLineSize: Int = 8 << 20
    ) async throws(FleetTransportError) -> Stream {
      var request = HTTPClientRequest(url: url)
      request.method = method
      request.headers = headers
      request.tlsConfiguration = tls
      if let body { request.body = .bytes(body) }
      let response: HTTPClientResponse
      do {
        response = try await Self.client.execute(request, timeout: .init(timeout))
      } catch {
        throw Self.transportError(error, url: url, timeout: timeout, cancelled: Task.isCancelled)
      }
      let lines = Lines(body: response.body, maximumLineSize: maximumLineSize, url: url, timeout: timeout)
      return Stream(status: Int(response.status.code), headers: response.headers, lines: lines)
    }

    /// Whether `host` (a URL's host, an IPv6 address with or without its brackets) is a literal loopback address,
    /// 127.0.0.0/8 or ::1: the one place plain HTTP may go, since nothing but this machine is on the way. A name
    /// (`localhost` included) is not: what it resolves to is not this program's to decide.
    static func isLoopbackLiteral(_ host: String) -> Bool {
      let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
      var v4 = in_addr()
      if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
      var v6 = in6_addr()
      guard inet_pton(AF_INET6, bare, &v6) == 1 else { return false }
      return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    /// The scheme, host and port of `url`: what errors name (a path may hold a secret's name, a query a token).
    static func server(of url: String) -> String {
      guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
      else { return "the server" }
      let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
      return components.port.map { "\(scheme)://\(shownHost):\($0)" } ?? "\(scheme)://\(shownHost)"
    }

    /// An error of async-http-client, SwiftNIO or NIOSSL, as a transport error that names the server.
    static func transportError(
      _ error: any Error, url: String, timeout: Duration, cancelled: Bool = false
    ) -> FleetTransportError {
      let server = server(of: url)
      if cancelled || (error as? HTTPClientError) == .cancelled {
        return FleetTransportError(.cancelled, server: server, reason: "the request was cancelled")
      }
      if let error = error as? HTTPClientError {
        switch error {
        case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
          return FleetTransportError(.timedOut, server: server, reason: "no answer within \(timeout)")
        case .remoteConnectionClosed:
          return FleetTransportError(.unreachable, server: server, reason: "the server closed the connection")
        default:
          break
        }
      }
      if error is ResponseAccumulator.ResponseTooBigError {
        return FleetTransportError(.tooLarge, server: server, reason: "the answer is larger than allowed")
      }
      if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
        return FleetTransportError(.tls, server: server, reason: "TLS failed: \(error)")
      }
      if let error = error as? HTTPParserError {
        // The connection ended in the middle of an answer: a member that stops, or a cut connection, not a lie.
        guard error != .invalidEOFState else {
          return FleetTransportError(
            .unreachable, server: server, reason: "the server closed the connection in the middle of its answer")
        }
        return FleetTransportError(.invalidResponse, server: server, reason: "the answer is not HTTP: \(error)")
      }
      if let cause = plainCause(of: error) {
        return FleetTransportError(.unreachable, server: server, reason: cause)
      }
      return FleetTransportError(.unreachable, server: server, reason: "cannot connect: \(error)")
    }

    /// Why a connection failed, in the system's words, once: `connection refused`, `db.example does not resolve (name
    /// or service not known)`. SwiftNIO's own descriptions of these errors say it twice, with a stray parenthesis
    /// (`connection reset (error set): Connection refused) (errno: 111)`), or inside its types' names (`Connection
    /// errors: SingleConnectionFailure(target: ..., error: ...)`, one for each address of a name). Nil for another
    /// error.
    static func plainCause(of error: any Error) -> String? {
      switch error {
      case let error as IOError:
        return lowercasingFirst(String(cString: strerror(error.errnoCode)))
      case let error as SocketAddressError.UnknownHost:
        return "\(error.host) does not resolve (\(lowercasingFirst(error.errorDescription)))"
      case let error as NIOConnectionError:
        if let resolving = error.dnsAError ?? error.dnsAAAAError { return plainCause(of: resolving) ?? "\(resolving)" }
        // Each address of the name that was tried: the same cause for each is said once.
        var causes: [String] = []
        for failure in error.connectionErrors {
          let cause = plainCause(of: failure.error) ?? "\(failure.error)"
          if !causes.contains(cause) { causes.append(cause) }
        }
        return causes.isEmpty ? nil : causes.joined(separator: "; ")
      default:
        return nil
      }
    }

    /// `text` with its first letter in lower case, as a cause reads inside a sentence (strerror's are capitalized).
    private static func lowercasingFirst(_ text: String) -> String {
      text.prefix(1).lowercased() + text.dropFirst()
    }
  }
#endif
