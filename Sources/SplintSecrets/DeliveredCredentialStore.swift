import Glibc
import SplintSystemCalls

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A read-only ``CredentialStore`` of secrets that something else delivers as files, one file per credential: systemd
/// credentials, container secrets, a Kubernetes secret volume, a Vault or OpenBao Agent template.
///
/// This is how a service on a server gets its secrets, where there is no desktop session and so no Secret Service.
/// The program only reads them: whoever delivers a secret changes it, and ``saveSecret(_:contentType:for:)`` and
/// ``deleteSecret(for:)`` throw ``CredentialError/readOnly(store:remedy:)`` saying where.
///
/// ```swift
/// let token = Credential(service: "api.example.com", account: "alice", store: DeliveredCredentialStore.systemd)
/// let value = try token.read()  // $CREDENTIALS_DIRECTORY/api.example.com__alice
/// ```
///
/// Each credential's file is named by ``fileName(service:account:)``, unless the store is given a name of your own
/// for it (`fileNames:`), such as the key of an existing Kubernetes Secret.
///
/// Every read opens the file anew and keeps nothing: a secret rotated by the kubelet or an agent is read at once, and
/// no secret stays in the store. Symbolic links are followed only while they stay in the directory (Kubernetes'
/// `..data`); one that leads out of it is refused with ``CredentialError/unreadableSecret(_:)``. The bytes are returned exactly as they are in the
/// file, a trailing newline included, in a `Data` that is wiped from memory when its last copy goes. A file
/// that is not a regular file (a FIFO, a directory, a socket, a device) or that is larger than 1 MiB is refused with
/// ``CredentialError/unreadableSecret(_:)`` without waiting or reading it; a missing file is no secret (nil); a
/// missing directory makes the store unavailable (``CredentialError/storeUnavailable(store:reason:)``), with what to
/// do.
public final class DeliveredCredentialStore: CredentialStore {
  /// A credential's service and account, which the `fileNames:` of a store map to file names of your choice:
  /// ``Credential/Key``.
  public typealias Key = Credential.Key

  /// Where the secrets come from, which decides the directory and what errors advise. Tests give each source a
  /// directory of their own.
  enum Source: Sendable {
    /// systemd credentials, in the directory `directory` returns at each call (nil: not under a unit).
    case systemd(directory: @Sendable () -> String?)
    /// Container secrets, in `directory`.
    case containers(directory: String)
    /// Any directory of delivered files.
    case directory(String)
  }

  /// The most a delivered secret may hold: 1 MiB.
  static let sizeLimit = 1 << 20

  /// systemd credentials: the files in `$CREDENTIALS_DIRECTORY`, which systemd gives a unit that has
  /// `LoadCredential=`, `LoadCredentialEncrypted=`, `SetCredential=` or `SetCredentialEncrypted=`.
  ///
  /// A credential's ID is its file name: `LoadCredential=api.example.com__alice:/etc/api/token` delivers the secret
  /// of `Credential(service: "api.example.com", account: "alice")` (see ``fileName(service:account:)``). systemd
  /// keeps the files in unswappable memory (ramfs), readable only by the unit's user, decrypts encrypted ones just
  /// before the unit starts, and removes them when the service stops. `$CREDENTIALS_DIRECTORY` is read at every
  /// call; where it is unset, every call throws ``CredentialError/storeUnavailable(store:reason:)``.
  public static let systemd = systemd(fileNames: [:])

  /// ``systemd``, with file names of your own for some credentials.
  ///
  /// - Parameter fileNames: The credential ID (the file name) for each credential that does not follow
  ///   ``fileName(service:account:)``: `[.init(service: "api.example.com", account: "alice"): "api-token"]` for
  ///   `LoadCredential=api-token:/etc/api/token`.
  public static func systemd(fileNames: [Key: String]) -> DeliveredCredentialStore {
    DeliveredCredentialStore(
      source: .systemd { SystemCall.environment("CREDENTIALS_DIRECTORY") }, fileNames: fileNames)
  }

