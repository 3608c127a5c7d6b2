#if SplintFleet
  import Glibc
  import NIOSSL
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// How a fleet server's certificate is checked, and the certificate this program shows it: PEM files, as etcd,
  /// OpenBao and Vault take them.
  ///
  /// ```swift
  /// let tls = FleetTLS(
  ///   caFile: "/etc/etcd/ca.pem",
  ///   clientCertificateFile: "/etc/splint/client.pem", clientKeyFile: "/etc/splint/client-key.pem")
  /// ```
  ///
  /// Certificates are always verified: there is no way to turn that off.
  public struct FleetTLS: Sendable, Hashable {
    /// A PEM file of CA certificates that the server's certificate must chain to, instead of the system's.
    public var caFile: String?
    /// A directory of PEM files, each of CA certificates, that the server's certificate must chain to (as
    /// `VAULT_CAPATH`); with ``caFile``, either may vouch for the server.
    public var caDirectory: String?
    /// A PEM file holding this program's certificate (and any intermediates), for servers that ask for one.
    public var clientCertificateFile: String?
    /// The PEM file of ``clientCertificateFile``'s private key.
    public var clientKeyFile: String?

    /// The system's trust store and no client certificate, unless given.
    public init(
      caFile: String? = nil, caDirectory: String? = nil, clientCertificateFile: String? = nil,
      clientKeyFile: String? = nil
    ) {
      self.caFile = caFile
      self.caDirectory = caDirectory
      self.clientCertificateFile = clientCertificateFile
      self.clientKeyFile = clientKeyFile
    }

    /// Why the files cannot be used: a file that cannot be read or holds no certificate or key, or a certificate
    /// without its key.
    struct Problem: Error, Sendable, CustomStringConvertible {
      /// What is wrong and what to do, in a sentence.
      let description: String
    }

    /// The TLS configuration these files make: read once, when a store or follower is made.
    func configuration() throws(Problem) -> TLSConfiguration {
      var configuration = TLSConfiguration.makeClientConfiguration()
      configuration.minimumTLSVersion = .tlsv12
      var roots: [NIOSSLCertificate] = []
      if let caFile { roots += try Self.certificates(in: caFile, what: "CA file") }
      if let caDirectory {
        let names: [String]
        do {
          names = try FileManager.default.contentsOfDirectory(atPath: caDirectory).sorted()
        } catch {
          throw Problem(
            description: "The CA directory \(caDirectory) cannot be read: \(Self.reason(caDirectory, error)).")
        }
        for name in names where !name.hasPrefix(".") {
          let path = URL(fileURLWithPath: caDirectory).appendingPathComponent(name).path
          let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
          guard type == .typeRegular || type == .typeSymbolicLink else { continue }
          roots += try Self.certificates(in: path, what: "CA file")
        }
        if roots.isEmpty {
          throw Problem(description: "The CA directory \(caDirectory) holds no PEM certificate.")
        }
      }
      if !roots.isEmpty { configuration.trustRoots = .certificates(roots) }
      switch (clientCertificateFile, clientKeyFile) {
      case (let certificate?, let key?):
        configuration.certificateChain = try Self.certificates(in: certificate, what: "client certificate")
          .map { .certificate($0) }
        configuration.privateKey = .privateKey(try Self.privateKey(in: key))
      case (nil, nil):
        break
      case (let certificate?, nil):
        throw Problem(description: "The client certificate \(certificate) is given without its key: give both.")
      case (nil, let key?):
        throw Problem(description: "The client key \(key) is given without its certificate: give both.")
      }
      return configuration
    }

    /// The largest key file read: a PEM key is a few kilobytes.
    static let maximumKeyFile = 1 << 20

    /// The private key in the PEM file at `path`, read from the file opened once, and judged on that descriptor: a
    /// regular file that users other than its owner and group may not read or write (as ssh refuses a key others
    /// may read), at most ``maximumKeyFile`` bytes. The bytes read are wiped once the key is made.
    private static func privateKey(in path: String) throws(Problem) -> NIOSSLPrivateKey {
      let fix = "Give the PEM file of the key."
      let file: Descriptor
      let status: stat
      do throws(FileSystemError) {
        file = try Descriptor.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
        status = try file.status(path: path)
      } catch {
        throw Problem(
          description: "The client key \(path) cannot be used: it does not exist, or this user may not read it. \(fix)")
      }
      guard status.type == S_IFREG else {
        throw Problem(description: "The client key \(path) cannot be used: it is not a regular file. \(fix)")
      }
      guard status.st_mode & 0o007 == 0 else {
        throw Problem(
          description: """
            The client key \(path) may be read by every user of this machine (mode \(status.modeText)): any of them \
            could show the cluster this program's certificate. Let only its owner and group read it (chmod o-rwx \
            \(path)), or deliver it as a systemd credential (LoadCredential=).
            """)
      }
      guard var bytes = try? file.read(upTo: maximumKeyFile, path: path) else {
        throw Problem(description: "The client key \(path) cannot be read. \(fix)")  // coverage:ignore — an I/O error
      }
      defer { bytes.withUnsafeMutableBufferPointer { $0.initialize(repeating: 0) } }
      guard bytes.count <= maximumKeyFile else {
        throw Problem(
          description: "The client key \(path) holds more than \(maximumKeyFile) bytes: it is no key. \(fix)")
      }
      do {
        return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
      } catch {
        throw Problem(
          description: "The client key \(path) cannot be used: it does not hold what PEM should (\(error)). \(fix)")
      }
    }

    private static func certificates(in path: String, what: String) throws(Problem) -> [NIOSSLCertificate] {
      // It throws unless the file holds at least one certificate.
      do {
        return try NIOSSLCertificate.fromPEMFile(path)
      } catch {
        throw Problem(description: "The \(what) \(path) cannot be used: \(reason(path, error)). Give a PEM file.")
      }
    }

    /// Why the file at `path` could not be loaded: unreadable, or not what was expected.
    private static func reason(_ path: String, _ error: any Error) -> String {
      FileManager.default.isReadableFile(atPath: path)
        ? "it does not hold what PEM should (\(error))" : "it does not exist, or this user may not read it"
    }
  }
#endif
