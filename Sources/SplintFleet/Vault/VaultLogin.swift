#if SplintFleet
  import Glibc
  import SplintSecrets
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// How a ``VaultCredentialStore`` logs in to OpenBao or Vault: with a token it is given, or by logging in itself
  /// (AppRole, JWT, Kubernetes) and keeping the token it gets renewed.
  ///
  /// ```swift
  /// configuration.login = .appRoleFromCredentials()  // a systemd unit's LoadCredential=vault-role-id:...
  /// configuration.login = .kubernetes(role: "syncd")  // in a pod, with its service account's token
  /// configuration.login = .tokenFile("/run/vault-agent/token")  // Vault Agent's sink, read again when it changes
  /// ```
  ///
  /// A token the store makes by logging in is renewed before it expires (at two thirds of its time to live), made
  /// again by logging in once it cannot be renewed any more, and revoked when the process exits (see
  /// ``VaultConfiguration/revokesTokenAtExit``); a batch token is neither renewed nor revoked. A token given to the
  /// store (in the environment, a file, or code) is used as it is: renewing it is the job of whoever made it.
  ///
  /// The description names the login and where its secrets come from, never the secrets.
  public struct VaultLogin: Sendable, CustomStringConvertible {
    /// What the login is.
    enum Method: Sendable {
      /// A token given in code or the environment, named `source` in messages.
      case token(Data, source: String)
      /// A token in a file, read again when the file changes; `isDefault` for `~/.vault-token`.
      case tokenFile(String, isDefault: Bool)
      /// A login to an auth method, which makes the store's own token.
      case logIn(Request)
    }

    /// A login to an auth method.
    enum Request: Sendable {
      /// AppRole with its role ID and secret ID in files (`directory` nil: `$CREDENTIALS_DIRECTORY` at each login).
      case appRole(roleID: DeliveredFile, secretID: DeliveredFile, mount: String)
      /// JWT (or the kubernetes method) with a JWT read from a file at each login.
      case jwt(kind: String, role: String, tokenFile: String, mount: String)
    }

    /// A file holding a secret that something else delivers: in a directory, or in the unit's systemd credentials.
    struct DeliveredFile: Sendable {
      /// The directory; nil for `$CREDENTIALS_DIRECTORY`, as it is at each login.
      let directory: String?
      /// The file's name in it.
      let name: String

      /// Where the file is, for messages.
      var description: String {
        directory.map { "\($0)/\(name)" } ?? "the systemd credential \(name) ($CREDENTIALS_DIRECTORY/\(name))"
      }
    }

    let method: Method

    /// The logins the environment may give, for messages.
    static let help = """
      BAO_TOKEN or VAULT_TOKEN; the systemd credentials vault-role-id and vault-secret-id; `bao login`, which \
      leaves ~/.vault-token; or a VaultLogin in code
      """

    /// What someone checking the login should know, for `splintctl secret status`: a token variable that hides the
    /// AppRole login `$CREDENTIALS_DIRECTORY` also gives; nil when there is nothing to say.
    package private(set) var warning: String?

    /// The token `token`.
    ///
    /// The token stays in this process's memory while the store uses it, as any client's must.
    public static func token(_ token: String) -> VaultLogin {
      VaultLogin(method: .token(Data.wiping(utf8: token), source: "a token given in code"))
    }

    /// The token in the file at `path`, such as the sink of Vault Agent or OpenBao Agent's auto-auth, read again
    /// whenever the file changes (its inode, size or times), so that a token the agent renews or makes anew is used
    /// at once. One trailing newline is dropped.
    public static func tokenFile(_ path: String) -> VaultLogin {
      VaultLogin(method: .tokenFile(path, isDefault: false))
    }

    /// AppRole, with the role ID and secret ID in the files at `roleIDFile` and `secretIDFile` (one trailing
    /// newline dropped from each), read at each login.
    ///
    /// - Parameters:
    ///   - roleIDFile: The file holding the role ID.
    ///   - secretIDFile: The file holding the secret ID.
    ///   - mount: Where the AppRole auth method is mounted: `approle` unless given.
    public static func appRole(roleIDFile: String, secretIDFile: String, mount: String = "approle") -> VaultLogin {
      VaultLogin(
        method: .logIn(.appRole(roleID: delivered(roleIDFile), secretID: delivered(secretIDFile), mount: mount)))
    }

    /// AppRole, with the role ID and secret ID delivered as the systemd credentials `vault-role-id` and
    /// `vault-secret-id` (`LoadCredential=` or `LoadCredentialEncrypted=` in the unit), read from
    /// `$CREDENTIALS_DIRECTORY` at each login, one trailing newline dropped.
    ///
    /// - Parameter mount: Where the AppRole auth method is mounted: `approle` unless given.
    public static func appRoleFromCredentials(mount: String = "approle") -> VaultLogin {
      VaultLogin(
        method: .logIn(
          .appRole(
            roleID: DeliveredFile(directory: nil, name: "vault-role-id"),
            secretID: DeliveredFile(directory: nil, name: "vault-secret-id"), mount: mount)))
    }

    /// The JWT auth method: logs in as `role` with the JWT in `tokenFile`, read at each login (so that a token that
    /// rotates is read anew).
    ///
    /// In Kubernetes, with a `jwt` auth method that checks the cluster's service-account tokens
    /// (`oidc_discovery_url` or `jwt_validation_pubkeys` from the cluster), this is a pod's login with no call from
    /// the server to the Kubernetes API.
    ///
    /// - Parameters:
    ///   - role: The role to log in as.
    ///   - tokenFile: The file holding the JWT.
    ///   - mount: Where the JWT auth method is mounted: `jwt` unless given.
    public static func jwt(role: String, tokenFile: String, mount: String = "jwt") -> VaultLogin {
      VaultLogin(method: .logIn(.jwt(kind: "JWT", role: role, tokenFile: tokenFile, mount: mount)))
    }

    /// The Kubernetes auth method: logs in as `role` with the pod's service-account token, which the server checks
    /// with the cluster's TokenReview API. The same request as ``jwt(role:tokenFile:mount:)``, to another method.
    ///
    /// - Parameters:
    ///   - role: The role to log in as.
    ///   - tokenFile: The service-account token: the one Kubernetes mounts in every pod unless given.
    ///   - mount: Where the Kubernetes auth method is mounted: `kubernetes` unless given.
    public static func kubernetes(
      role: String, tokenFile: String = "/var/run/secrets/kubernetes.io/serviceaccount/token",
      mount: String = "kubernetes"
    ) -> VaultLogin {
      VaultLogin(method: .logIn(.jwt(kind: "Kubernetes", role: role, tokenFile: tokenFile, mount: mount)))
    }

    /// The login the environment gives, the first that is there: a token in `BAO_TOKEN` or `VAULT_TOKEN` (the
    /// `BAO_` one first); AppRole, when `$CREDENTIALS_DIRECTORY` holds both `vault-role-id` and `vault-secret-id`
    /// (see ``appRoleFromCredentials(mount:)``); the token `bao login` or `vault login` left in `~/.vault-token`,
    /// read again when it changes. A login given in code wins over all of them.
    public static var automatic: VaultLogin {
      let appRole = SystemCall.environment("CREDENTIALS_DIRECTORY").map { directory in
        ["vault-role-id", "vault-secret-id"].allSatisfy { access("\(directory)/\($0)", F_OK) == 0 }
      }
      for variable in ["BAO_TOKEN", "VAULT_TOKEN"] {
        guard let token = SystemCall.environment(variable), !token.isEmpty else { continue }
        var login = VaultLogin(method: .token(Data.wiping(utf8: token), source: "the token in \(variable)"))
        if appRole == true {
          // As an operator's shell has it after `bao login` or a dev server's instructions: a check of what a
          // service given those credentials sees would log in with the operator's token instead, and say nothing.
          login.warning = """
            the token in \(variable) is used, not the AppRole login that $CREDENTIALS_DIRECTORY also gives \
            (vault-role-id and vault-secret-id): unset \(variable) to log in as a service given those credentials does.
            """
        }
        return login
      }
      if appRole == true { return appRoleFromCredentials() }
      let home = SystemCall.environment("HOME") ?? "/"
      return VaultLogin(
        method: .tokenFile(URL(fileURLWithPath: home).appendingPathComponent(".vault-token").path, isDefault: true))
    }

    /// What the login is and where its secrets come from: `AppRole (approle), role ID and secret ID from the systemd
    /// credentials vault-role-id and vault-secret-id`.
    public var description: String {
      switch method {
      case .token(_, let source): "token: \(source)"
      case .tokenFile(let path, let isDefault): "token: the token file \(path)\(isDefault ? " (bao login's)" : "")"
      case .logIn(.appRole(let roleID, let secretID, let mount)):
        "AppRole (auth/\(mount)): role ID from \(roleID.description), secret ID from \(secretID.description)"
      case .logIn(.jwt(let kind, let role, let tokenFile, let mount)):
        "\(kind) (auth/\(mount)) as role \(role), with the token in \(tokenFile)"
      }
    }
  }
#endif
