import Foundation
import TestSupport
import Testing

@testable import SplintSecrets

/// Secrets that systemd, Docker and Kubernetes deliver as files, read from real files laid out the way each of them
/// lays them out, with their modes; systemd's made by `systemd-creds` itself, and read through `.systemd` by a real
/// process with `CREDENTIALS_DIRECTORY` in its environment.
@Suite struct DeliveredCredentialStoreTests {
  let scratch = Scratch()

  /// A new directory `name` in the scratch directory holding `files` (file name: contents), each of mode
  /// `fileMode`; the directory gets `mode` once the files are in.
  func directory(
    _ name: String, mode: mode_t = 0o755, files: [String: String] = [:], fileMode: mode_t = 0o444
  ) throws -> URL {
    let directory = scratch.url(name)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for (file, contents) in files {
      try write(Data(contents.utf8), to: directory.appendingPathComponent(file), fileMode)
    }
    #expect(chmod(directory.path, mode) == 0)
    return directory
  }

  func write(_ data: Data, to file: URL, _ mode: mode_t = 0o444) throws {
    try data.write(to: file)
    #expect(chmod(file.path, mode) == 0)
  }

  func link(_ path: URL, to target: String) throws {
    try FileManager.default.createSymbolicLink(atPath: path.path, withDestinationPath: target)
  }

  /// The error `body` throws, or nil.
  func error<T>(_ body: () throws(CredentialError) -> T) -> CredentialError? {
    do throws(CredentialError) {
      _ = try body()
      return nil
    } catch {
      return error
    }
  }

  func alice(in store: DeliveredCredentialStore) -> Credential {
    Credential(service: "api.example.com", account: "alice", store: store)
  }

  // MARK: - The file name rule

  @Test func fileNamesOfTheDocumentedExamples() {
    let examples = [
      ("api.example.com", "alice", "api.example.com__alice"),
      ("api.example.com", "alice@example.com", "api.example.com__alice_40example.com"),
      ("my_app", "db password", "my_5Fapp__db_20password"),
      (".hidden", "x", "_2Ehidden__x"),
      ("café", "bob", "caf_C3_A9__bob"),
    ]
    for (service, account, name) in examples {
      #expect(DeliveredCredentialStore.fileName(service: service, account: account) == name)
    }
  }

  /// Pairs that a careless rule would give the same name, or a name one of the deliverers refuses.
  static let awkward = [
    ("api.example.com", "alice"), ("a_", "b"), ("a", "_b"), ("a__", "b"), ("a", "__b"), ("a", "b__c"),
    ("a__b", "c"), ("A", "a"), ("a", "A"), (".", ".."), ("..data", "x"), ("x", ".hidden"), ("_2E", "x"),
    ("/etc/passwd", "a:b"), ("é", "😀"), ("tab\t", "new\nline"), ("-", "-"), ("", ""), ("", "_"), ("_", ""),
    ("\u{7F}\u{1}", " "),
  ]

