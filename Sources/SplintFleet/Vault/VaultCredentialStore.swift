#if SplintFleet
  public import SplintSecrets

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
  /// - **Asynchronous calls hold no thread.** `Credential`'s `async` API waits for the server without a thread of
  ///   its own, and cancelling the waiting task ends the request at once (`CredentialError/cancelled`); the
  ///   synchronous calls wait on the calling thread, and never on Swift's cooperative pool.
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
  public final class VaultCredentialStore: CredentialStore, InterruptibleCredentialStore {
    /// The configuration the store was made with.
    public let configuration: VaultConfiguration
    /// How the store logs in: the configuration's, or the one the environment gave.
    public let login: VaultLogin
    /// `vault at https://vault.example.com:8200`: what errors and `splintctl secret status` call the store.
    public let name: String

    /// The KV version 2 protocol, over the server's addresses and the login's session.
    let kv: VaultKV
    /// The last good value of each credential, when the configuration asks for it.
    private let lastGood: VaultLastGood

    /// The server's addresses, and its requests.
    var server: VaultServer { kv.server }

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
      let server = VaultServer(
        addresses: addresses, client: client, namespace: configuration.namespace, timeout: configuration.timeout,
        name: name, refusesForwarding: refusesForwarding)
      kv = VaultKV(
        server: server,
        session: VaultSession(login: login, server: server, revokesAtExit: configuration.revokesTokenAtExit))
      lastGood = VaultLastGood(configuration.lastGoodValue)
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
      kv.session.logOut()
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
      try CallerThread.run { () async throws(CredentialError) in try await self.read(credential) }
    }

    /// Saves `secret` as a new version, with check-and-set against the version read just before; the secret's other
    /// fields are kept.
    ///
    /// - Throws: `CredentialError/conflict(store:path:)` when another client saved in between, and the
    ///   errors of ``readSecret(for:)``.
    public func saveSecret(
      _ secret: Data, contentType: SecretContentType, for credential: Credential
    ) throws(CredentialError) {
      try CallerThread.run { () async throws(CredentialError) in try await self.save(secret, for: credential) }
    }

    /// Deletes every version of the secret and its metadata; for a credential at a location of your own, only its
    /// field (the whole secret when it has no other).
    public func deleteSecret(for credential: Credential) throws(CredentialError) {
      try CallerThread.run { () async throws(CredentialError) in try await self.delete(credential) }
    }

    /// The accounts of `service` whose newest version is there (not deleted), sorted.
    public func accounts(service: String) throws(CredentialError) -> [String] {
      try CallerThread.run { () async throws(CredentialError) in try await self.listAccounts(service) }
    }

    /// Available when the server answers (active or standby, unsealed), the login gives a valid token, and its
    /// policies let it read somewhere the credentials are (as `sys/internal/ui/resultant-acl` shows them to the
    /// token). Logs in if it must (which makes a token); writes nothing else.
    public func availability() -> CredentialAvailability {
      // Where the credentials are: the layout's folder, and each location of your own.
      let areas =
        ["\(configuration.mount)/data/\(configuration.prefix)/"]
        + configuration.locations.values.map { "\($0.mount ?? configuration.mount)/data/\($0.path)" }
      do throws(CredentialError) {
        try CallerThread.run { () async throws(CredentialError) in try await self.kv.checkAvailable(reading: areas) }
        return .available
      } catch {
        return .unavailable(error)
      }
    }

    // MARK: - InterruptibleCredentialStore

    package func readSecretInterruptibly(for credential: Credential) async throws(CredentialError) -> Data? {
      try await read(credential)
    }

    package func saveSecretInterruptibly(
      _ secret: Data, contentType: SecretContentType, for credential: Credential
    ) async throws(CredentialError) {
      try await save(secret, for: credential)
    }

    package func deleteSecretInterruptibly(for credential: Credential) async throws(CredentialError) {
      try await delete(credential)
    }

    package func accountsInterruptibly(service: String) async throws(CredentialError) -> [String] {
      try await listAccounts(service)
    }

    // MARK: - The calls, once for both

    /// ``readSecret(for:)``: the secret, or the last good value while the server cannot be asked.
    private func read(_ credential: Credential) async throws(CredentialError) -> Data? {
      do {
        let secret = try await kv.read(configuration.location(of: credential))
        lastGood.remember(secret, of: credential)
        return secret
      } catch {
        guard let kept = lastGood.value(of: credential, after: error) else { throw error }
        return kept
      }
    }

    /// ``saveSecret(_:contentType:for:)``.
    private func save(_ secret: Data, for credential: Credential) async throws(CredentialError) {
      let location = configuration.location(of: credential)
      try await kv.checkMount(location.mount)
      try await kv.save(secret, at: location)
      lastGood.forget(credential)
    }

    /// ``deleteSecret(for:)``.
    private func delete(_ credential: Credential) async throws(CredentialError) {
      let location = configuration.location(of: credential)
      try await kv.checkMount(location.mount)
      lastGood.forget(credential)
      guard location.isOwn else { return try await kv.save(nil, at: location) }
      try await kv.deleteAll(location.metadata)
    }

    /// ``accounts(service:)``: a listing of the service's folder, each account's metadata looked at, and the
    /// locations of your own read.
    private func listAccounts(_ service: String) async throws(CredentialError) -> [String] {
      let mount = configuration.mount
      try await kv.checkMount(mount)
      let folder = "\(mount)/metadata/\(configuration.prefix)/\(VaultConfiguration.pathSegment(service))"
      var accounts: Set<String> = []
      for key in try await kv.list(folder, mount: mount) {
        guard let account = VaultConfiguration.name(fromSegment: key),
          configuration.locations[.init(service: service, account: account)] == nil,
          try await kv.isCurrent("\(folder)/\(key)")
        else { continue }
        accounts.insert(account)
      }
      for key in configuration.locations.keys where key.service == service {
        let credential = Credential(service: key.service, account: key.account, store: self)
        if try await kv.read(configuration.location(of: credential)) != nil { accounts.insert(key.account) }
      }
      return accounts.sorted()
    }
  }
#endif
