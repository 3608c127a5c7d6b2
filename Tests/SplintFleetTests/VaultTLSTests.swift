#if SplintFleet
  import Foundation
  import NIOHTTP1
  import SplintSecrets
  import TestSupport
  import Testing
  @testable import SplintFleet

  /// TLS with certificates the test makes with openssl: a CA file or directory, a client certificate where the server
  /// asks for one; plain HTTP only on loopback; nothing that turns verification off.
  @Suite(.startsServers) struct VaultTLSTests {
    let scratch = Scratch()

    /// A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it, in the scratch directory.
    private func certificates() async throws {
      let script = """
        set -e
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=splint test CA"
        for name in server client; do
          openssl req -newkey rsa:2048 -nodes -keyout $name.key -out $name.csr -subj "/CN=$name"
        done
        printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' >server.ext
        printf 'extendedKeyUsage=clientAuth\\n' >client.ext
        for name in server client; do
          openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 2 \\
            -extfile $name.ext
        done
        mkdir cas && cp ca.pem cas/ca.pem && touch cas/.hidden && mkdir cas/sub
        """
      let output = try await Programs.run(["/bin/bash", "-c", "cd '\(scratch.directory.path)' && \(script)"])
      #expect(output.status == 0, "\(output.stderr)")
    }

    /// A dev server with a TLS listener on a port of its own (and its usual plain one for the test's setup).
    private func server(clientCertificates: Bool = false) async throws -> (OpenBaoServer, String) {
      let port = try OpenBaoServer.freePort()
      let clientCA =
        clientCertificates
        ? """
          tls_require_and_verify_client_cert = "true"
          tls_client_ca_file = "\(scratch.url("ca.pem").path)"
        """ : ""
      let server = try await OpenBaoServer.dev(
        configuration: """
          listener "tcp" {
            address = "127.0.0.1:\(port)"
            tls_cert_file = "\(scratch.url("server.pem").path)"
            tls_key_file = "\(scratch.url("server.key").path)"
          \(clientCA)
          }
          """)
      try server.admin(.POST, "secret/data/splint/svc/a", ["data": ["value": "over TLS"]])
      return (server, "https://127.0.0.1:\(port)")
    }

    @Test("the server's certificate is checked against the CA given (a file or a directory), else refused")
    func serverCertificate() async throws {
      try await certificates()
      let (server, address) = try await server()
      @Sendable func store(_ tls: FleetTLS) throws(CredentialError) -> VaultCredentialStore {
        var configuration = VaultConfiguration(addresses: [address], login: .token(server.rootToken), tls: tls)
        configuration.timeout = .seconds(5)
        return try VaultCredentialStore(configuration)
      }
      #expect(try await credential("a", store(FleetTLS(caFile: scratch.url("ca.pem").path))).read() == "over TLS")
      #expect(try await credential("a", store(FleetTLS(caDirectory: scratch.url("cas").path))).read() == "over TLS")
      let untrusted = try store(FleetTLS(caFile: scratch.url("client.pem").path))
      let error = await failure { () throws(CredentialError) in try credential("a", untrusted).read() }
      #expect(error?.code == .unreachable)
      #expect(error?.description.contains("TLS failed") == true, "\(String(describing: error))")
      let unusable = await failure { () throws(CredentialError) in try store(FleetTLS(caFile: scratch.url("none").path))
      }
      #expect(unusable?.code == .invalidConfiguration)
      await server.stop()
    }

    @Test("a server that asks for a client certificate gets the one given, and refuses a client without")
    func clientCertificate() async throws {
      try await certificates()
      let (server, address) = try await server(clientCertificates: true)
      let tls = FleetTLS(
        caFile: scratch.url("ca.pem").path, clientCertificateFile: scratch.url("client.pem").path,
        clientKeyFile: scratch.url("client.key").path)
      var configuration = VaultConfiguration(addresses: [address], login: .token(server.rootToken), tls: tls)
      configuration.timeout = .seconds(5)
      #expect(try await credential("a", try VaultCredentialStore(configuration)).read() == "over TLS")
      configuration.tls.clientCertificateFile = nil
      configuration.tls.clientKeyFile = nil
      let without = try VaultCredentialStore(configuration)
      #expect(await failure { () throws(CredentialError) in try credential("a", without).read() }?.code == .unreachable)
      await server.stop()
    }

    @Test("plain HTTP only to a literal loopback address; an address that is not one is refused; at least one address")
    func addresses() async throws {
      for address in ["http://127.0.0.1:8200", "http://127.0.0.2:8200", "http://[::1]:8200", "https://vault:8200/"] {
        #expect(throws: Never.self) { try VaultServer.Address(address) }
      }
      // A name is not a literal loopback address, whatever it resolves to: the vault is not even asked.
      for address in ["http://vault.example.com:8200", "http://localhost:8200", "http://127.attacker.example:8200"] {
        let plain = await failure { () throws(CredentialError) in try VaultServer.Address(address) }
        #expect(plain?.description.contains("in the clear") == true, "\(address)")
      }
      for address in ["vault.example.com:8200", "ftp://vault:21", "https://vault:8200/v1", "https://"] {
        #expect(
          await failure { () throws(CredentialError) in try VaultServer.Address(address) }?.code
            == .invalidConfiguration)
      }
      #expect(
        await failure { () throws(CredentialError) in try VaultCredentialStore(VaultConfiguration(addresses: [])) }?
          .code
          == .invalidConfiguration)
    }
  }
#endif
