public import Foundation
import Glibc
import Synchronization

/// A free TCP port on 127.0.0.1, as the kernel picks one for a socket bound to port 0 (closed again at once: a
/// server started right after gets it, unless another takes it first, which its start then reports).
public func freeLoopbackPort() -> Int {
  let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(socket) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
      bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
    }
  }
  precondition(bound, "no loopback port could be bound")
  return Int(UInt16(bigEndian: address.sin_port))
}

/// A real etcd cluster on loopback, for the fleet's tests, the fault suite and the benchmark: Debian's `etcd`
/// (script/bootstrap installs it), each member a process of its own on ports of its own, its data in a directory of
/// the cluster's. Members can be killed, stopped (`SIGSTOP`), resumed and restarted; the whole cluster can be stopped
/// and started again on its data, or made anew (another cluster ID, as a restored or rebuilt one has). Every member
/// still running is killed when the cluster is released (and `splintctl sandbox` ends whatever a test leaves).
public final class LocalEtcd: Sendable {
  /// One member: its name, ports and process.
  public struct Member: Sendable {
    /// m1, m2, ….
    public let name: String
    /// The port clients reach it at.
    public let clientPort: Int
    /// The port the other members reach it at.
    public let peerPort: Int
    /// The member's client URL.
    public let endpoint: String
  }

  /// TLS for the members' client port: the CA, the server's certificate and key, and whether clients must show
  /// a certificate the CA signed.
  public struct TLS: Sendable {
    /// The CA that signed the members' and clients' certificates.
    public let caFile: String
    /// The members' certificate.
    public let certificateFile: String
    /// Its key.
    public let keyFile: String
    /// Whether clients must show a certificate the CA signed.
    public let requiresClientCertificate: Bool
    /// The client certificate and key etcdctl shows, when clients must.
    public let clientCertificateFile: String?
    /// The key of ``clientCertificateFile``.
    public let clientKeyFile: String?

    /// The files, and whether clients must show a certificate (etcdctl then shows the one given).
    public init(
      caFile: String, certificateFile: String, keyFile: String, requiresClientCertificate: Bool,
      clientCertificateFile: String? = nil, clientKeyFile: String? = nil
    ) {
      self.caFile = caFile
      self.certificateFile = certificateFile
      self.keyFile = keyFile
      self.requiresClientCertificate = requiresClientCertificate
      self.clientCertificateFile = clientCertificateFile
      self.clientKeyFile = clientKeyFile
    }
  }

  /// The members, in order.
  public let members: [Member]
  /// Where the members' data and logs are.
  public let directory: URL
  /// The members' TLS, if they speak it.
  public let tls: TLS?
  /// Further flags every member starts with (`--auth-token-ttl 2`).
  public let flags: [String]
  /// The members running now, by name.
  private let processes = Mutex<[String: RunningProgram]>([:])
  /// How many times the cluster was made anew: part of its token, from which etcd derives the cluster's ID.
  private let generation = Atomic(0)
  /// Where the members' logs are kept when the cluster is released (see ``ServerLogs``): the test's, as it started.
  private let logs = ServerLogs.directory

  /// The members' client URLs, in order.
  public var endpoints: [String] { members.map(\.endpoint) }

  /// Starts a cluster of `size` members, each with `flags` besides the usual ones, and waits until it has a leader.
  ///
  /// Its ports are free when chosen, but another process (a server of a test running beside this one) may take one
  /// before etcd binds it, as it did once in a full run: a start that fails so is made again on other ports, at most
  /// twice.
  public static func start(size: Int = 3, tls: TLS? = nil, flags: [String] = []) async throws -> LocalEtcd {
    for attempt in 1... {
      let cluster = LocalEtcd(size: size, tls: tls, flags: flags)
      do {
        try await cluster.startAll(state: "new")
        return cluster
      } catch let failure as EtcdFailure where failure.output.contains("address already in use") && attempt < 3 {
        print("LocalEtcd: a port was taken before etcd bound it; starting again on others: \(failure.output)")
        await cluster.stopAll()
      }
    }
    preconditionFailure("unreachable: the loop returns or throws")
  }

