#if SplintFleet
  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A server's URL as the fleet's clients take one: the one rule for an etcd member's client URL
  /// (``EtcdGateway``) and an OpenBao or Vault address (``VaultServer``). `http` or `https`, a host, a port, and
  /// nothing else but trailing slashes: no path, query or fragment, which requests would build on or drop, and no
  /// user or password, which would be sent nowhere (or in the clear). Plain `http` only to a literal loopback address
  /// (``FleetHTTPClient/isLoopbackLiteral(_:)``): anyone else on the way could read what crosses it (a password, a
  /// token, a secret) and change what is answered.
  struct FleetServerURL: Sendable, Hashable {
    /// The scheme, host and port (`https://vault.example.com:8200`), without a trailing slash: what requests are
    /// sent to, what messages name, and what a redirect's target is compared with (``FleetHTTPClient/server(of:)``).
    let base: String

    /// Why a text is not a server's URL.
    enum Problem: Error, Sendable, Hashable {
      /// It is not `http(s)://HOST[:PORT]`.
      case notAServerURL
      /// It is plain `http` to a host that is not a literal loopback address.
      case plainHTTP
    }

    /// `text` as a server's URL.
    ///
    /// - Throws: ``Problem/notAServerURL`` or ``Problem/plainHTTP``; each caller says it in its own error's words.
    init(_ text: String) throws(Problem) {
      var text = text
      while text.hasSuffix("/") { text.removeLast() }
      guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
        scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty, components.path.isEmpty,
        components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
      else { throw .notAServerURL }
      guard scheme == "https" || FleetHTTPClient.isLoopbackLiteral(host) else { throw .plainHTTP }
      base = FleetHTTPClient.server(of: text)
    }
  }
#endif
