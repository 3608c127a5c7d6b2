#if SplintFleet
  import Glibc
  import NIOHTTP1
  public import SplintSecrets
  import Synchronization

  #if canImport(FoundationEssentials)
    public import FoundationEssentials
  #else
    public import Foundation
  #endif

  /// A `CredentialStore` that keeps secrets in OpenBao or HashiCorp Vault, in a KV version 2 mount,
  /// over their HTTP API: the store a fleet's programs read their secrets from, with the login their platform gives
  /// them, and no agent beside them.
  ///
  /// Turn it on once at start-up, then name it in `SPLINT_CREDENTIAL_STORES` (or use it directly):
  ///
  /// ```swift
  /// import SplintFleet
  /// import SplintSecrets
  ///
  /// VaultCredentialStore.register()  // `vault`, configured from BAO_ADDR or VAULT_ADDR and the rest
  /// // SPLINT_CREDENTIAL_STORES=vault my-daemon
  /// let token = try Credential(service: "api.example.com", account: "syncd").read()
  /// ```
  ///
  /// - **Layout.** A credential is the field `value` of the secret `splint/<service>/<account>` in the mount `secret`
  ///   (see ``VaultConfiguration``), or a path and field of your choosing (``VaultConfiguration/locations``). A
  ///   secret that is not UTF-8 is kept in base64 in the field `value_base64`. A save keeps the secret's other fields.
  /// - **Reads are made on demand**, as every `Credential`'s are: each read is one request to the server (a round
  ///   trip, and one entry in each of the server's audit devices), and nothing is kept unless you ask for the last
  ///   good value (``VaultConfiguration/lastGoodValue``), which is used only while the server is unreachable or
  ///   sealed, and never written to disk.
  /// - **Absent** (nil) is a secret that is not there, or whose newest version was deleted or destroyed. A mount that
  ///   does not exist, or that is KV version 1, is `CredentialError/invalidConfiguration(_:)`.
  /// - **Saves** write a new version with check-and-set against the version the save read first (`cas: 0` to make
  ///   a secret), so that mounts with `cas_required` work and a save that lost a race to another client fails with
  ///   `CredentialError/conflict(store:path:)`. A save is two requests.
  /// - **Deletes** remove every version and the metadata (`DELETE <mount>/metadata/<path>`); a credential at a
  ///   location of your own has only its field removed, in a new version.
  /// - **Listing** the accounts of a service is a `LIST` of its folder, then a look at each account's metadata,
  ///   so that an account whose newest version was deleted is left out.
  /// - **Policies.** Reading needs `read` on `<mount>/data/<path>`; saving, `read` there and `create` (a new secret)
  ///   or `update`; deleting, `delete` on `<mount>/metadata/<path>`; listing, `list` and `read` on
  ///   `<mount>/metadata/<prefix>/<service>/`.
  /// - **A refusal** (403) is checked against the token first: an expired token is replaced (a new login, or the
  ///   token file read again) and the request made once more; what is still refused is
  ///   `CredentialError/forbidden(store:path:capability:)`, naming the path and the capability.
  /// - **A sealed, unreachable or forbidding server stops a chain of stores** with its error: a keyring's older copy
  ///   is never read instead.
  ///
  /// The secrets this store reads and writes are decoded into, and encoded from, storage that is wiped when freed;
  /// so is the token. What async-http-client, SwiftNIO and BoringSSL copy into their own buffers on the way (the
  /// request, the answer, the TLS records) is freed by them without wiping: that memory is not this store's to
  /// promise.
  public final class VaultCredentialStore: CredentialStore {
    /// The configuration the store was made with.
    public let configuration: VaultConfiguration
    /// How the store logs in: the configuration's, or the one the environment gave.
    public let login: VaultLogin
    /// `vault at https://vault.example.com:8200`: what errors and `splintctl secret status` call the store.
    public let name: String

    let server: VaultServer
    let session: VaultSession
    /// The mounts found to be KV version 2.
    private let checkedMounts = Mutex<Set<String>>([])
    /// Called by a save between its read and its write, for the tests that make a save lose its check-and-set.
    let betweenReadAndWrite = Mutex<(@Sendable () -> Void)?>(nil)
    /// The last secret read of each credential, with when: only with ``VaultConfiguration/lastGoodValue``.
    private let lastGood = Mutex<[VaultConfiguration.Key: (secret: Data, read: ContinuousClock.Instant)]>([:])

    /// A store with `configuration`: its files (CA, client certificate) are read now; nothing is sent to the server
    /// until the first call.
    ///
    /// - Throws: `CredentialError/invalidConfiguration(_:)` for no address, an address that is not
    ///   one, `http` to a host that is not this machine, a mount, prefix or location that is not a path (an empty
    ///   segment, `.` or `..`), or TLS files that cannot be used.
    public convenience init(_ configuration: VaultConfiguration) throws(CredentialError) {
      try self.init(configuration, refusesForwarding: false)
    }

    /// A store that may ask standbys to redirect rather than forward (see ``VaultServer/refusesForwarding``).
    init(_ configuration: VaultConfiguration, refusesForwarding: Bool) throws(CredentialError) {
      guard !configuration.addresses.isEmpty else {
        throw .invalidConfiguration("No address of OpenBao or Vault is given: set BAO_ADDR or VAULT_ADDR.")
      }
      var addresses: [VaultServer.Address] = []
      for address in configuration.addresses { addresses.append(try VaultServer.Address(address)) }
      let paths =
        [("mount", configuration.mount), ("prefix", configuration.prefix)]
        + configuration.locations.values.flatMap {
          [("location's mount", $0.mount ?? "x"), ("location's path", $0.path)]
        }
      for (what, path) in paths {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), !path.utf8.contains(0) else {
          throw .invalidConfiguration(
            "The \(what) \"\(path)\" is not a path of the server's: give its segments, such as prod/db, without an "
              + "empty one, `.` or `..`.")
        }
      }
      let client: FleetHTTPClient
      do {
        client = FleetHTTPClient(tls: configuration.tls == FleetTLS() ? nil : try configuration.tls.configuration())
      } catch {
        throw .invalidConfiguration(error.description)
      }
      self.configuration = configuration
      login = configuration.login ?? .automatic
      name = "vault at " + addresses.map(\.base).joined(separator: ", ")
      server = VaultServer(
        addresses: addresses, client: client, namespace: configuration.namespace, timeout: configuration.timeout,
        name: name, refusesForwarding: refusesForwarding)
      session = VaultSession(login: login, server: server, revokesAtExit: configuration.revokesTokenAtExit)
    }

    /// Makes `vault` a store `SPLINT_CREDENTIAL_STORES` and `DefaultCredentialStore.chain(named:)` may name, made
    /// from the environment (``VaultConfiguration/fromEnvironment()``) the first time a chain names it. Call it once
    /// at start-up; it reads and sends nothing by itself. A program that never names `vault` is not changed by it:
    /// the store is never added to a chain because `VAULT_ADDR` is set.
    public static func register() {
      RegisteredStores.register("vault") { () throws(CredentialError) in
        try VaultCredentialStore(.fromEnvironment())
      }
    }

    /// ``register()``, with a configuration of your own.
    public static func register(_ configuration: VaultConfiguration) {
      RegisteredStores.register("vault") { () throws(CredentialError) in try VaultCredentialStore(configuration) }
    }

    /// Revokes the token the store made by logging in (if any) and forgets it: the next call logs in again. A token
    /// given to the store is only forgotten. The store does this by itself when the process exits, unless
    /// ``VaultConfiguration/revokesTokenAtExit`` is false.
    public func logOut() {
      session.logOut()
    }

    // MARK: - CredentialStore

    /// The newest version's secret, or nil when there is none, or the newest version was deleted or destroyed.
    ///
    /// - Throws: `CredentialError/sealed(store:servers:)`,
    ///   `CredentialError/unreachable(store:reason:)` (unless a last good value may be used),
    ///   `CredentialError/forbidden(store:path:capability:)`,
    ///   `CredentialError/notLoggedIn(store:reason:)`,
    ///   `CredentialError/invalidConfiguration(_:)` for a mount that is missing or KV version 1,
    ///   `CredentialError/unreadableSecret(_:)` for a secret without the field.
    public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
      let key = VaultConfiguration.Key(service: credential.service, account: credential.account)
      do {
        let secret = try read(configuration.location(of: credential))
        remember(key, secret)
        return secret
      } catch {
        guard let kept = lastGoodValue(key, credential, error) else { throw error }
        return kept
      }
    }

    /// Saves `secret` as a new version, with check-and-set against the version read just before; the secret's other
    /// fields are kept.
    ///
    /// - Throws: `CredentialError/conflict(store:path:)` when another client saved in between, and the
    ///   errors of ``readSecret(for:)``.
    public func saveSecret(
      _ secret: Data, contentType: SecretContentType, for credential: Credential
    ) throws(CredentialError) {
      let location = configuration.location(of: credential)
      try checkMount(location.mount)
      try write(secret, at: location)
      forget(credential)
    }

    /// Deletes every version of the secret and its metadata; for a credential at a location of your own, only its
    /// field (the whole secret when it has no other).
    public func deleteSecret(for credential: Credential) throws(CredentialError) {
      let location = configuration.location(of: credential)
      try checkMount(location.mount)
      forget(credential)
      guard location.isOwn else {
        try write(nil, at: location)
        return
      }
      try deleteAll("\(location.mount)/metadata/\(location.path)")
    }

    /// The accounts of `service` whose newest version is there (not deleted), sorted.
    public func accounts(service: String) throws(CredentialError) -> [String] {
      let mount = configuration.mount
      try checkMount(mount)
      let folder = "\(mount)/metadata/\(configuration.prefix)/\(VaultConfiguration.pathSegment(service))"
      let keys = try Self.reading(call(.GET, folder, query: "list=true", capability: "list")) {
        status, bytes throws(CredentialError) -> [String] in
        try require(status, in: [200, 404], bytes, "list", folder)
        if status == 404 { try requireMount(mount, bytes) }
        return VaultJSON.parse(bytes)?["data"]?["keys"]?.elements.compactMap { $0.text(in: bytes) } ?? []
      }
      var accounts: Set<String> = []
      for key in keys {
        guard let account = VaultConfiguration.name(fromSegment: key),
          configuration.locations[.init(service: service, account: account)] == nil,
          try isCurrent("\(folder)/\(key)")
        else { continue }
        accounts.insert(account)
      }
      for key in configuration.locations.keys where key.service == service {
        let credential = Credential(service: key.service, account: key.account, store: self)
        if try read(configuration.location(of: credential)) != nil { accounts.insert(key.account) }
      }
      return accounts.sorted()
    }

    /// Available when the server answers (active or standby, unsealed), the login gives a valid token, and its
    /// policies let it read somewhere the credentials are (as `sys/internal/ui/resultant-acl` shows them to the
    /// token). Logs in if it must (which makes a token); writes nothing else.
    public func availability() -> CredentialAvailability {
      do throws(CredentialError) {
        let health = try send(.GET, "sys/health", "standbyok=true&perfstandbyok=true", nil, nil)
        guard health.status == 200 else {
          throw Self.serverError(health.status, VaultServer.errors(in: health.body), store: name)
        }
        // Where the credentials are: the layout's folder, and each location of your own.
        let areas =
          ["\(configuration.mount)/data/\(configuration.prefix)/"]
          + configuration.locations.values.map { "\($0.mount ?? configuration.mount)/data/\($0.path)" }
        let acl = try call(.GET, "sys/internal/ui/resultant-acl", capability: "read")
        let data = VaultJSON.parse(acl.body)?["data"]
        let grants = ["exact_paths", "glob_paths"].flatMap { kind in
          (data?[kind]?.members ?? []).filter { grant in
            grant.value["capabilities"]?.elements.contains { $0.text(in: acl.body) == "read" } == true
          }.map { (path: $0.name, isGlob: kind == "glob_paths") }
        }
        let allowed =
          data?["root"]?.isTrue == true
          || areas.contains { area in grants.contains { Self.grant($0.path, isGlob: $0.isGlob, reaches: area) } }
        guard allowed else { throw .forbidden(store: name, path: areas[0], capability: "read") }
        return .available
      } catch {
        return .unavailable(error)
      }
    }

    /// Whether a policy's grant on `path` (a glob: every path that begins with it) reaches into `area` (a folder when
    /// it ends with `/`, else one secret's path). `+` stands for one segment in a grant, as in policies.
    static func grant(_ path: String, isGlob: Bool, reaches area: String) -> Bool {
      let grant = path.split(separator: "/", omittingEmptySubsequences: false)
      let target = area.split(separator: "/", omittingEmptySubsequences: false)
      let folder = area.hasSuffix("/")
      for (index, segment) in grant.enumerated() {
        // A grant that goes on below the folder is inside it; a glob's last segment is a prefix.
        if folder && index >= target.count - 1 { return true }
        guard index < target.count else { return false }
        if isGlob && index == grant.count - 1 { return target[index].hasPrefix(segment) }
        if segment != "+" && segment != target[index] { return false }
      }
      return grant.count == target.count
    }

    // MARK: - Requests

    /// The secret at `location`, or nil.
    private func read(
      _ location: (mount: String, path: String, field: String, isOwn: Bool)
    ) throws(CredentialError) -> Data? {
      let path = "\(location.mount)/data/\(location.path)"
      return try Self.reading(call(.GET, path, capability: "read")) { status, bytes throws(CredentialError) -> Data? in
        try require(status, in: [200, 404], bytes, "read", path)
        let json = VaultJSON.parse(bytes)
        if status == 200 { return try field(location, of: json?["data"]?["data"], in: bytes, path: path) }
        if json?["data"]?["metadata"] != nil { return nil }  // the newest version was deleted or destroyed
        try requireMount(location.mount, bytes)
        try checkMount(location.mount)
        return nil
      }
    }

    /// The secret in the location's field (or in base64 in `<field>_base64`) of a secret's `data`: nil when a
    /// location of your own has neither (its field was deleted), unreadable when the layout's secret has neither.
    private func field(
      _ location: (mount: String, path: String, field: String, isOwn: Bool), of data: VaultJSON?, in bytes: [UInt8],
      path: String
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

    /// A new version of the secret at `location` with `secret` in its field (nil: the field removed, and the secret
    /// deleted when no other field is left), check-and-set against the version read first.
    private func write(
      _ secret: Data?, at location: (mount: String, path: String, field: String, isOwn: Bool)
    ) throws(CredentialError) {
      let path = "\(location.mount)/data/\(location.path)"
      try Self.reading(call(.GET, path, capability: "read")) { status, current throws(CredentialError) in
        let json = VaultJSON.parse(current)
        let version = json?["data"]?["metadata"]?["version"]?.integer(in: current) ?? 0
        try require(status, in: [200, 404], current, "read", path)
        if status == 404 { try requireMount(location.mount, current) }
        let kept =
          json?["data"]?["data"]?.members.filter { ![location.field, location.field + "_base64"].contains($0.name) }
          ?? []
        if secret == nil {
          guard status == 200 else { return }  // nothing there to remove
          if kept.isEmpty { return try deleteAll("\(location.mount)/metadata/\(location.path)") }
        }
        betweenReadAndWrite.withLock { $0 }?()
        var body = Self.versionBody(secret, field: location.field, keeping: kept, from: current, cas: version)
        defer { SecretBuffer.wipe(&body) }
        let capability = version == 0 ? "create" : "update"
        let answer = try call(.POST, path, capability: capability, body: body.withUnsafeBytes { Data.wiping($0) })
        try Self.reading(answer) { status, bytes throws(CredentialError) in
          if status == 400, VaultServer.errors(in: bytes).contains(where: { $0.contains("check-and-set") }) {
            throw .conflict(store: name, path: path)
          }
          try require(status, in: [200, 204], bytes, capability, path)
        }
      }
    }

    /// `{"options":{"cas":N},"data":{...}}`: the fields kept as the server wrote them, and the secret as text, or in
    /// base64 when it is not UTF-8.
    private static func versionBody(
      _ secret: Data?, field: String, keeping kept: [VaultJSON.Member], from current: [UInt8], cas: Int
    ) -> [UInt8] {
      var writer = VaultJSONWriter()
      let keptSize = kept.reduce(0) { $0 + VaultJSONWriter.escapedSize($1.name.utf8.count) + $1.value.range.count + 2 }
      writer.bytes.reserveCapacity(
        keptSize + VaultJSONWriter.escapedSize((secret?.count ?? 0) * 2 + field.utf8.count + 7) + 64)
      writer.raw("{\"options\":{\"cas\":\(cas)},\"data\":{")
      for (index, member) in kept.enumerated() {
        if index > 0 { writer.raw(",") }
        writer.string(member.name.utf8)
        writer.raw(":")
        writer.raw(member.value.raw(in: current))
      }
      if let secret {
        if !kept.isEmpty { writer.raw(",") }
        if isUTF8(secret) {
          writer.string(field.utf8)
          writer.raw(":")
          writer.string(secret)
        } else {
          writer.string((field + "_base64").utf8)
          writer.raw(":\"")
          Base64.encode(secret, into: &writer.bytes)
          writer.raw("\"")
        }
      }
      writer.raw("}}")
      return writer.bytes
    }

    /// Deletes every version of the secret whose metadata is at `path`.
    private func deleteAll(_ path: String) throws(CredentialError) {
      try Self.reading(call(.DELETE, path, capability: "delete")) { status, bytes throws(CredentialError) in
        if status == 404 { try requireMount(String(path.prefix { $0 != "/" }), bytes) }
        try require(status, in: [200, 204, 404], bytes, "delete", path)
      }
    }

    /// Whether the newest version of the secret whose metadata is at `path` is there (not deleted or destroyed).
    private func isCurrent(_ path: String) throws(CredentialError) -> Bool {
      try Self.reading(call(.GET, path, capability: "read")) { status, bytes throws(CredentialError) -> Bool in
        try require(status, in: [200, 404], bytes, "read", path)
        guard status == 200 else { return false }  // deleted since the listing
        let data = VaultJSON.parse(bytes)?["data"]
        let newest = data?["current_version"]?.integer(in: bytes).flatMap { data?["versions"]?[String($0)] }
        return newest?["deletion_time"]?.text(in: bytes) == "" && newest?["destroyed"]?.isTrue == false
      }
    }

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
    private func checkMount(_ mount: String) throws(CredentialError) {
      if checkedMounts.withLock({ $0.contains(mount) }) { return }
      let response: FleetHTTPResponse
      do {
        response = try call(.GET, "sys/internal/ui/mounts/\(mount)", capability: "read")
      } catch  where error.code == .forbidden {
        return
      }
      let (type, version) = try Self.reading(response) { status, bytes in
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

    /// `method path` with the login's token; a refusal (403) is checked against the token itself first, and made
    /// again once with a new token when that one had expired.
    private func call(
      _ method: HTTPMethod, _ path: String, query: String? = nil, capability: String, body: Data? = nil
    ) throws(CredentialError) -> FleetHTTPResponse {
      var token = try session.token()
      var response = try send(method, path, query, token, body)
      if response.status == 403, let fresh = try session.recheck(token) {
        token = fresh
        response = try send(method, path, query, token, body)
      }
      if response.status == 403 { throw .forbidden(store: name, path: path, capability: capability) }
      return response
    }

    /// `method path?query` with `token`, no address's failure made a `CredentialError`.
    private func send(
      _ method: HTTPMethod, _ path: String, _ query: String?, _ token: String?, _ body: Data?
    ) throws(CredentialError) -> FleetHTTPResponse {
      do {
        return try server.send(method, path, query: query, token: token, body: body)
      } catch {
        throw Self.failure(error, store: name)
      }
    }

    /// The status and body of `response`, given to `body`; the body's bytes are zeroed afterwards, as they may hold
    /// a secret.
    static func reading<T>(
      _ response: consuming FleetHTTPResponse, _ body: (Int, [UInt8]) throws(CredentialError) -> T
    ) throws(CredentialError) -> T {
      let status = response.status
      var bytes = (consume response).body
      defer { SecretBuffer.wipe(&bytes) }
      return try body(status, bytes)
    }

    /// The error for a server no address of which answered.
    static func failure(_ failure: VaultServer.Failure, store: String) -> CredentialError {
      switch failure {
      case .sealed(let servers): .sealed(store: store, servers: servers)
      case .unreachable(let reason): .unreachable(store: store, reason: reason)
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

    /// The logins the environment may give, for messages.
    static let loginHelp = """
      BAO_TOKEN or VAULT_TOKEN; the systemd credentials vault-role-id and vault-secret-id; `bao login`, which \
      leaves ~/.vault-token; or a VaultLogin in code
      """

    /// The floor of a read, for script/bench: one bare GET of the credential's secret, with the store's own HTTP
    /// client and token, to its first address, and nothing else (no retry, no parsing, no wiping). Returns the size of
    /// the answer's body.
    package func bareRead(for credential: Credential) throws -> Int {
      let location = configuration.location(of: credential)
      var headers = HTTPHeaders()
      headers.add(name: "X-Vault-Token", value: try session.token())
      let path = VaultServer.percentEncoded("\(location.mount)/data/\(location.path)")
      return try server.client.sendBlocking(
        .GET, server.addresses[0].base + "/v1/" + path, headers: headers, timeout: configuration.timeout
      ).body.count
    }

    // MARK: - The last good value

    /// Keeps `secret` as `key`'s last good value, when the configuration asks for it.
    private func remember(_ key: VaultConfiguration.Key, _ secret: Data?) {
      guard configuration.lastGoodValue != nil else { return }
      lastGood.withLock { $0[key] = secret.map { ($0, ContinuousClock.now) } }
    }

    /// Drops `credential`'s last good value: it was saved or deleted here.
    private func forget(_ credential: Credential) {
      remember(.init(service: credential.service, account: credential.account), nil)
    }

    /// The last good value of `key`, told to the report, when `error` says the server cannot be asked and the value
    /// is young enough.
    private func lastGoodValue(
      _ key: VaultConfiguration.Key, _ credential: Credential, _ error: CredentialError
    ) -> Data? {
      guard let policy = configuration.lastGoodValue, [.sealed, .unreachable].contains(error.code),
        let kept = lastGood.withLock({ $0[key] })
      else { return nil }
      let age = ContinuousClock.now - kept.read
      guard age <= policy.maximumAge else { return nil }
      if let report = policy.report {
        report(credential, age, error)
      } else {
        let line = "splint: \(credential): the value read \(age) ago is used, because \(error)\n"
        _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
      }
      return kept.secret
    }

    /// Whether `data` is UTF-8 text, without making a `String` of it (which no one could wipe).
    private static func isUTF8(_ data: Data) -> Bool {
      var decoder = UTF8()
      var bytes = data.makeIterator()
      var next = decoder.decode(&bytes)
      while case .scalarValue = next { next = decoder.decode(&bytes) }
      if case .emptyInput = next { return true }
      return false
    }
  }
#endif
