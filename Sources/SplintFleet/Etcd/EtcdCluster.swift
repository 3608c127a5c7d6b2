#if SplintFleet
  public import SplintSecrets
  import SplintSettings

  /// An etcd v3 cluster that holds a fleet's settings, and how to reach it: what a ``FleetFollower`` follows, and what
  /// `splintctl fleet set` and its siblings change.
  ///
  /// ```swift
  /// let cluster = EtcdCluster(
  ///   endpoints: ["https://10.0.0.1:2379", "https://10.0.0.2:2379", "https://10.0.0.3:2379"],
  ///   tls: FleetTLS(caFile: "/etc/etcd/ca.pem"),
  ///   user: "splint-reader")  // its password: the systemd credential etcd__splint-reader, or the keyring's
  /// try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "com.example.sync")
  /// ```
  ///
  /// The layout: each setting of a suite is the key `<prefix><suite>/<key>` (by default `/splint/<suite>/<key>`),
  /// holding the setting's JSON text, so that `etcdctl put /splint/com.example.sync/interval 60` is all an operator
  /// needs. The key `<prefix><suite>/$enforced` holds a JSON array of the keys the fleet enforces (above each
  /// user's own file, on machines whose copy is a system copy). Keys starting with `$` are never settings.
  public struct EtcdCluster: Sendable {
    /// The members' client URLs (`https://HOST:2379`), tried in turn: a member that is down, slow or without a
    /// leader is left for the next.
    public var endpoints: [String]
    /// What every key of the fleet's settings starts with: `/splint/` unless set. It should end with `/`.
    public var prefix: String
    /// How the members' certificates are checked, and the client certificate shown to them.
    public var tls: FleetTLS
    /// The etcd user to authenticate as, when the cluster has authentication on; nil for none. A follower needs
    /// only a role that may read the prefix.
    public var user: String?
    /// Where the user's password is read from, each time the follower authenticates (never kept): by default
    /// `Credential(service: "etcd", account: user)`, so that a systemd credential named `etcd__<user>` or a
    /// keyring item serves.
    public var password: Credential?
    /// How long a request may take, each: 5 seconds unless set.
    public var requestTimeout: Duration

    /// A cluster reached at `endpoints`.
    ///
    /// - Parameters:
    ///   - endpoints: The members' client URLs, `http(s)://HOST:PORT`. A password is never sent over plain HTTP to
    ///     another machine: with a `user`, an `http` endpoint must be this machine's.
    ///   - prefix: What every key starts with.
    ///   - tls: How certificates are checked, and the client certificate.
    ///   - user: The etcd user, if the cluster has authentication on.
    ///   - password: Where the user's password is read from.
    ///   - requestTimeout: How long a request may take.
    public init(
      endpoints: [String], prefix: String = "/splint/", tls: FleetTLS = FleetTLS(), user: String? = nil,
      password: Credential? = nil, requestTimeout: Duration = .seconds(5)
    ) {
      self.endpoints = endpoints
      self.prefix = prefix
      self.tls = tls
      self.user = user
      self.password = password
      self.requestTimeout = requestTimeout
    }

    // MARK: - The layout

    /// The key prefix of `suite`'s settings: `<prefix><suite>/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a suite that is not a plain name (as
    ///   `SettingsStore(suite:)` takes).
    func prefix(ofSuite suite: String) throws(FleetError) -> [UInt8] {
      do {
        _ = try SettingsStore.fileURL(forSuite: suite)
      } catch {
        throw FleetError(.invalidConfiguration(error.description))
      }
      return Array((prefix + suite + "/").utf8)
    }

    /// The cluster's key of `key` in `suite`.
    ///
    /// - Throws: ``FleetError/Code/reservedKey`` for a key that starts with `$`, and
    ///   ``FleetError/Code/invalidConfiguration`` for an empty one, or a suite that is not a name.
    func key(_ key: String, suite: String) throws(FleetError) -> [UInt8] {
      guard !key.isEmpty else { throw FleetError(.invalidConfiguration("a setting's key is not empty.")) }
      guard !FleetCopy.isReserved(key) else { throw FleetError(.reservedKey(key)) }
      return try prefix(ofSuite: suite) + Array(key.utf8)
    }

    // MARK: - Changing the fleet's settings

    /// The JSON text the cluster holds for `key` in `suite`, as it holds it, or nil when it holds none.
    ///
    /// - Throws: A ``FleetError``: the cluster unreachable, a refused password, a missing permission.
    public func storedValue(forKey key: String, suite: String) async throws(FleetError) -> String? {
      let gateway = try EtcdGateway(cluster: self)
      let response = try await gateway.call(
        "/v3/kv/range", EtcdRangeRequest(key: EtcdBytes(try self.key(key, suite: suite))),
        as: EtcdRangeResponse.self
      ).response
      return response.kvs?.first.map { String(decoding: $0.value?.bytes ?? [], as: UTF8.self) }
    }

    /// Every setting the cluster holds for `suite`, sorted by key, with its JSON text as the cluster holds it (which
    /// may not be JSON: a follower leaves such a key out). `$enforced` is not among them (see ``enforcedKeys(suite:)``).
    ///
    /// - Throws: A ``FleetError``, as ``storedValue(forKey:suite:)``.
    public func storedValues(suite: String) async throws(FleetError) -> [(key: String, text: String)] {
      let gateway = try EtcdGateway(cluster: self)
      let prefix = try prefix(ofSuite: suite)
      let response = try await gateway.call(
        "/v3/kv/range",
        EtcdRangeRequest(key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix))),
        as: EtcdRangeResponse.self
      ).response
      return (response.kvs ?? []).compactMap { pair in
        let key = String(decoding: pair.key.bytes.dropFirst(prefix.count), as: UTF8.self)
        guard !FleetCopy.isReserved(key) else { return nil }
        return (key, String(decoding: pair.value?.bytes ?? [], as: UTF8.self))
      }
    }

    /// Stores `jsonText` as `key`'s value in `suite`, as given (it must be one JSON value: a number, `true`, a
    /// string in quotes, an array, an object); every machine's follower writes it to its copy.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` for text that is not JSON (nothing is stored),
    ///   ``FleetError/Code/reservedKey``, and the cluster's errors.
    public func setValue(jsonText: String, forKey key: String, suite: String) async throws(FleetError) {
      let name = try self.key(key, suite: suite)
      try Self.requireJSON(jsonText, key: key)
      let gateway = try EtcdGateway(cluster: self)
      _ = try await gateway.call(
        "/v3/kv/put", EtcdPutRequest(key: EtcdBytes(name), value: EtcdBytes(jsonText)), as: EtcdHeaderResponse.self)
    }

    /// Throws ``FleetError/Code/notJSON`` unless `text` is one JSON value.
    private static func requireJSON(_ text: String, key: String) throws(FleetError) {
      do {
        _ = try FleetCopy.parseValue(Array(text.utf8))
      } catch {
        throw FleetError(.notJSON(key: key, reason: FleetError.jsonReason(error)))
      }
    }

    /// Stores several settings of `suite` in one transaction: every machine's copy takes them together, in one write,
    /// and a program never sees some of them changed and not the others.
    ///
    /// ```swift
    /// try await cluster.setValues([("host", #""db2.example.com""#), ("port", "5433")], suite: "com.example.sync")
    /// ```
    ///
    /// - Throws: ``FleetError/Code/notJSON`` for a text that is not JSON, ``FleetError/Code/reservedKey`` (nothing is
    ///   stored then), and the cluster's errors.
    public func setValues(_ values: [(key: String, jsonText: String)], suite: String) async throws(FleetError) {
      var operations: [EtcdTransactionRequest.Operation] = []
      for (key, text) in values {
        let name = try self.key(key, suite: suite)
        try Self.requireJSON(text, key: key)
        operations.append(.init(requestPut: EtcdPutRequest(key: EtcdBytes(name), value: EtcdBytes(text))))
      }
      guard !operations.isEmpty else { return }
      let gateway = try EtcdGateway(cluster: self)
      _ = try await gateway.call(
        "/v3/kv/txn", EtcdTransactionRequest(compare: [], success: operations), as: EtcdTransactionResponse.self)
    }

    /// Removes `key` from `suite`'s settings in the cluster: each machine's programs read their own value, or the
    /// default, again.
    ///
    /// - Returns: Whether the cluster held the key.
    /// - Throws: The cluster's errors.
    @discardableResult
    public func removeValue(forKey key: String, suite: String) async throws(FleetError) -> Bool {
      let gateway = try EtcdGateway(cluster: self)
      let response = try await gateway.call(
        "/v3/kv/deleterange", EtcdDeleteRequest(key: EtcdBytes(try self.key(key, suite: suite))),
        as: EtcdDeleteResponse.self
      ).response
      return (response.deleted?.value ?? 0) > 0
    }

    /// The keys the fleet enforces in `suite` (`<prefix><suite>/$enforced`), sorted.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` when `$enforced` is not an array of keys (or lists what is not one), and
    ///   the cluster's errors.
    public func enforcedKeys(suite: String) async throws(FleetError) -> [String] {
      try await enforcement(suite: suite).keys.sorted()
    }

    /// Marks `key` of `suite` as enforced by the fleet, or no longer: on machines whose copy is a system copy, an
    /// enforced key's fleet value wins over each user's own, and local writes of it fail. Changed with a
    /// transaction, so that two operators changing the list at once lose nothing.
    ///
    /// - Throws: ``FleetError/Code/conflict`` when the list changed meanwhile (nothing was changed: try again), and
    ///   the cluster's errors.
    public func setEnforced(_ enforced: Bool, forKey key: String, suite: String) async throws(FleetError) {
      _ = try self.key(key, suite: suite)
      let current = try await enforcement(suite: suite)
      var keys = current.keys
      if enforced { keys.insert(key) } else { keys.remove(key) }
      guard keys != current.keys else { return }
      let name = try prefix(ofSuite: suite) + Array(FleetCopy.enforcedKey.utf8)
      let text = "[" + keys.sorted().map { JSONValue.string($0).description }.joined(separator: ", ") + "]"
      var operation = EtcdTransactionRequest.Operation()
      if keys.isEmpty {
        operation.requestDeleteRange = EtcdDeleteRequest(key: EtcdBytes(name))
      } else {
        operation.requestPut = EtcdPutRequest(key: EtcdBytes(name), value: EtcdBytes(text))
      }
      let request = EtcdTransactionRequest(
        compare: [.init(key: EtcdBytes(name), modRevision: String(current.revision))], success: [operation])
      let gateway = try EtcdGateway(cluster: self)
      let response = try await gateway.call("/v3/kv/txn", request, as: EtcdTransactionResponse.self).response
      guard response.succeeded == true else { throw FleetError(.conflict(key: FleetCopy.enforcedKey)) }
    }

    /// The keys `$enforced` lists, and its modification revision (0 when it does not exist).
    private func enforcement(suite: String) async throws(FleetError) -> (keys: Set<String>, revision: Int64) {
      let gateway = try EtcdGateway(cluster: self)
      let name = try prefix(ofSuite: suite) + Array(FleetCopy.enforcedKey.utf8)
      let response = try await gateway.call(
        "/v3/kv/range", EtcdRangeRequest(key: EtcdBytes(name)), as: EtcdRangeResponse.self
      ).response
      guard let pair = response.kvs?.first else { return ([], 0) }
      // An operator's command neither reads past an entry that is not a key nor writes over it: it is told.
      let enforced = FleetCopy.EnforcedKeys(pair.value?.bytes ?? [])
      if let problem = enforced.problem { throw FleetError(.notJSON(key: FleetCopy.enforcedKey, reason: problem)) }
      return (Set(enforced.keys), pair.modRevision?.value ?? 0)
    }
  }
#endif
