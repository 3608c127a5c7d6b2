#if SplintFleet
  import NIOHTTP1
  package import SplintSecrets

  /// The floor `script/bench` measures a vault read against: one bare GET of a credential's secret, with a store's
  /// own HTTP client and token, to its first address, and nothing else (no retry, no parsing, no wiping). Not part of
  /// the store: the benchmark's measuring stick.
  package struct VaultFloor: Sendable {
    private let store: VaultCredentialStore
    private let url: String
    private let headers: HTTPHeaders

    /// The bare GET of `credential`'s secret through `store`, with the token the store holds now (logging in first
    /// if it must).
    package init(_ credential: Credential, in store: VaultCredentialStore) throws {
      let token = try CallerThread.run { () async throws(CredentialError) in try await store.kv.session.token() }
      var headers = HTTPHeaders()
      headers.add(name: "X-Vault-Token", value: token)
      self.store = store
      self.headers = headers
      url =
        store.server.addresses[0].base + "/v1/"
        + VaultServer.percentEncoded(store.configuration.location(of: credential).data)
    }

    /// Sends the GET, and returns the size of the answer's body.
    package func read() throws -> Int {
      try store.server.client.sendBlocking(.GET, url, headers: headers, timeout: store.configuration.timeout).body.count
    }
  }
#endif
