#if SplintFleet
  import Dispatch
  import Glibc
  import NIOHTTP1
  import SplintSecrets
  import SplintSystemCalls
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
      /// The login under way, which every caller that needs a token waits for: one login at a time, so that a
      /// single-use secret ID is used once.
      var loggingIn: LoginUnderWay?
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

    /// The token to send now: the one held, read again when its file changed, or a new login's when there is none or
    /// it expired. A caller that needs a login waits for the one under way, or starts it; it waits holding no
    /// thread, and stops waiting when its task is cancelled (the login goes on for the others).
    func token() async throws(CredentialError) -> String {
      let loggingIn = try state.withLock { state throws(CredentialError) -> LoginUnderWay in
        switch try held(&state) {
        case .token(let token):
          return LoginUnderWay(done: token)
        case .logIn(let request):
          if let underWay = state.loggingIn { return underWay }
          let underWay = LoginUnderWay()
          state.token = nil
          state.loggingIn = underWay
          startLogIn(request, underWay)
          return underWay
        }
      }
      return try Self.header(of: await loggingIn.token())
    }

    /// What the session holds now: a token, or the login that must make one.
    private enum Held {
      case token(Data)
      case logIn(VaultLogin.Request)
    }

    /// The token held, brought up to date (a token file read again when it changed), or the login to make one.
    private func held(_ state: inout State) throws(CredentialError) -> Held {
      switch login.method {
      case .token(let token, _):
        return .token(token)
      case .tokenFile(let path, _):
        let stamp = Self.stamp(of: path)
        if let token = state.token, stamp == state.fileStamp { return .token(token) }
        let token = try readToken(path)
        state.token = token
        state.fileStamp = stamp
        return .token(token)
      case .logIn(let request):
        if let token = state.token, state.expires.map({ ContinuousClock.now < $0 }) ?? true { return .token(token) }
        return .logIn(request)
      }
    }

    /// After `rejected` was refused (403): whether it is still valid (nil: the refusal is the policy's), else the
    /// token to try again with.
    ///
    /// - Throws: `CredentialError/notLoggedIn(store:reason:)` when the token is no longer valid and
    ///   no other can be had.
    func recheck(_ rejected: String) async throws(CredentialError) -> String? {
      // A lookup that fails (or is cancelled: the caller says so) leaves the refusal as it is.
      guard (try? await server.send(.GET, "auth/token/lookup-self", token: rejected))?.status == 403 else { return nil }
      let again = try state.withLock { state throws(CredentialError) -> String? in
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
          if case .token(let token) = try held(&state), Self.header(of: token) != rejected {
            return Self.header(of: token)
          }
          let remedy =
            isDefault
            ? "Log in again (`bao login`), or give the program a login of its own."
            : "Check that whatever writes it (Vault Agent's or OpenBao Agent's auto-auth sink) is running."
          throw .notLoggedIn(
            store: server.name,
            reason: "The token in \(path) is not valid any more: it has expired or was revoked. \(remedy)")
        case .logIn:
          // Another caller that was refused the same token may have logged in already: its token is the new one.
          return nil
        }
      }
      if let again { return again }
      return try await token()
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
      let server = server
      CallerThread.run { () async in
        _ = try? await server.send(.POST, "auth/token/revoke-self", token: Self.header(of: token))
      }
    }

    // MARK: - Logging in

    /// A login under way, and the callers that wait for its token.
    final class LoginUnderWay: Sendable {
      private struct Waiting {
        var outcome: Result<Data, CredentialError>?
        var waiters: [UInt64: CheckedContinuation<Result<Data, CredentialError>, Never>] = [:]
        var next: UInt64 = 0
      }

      private let waiting: Mutex<Waiting>

      /// A login that has not ended yet.
      init() { waiting = Mutex(Waiting()) }

      /// A login that has ended with `token`.
      init(done token: Data) { waiting = Mutex(Waiting(outcome: .success(token))) }

      /// The login's token, once it ends; `CredentialError/cancelled` as soon as the waiting task is cancelled.
      func token() async throws(CredentialError) -> Data {
        if let outcome = waiting.withLock({ $0.outcome }) { return try outcome.get() }
        let id = waiting.withLock { waiting in
          waiting.next += 1
          return waiting.next
        }
        let outcome = await withTaskCancellationHandler {
          await withCheckedContinuation { (waiter: CheckedContinuation<Result<Data, CredentialError>, Never>) in
            let now = waiting.withLock { waiting -> Result<Data, CredentialError>? in
              if let outcome = waiting.outcome { return outcome }
              if Task.isCancelled { return .failure(.cancelled) }
              waiting.waiters[id] = waiter
              return nil
            }
            if let now { waiter.resume(returning: now) }
          }
        } onCancel: {
          waiting.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: .failure(.cancelled))
        }
        return try outcome.get()
      }

      /// Ends the login with `outcome`, which every caller waiting hears.
      func end(_ outcome: Result<Data, CredentialError>) {
        let waiters = waiting.withLock { waiting in
          waiting.outcome = outcome
          defer { waiting.waiters.removeAll() }
          return waiting.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
      }
    }

    /// Logs in on a thread of its own, which ends `underWay` with the token it gets (kept, its renewal scheduled) or
    /// why it got none: a login is shared by every caller that needs a token meanwhile, so none of them cancels it.
    /// A thread, not a task: synchronous callers may hold every thread of Swift's cooperative pool while they wait
    /// for this login, which a task would then wait for in vain.
    private func startLogIn(_ request: VaultLogin.Request, _ underWay: LoginUnderWay) {
      DetachedThread.start { [self] in
        let outcome = CallerThread.run { () async -> Result<Data, CredentialError> in
          do throws(CredentialError) {
            return .success(try await self.logIn(request))
          } catch {
            return .failure(error)
          }
        }
        state.withLock { $0.loggingIn = nil }
        underWay.end(outcome)
      }
    }

    /// Logs in, keeps the token it gives, schedules its renewal, and returns it.
    private func logIn(_ request: VaultLogin.Request) async throws(CredentialError) -> Data {
      var body = try loginBody(request)
      defer { SecretBuffer.wipe(&body.bytes) }
      let response: FleetHTTPResponse
      do {
        response = try await server.send(.POST, "auth/\(body.mount)/login", token: nil, body: body.json)
      } catch {
        throw VaultKV.failure(error, store: server.name)
      }
      let fingerprint = body.fingerprint
      return try await VaultKV.reading(response) { status, bytes throws(CredentialError) -> Data in
        try state.withLock { state throws(CredentialError) -> Data in
          try adopt(status, bytes, request, fingerprint: fingerprint, &state)
        }
      }
    }

    /// Keeps the token of a login's answer (`status`, `bytes`), and returns it.
    private func adopt(
      _ status: Int, _ bytes: [UInt8], _ request: VaultLogin.Request, fingerprint: Int?, _ state: inout State
    ) throws(CredentialError) -> Data {
      guard status == 200 else {
        let errors = VaultServer.errors(in: bytes)
        if status == 400, errors.contains(where: { $0.contains("invalid role or secret ID") }),
          let spent = state.secretIDFingerprint, spent == fingerprint
        {
          throw .secretIDSpent(store: server.name)
        }
        guard status < 500 else { throw VaultKV.serverError(status, errors, store: server.name) }
        throw .notLoggedIn(store: server.name, reason: Self.refusal(request, errors, login))
      }
      let auth = VaultJSON.parse(bytes)?["auth"]
      let noToken = CredentialError.serverError(store: server.name, reason: "Its answer to the login holds no token.")
      guard let token = auth?["client_token"]?.secret(in: bytes), !token.isEmpty else { throw noToken }
      let lease = Self.lease(auth?["lease_duration"]?.integer(in: bytes) ?? 0)
      let batch = auth?["token_type"]?.text(in: bytes) == "batch"
      state.token = token
      state.expires = lease > 0 ? ContinuousClock.now + .seconds(lease) : nil
      state.renewable = auth?["renewable"]?.isTrue ?? false
      state.revocable = !batch
      state.madeBy = getpid()
      state.secretIDFingerprint = fingerprint
      if revokesAtExit && !batch { register() }
      scheduleRenewal(&state, lease: lease)
      return token
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

    /// A token's time to live as the server gave it, in seconds, within what a token can live: a server's number is
    /// not trusted to fit the arithmetic of a timer (a year at most; none below zero).
    static func lease(_ seconds: Int) -> Int { min(max(seconds, 0), 366 * 24 * 3600) }

    /// Renews the token at two thirds of its time to live, when it may be renewed.
    private func scheduleRenewal(_ state: inout State, lease: Int) {
      state.renewal += 1
      guard state.renewable, lease > 0 else { return }
      let renewal = state.renewal
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(lease * 2000 / 3)) { [weak self] in
        guard let self else { return }
        CallerThread.run { () async in await self.renew(renewal) }
      }
    }

    /// Renews the token, unless another login or renewal came since `renewal` was scheduled. A token its maximum
    /// time to live stops from growing is left to expire; the next use after that logs in again.
    private func renew(_ renewal: Int) async {
      guard let token = state.withLock({ $0.renewal == renewal && $0.expires != nil ? $0.token : nil }),
        let response = try? await server.send(.POST, "auth/token/renew-self", token: Self.header(of: token)),
        response.status == 200,
        let given = VaultJSON.parse(response.body)?["auth"]?["lease_duration"]?.integer(in: response.body)
      else { return }
      let lease = Self.lease(given)
      state.withLock { state in
        guard state.renewal == renewal, let expires = state.expires else { return }
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