  @Test func fileNamesAreOnesSystemdDockerAndKubernetesAcceptAndTellTheirCredentialBack() {
    let kubernetesKey = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._".utf8)
    var seen: [String: (String, String)] = [:]
    for (service, account) in Self.awkward {
      let name = DeliveredCredentialStore.fileName(service: service, account: account)
      #expect(!name.isEmpty && !name.hasPrefix("."), "\(name)")
      #expect(name.utf8.allSatisfy(kubernetesKey.contains), "\(name): ASCII letters, digits, -, _ and . only")
      #expect(!name.contains("/") && !name.contains(":"))
      #expect(
        DeliveredCredentialStore.credential(fromFileName: name)
          == DeliveredCredentialStore.Key(service: service, account: account), "\(name)")
      #expect(seen[name] == nil, "\(name) is the name of \(seen[name].map { "\($0)" } ?? "") too")
      seen[name] = (service, account)
    }
  }

  @Test func namesTheRuleDoesNotGiveAreNoCredentials() {
    let strays = [
      "..data", "..2026_11_23_16_48_11.123456789", "token", "api.example.com", "_2ehidden__x", "a__b_4",
      "a__b_ZZ", "a__b_+F", "_41__x", "a__b_FF", "a__b_", "_2E_2E__x",
    ]
    for name in strays {
      #expect(DeliveredCredentialStore.credential(fromFileName: name) == nil, "\(name)")
    }
    // `_2E_2E__x` is not one: only the leading dot is escaped, so `..` is `_2E.__x`.
    #expect(DeliveredCredentialStore.fileName(service: "..", account: "x") == "_2E.__x")
  }

  @Test func systemdAcceptsTheFileNamesAsCredentialIDs() async throws {
    let key = scratch.url("key", "credential.secret").path
    var environment = ProcessInfo.processInfo.environment
    environment["SYSTEMD_CREDENTIAL_SECRET"] = key
    let pairs = [("api.example.com", "alice"), ("..data", "x"), ("/etc/passwd", "a:b"), ("é", "😀")]
    for (service, account) in pairs {
      let name = DeliveredCredentialStore.fileName(service: service, account: account)
      let output = try await Programs.run(
        ["systemd-creds", "encrypt", "--with-key=host", "--name=\(name)", "-", scratch.url("\(name).cred").path],
        input: Data("x".utf8), environment: environment)
      #expect(output.status == 0, "\(name): \(output.stderr)")
    }
    // The control: systemd does check IDs.
    let refused = try await Programs.run(
      ["systemd-creds", "encrypt", "--with-key=host", "--name=a:b", "-", scratch.url("refused.cred").path],
      input: Data("x".utf8), environment: environment)
    #expect(refused.status != 0 && refused.stderr.contains("Invalid credential name"), "\(refused.stderr)")
  }

  // MARK: - systemd credentials

  /// Encrypts `secret` with `systemd-creds` under the credential ID of api.example.com/alice and decrypts it into a
  /// new directory, as systemd does when a unit with `LoadCredentialEncrypted=` starts: directory 0500, file 0400.
  ///
  /// The host key is a new one in the scratch directory: `SYSTEMD_CREDENTIAL_SECRET` (honoured since systemd-creds
  /// came, in v250) names it, so nothing is written to /var/lib/systemd.
  func credentialsDirectory(holding secret: String) async throws -> URL {
    var environment = ProcessInfo.processInfo.environment
    environment["SYSTEMD_CREDENTIAL_SECRET"] = scratch.url("key", "credential.secret").path
    let id = DeliveredCredentialStore.fileName(service: "api.example.com", account: "alice")
    let encrypted = scratch.url("\(id).cred").path
    let encrypt = try await Programs.run(
      ["systemd-creds", "encrypt", "--with-key=host", "--name=\(id)", "-", encrypted], input: Data(secret.utf8),
      environment: environment)
    #expect(encrypt.status == 0, "\(encrypt.stderr)")
    #expect(FileManager.default.fileExists(atPath: scratch.url("key", "credential.secret").path))
    #expect(try !Data(contentsOf: URL(fileURLWithPath: encrypted)).contains(Data(secret.utf8)))

    let directory = try self.directory("credentials", mode: 0o700)
    let decrypt = try await Programs.run(
      ["systemd-creds", "decrypt", "--name=\(id)", encrypted, directory.appendingPathComponent(id).path],
      environment: environment)
    #expect(decrypt.status == 0, "\(decrypt.stderr)")
    #expect(chmod(directory.appendingPathComponent(id).path, 0o400) == 0)
    #expect(chmod(directory.path, 0o500) == 0)
    return directory
  }

  @Test func systemdCredentialsAreReadInTheUnitsEnvironment() async throws {
    let directory = try await credentialsDirectory(holding: "s3cr3t\n")
    var environment = ProcessInfo.processInfo.environment
    environment["CREDENTIALS_DIRECTORY"] = directory.path
    let output = try await Programs.run(
      [
        Programs.helper("SecretsProbe"), "store", "systemd", "read-data", "api.example.com", "alice",
        "read", "api.example.com", "bob", "accounts", "api.example.com", "availability",
        "save", "api.example.com", "alice", "new", "delete", "api.example.com", "alice",
        "read-data", "api.example.com", "alice",
      ], environment: environment)
    #expect(
      output.lines == [
        "ok systemd credentials", "ok 7333637233740a", "ok nil", "ok alice", "ok available", "error readOnly",
        "error readOnly", "ok 7333637233740a",
      ], "\(output.stderr)")
    #expect(
      output.stderr.contains(
        "systemd credentials delivers its secrets read-only, so this one cannot be saved or deleted here. Change "
          + "the file or value that the unit's LoadCredential="), "\(output.stderr)")
  }

  @Test func systemdOutsideAUnitIsUnavailableAndSaysWhy() async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["CREDENTIALS_DIRECTORY"] = nil
    let steps = ["store", "systemd", "availability", "read", "api.example.com", "alice", "accounts", "x"]
    let unset = try await Programs.run([Programs.helper("SecretsProbe")] + steps, environment: environment)
    #expect(
      unset.lines == [
        "ok systemd credentials", "error storeUnavailable", "error storeUnavailable", "error storeUnavailable",
      ], "\(unset.stderr)")
    #expect(
      unset.stderr.hasPrefix(
        "systemd credentials cannot be used: CREDENTIALS_DIRECTORY is not set: the program does not run under a "
          + "systemd unit with LoadCredential="), "\(unset.stderr)")

    environment["CREDENTIALS_DIRECTORY"] = ""
    let empty = try await Programs.run([Programs.helper("SecretsProbe")] + steps.prefix(3), environment: environment)
    #expect(empty.lines == ["ok systemd credentials", "error storeUnavailable"], "\(empty.stderr)")
    #expect(empty.stderr.contains("CREDENTIALS_DIRECTORY is not set"))

    // The service has stopped: systemd removed the directory.
    environment["CREDENTIALS_DIRECTORY"] = scratch.url("stopped").path
    let gone = try await Programs.run([Programs.helper("SecretsProbe")] + steps, environment: environment)
    #expect(gone.lines.dropFirst().allSatisfy { $0 == "error storeUnavailable" }, "\(gone.stdout)")
    #expect(
      gone.stderr.contains(
        "\(scratch.url("stopped").path) does not exist or is not a directory. systemd removes a unit's credentials "
          + "when its service stops"), "\(gone.stderr)")
  }

  @Test(.enabled(if: getuid() == 0, "a process of another user needs root to start it"))
  func systemdCredentialsAreOnlyTheUnitUsersToRead() async throws {
    let directory = try await credentialsDirectory(holding: "s3cr3t")
    // The unit's user is root here; the probe runs as nobody, as a process started beside the unit would, from a
    // copy in a private tmpfs (RootNamespace) that nobody can reach wherever the checkout is.
    let output = try await RootNamespace.run(
      """
      CREDENTIALS_DIRECTORY='\(directory.path)' LLVM_PROFILE_FILE=/dev/null \\
        setpriv --reuid=65534 --regid=65534 --clear-groups "$probe" store systemd read api.example.com alice
      """, helpers: ["probe": Programs.helper("SecretsProbe")])
    #expect(output.lines == ["ok systemd credentials", "error unreadableSecret"], "\(output.stderr)")
    #expect(output.stderr.contains("this process may not read \(directory.path)/api.example.com__alice"))
    #expect(output.stderr.contains("Only the unit's user may read its credentials"))
    #expect(!output.stderr.contains("s3cr3t"))
  }

  @Test func theSharedStoresAreReadOnlyAndNamed() {
    #expect(DeliveredCredentialStore.systemd === DeliveredCredentialStore.systemd)
    #expect(DeliveredCredentialStore.systemd.name == "systemd credentials")
    #expect(DeliveredCredentialStore.containerSecrets.name == "container secrets (/run/secrets)")
    #expect(DeliveredCredentialStore.systemd(fileNames: [:]).name == "systemd credentials")
    #expect(DeliveredCredentialStore.containerSecrets(fileNames: [:]).name == "container secrets (/run/secrets)")
    #expect(!DeliveredCredentialStore.systemd.isWritable && !DeliveredCredentialStore.containerSecrets.isWritable)
    let volume = DeliveredCredentialStore(directory: URL(fileURLWithPath: "/etc/secrets"))
    #expect(volume.name == "delivered secrets (/etc/secrets)" && !volume.isWritable)
    #expect(DeliveredCredentialStore(directory: URL(fileURLWithPath: "/x"), name: "api token").name == "api token")
  }

  // MARK: - Container secrets

  @Test func containerSecretsAreReadFromRunSecrets() async throws {
    guard getuid() == 0, (try? await Programs.run(["unshare", "--mount", "true"]))?.status == 0 else {
      print("skipped: this system does not permit mount namespaces (unshare), so no /run/secrets of our own")
      return
    }
    // A private tmpfs on /run, seen only by this shell and the probe: Docker's /run/secrets, files 0444.
    let script = """
      mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/secrets || exit 99
      printf 'hunter2' > /run/secrets/api.example.com__alice && chmod 0444 /run/secrets/api.example.com__alice
      exec "$0" store containers read api.example.com alice accounts api.example.com availability \
        delete api.example.com alice
      """
    let output = try await Programs.run(
      ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, Programs.helper("SecretsProbe")])
    #expect(
      output.lines == [
        "ok container secrets (/run/secrets)", "ok hunter2", "ok alice", "ok available", "error readOnly",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("recreate the container"), "\(output.stderr)")

    let none = try await Programs.run(
      [
        "unshare", "--mount", "--propagation", "private", "sh", "-c",
        #"mount -t tmpfs tmpfs /run && exec "$0" store containers availability"#, Programs.helper("SecretsProbe"),
      ])
    #expect(none.lines == ["ok container secrets (/run/secrets)", "error storeUnavailable"], "\(none.stderr)")
    #expect(
      none.stderr.contains(
        "/run/secrets does not exist or is not a directory. The container was given no secrets"), "\(none.stderr)")
  }

  @Test func dockerSecretsAreReadExactlyAsDelivered() throws {
    let secrets = try directory(
      "secrets",
      files: [
        "api.example.com__alice": "hunter2\n", "api.example.com__bob": "", "other.example.com__carol": "x",
      ])
    let store = DeliveredCredentialStore(source: .containers(directory: secrets.path), fileNames: [:])
    #expect(store.name == "container secrets (\(secrets.path))")
    #expect(try alice(in: store).readData() == Data("hunter2\n".utf8), "the newline is the secret's")
    #expect(try Credential(service: "api.example.com", account: "bob", store: store).readData() == Data())
    #expect(try Credential.accounts(service: "api.example.com", store: store) == ["alice", "bob"])
    #expect(try Credential.accounts(service: "other.example.com", store: store) == ["carol"])
    #expect(try Credential.accounts(service: "none", store: store) == [])
  }

  // MARK: - Kubernetes secret volumes

  /// Writes a new version of a Kubernetes secret volume into `volume` as the kubelet does: the keys' files in a new
  /// timestamped directory, `..data` swapped to it by renaming a new link over it, one link per key to `..data/KEY`.
  func kubernetesUpdate(_ volume: URL, version: String, _ keys: [String: String]) throws {
    let data = volume.appendingPathComponent("..\(version)")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    for (key, value) in keys { try write(Data(value.utf8), to: data.appendingPathComponent(key), 0o644) }
    try link(volume.appendingPathComponent("..data_tmp"), to: "..\(version)")
    #expect(rename(volume.appendingPathComponent("..data_tmp").path, volume.appendingPathComponent("..data").path) == 0)
    for key in keys.keys where !FileManager.default.fileExists(atPath: volume.appendingPathComponent(key).path) {
      try link(volume.appendingPathComponent(key), to: "..data/\(key)")
    }
  }

  @Test func aKubernetesVolumeIsReadAfreshAfterTheKubeletSwapsIt() throws {
    let volume = try directory("volume", mode: 0o1777)
    try kubernetesUpdate(volume, version: "2026_11_23_16_00_00.1", ["api.example.com__alice": "one", "token": "t"])
    let store = DeliveredCredentialStore(
      directory: volume, name: "Kubernetes secret api",
      fileNames: [.init(service: "api.example.com", account: "service-account"): "token"])
    let alice = alice(in: store)
    #expect(try alice.read() == "one")
    #expect(try Credential.accounts(service: "api.example.com", store: store) == ["alice", "service-account"])

    try kubernetesUpdate(volume, version: "2026_11_23_17_00_00.2", ["api.example.com__alice": "two", "token": "u"])
    #expect(try alice.read() == "two", "the read after the swap returns the new secret")
    try FileManager.default.removeItem(at: volume.appendingPathComponent("..2026_11_23_16_00_00.1"))
    #expect(try alice.read() == "two")
    #expect(try Credential(service: "api.example.com", account: "service-account", store: store).read() == "u")
    #expect(try Credential.accounts(service: "api.example.com", store: store) == ["alice", "service-account"])
  }

  // MARK: - Files that are no secret

  @Test(.timeLimit(.minutes(1))) func whatIsNoRegularFileIsRefusedWithoutWaiting() async throws {
    let directory = try directory("odd")
    let store = DeliveredCredentialStore(directory: directory)
    func refusal(_ account: String) -> String? {
      error { () throws(CredentialError) in
        try Credential(service: "odd", account: account, store: store).readData()
      }?.description
    }
    let path = { (account: String) in directory.appendingPathComponent("odd__\(account)").path }

    #expect(mkfifo(path("fifo"), 0o600) == 0)
    #expect(
      refusal("fifo")
        == "The secret cannot be read: \(path("fifo")) is a FIFO (named pipe), not a regular file. Deliver the "
        + "secret as a regular file.")
    try FileManager.default.createDirectory(atPath: path("directory"), withIntermediateDirectories: false)
    #expect(refusal("directory")?.contains("\(path("directory")) is a directory, not a regular file.") == true)
    // A device is refused as not regular too; the one a link outside points to, before it is even looked at.
    try link(URL(fileURLWithPath: path("device")), to: "/dev/null")
    #expect(refusal("device")?.contains("\(path("device")) leads out of \(directory.path)") == true)
    let bind = try await Programs.run([
      Programs.python, "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path("socket"),
    ])
    #expect(bind.status == 0, "\(bind.stderr)")
    #expect(refusal("socket")?.contains("\(path("socket")) is a socket, not a regular file.") == true)
    // All are listed: a read says what is wrong with them.
    #expect(try store.accounts(service: "odd") == ["device", "directory", "fifo", "socket"])
  }

  @Test func aMissingFileOrADanglingLinkIsNoSecret() throws {
    let directory = try directory("dangling", files: ["api.example.com__bob": "b"])
    try link(directory.appendingPathComponent("api.example.com__alice"), to: "..data/api.example.com__alice")
    let store = DeliveredCredentialStore(directory: directory)
    #expect(try alice(in: store).read() == nil)
    #expect(try Credential(service: "api.example.com", account: "carol", store: store).read() == nil)
    #expect(try store.accounts(service: "api.example.com") == ["bob"])
  }

  // MARK: - A credential not delivered

  @Test("a missing file is named, with the files whose names are close to it: a misnamed delivery")
  func aMissingFileIsNamedWithCloseOnes() throws {
    let directory = try directory(
      "misnamed",
      files: [
        "api.example.com.syncd": "x", "API.example.com__Syncd": "x", "api.example.com__syncx": "x",
        "api.example.com__bob": "x", "token": "x",
      ])
    let store = DeliveredCredentialStore(directory: directory, name: "delivered")
    let syncd = Credential(service: "api.example.com", account: "syncd", store: store)
    #expect(try syncd.read() == nil)  // still no secret: told, not an error
    let absence = try #require(store.absence(of: syncd))
    #expect(
      absence
        == .notDelivered(
          store: "delivered", file: "api.example.com__syncd", directory: directory.path,
          closeNames: ["API.example.com__Syncd", "api.example.com.syncd", "api.example.com__syncx"]))
    #expect(absence.code == .notDelivered)
    #expect(
      absence.description.hasPrefix(
        "delivered holds no file api.example.com__syncd in \(directory.path), the file it reads this credential from"))
    #expect(absence.description.hasSuffix("are there, close names: rename the one meant api.example.com__syncd."))
    // One close name, or none.
    let bob = Credential(service: "api.example.com", account: "bobb", store: store)
    #expect(
      store.absence(of: bob)?.description.hasSuffix(
        "api.example.com__bob is there, a close name: rename it api.example.com__bobb.") == true)
    let far = Credential(service: "elsewhere", account: "nobody", store: store)
    #expect(store.absence(of: far)?.description.hasSuffix("a container secret's target).") == true)
    // There, or the directory missing: nothing to say.
    let nowhere = DeliveredCredentialStore(directory: scratch.url("none"))
    #expect(nowhere.absence(of: alice(in: nowhere)) == nil)
    #expect(store.absence(of: Credential(service: "api.example.com", account: "bob", store: store)) == nil)
    // The files no credential's name gives (that a program reads only by naming them).
    #expect(store.filesNamedByNoCredential == ["api.example.com.syncd", "token"])
    let named = DeliveredCredentialStore(
      directory: directory, fileNames: [.init(service: "api", account: "t"): "token"])
    #expect(named.filesNamedByNoCredential == ["api.example.com.syncd"])
    #expect(DeliveredCredentialStore(directory: scratch.url("none")).filesNamedByNoCredential.isEmpty)
  }

  @Test("close names: equal but for case and the marks between words, or two edits away; never the file itself")
  func closeNames() {
    #expect(DeliveredCredentialStore.isClose("api.example.com.syncd", to: "api.example.com__syncd"))
    #expect(DeliveredCredentialStore.isClose("API-EXAMPLE-COM-SYNCD", to: "api.example.com__syncd"))
    #expect(DeliveredCredentialStore.isClose("api.example.com__sync", to: "api.example.com__syncd"))
    #expect(DeliveredCredentialStore.isClose("api.exmaple.com__syncd", to: "api.example.com__syncd"))
    #expect(!DeliveredCredentialStore.isClose("api.example.com__syncd", to: "api.example.com__syncd"))
    #expect(!DeliveredCredentialStore.isClose("api.example.com__alice", to: "api.example.com__syncd"))
    #expect(!DeliveredCredentialStore.isClose("..data", to: "..dat"))
    #expect(!DeliveredCredentialStore.isClose("a", to: "api.example.com__syncd"))
    #expect(DeliveredCredentialStore.editDistance(Array("kitten".utf8), Array("sitting".utf8), atMost: 5) == 3)
    #expect(DeliveredCredentialStore.editDistance(Array("kitten".utf8), Array("sitting".utf8), atMost: 2) == 3)
    #expect(DeliveredCredentialStore.editDistance([], Array("ab".utf8), atMost: 2) == 2)
  }

  @Test("a chain that cannot reach its other stores names the delivered file it looked for, and the close ones")
  func aChainNamesTheFileItLookedFor() throws {
    let directory = try directory("chain", files: ["api.example.com.syncd": "x"])
    let delivered = DeliveredCredentialStore(directory: directory, name: "systemd credentials")
    let unreachable = ReadOnlyStore(failure: .noSessionBus)
    let chain = ChainedCredentialStore([delivered, unreachable], skippingUnavailable: true)
    let syncd = Credential(service: "api.example.com", account: "syncd", store: chain)
    let error = #expect(throws: CredentialError.self) { try syncd.read() }
    #expect(
      error
        == .noStoreAnswered([
          .init(
            store: "systemd credentials",
            error: .notDelivered(
              store: "systemd credentials", file: "api.example.com__syncd", directory: directory.path,
              closeNames: ["api.example.com.syncd"])),
          .init(store: unreachable.name, error: .noSessionBus),
        ]))
    #expect(
      error?.description.hasPrefix(
        "No store answered (systemd credentials, \(unreachable.name)). systemd credentials holds no file api.example.com__syncd in \(directory.path)"
      ) == true,
      "\(String(describing: error))")
    // Found further down, or nothing to say when every store answered: as before.
    #expect(try Credential(service: "x", account: "y", store: ChainedCredentialStore([delivered])).read() == nil)
  }

  @Test func aSecretOfUpTo1MiBIsReadAndALargerOneRefused() throws {
    let directory = try directory("sizes")
    let store = DeliveredCredentialStore(directory: directory)
    let limit = 1 << 20
    try write(Data(repeating: 0x41, count: limit), to: directory.appendingPathComponent("api.example.com__alice"))
    #expect(try alice(in: store).readData()?.count == limit)

    let big = directory.appendingPathComponent("api.example.com__bob")
    try write(Data(repeating: 0x42, count: limit + 1), to: big)
    let refusal = error { () throws(CredentialError) in
      try Credential(service: "api.example.com", account: "bob", store: store).readData()
    }
    #expect(
      refusal?.description
        == "The secret cannot be read: \(big.path) holds more than 1048576 bytes, more than a secret may; it was not "
        + "read.")
  }

  static let everyByte = Data((0...255).map(UInt8.init) + [0, 0, 10, 0])

  @Test func binarySecretsKeepEveryByte() throws {
    let directory = try directory("binary")
    try write(Self.everyByte, to: directory.appendingPathComponent("api.example.com__alice"), 0o400)
    let alice = alice(in: DeliveredCredentialStore(directory: directory))
    #expect(try alice.readData() == Self.everyByte)
    #expect(throws: CredentialError.notText) { try alice.read() }
  }

  @Test func theAsyncAPIReadsThemToo() async throws {
    let directory = try directory("async")
    try write(Self.everyByte, to: directory.appendingPathComponent("api.example.com__alice"), 0o400)
    let store = DeliveredCredentialStore(directory: directory)
    #expect(try await alice(in: store).readData() == Self.everyByte)
    #expect(try await Credential.accounts(service: "api.example.com", store: store) == ["alice"])
    await #expect(throws: CredentialError.self) { try await alice(in: store).save("x") }
  }

  @Test func aFileWhoseSizeTheKernelDoesNotTellIsReadWhole() throws {
    // procfs reports a size of 0 for its files: the read goes by what read(2) returns, not by fstat.
    let store = DeliveredCredentialStore(
      directory: URL(fileURLWithPath: "/proc/sys/kernel"),
      fileNames: [.init(service: "kernel", account: "release"): "osrelease"])
    let release = try Credential(service: "kernel", account: "release", store: store).readData()
    #expect(release == FileManager.default.contents(atPath: "/proc/sys/kernel/osrelease") && release?.isEmpty == false)
  }

  @Test func linksInALoopAndNamesTooLongAreReported() throws {
    let directory = try directory("loops")
    try link(directory.appendingPathComponent("api.example.com__alice"), to: "api.example.com__alice")
    let store = DeliveredCredentialStore(directory: directory)
    #expect(
      error { () throws(CredentialError) in try alice(in: store).readData() }?.description
        == "The secret cannot be read: open \(directory.path)/api.example.com__alice failed: Too many levels of "
        + "symbolic links.")

    let long = Credential(
      service: String(repeating: "s", count: 200), account: String(repeating: "a", count: 60), store: store)
    let refusal = error { () throws(CredentialError) in try long.readData() }
    #expect(refusal?.code == .unreadableSecret)
    #expect(
      refusal?.description.hasSuffix(
        "failed: File name too long. A file name has at most 255 bytes: give the credential a shorter one with "
          + "`fileNames:`.") == true, "\(String(describing: refusal))")

    try link(scratch.url("circle"), to: "circle")
    let circle = DeliveredCredentialStore(directory: scratch.url("circle"))
    #expect(
      circle.availability()
        == .unavailable(
          .storeUnavailable(
            store: circle.name, reason: "list \(scratch.url("circle").path) failed: Too many levels of symbolic links.")
        ))
  }

  // MARK: - Links stay in their directory

  @Test("a link that leads out of the directory is refused, however it is spelt; links within it are followed")
  func linksStayInTheirDirectory() throws {
    let outside = try directory("outside", files: ["shadow": "root:$6$hash"])
    let secrets = try directory("secrets", files: ["s__real": "inside"])
    try FileManager.default.createDirectory(
      at: secrets.appendingPathComponent("sub"), withIntermediateDirectories: false)
    try write(Data("deeper".utf8), to: secrets.appendingPathComponent("sub/file"))
    try link(secrets.appendingPathComponent("up"), to: "../outside")
    let out = [
      "absolute": outside.appendingPathComponent("shadow").path, "relative": "../outside/shadow",
      "roundabout": "sub/../../outside/shadow", "through": "up/shadow", "root": "/",
    ]
    for (account, target) in out { try link(secrets.appendingPathComponent("s__\(account)"), to: target) }
    try link(secrets.appendingPathComponent("s__inner"), to: "sub/file")
    try link(secrets.appendingPathComponent("s__back"), to: "sub/../s__real")
    let store = DeliveredCredentialStore(directory: secrets)

    for account in out.keys.sorted() {
      let refusal = error { () throws(CredentialError) in
        try Credential(service: "s", account: account, store: store).readData()
      }
      #expect(refusal?.code == .unreadableSecret, "\(account)")
      #expect(
        refusal?.description.contains("\(secrets.path)/s__\(account) leads out of \(secrets.path)") == true,
        "\(account): \(String(describing: refusal))")
      #expect(refusal?.description.contains("root:$6$hash") == false)
    }
    #expect(try Credential(service: "s", account: "inner", store: store).read() == "deeper")
    #expect(try Credential(service: "s", account: "back", store: store).read() == "inside")
    #expect(
      try store.accounts(service: "s") == [
        "absolute", "back", "inner", "real", "relative", "root", "roundabout", "through",
      ],
      "listed: a read says what is wrong with those that lead out")
  }

  @Test(.enabled("another owner needs root and a mount namespace") { await RootNamespace.isAvailable() })
  func statusWarnsOfADirectoryOthersMayChange() async throws {
    let output = try await RootNamespace.run(
      """
      mkdir -m 0777 /mnt/creds && printf 'x' > /mnt/creds/s__a
      status() { CREDENTIALS_DIRECTORY=/mnt/creds SPLINT_CREDENTIAL_STORES=systemd-credentials $splintctl secret status; }
      status; echo "status $?"
      chmod 0755 /mnt/creds && chown 1000:1000 /mnt/creds
      status; echo "status $?"
      chown 0:0 /mnt/creds
      status; echo "status $?"
      """, helpers: ["splintctl": Programs.helper("splintctl")])
    let runs = output.stdout.components(separatedBy: "status 0\n")
    #expect(runs.count == 4, "each status ran and found the store: \(output)")
    #expect(
      runs.first?.contains(
        "- systemd credentials: available. Warning: /mnt/creds may be written by users other than its owner (mode 0777)"
      )
        == true, "\(output)")
    #expect(runs.dropFirst().first?.contains("Warning: /mnt/creds belongs to user 1000") == true, "\(output)")
    #expect(runs.dropFirst(2).first?.contains("Warning") == false, "root's own 0755 directory: \(output)")
  }

  // MARK: - Another user's files

  /// Runs `body` on this thread with the file-system identity of user 65534: setfsuid(2) gives root that user's
  /// access to files, and drops root's power to read any file, for the calling thread alone, until it is undone.
  func asAnotherUser<T>(_ body: () throws -> T) throws -> T {
    typealias SetFSUID = @convention(c) (uid_t) -> Int32
    let setfsuid = unsafeBitCast(try #require(dlsym(nil, "setfsuid")), to: SetFSUID.self)
    _ = setfsuid(65534)
    defer { _ = setfsuid(0) }
    return try body()
  }

  @Test(.enabled(if: getuid() == 0, "reading as another user needs root"))
  func filesOfAnotherUserAreRefusedWithWhatToDo() throws {
    // systemd's layout: the unit's user (root here) owns a 0500 directory of 0400 files.
    let directory = try directory("private", mode: 0o500, files: ["api.example.com__alice": "s3cr3t"], fileMode: 0o400)
    let stores = [
      (DeliveredCredentialStore(source: .systemd { directory.path }, fileNames: [:]), "under its User="),
      (
        DeliveredCredentialStore(source: .containers(directory: directory.path), fileNames: [:]),
        "give that file to the program's user"
      ),
      (DeliveredCredentialStore(directory: directory), "`securityContext.fsGroup`"),
    ]
    for (store, remedy) in stores {
      #expect(try alice(in: store).read() == "s3cr3t", "root reads it")
      let refusal = try asAnotherUser { error { () throws(CredentialError) in try alice(in: store).read() } }
      #expect(refusal?.code == .unreadableSecret)
      #expect(
        refusal?.description.hasPrefix(
          "The secret cannot be read: this process may not read \(directory.path)/api.example.com__alice (permission "
            + "denied).") == true, "\(String(describing: refusal))")
      #expect(refusal?.description.contains(remedy) == true, "\(String(describing: refusal))")
      #expect(refusal?.description.contains("s3cr3t") == false)

      let unlisted = try asAnotherUser { error { () throws(CredentialError) in try store.accounts(service: "x") } }
      #expect(
        unlisted?.description.hasPrefix(
          "\(store.name) cannot be used: this process may not list \(directory.path) (permission denied).") == true)
      #expect(unlisted?.description.contains(remedy) == true)
      #expect(try asAnotherUser { store.availability() } == .unavailable(unlisted ?? .locked))
    }
  }

  // MARK: - Read-only

  @Test func savingAndDeletingSayWhereTheSecretIsChanged() throws {
    let directory = try directory("readonly", files: ["api.example.com__alice": "kept"])
    let stores = [
      (DeliveredCredentialStore(source: .systemd { directory.path }, fileNames: [:]), "then restart the unit."),
      (DeliveredCredentialStore(source: .containers(directory: directory.path), fileNames: [:]), "--force-recreate"),
      (DeliveredCredentialStore(directory: directory), "the Kubernetes Secret (`kubectl edit secret NAME`"),
    ]
    for (store, remedy) in stores {
      let alice = alice(in: store)
      let refusals = [
        error { () throws(CredentialError) in try alice.save("new") },
        error { () throws(CredentialError) in try alice.delete() },
      ]
      for refusal in refusals {
        #expect(refusal?.code == .readOnly)
        guard case .readOnly(let name, let advice) = refusal?.situation else { continue }
        #expect(name == store.name && advice.contains(remedy), "\(advice)")
      }
      #expect(throws: CredentialError.self) { try store.saveSecret(Data(), contentType: .binary, for: alice) }
      #expect(try alice.read() == "kept")
    }
  }

  // MARK: - Listing and availability

  @Test func accountsAreTheDecodedFileNamesOfTheService() throws {
    let directory = try directory(
      "listing",
      files: [
        "api.example.com__carol": "", "api.example.com__alice_40example.com": "", "api.example.com__bob": "",
        "api.example.com__b_6Fb": "", "api.example.comX__dave": "", "_2Eapi.example.com__erin": "",
        "api.example.com": "", "README": "", "api.example.com__overridden": "", "key-for-frank": "",
      ])
    let store = DeliveredCredentialStore(
      directory: directory,
      fileNames: [
        .init(service: "api.example.com", account: "frank"): "key-for-frank",
        .init(service: "api.example.com", account: "overridden"): "missing-file",
        .init(service: "other", account: "gina"): "README",
      ])
    #expect(
      try Credential.accounts(service: "api.example.com", store: store) == [
        "alice@example.com", "bob", "carol", "frank",
      ])
    #expect(try Credential.accounts(service: ".api.example.com", store: store) == ["erin"])
    #expect(try Credential.accounts(service: "other", store: store) == ["gina"])
    #expect(try Credential(service: "api.example.com", account: "overridden", store: store).read() == nil)
    #expect(try Credential(service: "other", account: "gina", store: store).read() == "")
  }

  @Test func aMissingDirectoryMakesTheStoreUnavailable() throws {
    let missing = scratch.url("never-mounted")
    let store = DeliveredCredentialStore(directory: missing)
    let reason = """
      \(missing.path) does not exist or is not a directory. Mount the secret volume there (a Kubernetes `secret` \
      volume with this `mountPath`), or point the Vault or OpenBao Agent template's `destination` into it.
      """
    let unavailable = CredentialError.storeUnavailable(store: "delivered secrets (\(missing.path))", reason: reason)
    #expect(store.availability() == .unavailable(unavailable))
    #expect(throws: unavailable) { try alice(in: store).read() }
    #expect(throws: unavailable) { try Credential.accounts(service: "api.example.com", store: store) }

    try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
    #expect(store.availability() == .available)
    #expect(try alice(in: store).read() == nil)

    // A file where the directory should be.
    let file = scratch.url("a-file")
    try write(Data("x".utf8), to: file)
    let misplaced = DeliveredCredentialStore(directory: file)
    #expect(misplaced.availability() != .available)
    #expect(throws: CredentialError.self) { try alice(in: misplaced).read() }
    #expect(
      error { () throws(CredentialError) in try alice(in: misplaced).read() }?.description.contains(
        "\(file.path) does not exist or is not a directory.") == true)
  }

  @Test func explicitFileNamesAreUsedForTheirCredentialsOnly() throws {
    let directory = try directory(
      "named", files: ["api-token": "from the key", "api.example.com__alice": "by the rule"])
    let store = DeliveredCredentialStore(
      directory: directory, fileNames: [.init(service: "api.example.com", account: "alice"): "api-token"])
    #expect(try alice(in: store).read() == "from the key")
    #expect(try Credential(service: "api.example.com", account: "api-token", store: store).read() == nil)
    #expect(try store.accounts(service: "api.example.com") == ["alice"])
    let systemd = DeliveredCredentialStore.systemd(fileNames: [.init(service: "s", account: "a"): "id"])
    let containers = DeliveredCredentialStore.containerSecrets(fileNames: [.init(service: "s", account: "a"): "id"])
    #expect(systemd !== DeliveredCredentialStore.systemd && containers !== DeliveredCredentialStore.containerSecrets)
  }

  @Test func aFileNameThatIsNoFileNameIsAProgrammingError() async throws {
    // In a process of its own, not an exit test: swift-testing's exit tests wait with waitid(P_ALL), which a child
    // that another test started, exited and has not yet reaped holds up for good (seen in CI: every test hung).
    let crashed = try await Programs.run([Programs.helper("SecretsProbe"), "file-name", "a/b"])
    #expect(crashed.lines.isEmpty && crashed.status > 128, "died of a signal: \(crashed.status) \(crashed.stderr)")
    let named = try await Programs.run([Programs.helper("SecretsProbe"), "file-name", "api-token"])
    #expect(named.lines == ["ok"] && named.status == 0, "\(named.stderr)")
  }
}