  /// Container secrets: the files in `/run/secrets`, where Docker Swarm services and Docker Compose mount the
  /// secrets a container is given.
  ///
  /// Swarm keeps them on a tmpfs in the container (in memory, never on the node's disk), mode 0444 unless the
  /// secret's `mode` says otherwise, for as long as the container runs; a changed secret reaches new containers
  /// only. Docker Compose outside Swarm bind-mounts the secret's file from the host instead, read-only, with the
  /// host file's owner and mode. A secret's `target` is its file name; name it as ``fileName(service:account:)``
  /// says, or use ``containerSecrets(fileNames:)``.
  public static let containerSecrets = containerSecrets(fileNames: [:])

  /// ``containerSecrets``, with file names of your own for some credentials.
  ///
  /// - Parameter fileNames: The file name in `/run/secrets` (the secret's `target`) for each credential that does
  ///   not follow ``fileName(service:account:)``.
  public static func containerSecrets(fileNames: [Key: String]) -> DeliveredCredentialStore {
    DeliveredCredentialStore(source: .containers(directory: "/run/secrets"), fileNames: fileNames)
  }

  /// Secrets delivered as files into `directory`: a Kubernetes secret volume, or the destination directory of
  /// Vault Agent or OpenBao Agent templates.
  ///
  /// A Kubernetes secret volume is a tmpfs (in memory) holding one file per key of the Secret; the kubelet updates
  /// it in place when the Secret changes (a link, `..data`, is swapped at once for all keys), unless the volume is
  /// mounted with `subPath`, which never updates. An agent re-renders its template files when a secret rotates.
  /// Either way, the next read returns the new secret.
  ///
  /// - Parameters:
  ///   - directory: The directory holding the files.
  ///   - name: The store's ``name`` in errors; nil for `delivered secrets (<directory>)`.
  ///   - fileNames: The file name (a Kubernetes Secret's key, a template's destination file name) for each
  ///     credential that does not follow ``fileName(service:account:)``. Each must be a file name: not empty, not
  ///     `.` or `..`, without `/`.
  public convenience init(directory: URL, name: String? = nil, fileNames: [Key: String] = [:]) {
    self.init(source: .directory(directory.path(percentEncoded: false)), name: name, fileNames: fileNames)
  }

  /// A store of `source`'s secrets, named `name`, or after the source when nil.
  init(source: Source, name: String? = nil, fileNames: [Key: String]) {
    for file in fileNames.values {
      precondition(
        !file.isEmpty && file != "." && file != ".." && !file.contains("/"),
        "DeliveredCredentialStore: \"\(file)\" in fileNames is not a file name")
    }
    self.source = source
    self.fileNames = fileNames
    self.name =
      switch source {
      case .systemd: "systemd credentials"
      case .containers(let directory): "container secrets (\(directory))"
      case .directory(let directory): name ?? "delivered secrets (\(directory))"
      }
  }

  private let source: Source
  private let fileNames: [Key: String]

  /// The name errors and `splintctl secret status` show: "systemd credentials", "container secrets
  /// (/run/secrets)", or the name given to ``init(directory:name:fileNames:)``.
  public let name: String

  /// False: delivered secrets are changed where they come from.
  public var isWritable: Bool { false }

  // MARK: - File names

  /// The file name of the secret of the credential `service`/`account`, one that systemd credential IDs,
  /// Docker secret targets and Kubernetes Secret keys all accept.
  ///
  /// The rule: the service, then `__` (two underscores), then the account, where
  /// - ASCII letters, digits, `-` and `.` stand for themselves, except a `.` that begins the service (which would
  ///   hide the file, and which Kubernetes keeps for its own `..data`);
  /// - every other byte of the UTF-8 text, `_` included, is written `_` and two uppercase hexadecimal digits.
  ///
  /// | service | account | file name |
  /// | --- | --- | --- |
  /// | `api.example.com` | `alice` | `api.example.com__alice` |
  /// | `api.example.com` | `alice@example.com` | `api.example.com__alice_40example.com` |
  /// | `my_app` | `db password` | `my_5Fapp__db_20password` |
  /// | `.hidden` | `x` | `_2Ehidden__x` |
  /// | `café` | `bob` | `caf_C3_A9__bob` |
  ///
  /// A file name is thus ASCII only (Kubernetes allows letters, digits, `-`, `_` and `.`), never empty, never
  /// holds `/` or `:` (which `LoadCredential=ID:PATH` would take for the end of the ID), and never begins with `.`.
  /// As `_` always begins an escape, `__` occurs only between the two parts: two credentials never share a file
  /// name, and a file name tells its credential back, so that ``accounts(service:)`` can list the accounts of the
  /// files in the directory (files the rule does not name, such as `..data` or `token`, are not listed). The
  /// text is taken byte for byte: `é` as one code point and `é` as `e` and a combining accent are two names. A file name has at most 255 bytes
  /// (253 for a Kubernetes key; Docker Swarm wants 64 for the secret's own name, which its `target` need not be):
  /// for longer service and account names, give the credential a file name of its own with `fileNames:`.
  public static func fileName(service: String, account: String) -> String {
    encode(service, escapingLeadingDot: true) + "__" + encode(account, escapingLeadingDot: false)
  }

