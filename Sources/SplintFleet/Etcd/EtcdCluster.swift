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
  /// let written = try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "com.example.sync")
  /// print("set at revision \(written.revision)")  // each machine's copy holds it once its revision reaches this
  /// ```
  ///
  /// The layout: each setting of a suite is the key `<prefix><suite>/<key>` (by default `/splint/<suite>/<key>`),
  /// holding the setting's JSON text, so that `etcdctl put /splint/com.example.sync/interval 60` is all an operator
  /// needs. The key `<prefix><suite>/$enforced` holds a JSON array of the keys the fleet enforces (above each
  /// user's own file, on machines whose copy is a system copy). Keys starting with `$` are never settings.
  public struct EtcdCluster: Sendable {
    /// The members' client URLs (`https://HOST:2379`), tried in turn: a member that is down, slow or without a
    /// leader is left for the next. Each is a scheme, host and port alone (no path, query, user or password), as a
    /// vault's address is; `http` only to a literal loopback address (127.0.0.1, [::1]).
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
    /// How the writes record each change, beside the suite (``FleetLayout``): who made it, when, with what, and each
    /// key's old and new value, which ``history(suite:key:limit:)`` shows and ``diff(suite:from:to:)`` rolls back
    /// with. Nil: writes record nothing (the history then shows them as made around splintctl).
    public var recording: Recording? = Recording()
    /// The most comparisons, and the most operations, the cluster takes in one transaction: its `--max-txn-ops`
    /// (128 unless the members are started with another). A change larger than it is refused, never split.
    public var maximumTransactionOperations = 128
    /// The largest request the cluster takes, in bytes: its `--max-request-bytes` (1.5 MiB unless set otherwise).
    public var maximumRequestSize = 1_572_864

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

    /// Where the fleet's keys are: the suites' settings under ``prefix``, and the records of changes beside it.
    public var layout: FleetLayout { FleetLayout(prefix: prefix) }

    /// The key prefix of `suite`'s settings: `<prefix><suite>/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a suite that is not a plain name (as
    ///   `SettingsStore(suite:)` takes).
    func prefix(ofSuite suite: String) throws(FleetError) -> [UInt8] {
      Array(try layout.settingsPrefix(ofSuite: suite).utf8)
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
      try await storedValues(under: prefix(ofSuite: suite))
    }

    /// Every setting the cluster holds under `prefix` (each key past it, unless empty or reserved), sorted by key,
    /// with its text as the cluster holds it.
    func storedValues(under prefix: [UInt8]) async throws(FleetError) -> [(key: String, text: String)] {
      let gateway = try EtcdGateway(cluster: self)
      let response = try await gateway.call(
        "/v3/kv/range",
        EtcdRangeRequest(key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix))),
        as: EtcdRangeResponse.self
      ).response
      return (response.kvs ?? []).compactMap { pair in
        let key = String(decoding: pair.key.bytes.dropFirst(prefix.count), as: UTF8.self)
        guard !key.isEmpty, !FleetCopy.isReserved(key) else { return nil }
        return (key, Self.text(pair.value))
      }
    }

    /// What a write did: the cluster's revision it was made at, and what the key held before.
    ///
    /// A machine's copy holds the change once the revision it is as of (`splintctl fleet status`'s `revision`,
    /// `FleetCopyStatus.revision`) reaches ``revision``.
    public struct Write: Sendable, Hashable {
      /// The cluster's revision the change was made at. When nothing changed (a key removed that was not there, a
      /// key enforced that already was), the revision the cluster was at when it was asked: a copy as of it already
      /// holds what was asked.
      public let revision: Int64
      /// Whether the cluster changed: false when the write would have changed nothing, and was not made.
      public let changed: Bool
      /// The JSON text the key held before, as the cluster held it, for ``EtcdCluster/setValue(jsonText:forKey:suite:)``
      /// and ``EtcdCluster/removeValue(forKey:suite:)`` (and their `label:` forms), and the order of labels
      /// ``EtcdCluster/setLabels(_:suite:)`` replaced: nil when it held none (a set that made a new key, a remove of a
      /// key that was not there), and for the other writes.
      public let previousValue: String?

      /// A write's outcome, as the cluster answered it.
      package init(revision: Int64, changed: Bool, previousValue: String?) {
        self.revision = revision
        self.changed = changed
        self.previousValue = previousValue
      }
    }

    /// Stores `jsonText` as `key`'s value in `suite`, as given (it must be one JSON value: a number, `true`, a
    /// string in quotes, an array, an object); every machine's follower writes it to its copy. The change is
    /// recorded in the same transaction (see ``recording``).
    ///
    /// - Returns: The revision it was written at, and the value it replaced (nil for a key the suite did not hold).
    /// - Throws: ``FleetError/Code/notJSON`` for text that is not JSON (nothing is stored),
    ///   ``FleetError/Code/reservedKey``, and the cluster's errors.
    @discardableResult
    public func setValue(jsonText: String, forKey key: String, suite: String) async throws(FleetError) -> Write {
      _ = try self.key(key, suite: suite)
      try Self.requireJSON(jsonText, key: key)
      let (write, before) = try await commit(suite: suite, reading: [key]) { _ throws(FleetError) in [key: jsonText] }
      return Write(revision: write.revision, changed: true, previousValue: before[key]?.text)
    }

    /// A value's bytes as the text the cluster holds.
    static func text(_ value: EtcdBytes?) -> String {
      String(decoding: value?.bytes ?? [], as: UTF8.self)
    }

    /// Throws ``FleetError/Code/notJSON`` unless `text` is one JSON value.
    static func requireJSON(_ text: String, key: String) throws(FleetError) {
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
    /// - Returns: The revision they were written at (``Write/previousValue`` is nil). With no values, nothing is
    ///   written, and the revision is 0.
    /// - Throws: ``FleetError/Code/notJSON`` for a text that is not JSON, ``FleetError/Code/reservedKey`` (nothing is
    ///   stored then), ``FleetError/Code/transactionTooLarge`` for more than one transaction takes, and the
    ///   cluster's errors.
    @discardableResult
    public func setValues(
      _ values: [(key: String, jsonText: String)], suite: String
    ) async throws(FleetError) -> Write {
      var changes: [String: String?] = [:]
      for (key, text) in values {
        _ = try self.key(key, suite: suite)
        try Self.requireJSON(text, key: key)
        changes[key] = .some(text)
      }
      guard !changes.isEmpty else { return Write(revision: 0, changed: false, previousValue: nil) }
      let planned = changes
      let (write, _) = try await commit(suite: suite, reading: Array(changes.keys)) { _ throws(FleetError) in planned }
      return Write(revision: write.revision, changed: true, previousValue: nil)
    }

    /// Removes `key` from `suite`'s settings in the cluster: each machine's programs read their own value, or the
    /// default, again. The change is recorded in the same transaction (see ``recording``).
    ///
    /// - Returns: The revision it was removed at, and the value it held (``Write/changed`` is false, and the value
    ///   nil, when the cluster did not hold the key).
    /// - Throws: The cluster's errors.
    @discardableResult
    public func removeValue(forKey key: String, suite: String) async throws(FleetError) -> Write {
      _ = try self.key(key, suite: suite)
      let (write, before) = try await commit(suite: suite, reading: [key]) { current throws(FleetError) in
        current[key] == nil ? nil : [key: .none]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: before[key]?.text)
    }

    /// The keys the fleet enforces in `suite` (`<prefix><suite>/$enforced`), sorted.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` when `$enforced` is not an array of keys (or lists what is not one), and
    ///   the cluster's errors.
    public func enforcedKeys(suite: String) async throws(FleetError) -> [String] {
      try Self.enforcedList(await reservedText(FleetCopy.enforcedKey, suite: suite)).sorted()
    }

    /// The text of `suite`'s reserved key `name` (`$enforced`, `$schema`), or nil when the suite has none.
    func reservedText(_ name: String, suite: String) async throws(FleetError) -> String? {
      let gateway = try EtcdGateway(cluster: self)
      let key = try prefix(ofSuite: suite) + Array(name.utf8)
      let response = try await gateway.call(
        "/v3/kv/range", EtcdRangeRequest(key: EtcdBytes(key)), as: EtcdRangeResponse.self
      ).response
      return response.kvs?.first.map { Self.text($0.value) }
    }

    /// Marks `key` of `suite` as enforced by the fleet, or no longer: on machines whose copy is a system copy, an
    /// enforced key's fleet value wins over each user's own, and local writes of it fail. Changed with a
    /// transaction that compares the list, so that two operators changing it at once lose nothing; recorded in it
    /// (see ``recording``).
    ///
    /// - Returns: The revision the list was changed at; ``Write/changed`` is false when it already said what was
    ///   asked (and the revision is then the one it was read at).
    /// - Throws: ``FleetError/Code/notJSON`` when `$enforced` is not an array of keys (or lists what is not one:
    ///   nothing is written over it), ``FleetError/Code/conflict`` when the list kept changing meanwhile (nothing was
    ///   changed: try again), and the cluster's errors.
    @discardableResult
    public func setEnforced(_ enforced: Bool, forKey key: String, suite: String) async throws(FleetError) -> Write {
      _ = try self.key(key, suite: suite)
      let name = FleetCopy.enforcedKey
      let (write, _) = try await commit(suite: suite, reading: [name]) { current throws(FleetError) in
        let listed = try Self.enforcedList(current[name]?.text)
        var keys = listed
        if enforced { keys.insert(key) } else { keys.remove(key) }
        guard keys != listed else { return nil }
        let text = "[" + keys.sorted().map { JSONValue.string($0).description }.joined(separator: ", ") + "]"
        return [name: keys.isEmpty ? .none : .some(text)]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: nil)
    }

    /// The keys a `$enforced` text lists (none for nil: no list).
    ///
    /// - Throws: ``FleetError/Code/notJSON`` when it is not an array of keys, or lists what is not one: an operator's
    ///   command neither reads past an entry that is not a key nor writes over it.
    private static func enforcedList(_ text: String?) throws(FleetError) -> Set<String> {
      guard let text else { return [] }
      let enforced = FleetCopy.EnforcedKeys(Array(text.utf8))
      if let problem = enforced.problem { throw FleetError(.notJSON(key: FleetCopy.enforcedKey, reason: problem)) }
      return Set(enforced.keys)
    }
  }
#endif
