#if SplintFleet
  import NIOHTTP1
  import SplintSecrets
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// The KV version 2 protocol, as OpenBao and HashiCorp Vault speak it: each request with the session's token (a
  /// refusal checked against the token first), and what each answer means. Asynchronous: a caller holds no thread
  /// while it waits, and cancelling its task ends the request at once (`CredentialError/cancelled`).
  ///
  /// Every answer's bytes are wiped once read (``reading(_:_:)``): they may hold a secret.
  final class VaultKV: Sendable {
    let server: VaultServer
    let session: VaultSession
    /// The store's name, for messages.
    var name: String { server.name }
    /// The mounts found to be KV version 2.
    private let checkedMounts = Mutex<Set<String>>([])

    init(server: VaultServer, session: VaultSession) {
      self.server = server
      self.session = session
    }

    /// Where one credential's secret is: a field of the secret at a path of a mount.
    struct Location: Sendable {
      let mount: String
      let path: String
      let field: String
      /// Whether the path is the store's layout's, the secret the credential's alone (not a location of your own,
      /// whose other fields are someone else's).
      let isOwn: Bool

      /// The API path of the secret's versions.
      var data: String { "\(mount)/data/\(path)" }
      /// The API path of the secret's metadata.
      var metadata: String { "\(mount)/metadata/\(path)" }
    }

    // MARK: - Secrets

    /// The secret at `location`, or nil: none, or its newest version deleted or destroyed.
    func read(_ location: Location) async throws(CredentialError) -> Data? {
      let path = location.data
      return try await Self.reading(call(.GET, path, capability: "read")) {
        status, bytes async throws(CredentialError) -> Data? in
        try require(status, in: [200, 404], bytes, "read", path)
        let json = VaultJSON.parse(bytes)
        if status == 200 { return try field(location, of: json?["data"]?["data"], in: bytes, path: path) }
        if json?["data"]?["metadata"] != nil { return nil }  // the newest version was deleted or destroyed
        try requireMount(location.mount, bytes)
        try await checkMount(location.mount)
        return nil
      }
    }

    /// The secret in the location's field (or in base64 in `<field>_base64`) of a secret's `data`: nil when a
    /// location of your own has neither (its field was deleted), unreadable when the layout's secret has neither.
    private func field(
      _ location: Location, of data: VaultJSON?, in bytes: [UInt8], path: String
    ) throws(CredentialError) -> Data? {
      let field = location.field
      if let text = data?[field]?.secret(in: bytes) { return text }
      if let encoded = data?[field + "_base64"]?.secret(in: bytes) {
        guard let decoded = Base64.decode(encoded) else {
          throw .unreadableSecret(
            "The field \(field)_base64 of \(path) in \(name) is not base64. Save the secret again.")
        }
        return decoded
      }
      guard location.isOwn else { return nil }
      let fields = data?.members.map(\.name).sorted().joined(separator: ", ") ?? ""
      throw .unreadableSecret(
        """
        \(path) in \(name) has no text field \(field) (nor \(field)_base64)\(fields.isEmpty ? "" : "; its fields are \(fields)"). \
        Save the secret with Credential, or name the field that holds it in the store's locations.
        """)
    }

    /// Saves `secret` in the location's field as a new version (nil: the field removed, and the secret deleted when
    /// no other field is left), check-and-set against the version read first: the secret as it is now
    /// (``current(_:)``), then the new version over it (``write(_:over:)``).
    func save(_ secret: Data?, at location: Location) async throws(CredentialError) {
      try await write(secret, over: current(location))
    }

    /// The secret at a location as a save finds it: its newest version's number (0: none), and its answer's bytes,
    /// from which the other fields are kept. ``write(_:over:)`` wipes them.
    struct Current: Sendable {
      let location: Location
      let status: Int
      let bytes: [UInt8]
    }

    /// The secret at `location` as it is now, for a save: the first request of one.
    func current(_ location: Location) async throws(CredentialError) -> Current {
      let response = try await call(.GET, location.data, capability: "read")
      return Current(location: location, status: response.status, bytes: response.body)
    }

    /// A new version of `current`'s secret with `secret` in its field (nil: the field removed, and the secret
    /// deleted when no other field is left), check-and-set against `current`'s version: a save that lost a race to
    /// another writer in between is `CredentialError/conflict(store:path:)`, and changes nothing.
    func write(_ secret: Data?, over current: consuming Current) async throws(CredentialError) {
      let location = current.location
      let path = location.data
      let answer = FleetHTTPResponse(status: current.status, headers: [:], body: (consume current).bytes)
      try await Self.reading(answer) { status, current async throws(CredentialError) in
        let json = VaultJSON.parse(current)
        let version = json?["data"]?["metadata"]?["version"]?.integer(in: current) ?? 0
        try require(status, in: [200, 404], current, "read", path)
        if status == 404 { try requireMount(location.mount, current) }
        let kept =
          json?["data"]?["data"]?.members.filter { ![location.field, location.field + "_base64"].contains($0.name) }
          ?? []
        if secret == nil {
          guard status == 200 else { return }  // nothing there to remove
          if kept.isEmpty { return try await deleteAll(location.metadata) }
        }
        var body = VaultRequestBody.version(secret, field: location.field, keeping: kept, from: current, cas: version)
        defer { SecretBuffer.wipe(&body) }
        let capability = version == 0 ? "create" : "update"
        let answer = try await call(.POST, path, capability: capability, body: body.withUnsafeBytes { Data.wiping($0) })
        try await Self.reading(answer) { status, bytes throws(CredentialError) in
          if status == 400, VaultServer.errors(in: bytes).contains(where: { $0.contains("check-and-set") }) {
            throw .conflict(store: name, path: path)
          }
          try require(status, in: [200, 204], bytes, capability, path)
        }
      }
    }

    /// Deletes every version of the secret whose metadata is at `path`.
    func deleteAll(_ path: String) async throws(CredentialError) {
      try await Self.reading(call(.DELETE, path, capability: "delete")) { status, bytes throws(CredentialError) in
        if status == 404 { try requireMount(String(path.prefix { $0 != "/" }), bytes) }
        try require(status, in: [200, 204, 404], bytes, "delete", path)
      }
    }

    /// The names in the folder whose metadata is at `folder` of `mount`: none when there is no such folder.
    func list(_ folder: String, mount: String) async throws(CredentialError) -> [String] {
      try await Self.reading(call(.GET, folder, query: "list=true", capability: "list")) {
        status, bytes throws(CredentialError) -> [String] in
        try require(status, in: [200, 404], bytes, "list", folder)
        if status == 404 { try requireMount(mount, bytes) }
        return VaultJSON.parse(bytes)?["data"]?["keys"]?.elements.compactMap { $0.text(in: bytes) } ?? []
      }
    }

    /// Whether the newest version of the secret whose metadata is at `path` is there (not deleted or destroyed).
    func isCurrent(_ path: String) async throws(CredentialError) -> Bool {
      try await Self.reading(call(.GET, path, capability: "read")) { status, bytes throws(CredentialError) -> Bool in
        try require(status, in: [200, 404], bytes, "read", path)
        guard status == 200 else { return false }  // deleted since the listing
        let data = VaultJSON.parse(bytes)?["data"]
        let newest = data?["current_version"]?.integer(in: bytes).flatMap { data?["versions"]?[String($0)] }
        return newest?["deletion_time"]?.text(in: bytes) == "" && newest?["destroyed"]?.isTrue == false
      }
    }

    // MARK: - Mounts

    /// Throws when a 404's body says the mount (or the namespace) is not there: `errors` names the missing route.
    private func requireMount(_ mount: String, _ bytes: [UInt8]) throws(CredentialError) {
      let errors = VaultServer.errors(in: bytes)
      guard errors.isEmpty else {
        throw .invalidConfiguration(
          """
          The mount \(mount) is not at \(name) (it said: \(errors.joined(separator: "; "))). Enable a KV version 2 \
          secrets engine there (`bao secrets enable -version=2 -path=\(mount) kv`), or name the mount, and the \
          namespace, the secrets are in.
          """)
      }
    }

    /// Throws unless `mount` is a KV version 2 mount (asked once; an answer the token may not see counts as yes,
    /// as the request that follows is refused anyway if the token may not use the mount).
    func checkMount(_ mount: String) async throws(CredentialError) {
      if checkedMounts.withLock({ $0.contains(mount) }) { return }
      let response: FleetHTTPResponse
      do {
        response = try await call(.GET, "sys/internal/ui/mounts/\(mount)", capability: "read")
      } catch  where error.code == .forbidden {
        return
      }
      let (type, version) = try await Self.reading(response) { status, bytes in
        let data = status == 200 ? VaultJSON.parse(bytes)?["data"] : nil
        return (data?["type"]?.text(in: bytes), data?["options"]?["version"]?.text(in: bytes))
      }
      guard let type else { return }
      guard type == "kv", version == "2" else {
        let what = type == "kv" ? "a KV version 1 mount, which keeps no versions" : "a \(type) secrets engine"
        throw .invalidConfiguration(
          """
          The mount \(mount) at \(name) is \(what): Credential needs KV version 2, whose versions let a save check \
          what it replaces and a deleted secret be told from a missing mount. Upgrade it \
          (`bao kv enable-versioning \(mount)`), or name a KV version 2 mount in the store's configuration.
          """)
      }
      checkedMounts.withLock { _ = $0.insert(mount) }
    }

    // MARK: - The server

    /// Whether the server answers (active or standby, unsealed), and the token's policies let it read somewhere in
    /// `areas` (see ``VaultPolicy``). Logs in if it must.
    func checkAvailable(reading areas: [String]) async throws(CredentialError) {
      let health = try await send(.GET, "sys/health", "standbyok=true&perfstandbyok=true", nil, nil)
      guard health.status == 200 else {
        throw Self.serverError(health.status, VaultServer.errors(in: health.body), store: name)
      }
      let acl = try await call(.GET, "sys/internal/ui/resultant-acl", capability: "read")
      guard VaultPolicy.allowsReading(areas, acl: acl.body) else {
        throw .forbidden(store: name, path: areas[0], capability: "read")
      }
    }

    /// `method path` with the login's token; a refusal (403) is checked against the token itself first, and made
    /// again once with a new token when that one had expired.
    func call(
      _ method: HTTPMethod, _ path: String, query: String? = nil, capability: String, body: Data? = nil
    ) async throws(CredentialError) -> FleetHTTPResponse {
      var token = try await session.token()
      var response = try await send(method, path, query, token, body)
      if response.status == 403, let fresh = try await session.recheck(token) {
        token = fresh
        response = try await send(method, path, query, token, body)
      }
      if response.status == 403 {
        throw Task.isCancelled ? .cancelled : .forbidden(store: name, path: path, capability: capability)
      }
      return response
    }

    /// `method path?query` with `token`, no address's failure made a `CredentialError`.
    private func send(
      _ method: HTTPMethod, _ path: String, _ query: String?, _ token: String?, _ body: Data?
    ) async throws(CredentialError) -> FleetHTTPResponse {
      do {
        return try await server.send(method, path, query: query, token: token, body: body)
      } catch {
        throw Self.failure(error, store: name)
      }
    }

    /// The status and body of `response`, given to `body`; the body's bytes are zeroed afterwards, as they may hold
    /// a secret.
    static func reading<T>(
      _ response: consuming FleetHTTPResponse, _ body: (Int, [UInt8]) async throws(CredentialError) -> T
    ) async throws(CredentialError) -> T {
      let status = response.status
      var bytes = (consume response).body
      defer { SecretBuffer.wipe(&bytes) }
      return try await body(status, bytes)
    }

    /// The error for a server no address of which answered.
    static func failure(_ failure: VaultServer.Failure, store: String) -> CredentialError {
      switch failure {
      case .sealed(let servers): .sealed(store: store, servers: servers)
      case .unreachable(let reason): .unreachable(store: store, reason: reason)
      case .cancelled: .cancelled
      }
    }

    /// The error for an answer the API does not give to a call that works: a status and the server's `errors`.
    static func serverError(_ status: Int, _ errors: [String], store: String) -> CredentialError {
      let said = errors.isEmpty ? "" : ": \(errors.joined(separator: "; "))"
      return .serverError(
        store: store, reason: "It answered with HTTP status \(status)\(said). If this persists, see the server's log.")
    }

    /// Throws ``serverError(_:_:store:)`` unless `status` is one of `expected`, for an answer to `capability` on
    /// `path`.
    private func require(
      _ status: Int, in expected: [Int], _ bytes: [UInt8], _ capability: String, _ path: String
    ) throws(CredentialError) {
      guard expected.contains(status) else {
        throw Self.serverError(status, VaultServer.errors(in: bytes) + ["(\(capability) \(path))"], store: name)
      }
    }
  }
#endif
