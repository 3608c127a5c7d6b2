#if SplintFleet
  import Dispatch
  import Glibc
  import NIOHTTP1
  import SplintSecrets
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// The store's login: the token in use, where it came from, and for a token the store made by logging in, its
  /// renewal, its new login when it expired, and its revocation when the process exits.
  ///
  /// The token is kept as bytes that are wiped when it is replaced, revoked or freed. Each request hands the HTTP
  /// client a copy of it as a header value, which async-http-client and SwiftNIO write into buffers of their own: those
  /// are not ours to wipe.
  final class VaultSession: Sendable {
    let login: VaultLogin
    let server: VaultServer
    let revokesAtExit: Bool

    /// What the session holds now.
    private struct State {
      /// The token, wiped when freed.
      var token: Data?
      /// When a token made by logging in expires (nil: it does not, or was given).
      var expires: ContinuousClock.Instant?
      /// Whether that token may be renewed.
      var renewable = false
      /// Whether it is the store's own service token (to revoke), not a batch token.
      var revocable = false
      /// The process that made it: a child that forked does not revoke its parent's token at exit.
      var madeBy: pid_t = 0
      /// The token file's identity when it was read (device, inode, size, times).
      var fileStamp: [Int]?
      /// A fingerprint (a keyed hash) of the secret ID this process logged in with: a refusal of the same one later
      /// means it is spent.
      var secretIDFingerprint: Int?
      /// Which renewal is the one scheduled: an older one that fires does nothing.
      var renewal = 0
    }

    private let state = Mutex(State())

    /// Sessions with a token to revoke at exit.
    private static let live = Mutex<[ObjectIdentifier: WeakSession]>([:])

    /// A session the exit handler may still find.
    private struct WeakSession: Sendable {
      weak var session: VaultSession?
    }

    init(login: VaultLogin, server: VaultServer, revokesAtExit: Bool) {
      self.login = login
      self.server = server
      self.revokesAtExit = revokesAtExit
    }

    deinit {
      Self.live.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// The token to send now: the one held, read again when its file changed, or a new login when there is none or
    /// it expired.
    func token() throws(CredentialError) -> String {
      try state.withLock { state throws(CredentialError) in
        try Self.header(of: current(&state))
      }
    }

    /// The token held, brought up to date.
    private func current(_ state: inout State) throws(CredentialError) -> Data {
      switch login.method {
      case .token(let token, _):
        return token
      case .tokenFile(let path, _):
        let stamp = Self.stamp(of: path)
        if let token = state.token, stamp == state.fileStamp { return token }
        let token = try readToken(path)
        state.token = token
        state.fileStamp = stamp
        return token
      case .logIn(let request):
        if let token = state.token, state.expires.map({ ContinuousClock.now < $0 }) ?? true { return token }
        return try logIn(request, &state)
      }
    }

    /// After `rejected` was refused (403): whether it is still valid (nil: the refusal is the policy's), else the
    /// token to try again with.
    ///
    /// - Throws: `CredentialError/notLoggedIn(store:reason:)` when the token is no longer valid and
    ///   no other can be had.
    func recheck(_ rejected: String) throws(CredentialError) -> String? {
      guard
        case .success(let lookup) = Result(catching: { () throws(VaultServer.Failure) in
          try server.send(.GET, "auth/token/lookup-self", token: rejected)
        }), lookup.status == 403
      else { return nil }
      return try state.withLock { state throws(CredentialError) in
        if let token = state.token, Self.header(of: token) == rejected {
          state.token = nil
          state.fileStamp = nil
        }
        switch login.method {
        case .token(_, let source):
          throw .notLoggedIn(
            store: server.name,
            reason: "\(source) is not valid any more: it has expired or was revoked. Give the program a new one.")
        case .tokenFile(let path, let isDefault):
          let token = try Self.header(of: current(&state))
          if token != rejected { return token }
          let remedy =
            isDefault
            ? "Log in again (`bao login`), or give the program a login of its own."
            : "Check that whatever writes it (Vault Agent's or OpenBao Agent's auto-auth sink) is running."
          throw .notLoggedIn(
            store: server.name,
            reason: "The token in \(path) is not valid any more: it has expired or was revoked. \(remedy)")
        case .logIn(let request):
          // Another thread that was refused the same token may have logged in already: its token is the new one.
          if let token = state.token { return Self.header(of: token) }
          return try Self.header(of: logIn(request, &state))
        }
      }
    }

    /// Revokes the token the store made, if any, and forgets it; a given token is only forgotten.
    func logOut() {
      let token: Data? = state.withLock { state in
        defer {
          state = State(secretIDFingerprint: state.secretIDFingerprint, renewal: state.renewal + 1)
        }
        return state.revocable && state.madeBy == getpid() ? state.token : nil
      }
      guard let token else { return }
      _ = try? server.send(.POST, "auth/token/revoke-self", token: Self.header(of: token))
    }

    // MARK: - Logging in

    /// Logs in, keeps the token it gives, schedules its renewal, and returns it.
    private func logIn(_ request: VaultLogin.Request, _ state: inout State) throws(CredentialError) -> Data {
      state.token = nil
      var body = try loginBody(request)
      defer { SecretBuffer.wipe(&body.bytes) }
      let response: FleetHTTPResponse
      do {
        response = try server.send(.POST, "auth/\(body.mount)/login", token: nil, body: body.json)
      } catch {
        throw VaultKV.failure(error, store: server.name)
      }
      return try VaultKV.reading(response) { status, bytes throws(CredentialError) -> Data in
        guard status == 200 else {
          let errors = VaultServer.errors(in: bytes)
          if status == 400, errors.contains(where: { $0.contains("invalid role or secret ID") }),
            let fingerprint = state.secretIDFingerprint, fingerprint == body.fingerprint
          {
            throw .secretIDSpent(store: server.name)
          }
          guard status < 500 else { throw VaultKV.serverError(status, errors, store: server.name) }
          throw .notLoggedIn(store: server.name, reason: Self.refusal(request, errors, login))
        }
        let auth = VaultJSON.parse(bytes)?["auth"]
        let noToken = CredentialError.serverError(store: server.name, reason: "Its answer to the login holds no token.")
        guard let token = auth?["client_token"]?.secret(in: bytes), !token.isEmpty else { throw noToken }
        let lease = auth?["lease_duration"]?.integer(in: bytes) ?? 0
        let batch = auth?["token_type"]?.text(in: bytes) == "batch"
        state.token = token
        state.expires = lease > 0 ? ContinuousClock.now + .seconds(lease) : nil
        state.renewable = auth?["renewable"]?.isTrue ?? false
        state.revocable = !batch
        state.madeBy = getpid()
        state.secretIDFingerprint = body.fingerprint
        if revokesAtExit && !batch { register() }
        scheduleRenewal(&state, lease: lease)
        return token
      }
    }

    /// A login request's body (wiped after it is sent), its auth method's mount, and the fingerprint of its secret ID.
    private struct LoginBody {
      var bytes: [UInt8]
      let json: Data
      let mount: String
      let fingerprint: Int?
    }

    /// The login request for the configured method, its secrets read now.
    private func loginBody(_ request: VaultLogin.Request) throws(CredentialError) -> LoginBody {
      switch request {
      case .appRole(let roleIDFile, let secretIDFile, let mount):
        let roleID = try read(roleIDFile, what: "AppRole role ID")
        let secretID = try read(secretIDFile, what: "AppRole secret ID")
        let bytes = VaultRequestBody.appRoleLogin(roleID: roleID, secretID: secretID)
        var hasher = Hasher()
        hasher.combine(secretID)
        return LoginBody(bytes: bytes, json: Self.wiping(bytes), mount: mount, fingerprint: hasher.finalize())
      case .jwt(_, let role, let tokenFile, let mount):
        let jwt = try read(VaultLogin.delivered(tokenFile), what: "JWT")
        let bytes = VaultRequestBody.jwtLogin(role: role, jwt: jwt)
        return LoginBody(bytes: bytes, json: Self.wiping(bytes), mount: mount, fingerprint: nil)
      }
    }

    /// Why the server refused the login, and what to do.
    private static func refusal(_ request: VaultLogin.Request, _ errors: [String], _ login: VaultLogin) -> String {
      let said = errors.isEmpty ? "" : " (it said: \(errors.joined(separator: "; ")))"
      switch request {
      case .appRole:
        return """
          The server refused the AppRole login\(said): the role ID or secret ID is wrong, has expired, or the \
          secret ID was single-use and was used already (by an earlier run of this program?). Deliver a new secret \
          ID, and check the role ID.
          """
      case .jwt:
        return """
          The server refused the login \(login)\(said). Check the role, and that the auth method trusts this \
          token's issuer and audience.
          """
      }
    }

    // MARK: - Renewal

    /// Renews the token at two thirds of its time to live, when it may be renewed.
    private func scheduleRenewal(_ state: inout State, lease: Int) {
      state.renewal += 1
      guard state.renewable, lease > 0 else { return }
      let renewal = state.renewal
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(lease * 2000 / 3)) { [weak self] in
        self?.renew(renewal)
      }
    }

    /// Renews the token, unless another login or renewal came since `renewal` was scheduled. A token its maximum
    /// time to live stops from growing is left to expire; the next use after that logs in again.
    private func renew(_ renewal: Int) {
      state.withLock { state in
        guard state.renewal == renewal, let token = state.token, let expires = state.expires else { return }
        guard let response = try? server.send(.POST, "auth/token/renew-self", token: Self.header(of: token)),
          response.status == 200,
          let lease = VaultJSON.parse(response.body)?["auth"]?["lease_duration"]?
            .integer(in: response.body)
        else { return }
        let renewed = ContinuousClock.now + .seconds(lease)
        state.expires = renewed
        guard renewed > expires + .seconds(1) else { return }
        scheduleRenewal(&state, lease: lease)
      }
    }

    // MARK: - Exit

    /// Revokes this session's token when the process exits.
    private func register() {
      Self.live.withLock { live in
        _ = Self.installExitHandler
        live[ObjectIdentifier(self)] = WeakSession(session: self)
      }
    }

    /// Installs the exit handler, once.
    private static let installExitHandler: Void = {
      atexit { VaultSession.revokeAll() }
    }()

    /// Revokes the tokens of the live sessions: what the exit handler does.
    static func revokeAll() {
      let sessions = live.withLock { live in
        defer { live.removeAll() }
        return live.values.compactMap(\.session)
      }
      for session in sessions { session.logOut() }
    }

    // MARK: - Reading secrets

    /// The token in `path`, one trailing newline dropped.
    private func readToken(_ path: String) throws(CredentialError) -> Data {
      try read(VaultLogin.delivered(path), what: "token file")
    }

    /// The secret in `file`, one trailing newline dropped.
    private func read(_ file: VaultLogin.DeliveredFile, what: String) throws(CredentialError) -> Data {
      let store: DeliveredCredentialStore
      let key = Credential.Key(service: "vault", account: file.name)
      if let directory = file.directory {
        store = DeliveredCredentialStore(directory: URL(fileURLWithPath: directory), fileNames: [key: file.name])
      } else {
        store = .systemd(fileNames: [key: file.name])
      }
      let secret: Data?
      do {
        secret = try Credential(service: key.service, account: key.account, store: store).readData()
      } catch {
        throw .notLoggedIn(store: server.name, reason: "The \(what) in \(file.description) cannot be read: \(error)")
      }
      guard let secret, !secret.isEmpty else {
        throw .notLoggedIn(
          store: server.name,
          reason: "The \(what) is not there: \(file.description) does not exist or is empty. Deliver it, or give "
            + "the program another login (\(VaultLogin.help)).")
      }
      guard secret.last == UInt8(ascii: "\n") else { return secret }
      return secret.withUnsafeBytes { Data.wiping(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
    }

    /// The file's identity and times, which change when it is replaced or written; nil when it is not there.
    private static func stamp(of path: String) -> [Int]? {
      var status = stat()
      guard stat(path, &status) == 0 else { return nil }
      return [
        Int(status.st_dev), Int(status.st_ino), Int(status.st_size), status.st_mtim.tv_sec, status.st_mtim.tv_nsec,
        status.st_ctim.tv_sec, status.st_ctim.tv_nsec,
      ]
    }

    /// A request body's copy that wipes itself when freed.
    private static func wiping(_ bytes: [UInt8]) -> Data { bytes.withUnsafeBytes { Data.wiping($0) } }

    /// The token as the header value the HTTP client takes.
    static func header(of token: Data) -> String { String(decoding: token, as: UTF8.self) }
  }

  extension VaultLogin {
    /// The file at `path`, for a login's secret.
    static func delivered(_ path: String) -> DeliveredFile {
      let url = URL(fileURLWithPath: path)
      return DeliveredFile(directory: url.deletingLastPathComponent().path, name: url.lastPathComponent)
    }
  }
#endif