  private init(size: Int, tls: TLS?, flags: [String]) {
    self.flags = flags
    // In memory where the machine has a tmpfs for it: each write is an fsync of etcd's log, which a disk busy with
    // another writer (or a build) holds up for longer than an election timeout.
    directory = Scratch.base(inMemory: true).appendingPathComponent("splint-etcd-\(UUID())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    self.tls = tls
    let scheme = tls == nil ? "http" : "https"
    members = (1...size).map { index in
      let client = freeLoopbackPort()
      let peer = freeLoopbackPort()
      return Member(
        name: "m\(index)", clientPort: client, peerPort: peer, endpoint: "\(scheme)://127.0.0.1:\(client)")
    }
  }

  deinit {
    for process in processes.withLock({ $0.values }) { process.kill() }
    for member in members {
      ServerLogs.keep(
        directory.appendingPathComponent("\(member.name).log"), as: "\(directory.lastPathComponent)-\(member.name).log",
        in: logs)
    }
    try? FileManager.default.removeItem(at: directory)
  }

  /// The arguments that start `member`.
  private func arguments(_ member: Member, state: String) -> [String] {
    let cluster = members.map { "\($0.name)=http://127.0.0.1:\($0.peerPort)" }.joined(separator: ",")
    var arguments = [
      "etcd", "--name", member.name, "--data-dir", directory.appendingPathComponent(member.name).path,
      "--listen-client-urls", member.endpoint, "--advertise-client-urls", member.endpoint,
      "--listen-peer-urls", "http://127.0.0.1:\(member.peerPort)",
      "--initial-advertise-peer-urls", "http://127.0.0.1:\(member.peerPort)",
      "--initial-cluster", cluster, "--initial-cluster-state", state,
      "--initial-cluster-token", "\(directory.lastPathComponent)-\(generation.load(ordering: .relaxed))",
      // etcd's defaults (100 ms, 1 s): faster elections (50 ms, 500 ms) made a cluster on a busy core elect again
      // mid-test, and a leader killed on purpose is replaced within about two seconds as it is.
      "--heartbeat-interval", "100", "--election-timeout", "1000",
      "--logger", "zap", "--log-outputs", directory.appendingPathComponent("\(member.name).log").path,
    ]
    if let tls {
      arguments += ["--cert-file", tls.certificateFile, "--key-file", tls.keyFile, "--trusted-ca-file", tls.caFile]
      if tls.requiresClientCertificate { arguments.append("--client-cert-auth") }
    }
    return arguments + flags
  }

  private func startAll(state: String) async throws {
    for member in members { try await start(member, state: state) }
    try await waitForLeader()
  }

  /// Starts `member` (again, on its data).
  public func start(_ member: Member, state: String = "existing") async throws {
    let process = try await Programs.start(arguments(member, state: state), seconds: nil)
    processes.withLock { $0[member.name] = process }
  }

  /// Kills `member` with SIGKILL, as a crash would.
  public func kill(_ member: Member) async {
    let process = processes.withLock { $0.removeValue(forKey: member.name) }
    process?.send(SIGKILL)
    await process?.wait()
  }

  /// Stops `member` as an operator or systemd does: SIGTERM, and SIGKILL if it has not ended within `grace`.
  public func terminate(_ member: Member, grace: Duration = .seconds(2)) async {
    guard let process = processes.withLock({ $0.removeValue(forKey: member.name) }) else { return }
    process.send(SIGTERM)
    let killing = Task {
      try await Task.sleep(for: grace)
      process.send(SIGKILL)
    }
    await process.wait()
    killing.cancel()
  }

  /// The process ID of `member`, while it runs.
  public func processID(of member: Member) -> Int32? {
    processes.withLock { $0[member.name] }?.pid
  }

  /// Stops `member` with SIGSTOP: it keeps its sockets (the kernel still accepts connections) but answers nothing.
  /// Returns once every thread of it is stopped (``RunningProgram/pause()``).
  public func pause(_ member: Member) {
    processes.withLock { $0[member.name] }?.pause()
  }

  /// Resumes a member ``pause(_:)`` stopped.
  public func resume(_ member: Member) {
    processes.withLock { $0[member.name] }?.send(SIGCONT)
  }

  /// Kills every member.
  public func stopAll() async {
    for member in members { await kill(member) }
  }

  /// Starts every member again on its data, and waits for a leader.
  public func restartAll() async throws {
    try await startAll(state: "existing")
  }

  /// Kills every member, removes their data, and starts a new cluster on the same ports: another cluster ID, its
  /// revisions starting again, as a cluster rebuilt or restored from a snapshot.
  public func rebuild() async throws {
    await stopAll()
    for member in members { try? FileManager.default.removeItem(at: directory.appendingPathComponent(member.name)) }
    generation.add(1, ordering: .relaxed)
    try await startAll(state: "new")
  }

  /// Runs etcdctl against the cluster, as an operator would; its output, or a thrown error with what it printed.
  @discardableResult
  public func etcdctl(_ arguments: [String], endpoints: [String]? = nil, user: String? = nil) async throws -> String {
    var command = [
      "etcdctl", "--endpoints", (endpoints ?? self.endpoints).joined(separator: ","), "--dial-timeout", "3s",
    ]
    if let tls {
      command += ["--cacert", tls.caFile]
      if let certificate = tls.clientCertificateFile, let key = tls.clientKeyFile {
        command += ["--cert", certificate, "--key", key]
      }
    }
    if let user { command += ["--user", user] }
    var environment = ProcessInfo.processInfo.environment
    environment["ETCDCTL_API"] = "3"
    let output = try await Programs.run(command + arguments, environment: environment, seconds: 30)
    guard output.status == 0 else {
      throw EtcdFailure(command: arguments.joined(separator: " "), output: output.stdout + output.stderr)
    }
    return output.stdout
  }

  /// `etcdctl put KEY VALUE`.
  public func put(_ key: String, _ value: String, user: String? = nil) async throws {
    try await etcdctl(["put", key, "--", value], user: user)
  }

  /// The member that leads now, as the members' status says; nil while none does.
  public func leader() async -> Member? {
    for member in members where processes.withLock({ $0[member.name] }) != nil {
      guard let output = try? await etcdctl(["endpoint", "status", "-w", "json"], endpoints: [member.endpoint]),
        let data = output.data(using: .utf8),
        let statuses = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]],
        let status = statuses.first?["Status"] as? [String: Any],
        let header = status["header"] as? [String: Any],
        let leader = (status["leader"] as? NSNumber)?.uint64Value, leader != 0,
        let memberID = (header["member_id"] as? NSNumber)?.uint64Value
      else { continue }
      if leader == memberID { return member }
    }
    return nil
  }

  /// Waits (at most 30 seconds) until a member leads.
  public func waitForLeader() async throws {
    guard await eventually({ await self.leader() != nil }) else {
      let logs = members.map { member in
        (try? String(contentsOf: directory.appendingPathComponent("\(member.name).log"), encoding: .utf8))?
          .split(separator: "\n").suffix(5).joined(separator: "\n") ?? ""
      }
      throw EtcdFailure(command: "waiting for a leader", output: logs.joined(separator: "\n"))
    }
  }

  /// The revision the cluster is at.
  public func revision() async throws -> Int64 {
    let output = try await etcdctl(["endpoint", "status", "-w", "json"], endpoints: [endpoints[0]])
    guard let data = output.data(using: .utf8),
      let statuses = try JSONSerialization.jsonObject(with: data) as? [[String: Any]],
      let header = (statuses.first?["Status"] as? [String: Any])?["header"] as? [String: Any],
      let revision = (header["revision"] as? NSNumber)?.int64Value
    else { throw EtcdFailure(command: "endpoint status", output: output) }
    return revision
  }

  /// Compacts the history up to the cluster's revision now (as `user`, `NAME:PASSWORD`, once authentication is on):
  /// a watch from an older revision is cancelled. The revision it compacted at.
  @discardableResult
  public func compact(user: String? = nil) async throws -> Int64 {
    let revision = try await revision()
    try await etcdctl(["compact", String(revision), "--physical"], user: user)
    return revision
  }

  /// Turns authentication on, with `root` (password `rootpw`) and a user `user`, of a role that may only read
  /// `prefix`.
  public func enableAuthentication(user: String, password: String, readOnly prefix: String) async throws {
    try await etcdctl(["user", "add", "root:rootpw"])
    try await etcdctl(["role", "add", "root"])
    try await etcdctl(["user", "grant-role", "root", "root"])
    try await etcdctl(["user", "add", "\(user):\(password)"])
    try await etcdctl(["role", "add", "\(user)-role"])
    try await etcdctl(["role", "grant-permission", "\(user)-role", "read", prefix, "--prefix=true"])
    try await etcdctl(["user", "grant-role", user, "\(user)-role"])
    try await etcdctl(["auth", "enable"])
  }

  /// Adds, once authentication is on (``enableAuthentication(user:password:readOnly:)``), the user `name` with
  /// `password`, of a role of its own that may read and write each of `prefixes`.
  public func addUser(_ name: String, password: String, readWrite prefixes: [String]) async throws {
    let root = "root:rootpw"
    try await etcdctl(["user", "add", "\(name):\(password)"], user: root)
    try await etcdctl(["role", "add", "\(name)-role"], user: root)
    for prefix in prefixes {
      try await etcdctl(["role", "grant-permission", "\(name)-role", "readwrite", prefix, "--prefix=true"], user: root)
    }
    try await etcdctl(["user", "grant-role", name, "\(name)-role"], user: root)
  }
}

/// An etcdctl command that failed, or a cluster that did not come up: what it printed.
public struct EtcdFailure: Error, CustomStringConvertible {
  /// What was run, or waited for.
  public let command: String
  /// What it printed.
  public let output: String
  /// A failure of `command`, which printed `output`.
  public init(command: String, output: String) {
    self.command = command
    self.output = output
  }

  /// The command and its output.
  public var description: String { "etcd: \(command) failed: \(output)" }
}
