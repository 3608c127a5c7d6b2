#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import TestSupport
  import Testing
  @testable import SplintFleet

  extension OpenBaoServer {
    /// `method /v1/path` with `json`, as root (or with `token`): the status and the answer's JSON object. Faster than
    /// the `bao` command (a 180 MB Go binary, 150 ms a start) for setting a server up.
    @discardableResult
    func api(
      _ method: HTTPMethod, _ path: String, _ json: [String: Any]? = nil, token: String? = nil
    ) throws -> (status: Int, json: [String: Any]) {
      var headers = HTTPHeaders()
      headers.add(name: "X-Vault-Token", value: token ?? rootToken)
      let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
      let response = try FleetHTTPClient().sendBlocking(
        method, address + "/v1/" + path, headers: headers, body: body, timeout: .seconds(30))
      let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
      return (response.status, object)
    }

    /// `api`, which must succeed (a 2xx status).
    @discardableResult
    func admin(_ method: HTTPMethod, _ path: String, _ json: [String: Any]? = nil) throws -> [String: Any] {
      let (status, answer) = try api(method, path, json)
      guard (200..<300).contains(status) else {
        throw ProgramError.spawn("\(method) \(path)", "status \(status): \(answer)")
      }
      return answer
    }

    /// A store of this server's, logging in as `login` (the root token unless given).
    func store(
      _ login: VaultLogin? = nil, refusesForwarding: Bool = false,
      _ configure: (inout VaultConfiguration) -> Void = { _ in }
    ) throws -> VaultCredentialStore {
      var configuration = VaultConfiguration(addresses: [address], login: login ?? .token(rootToken))
      configure(&configuration)
      return try VaultCredentialStore(configuration, refusesForwarding: refusesForwarding)
    }

    /// The field `field` of the KV version 2 secret at `path` in `secret/`, as the server holds it.
    func field(_ path: String, _ field: String = "value", mount: String = "secret") throws -> Any? {
      let (_, answer) = try api(.GET, "\(mount)/data/\(path)")
      return ((answer["data"] as? [String: Any])?["data"] as? [String: Any])?[field]
    }

    /// A policy `name` that grants `capabilities` on each path.
    func policy(_ name: String, _ grants: [String: [String]]) throws {
      let rules = grants.map { path, capabilities in
        "path \"\(path)\" { capabilities = [\(capabilities.map { "\"\($0)\"" }.joined(separator: ", "))] }"
      }
      try admin(.PUT, "sys/policies/acl/\(name)", ["policy": rules.joined(separator: "\n")])
    }

    /// A token with `policies`: a child of root, valid for an hour unless `ttl` says.
    func token(_ policies: [String], ttl: String = "1h") throws -> String {
      let answer = try admin(.POST, "auth/token/create", ["policies": policies, "ttl": ttl])
      return try #require((answer["auth"] as? [String: Any])?["client_token"] as? String)
    }

    /// An AppRole role `name` with `settings`, its role ID, and a new secret ID.
    func appRole(_ name: String, _ settings: [String: Any]) throws -> (roleID: String, secretID: String) {
      if try api(.GET, "sys/auth").json["approle/"] == nil {
        try admin(.POST, "sys/auth/approle", ["type": "approle"])
      }
      try admin(.POST, "auth/approle/role/\(name)", settings)
      let roleID = try admin(.GET, "auth/approle/role/\(name)/role-id")
      let secretID = try admin(.POST, "auth/approle/role/\(name)/secret-id")
      return (
        try #require((roleID["data"] as? [String: Any])?["role_id"] as? String),
        try #require((secretID["data"] as? [String: Any])?["secret_id"] as? String)
      )
    }
  }

  /// A credential of a service of its own in `store`.
  func credential(_ account: String, _ store: any CredentialStore, service: String = "svc") -> Credential {
    Credential(service: service, account: account, store: store)
  }

  /// The error `body` throws, or a recorded issue when it throws none.
  ///
  /// `body` runs on a thread of its own: the store's blocking calls wait for a server that is paused, sealed or
  /// electing a leader, and on one of Swift's cooperative threads (two on two cores) that wait would stall every other
  /// test of the run, their timeouts and sleeps included.
  func failure<T: Sendable>(
    _ body: @escaping @Sendable () throws(CredentialError) -> T, sourceLocation: SourceLocation = #_sourceLocation
  ) async -> CredentialError? {
    let result = await withCheckedContinuation { (done: CheckedContinuation<Result<T, CredentialError>, Never>) in
      Thread { done.resume(returning: Result { () throws(CredentialError) in try body() }) }.start()
    }
    switch result {
    case .success(let value):
      Issue.record("no error; it returned \(value)", sourceLocation: sourceLocation)
      return nil
    case .failure(let error):
      return error
    }
  }

  /// Runs `program` (a shell command line) with a scratch directory's files, and returns what it printed.
  func shell(_ script: String, environment: [String: String] = [:]) async throws -> ProgramOutput {
    try await Programs.run(
      ["/bin/bash", "-c", script],
      environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
  }
#endif
