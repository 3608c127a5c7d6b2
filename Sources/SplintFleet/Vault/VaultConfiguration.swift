#if SplintFleet
  public import SplintSecrets
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// Where a ``VaultCredentialStore`` finds OpenBao or HashiCorp Vault, how it logs in, and where in a KV version 2
  /// mount it keeps each credential's secret.
  ///
  /// ```swift
  /// var configuration = try VaultConfiguration.fromEnvironment()  // BAO_ADDR or VAULT_ADDR, ...
  /// configuration.login = .appRoleFromCredentials()  // vault-role-id, vault-secret-id
  /// configuration.locations[.init(service: "db.example.com", account: "app")] =
  ///   .init(path: "prod/db", field: "password")
  /// ```
  ///
  /// By default, `Credential(service: "api.example.com", account: "alice")` is the field `value` of the secret
  /// `splint/api.example.com/alice` in the mount `secret` (`bao kv get -mount=secret -field=value
  /// splint/api.example.com/alice` prints it). Service and account become one path segment each, written as
  /// ``pathSegment(_:)`` says.
  public struct VaultConfiguration: Sendable {
    /// The server's addresses, such as `https://vault.example.com:8200`, tried in turn: one is enough; the members
    /// of a cluster let reads and saves go on while one of them is down, and are the only places a standby's
    /// redirect is followed to. Each is a scheme, host and port alone (no path, query, user or password), as an etcd
    /// member's client URL is; `http` is allowed only to a literal loopback address (127.0.0.1, [::1]).
    public var addresses: [String]
    /// How the store logs in; nil to find a login in the environment (see ``VaultLogin/automatic``).
    public var login: VaultLogin?
    /// The namespace (`X-Vault-Namespace`) of every request, for servers that have them; nil for none.
    public var namespace: String?
    /// How the server's certificate is checked, and the client certificate shown to it.
    public var tls: FleetTLS
    /// The KV version 2 mount that holds the secrets: `secret` unless set.
    public var mount: String
    /// The path in ``mount`` under which each service has a folder of its accounts: `splint` unless set.
    public var prefix: String
    /// The field that holds a secret that is UTF-8 text: `value` unless set. A secret that is not UTF-8 is kept in
    /// the field of this name followed by `_base64`, in base64.
    public var field: String
    /// Credentials kept somewhere of your choosing (a path fleets already use, and its field), by service and
    /// account.
    public var locations: [Key: Location]
    /// How long one call (read, save, delete, listing) may take in all, retries on other addresses included: 10
    /// seconds unless set (or `BAO_CLIENT_TIMEOUT`/`VAULT_CLIENT_TIMEOUT` in seconds).
    public var timeout: Duration
    /// Keep each secret read in memory and hand it back while the server is unreachable or sealed, for at most its
    /// maximum age; nil (the default) to read on demand only.
    public var lastGoodValue: LastGoodValue?
    /// Whether a token the store made by logging in is revoked when the process exits (through `exit()` or the end
    /// of `main`), so that one-shot processes leave no tokens behind on the server: true unless set. Tokens given
    /// to the store are never revoked: they are not its own.
    public var revokesTokenAtExit: Bool

    /// A credential's service and account, the key of ``locations``: `Credential.Key`, as a
    /// `DeliveredCredentialStore`'s file names have it.
    public typealias Key = Credential.Key

    /// Where one credential's secret is: a field of a secret at a path of a KV version 2 mount.
    public struct Location: Hashable, Sendable {
      /// The mount; nil for the configuration's ``VaultConfiguration/mount``.
      public var mount: String?
      /// The secret's path in the mount, such as `prod/db`.
      public var path: String
      /// The field that holds the secret, such as `password`; the secret's other fields are kept as they are.
      public var field: String

      /// The field `field` of the secret at `path` in `mount` (nil: the configuration's).
      public init(mount: String? = nil, path: String, field: String) {
        self.mount = mount
        self.path = path
        self.field = field
      }
    }

    /// Keep each secret read, to hand back while the server cannot be reached.
    public struct LastGoodValue: Sendable {
      /// How old a kept secret may be when it is handed back.
      public var maximumAge: Duration
      /// Told each time a kept secret is handed back instead of one read now: the credential, how long ago the kept
      /// one was read, and why the server could not be asked. Nil writes one line to standard error.
      public var report: (@Sendable (_ credential: Credential, _ age: Duration, _ reason: CredentialError) -> Void)?

      /// Kept secrets up to `maximumAge` old, each use told to `report` (nil: a line on standard error).
      public init(
        maximumAge: Duration,
        report: (@Sendable (_ credential: Credential, _ age: Duration, _ reason: CredentialError) -> Void)? = nil
      ) {
        self.maximumAge = maximumAge
        self.report = report
      }
    }

    /// A configuration for the server at `addresses`.
    ///
    /// - Parameters:
    ///   - addresses: The server's addresses (a cluster's members), tried in turn.
    ///   - login: How to log in; nil to find a login in the environment.
    ///   - namespace: The namespace of every request, or nil.
    ///   - tls: How certificates are checked; the system's trust store unless given.
    public init(addresses: [String], login: VaultLogin? = nil, namespace: String? = nil, tls: FleetTLS = FleetTLS()) {
      self.addresses = addresses
      self.login = login
      self.namespace = namespace
      self.tls = tls
      mount = "secret"
      prefix = "splint"
      field = "value"
      locations = [:]
      timeout = .seconds(10)
      lastGoodValue = nil
      revokesTokenAtExit = true
    }

    /// The configuration the environment gives, as the `bao` and `vault` commands read it: the address from
    /// `BAO_ADDR` or `VAULT_ADDR` (`https://127.0.0.1:8200` when neither is set), CA certificates from
    /// `BAO_CACERT`/`VAULT_CACERT` (a file) and `BAO_CAPATH`/`VAULT_CAPATH` (a directory), a client certificate from
    /// `BAO_CLIENT_CERT`/`VAULT_CLIENT_CERT` and its key from `BAO_CLIENT_KEY`/`VAULT_CLIENT_KEY`, the namespace from
    /// `BAO_NAMESPACE`/`VAULT_NAMESPACE`, the timeout from `BAO_CLIENT_TIMEOUT`/`VAULT_CLIENT_TIMEOUT` (seconds).
    /// Where both are set, the `BAO_` variable wins, as it does for `bao`. The login is found when the store is
    /// made (see ``VaultLogin/automatic``).
    ///
    /// - Throws: `CredentialError/invalidConfiguration(_:)` when `BAO_SKIP_VERIFY` or
    ///   `VAULT_SKIP_VERIFY` asks for certificates not to be checked (the store always checks them), or the timeout
    ///   is not a number of seconds.
    public static func fromEnvironment() throws(CredentialError) -> VaultConfiguration {
      for name in ["BAO_SKIP_VERIFY", "VAULT_SKIP_VERIFY"] {
        if let value = SystemCall.environment(name), !["", "0", "f", "false"].contains(value.lowercased()) {
          throw .invalidConfiguration(
            """
            \(name)=\(value) asks not to check the server's certificate, which this store always checks, so that \
            no one between here and the server can read the secrets. Unset it, and name the CA that signed the \
            server's certificate with BAO_CACERT or VAULT_CACERT.
            """)
        }
      }
      var configuration = VaultConfiguration(
        addresses: [variable("ADDR") ?? "https://127.0.0.1:8200"], namespace: variable("NAMESPACE"),
        tls: FleetTLS(
          caFile: variable("CACERT"), caDirectory: variable("CAPATH"), clientCertificateFile: variable("CLIENT_CERT"),
          clientKeyFile: variable("CLIENT_KEY")))
      if let seconds = variable("CLIENT_TIMEOUT") {
        guard let value = Int(seconds.hasSuffix("s") ? String(seconds.dropLast()) : seconds), value > 0 else {
          throw .invalidConfiguration(
            "The client timeout \"\(seconds)\" (BAO_CLIENT_TIMEOUT or VAULT_CLIENT_TIMEOUT) is not a number of seconds."
          )
        }
        configuration.timeout = .seconds(value)
      }
      return configuration
    }

    /// `BAO_<name>`, else `VAULT_<name>`; an empty value counts as unset, as it does for `bao`.
    static func variable(_ name: String) -> String? {
      for prefix in ["BAO_", "VAULT_"] {
        if let value = SystemCall.environment(prefix + name), !value.isEmpty { return value }
      }
      return nil
    }

    /// How a service or account name is written as one segment of a KV path, so that every name has one segment of
    /// its own and reads back as itself:
    /// - ASCII letters, digits, `-`, `.`, `_` and `~` stand for themselves;
    /// - every other byte of the name's UTF-8 (`/`, `%`, `@`, a space, any non-ASCII letter) is `%` and two uppercase
    ///   hexadecimal digits, as in a URL;
    /// - a name of dots only (`.`, `..`), which HTTP clients and servers take for a step in the path, has each dot
    ///   written `%2E`;
    /// - the empty name (a service's default account) is `%00`, which no other name can be: a name never holds a NUL.
    ///
    /// | name | segment |
    /// | --- | --- |
    /// | `api.example.com` | `api.example.com` |
    /// | `alice@example.com` | `alice%40example.com` |
    /// | `a/b` | `a%2Fb` |
    /// | `café` | `caf%C3%A9` |
    /// | (empty) | `%00` |
    public static func pathSegment(_ name: String) -> String {
      if name.isEmpty { return "%00" }
      let onlyDots = name.utf8.allSatisfy { $0 == UInt8(ascii: ".") }
      return percentEncoded(name) { isUnreserved($0) && !onlyDots }
    }

    /// `text`'s UTF-8, each byte `keeps` refuses written `%` and two uppercase hexadecimal digits.
    static func percentEncoded(_ text: String, keeping keeps: (UInt8) -> Bool) -> String {
      // Most names need no escape: the text is its own encoding (a read's path is encoded at every call).
      guard !text.utf8.allSatisfy(keeps) else { return text }
      let digits = Array("0123456789ABCDEF".utf8)
      var encoded: [UInt8] = []
      encoded.reserveCapacity(text.utf8.count * 3)
      for byte in text.utf8 {
        if keeps(byte) {
          encoded.append(byte)
        } else {
          encoded += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
      }
      return String(decoding: encoded, as: UTF8.self)
    }

    /// The name ``pathSegment(_:)`` wrote as `segment`, or nil when `segment` is not one it writes (another
    /// spelling, or bytes that are not UTF-8).
    static func name(fromSegment segment: String) -> String? {
      if segment == "%00" { return "" }
      guard let bytes = segment.unescapedBytes(escape: UInt8(ascii: "%")),
        let name = String(validating: bytes, as: UTF8.self), !name.isEmpty, pathSegment(name) == segment
      else {
        return nil
      }
      return name
    }

    /// Whether `byte` is one of RFC 3986's unreserved characters.
    static func isUnreserved(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        true
      default: false
      }
    }

    /// Where `credential`'s secret is: its own location, else the layout's.
    func location(of credential: Credential) -> VaultKV.Location {
      if let location = locations[credential.key] {
        return VaultKV.Location(
          mount: location.mount ?? mount, path: location.path, field: location.field, isOwn: false)
      }
      return VaultKV.Location(
        mount: mount,
        path: [prefix, Self.pathSegment(credential.service), Self.pathSegment(credential.account)].joined(
          separator: "/"),
        field: field, isOwn: true)
    }
  }
#endif