  /// The credential whose ``fileName(service:account:)`` `name` is, or nil when `name` is none.
  static func credential(fromFileName name: String) -> Key? {
    guard let separator = name.firstRange(of: "__"),
      let service = decode(name[..<separator.lowerBound]),
      let account = decode(name[separator.upperBound...])
    else { return nil }
    // Only the one spelling the rule gives: `_2e` or an escaped letter would name a file no read opens.
    return fileName(service: service, account: account) == name ? Key(service: service, account: account) : nil
  }

  private static func encode(_ text: String, escapingLeadingDot: Bool) -> String {
    var encoded = ""
    for (offset, byte) in text.utf8.enumerated() {
      let isLeadingDot = offset == 0 && byte == UInt8(ascii: ".") && escapingLeadingDot
      if isPlain(byte) && !isLeadingDot {
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        encoded += "_" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }
    }
    return encoded
  }

  private static func isPlain(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
      true
    default: false
    }
  }

  private static func decode(_ text: Substring) -> String? {
    text.unescapedBytes(escape: UInt8(ascii: "_")).flatMap { String(validating: $0, as: UTF8.self) }
  }

  /// The file name of `key`'s secret: the one given in `fileNames:`, else the rule's.
  private func file(for key: Key) -> String {
    fileNames[key] ?? Self.fileName(service: key.service, account: key.account)
  }

  /// The file name `credential`'s secret is read from.
  package func file(for credential: Credential) -> String {
    file(for: credential.key)
  }

  // MARK: - CredentialStore

  /// The bytes of the credential's file, exactly, or nil when there is no such file (or only a dangling link).
  ///
  /// The file's path is resolved at every read, following links that stay in the directory, and the secret is not
  /// cached.
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when the directory is missing (or for
  ///   ``systemd``, `$CREDENTIALS_DIRECTORY` is unset); ``CredentialError/unreadableSecret(_:)`` when the file is
  ///   not a regular file, is larger than 1 MiB, leads out of the directory, or this process may not read it.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    let directory = try directory()
    let secret: Data?
    do throws(DeliveredFileError) {
      secret = try DeliveredFiles.read(
        file(for: credential.key), in: directory,
        limit: Self.sizeLimit)
    } catch {
      throw unreadable(error)
    }
    if secret == nil { try requireListable(directory) }
    return secret
  }

  /// Throws ``CredentialError/readOnly(store:remedy:)``, with where the secret is changed instead.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    throw readOnly
  }

  /// Throws ``CredentialError/readOnly(store:remedy:)``, with where the secret is removed instead.
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    throw readOnly
  }

  /// The accounts of the files in the directory that hold a secret of `service`, sorted: those whose names
  /// ``fileName(service:account:)`` gives, and those named in `fileNames:`. Other files (Kubernetes' `..data`, a
  /// file of another service, one named another way) and dangling links are left out.
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when the directory is missing or may not be
  ///   listed.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    let directory = try directory()
    let names: [String]
    do throws(DeliveredFileError) {
      names = try DeliveredFiles.names(in: directory)
    } catch {
      throw unavailable(error)
    }
    let ruled = names.compactMap(Self.credential(fromFileName:)).filter { $0.service == service }
    let named = fileNames.filter { $0.key.service == service && names.contains($0.value) }.map(\.key)
    let present = Set(ruled + named).filter { DeliveredFiles.exists(file(for: $0), in: directory) }
    return present.map(\.account).sorted()
  }

  /// ``CredentialAvailability/available`` when the directory exists and can be listed; otherwise
  /// ``CredentialError/storeUnavailable(store:reason:)`` with why and what to do. Writes nothing.
  public func availability() -> CredentialAvailability {
    do throws(CredentialError) {
      try requireListable(directory())
      return .available
    } catch {
      return .unavailable(error)
    }
  }

  // MARK: - A credential not delivered

  /// Why `credential` has no secret here, when this store is set up but holds no file for it:
  /// ``CredentialError/notDelivered(store:file:directory:closeNames:)``, naming the file it reads and the files there
  /// whose names are close to it (see ``isClose(_:to:)``). Nil when the file is there, or the directory cannot be
  /// listed (its own error says so).
  package func absence(of credential: Credential) -> CredentialError? {
    guard let directory = try? directory(), let names = try? DeliveredFiles.names(in: directory) else { return nil }
    let file = file(for: credential.key)
    guard !DeliveredFiles.exists(file, in: directory) else { return nil }
    return .notDelivered(
      store: name, file: file, directory: directory, closeNames: names.filter { Self.isClose($0, to: file) }.sorted())
  }

  /// Whether the file `name` looks like a misnamed delivery of `file`: the same name but for case and the marks
  /// between words (`.`, `-`, `_`: `api.example.com.syncd` for `api.example.com__syncd`), or one that two edits
  /// (a letter added, removed or changed) make `file`.
  package static func isClose(_ name: String, to file: String) -> Bool {
    guard name != file, !name.hasPrefix(".") else { return false }  // `.`, `..`, Kubernetes' `..data`
    let words = { (text: String) in text.lowercased().filter { !".-_".contains($0) } }
    return words(name) == words(file) || editDistance(Array(name.utf8), Array(file.utf8), atMost: 2) <= 2
  }

  /// The number of single-byte insertions, deletions and substitutions that make `first` `second`, or `limit` + 1
  /// once it is sure to exceed `limit`.
  static func editDistance(_ first: [UInt8], _ second: [UInt8], atMost limit: Int) -> Int {
    if abs(first.count - second.count) > limit { return limit + 1 }
    var previous = Array(0...second.count)
    for (row, byte) in first.enumerated() {
      var current = [row + 1] + Array(repeating: 0, count: second.count)
      for (column, other) in second.enumerated() {
        current[column + 1] = min(
          previous[column] + (byte == other ? 0 : 1), previous[column + 1] + 1, current[column] + 1)
      }
      if current.min() ?? 0 > limit { return limit + 1 }
      previous = current
    }
    return previous[second.count]
  }

  /// The files in the directory whose names no credential's ``fileName(service:account:)`` gives and `fileNames:`
  /// does not name, which a program reads only if it names them: `splintctl secret status` lists them. Empty when
  /// the directory cannot be listed.
  package var filesNamedByNoCredential: [String] {
    guard let directory = try? directory(), let names = try? DeliveredFiles.names(in: directory) else { return [] }
    let named = Set(fileNames.values)
    return names.filter { !$0.hasPrefix(".") && Self.credential(fromFileName: $0) == nil && !named.contains($0) }
      .sorted()
  }

  // MARK: - Directories and errors

  /// Why the directory is not safe from other users, when it is not: others than its owner may write it, or it
  /// belongs to someone who is neither root nor this process's user. `splintctl secret status` shows it, as ssh's
  /// StrictModes would refuse such a directory; reads go on (a link out of the directory is refused anyway).
  package var directoryWarning: String? {
    (try? directory()).flatMap(DeliveredFiles.exposure)
  }

  /// Whether this source is set up here, told without making an error: for systemd, `$CREDENTIALS_DIRECTORY` is set;
  /// otherwise the directory exists. ``DefaultCredentialStore`` asks at every call, on the path a daemon repeats.
  var isSetUp: Bool {
    switch source {
    case .systemd(let current): current().map { !$0.isEmpty && DeliveredFiles.exists($0) } ?? false
    case .containers(let directory), .directory(let directory): DeliveredFiles.exists(directory)
    }
  }

  /// The directory now: for ``systemd``, `$CREDENTIALS_DIRECTORY` as the environment has it at this call.
  private func directory() throws(CredentialError) -> String {
    switch source {
    case .systemd(let current):
      guard let directory = current(), !directory.isEmpty else {
        throw .storeUnavailable(
          store: name,
          reason: """
            CREDENTIALS_DIRECTORY is not set: the program does not run under a systemd unit with LoadCredential=, \
            LoadCredentialEncrypted=, SetCredential= or SetCredentialEncrypted=. Give the unit one for each \
            credential (LoadCredential=ID:PATH, where ID is the credential's file name) and run the program as \
            the unit's process (`systemd-run -p LoadCredential=ID:PATH --pipe --wait PROGRAM` for a one-off).
            """)
      }
      return directory
    case .containers(let directory): return directory
    case .directory(let path): return path
    }
  }

  private func requireListable(_ directory: String) throws(CredentialError) {
    do throws(DeliveredFileError) {
      try DeliveredFiles.requireListable(directory)
    } catch {
      throw unavailable(error)
    }
  }

  /// The directory cannot be listed, as `error` says.
  private func unavailable(_ error: DeliveredFileError) -> CredentialError {
    let reason =
      switch error {
      case .system(_, let path, ENOENT), .system(_, let path, ENOTDIR):
        "\(path) does not exist or is not a directory. \(missingRemedy)"
      case .system(_, let path, EACCES):
        "this process may not list \(path) (permission denied). \(accessRemedy)"
      default: error.description
      }
    return .storeUnavailable(store: name, reason: reason)
  }

  /// The credential's file cannot be a secret, as `error` says.
  private func unreadable(_ error: DeliveredFileError) -> CredentialError {
    let reason =
      switch error {
      case .system(_, let path, EACCES):
        "this process may not read \(path) (permission denied). \(accessRemedy)"
      case .system(_, _, ENAMETOOLONG):
        "\(error) A file name has at most 255 bytes: give the credential a shorter one with `fileNames:`."
      case .notRegular: "\(error) Deliver the secret as a regular file."
      default: error.description
      }
    return .unreadableSecret(reason)
  }

  var readOnly: CredentialError {
    let remedy =
      switch source {
      case .systemd:
        """
        Change the file or value that the unit's LoadCredential=, LoadCredentialEncrypted=, SetCredential= or \
        SetCredentialEncrypted= gives (`systemctl edit UNIT`; `systemd-creds encrypt` makes an encrypted one), \
        then restart the unit.
        """
      case .containers:
        """
        Change the secret where the container gets it (the file or environment variable a Compose file's \
        top-level `secrets:` names, or a new `docker secret create` for Swarm, then \
        `docker service update --secret-rm OLD --secret-add source=NEW,target=NAME`), then recreate the container \
        (`docker compose up -d --force-recreate`).
        """
      case .directory:
        """
        Change it where it comes from: the Kubernetes Secret (`kubectl edit secret NAME`; the kubelet updates the \
        volume within a minute or so), or the secret a Vault or OpenBao Agent template renders.
        """
      }
    return .readOnly(store: name, remedy: remedy)
  }

  private var missingRemedy: String {
    switch source {
    case .systemd:
      """
      systemd removes a unit's credentials when its service stops, and only the unit's own processes get \
      CREDENTIALS_DIRECTORY: run the program as the unit's process, not beside it.
      """
    case .containers:
      """
      The container was given no secrets: list them under the service's `secrets:` in the Compose file, or give \
      the Swarm service `--secret NAME`.
      """
    case .directory:
      """
      Mount the secret volume there (a Kubernetes `secret` volume with this `mountPath`), or point the Vault or \
      OpenBao Agent template's `destination` into it.
      """
    }
  }

  private var accessRemedy: String {
    switch source {
    case .systemd:
      "Only the unit's user may read its credentials: run the program as the unit's process, under its User=."
    case .containers:
      """
      Give the secret the program's user: for a Swarm service, `--secret source=NAME,uid=UID,mode=0400` (or \
      `uid`, `gid` and `mode` in the stack file); Docker Compose outside Swarm mounts the host's file as it is, \
      so give that file to the program's user.
      """
    case .directory:
      """
      Let the program's user read it: the Kubernetes volume's `defaultMode` and the pod's \
      `securityContext.fsGroup`, or the agent template's `perms`, or the file's owner.
      """
    }
  }
}
