public import Foundation
import Glibc
import Synchronization

/// A real OpenBao server: the `bao` binary `script/openbao` fetched (its path in `SPLINT_BAO`), started on loopback
/// ports of its own, with a HOME of its own (so that nothing reads or writes the user's `~/.vault-token`), and stopped
/// by ``stop()``, or killed when it is freed. Its command-line tool runs against it with ``cli(_:input:token:)``.
public final class OpenBaoServer: Sendable {
  /// The address of its API: `http://127.0.0.1:PORT`.
  public let address: String
  /// Its own directory: HOME, its configuration and storage, its log and audit log.
  public let directory: URL
  private let program: RunningProgram
  private let scratch: Scratch
  /// The root token, and the unseal key a cluster's initialization gave.
  private let keys: Mutex<(rootToken: String, unsealKey: String?)>

  /// The server's process ID, for a helper that pauses it (SIGSTOP) itself.
  public var processID: Int32 { program.pid }

  /// The root token (a dev server's, or the one `bao operator init` gave a cluster).
  public var rootToken: String { keys.withLock { $0.rootToken } }

  private init(address: String, rootToken: String, program: RunningProgram, scratch: Scratch) {
    self.address = address
    self.program = program
    self.scratch = scratch
    keys = Mutex((rootToken, nil))
    directory = scratch.directory
  }

  deinit {
    program.kill()
    ServerLogs.keep(
      directory.appendingPathComponent("server.log"), as: "openbao-\(address.split(separator: ":").last ?? "").log",
      in: logs)
  }

  /// Where its log is kept when it is released (see ``ServerLogs``): the test's, as it started.
  private let logs = ServerLogs.directory

  /// The `bao` binary: `SPLINT_BAO`, which script/test sets from `script/openbao`.
  public static func binary() throws -> String {
    guard let path = ProcessInfo.processInfo.environment["SPLINT_BAO"],
      FileManager.default.isExecutableFile(atPath: path)
    else {
      throw ProgramError.spawn(
        "bao", "SPLINT_BAO does not name OpenBao's binary: run `export SPLINT_BAO=$(script/openbao)` (script/test does)"
      )
    }
    return path
  }

  /// A dev server (`bao server -dev`): in memory, unsealed, a KV version 2 mount at `secret/`, its root token never
  /// written to a file (`-dev-no-store-token`).
  ///
  /// - Parameters:
  ///   - configuration: More HCL for `-config`, such as a TLS listener of the test's own.
  ///   - audited: Whether a file audit device logs every request (OpenBao turns them on only in its configuration),
  ///     for ``auditedPaths()``.
  ///   - rootToken: Its root token; one of its own unless given (servers that share one take the same token).
  public static func dev(
    configuration: String? = nil, audited: Bool = false, rootToken: String = "root-\(UUID().uuidString)"
  ) async throws -> OpenBaoServer {
    let scratch = Scratch()
    let port = try freePort()
    var arguments = [
      try binary(), "server", "-dev", "-dev-root-token-id=\(rootToken)", "-dev-listen-address=127.0.0.1:\(port)",
      "-dev-no-store-token",
    ]
    var extra = configuration ?? ""
    if audited {
      extra +=
        "\naudit \"file\" \"splint\" {\n  options {\n    file_path = \"\(scratch.url("audit.log").path)\"\n  }\n}\n"
    }
    if !extra.isEmpty {
      let file = scratch.url("extra.hcl")
      try extra.write(to: file, atomically: true, encoding: .utf8)
      arguments.append("-config=\(file.path)")
    }
    let program = try await start(arguments, scratch: scratch)
    let address = "http://127.0.0.1:\(port)"
    try await waitUntilServing(address, program: program, scratch: scratch)
    let server = OpenBaoServer(address: address, rootToken: rootToken, program: program, scratch: scratch)
    try await server.waitUntil("the server answers") { try await server.cli(["status"]).status == 0 }
    return server
  }

  /// A server with raft storage that was never initialized (`bao operator init`): it answers, sealed, with no data.
  public static func uninitialized() async throws -> OpenBaoServer {
    try await raftNode(name: "alone", scratch: Scratch(), apiPort: freePort(), clusterPort: freePort())
  }

  /// One member of a raft cluster, not yet initialized: see ``OpenBaoCluster``.
  static func raftNode(name: String, scratch: Scratch, apiPort: Int, clusterPort: Int) async throws -> OpenBaoServer {
    let storage = scratch.url("raft")
    try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
    let configuration = """
      storage "raft" {
        path = "\(storage.path)"
        node_id = "\(name)"
        performance_multiplier = 1
      }
      listener "tcp" {
        address = "127.0.0.1:\(apiPort)"
        cluster_address = "127.0.0.1:\(clusterPort)"
        tls_disable = true
      }
      api_addr = "http://127.0.0.1:\(apiPort)"
      cluster_addr = "http://127.0.0.1:\(clusterPort)"
      disable_mlock = true
      """
    let file = scratch.url("server.hcl")
    try configuration.write(to: file, atomically: true, encoding: .utf8)
    let program = try await start([try binary(), "server", "-config=\(file.path)"], scratch: scratch)
    let address = "http://127.0.0.1:\(apiPort)"
    try await waitUntilServing(address, program: program, scratch: scratch)
    return OpenBaoServer(address: address, rootToken: "", program: program, scratch: scratch)
  }

  /// The cluster's root token and unseal key, once its initialization gave them.
  func initialized(rootToken: String, unsealKey: String) {
    keys.withLock { $0 = (rootToken, unsealKey) }
  }

  private static func start(_ arguments: [String], scratch: Scratch) async throws -> RunningProgram {
    let home = scratch.url("home")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    let log = scratch.url("server.log").path
    // The server's own output goes to a file beside it; `exec` so that a signal reaches the server itself.
    return try await Programs.start(
      ["/bin/sh", "-c", "exec \"$@\" >\"$LOG\" 2>&1", "sh"] + arguments,
      environment: environment(home: home, address: nil, token: nil).merging(["LOG": log]) { $1 }, seconds: nil)
  }

  /// The environment of `bao` (the server or its CLI): no BAO_ or VAULT_ variable of the test's own, HOME its own.
  private static func environment(home: URL, address: String?, token: String?) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter {
      !$0.key.hasPrefix("BAO_") && !$0.key.hasPrefix("VAULT_")
    }
    environment["HOME"] = home.path
    environment["BAO_ADDR"] = address
    environment["BAO_TOKEN"] = token
    return environment
  }

  /// Waits until the server at `address` takes connections, or fails with its log when it ends first.
  private static func waitUntilServing(_ address: String, program: RunningProgram, scratch: Scratch) async throws {
    let port = Int(address.split(separator: ":").last ?? "") ?? 0
    let serving = await eventually(within: 60) { isListening(port: port) || kill(program.pid, 0) != 0 }
    guard serving, kill(program.pid, 0) == 0 else {
      let log = (try? String(contentsOf: scratch.url("server.log"), encoding: .utf8)) ?? ""
      throw ProgramError.spawn("bao server", "it did not serve \(address): \(log.suffix(2000))")
    }
  }

  /// Whether something accepts TCP connections on 127.0.0.1:`port`.
  private static func isListening(port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }

  /// A loopback port nothing listens on now (the kernel's choice for a socket bound to port 0).
  public static func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(descriptor) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
      }
    }
    guard bound else { throw ProgramError.spawn("bind", String(cString: strerror(errno))) }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Runs `bao ARGUMENTS` against this server, with `token` (the root token unless given; nil for none) and a HOME
  /// of its own.
  @discardableResult
  public func cli(_ arguments: [String], input: String = "", token: String?? = .none) async throws -> ProgramOutput {
    let token = token ?? rootToken
    return try await Programs.run(
      [try Self.binary()] + arguments, input: Data(input.utf8),
      environment: Self.environment(home: directory.appendingPathComponent("home"), address: address, token: token))
  }

  /// Runs `bao ARGUMENTS` and returns its standard output, or throws what it printed on failure.
  @discardableResult
  public func run(_ arguments: [String], input: String = "", token: String?? = .none) async throws -> String {
    let output = try await cli(arguments, input: input, token: token)
    guard output.status == 0 else { throw ToolFailure(output) }
    return output.stdout
  }

  /// `bao write -format=json PATH -` with `json` on standard input: the answer's JSON object (empty for none).
  @discardableResult
  public func write(_ path: String, _ json: [String: Any], token: String?? = .none) async throws -> [String: Any] {
    let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    let output = try await run(["write", "-format=json", path, "-"], input: body, token: token)
    return output.isEmpty ? [:] : (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:])
  }

  /// A policy named `name` with `rules` (HCL).
  public func policy(_ name: String, _ rules: String) async throws {
    try await run(["policy", "write", name, "-"], input: rules)
  }

  /// A token with `policies`, its time to live `ttl` (such as "1h"); returns the token.
  public func token(policies: [String], ttl: String = "1h", extra: [String] = []) async throws -> String {
    let output = try await run(
      ["token", "create", "-format=json", "-ttl=\(ttl)"] + policies.map { "-policy=\($0)" } + extra)
    let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
    guard let token = (json?["auth"] as? [String: Any])?["client_token"] as? String else {
      throw ProgramError.spawn("bao token create", "no token in \(output)")
    }
    return token
  }

  /// The accessors of every token the server holds, to count them.
  public func tokenAccessors() async throws -> [String] {
    let output = try await run(["list", "-format=json", "auth/token/accessors"])
    return try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String] ?? []
  }

  /// The path of every request the audit device of a server started `audited` logged (not the responses), in order.
  public func auditedPaths() throws -> [String] {
    let log = (try? String(contentsOf: directory.appendingPathComponent("audit.log"), encoding: .utf8)) ?? ""
    return log.split(separator: "\n").compactMap { line in
      guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        entry["type"] as? String == "request"
      else { return nil }
      return (entry["request"] as? [String: Any])?["path"] as? String
    }
  }

  /// Seals the server: every request fails until ``unseal()``.
  public func seal() async throws { try await run(["operator", "seal"]) }

  /// Unseals it with its unseal key (a dev server's is in what it printed at start).
  public func unseal() async throws {
    let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    let printed = log.split(separator: "\n").first { $0.hasPrefix("Unseal Key:") }.map {
      String($0.dropFirst("Unseal Key:".count)).trimmingCharacters(in: .whitespaces)
    }
    try await run(["operator", "unseal", keys.withLock { $0.unsealKey } ?? printed ?? ""])
  }

  /// Stops the server (SIGSTOP): its port still takes connections, which the kernel answers, and nothing more.
  /// Returns once every thread of it has stopped (``RunningProgram/pause()``).
  public func pause() { program.pause() }

  /// Lets a paused server go on.
  public func resume() { program.send(SIGCONT) }

  /// Kills the server at once (SIGKILL), as a crash or a lost machine would.
  public func crash() async {
    program.send(SIGKILL)
    await program.wait()
  }

  /// Stops the server (SIGTERM) and waits for it.
  public func stop() async {
    program.send(SIGCONT)
    program.send(SIGTERM)
    await program.wait()
  }

  /// Waits until `condition` holds, or fails naming `what` and the server's log.
  public func waitUntil(_ what: String, within seconds: Double = 60, _ condition: () async throws -> Bool) async throws
  {
    let held = await eventually(within: seconds) { (try? await condition()) ?? false }
    guard held else {
      let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
      throw ProgramError.spawn("bao server", "\(what) did not happen within \(seconds) s: \(log.suffix(3000))")
    }
  }
}

/// Three (or more) OpenBao servers on loopback in one raft cluster, each with its own storage: a real HA set-up,
/// initialized with one unseal key, unsealed, with a KV version 2 mount at `secret/`.
public final class OpenBaoCluster: Sendable {
  /// The members, the first one initialized first (and active at the start).
  public let nodes: [OpenBaoServer]

  private init(nodes: [OpenBaoServer]) { self.nodes = nodes }

  /// Starts `size` members, initializes the first, joins and unseals the others, and mounts `secret/`.
  public static func start(size: Int = 3) async throws -> OpenBaoCluster {
    var nodes: [OpenBaoServer] = []
    for index in 1...size {  // one at a time: each waits for its port
      nodes.append(
        try await OpenBaoServer.raftNode(
          name: "node\(index)", scratch: Scratch(inMemory: true), apiPort: try OpenBaoServer.freePort(),
          clusterPort: try OpenBaoServer.freePort()))
    }
    let initialized = try await nodes[0].run(
      ["operator", "init", "-key-shares=1", "-key-threshold=1", "-format=json"], token: .some(nil))
    let answer = try JSONSerialization.jsonObject(with: Data(initialized.utf8)) as? [String: Any]
    guard let key = (answer?["unseal_keys_b64"] as? [String])?.first, let root = answer?["root_token"] as? String else {
      throw ProgramError.spawn("bao operator init", "no key or token in \(initialized)")
    }
    for node in nodes { node.initialized(rootToken: root, unsealKey: key) }
    try await nodes[0].unseal()
    try await nodes[0].waitUntil("the first member becomes active") {
      try await nodes[0].cli(["operator", "raft", "list-peers"]).status == 0
    }
    // New members vote only once autopilot finds them stable: without votes, a cluster that loses its first member
    // could never elect another.
    try await nodes[0].run(["operator", "raft", "autopilot", "set-config", "-server-stabilization-time=1s"])
    for node in nodes.dropFirst() {
      try await node.run(["operator", "raft", "join", nodes[0].address], token: .some(nil))
      try await node.unseal()
    }
    try await nodes[0].waitUntil("every member votes") {
      let peers = try await nodes[0].run(["operator", "raft", "list-peers", "-format=json"])
      let json = try JSONSerialization.jsonObject(with: Data(peers.utf8)) as? [String: Any]
      let servers = ((json?["data"] as? [String: Any])?["config"] as? [String: Any])?["servers"] as? [[String: Any]]
      return servers?.count == size && servers?.allSatisfy { $0["voter"] as? Bool == true } == true
    }
    let cluster = OpenBaoCluster(nodes: nodes)
    try await nodes[0].run(["secrets", "enable", "-version=2", "-path=secret", "kv"])
    // A new KV version 2 mount answers "upgrading" for a moment, on each member.
    for node in nodes {
      try await node.waitUntil("the KV mount answers on \(node.address)") {
        let output = try await node.cli(["kv", "put", "secret/ready", "at=\(node.address)"])
        return output.status == 0
      }
    }
    return cluster
  }

  /// The index of the member that is active now, or nil while there is none (an election).
  public func active() async -> Int? {
    for (index, node) in nodes.enumerated() {
      let output = try? await node.cli(["status", "-format=json"], token: .some(nil))
      let json = output.flatMap { try? JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) as? [String: Any] }
      if json?["is_self"] as? Bool == true { return index }
    }
    return nil
  }

  /// Stops every member.
  public func stop() async {
    for node in nodes { await node.stop() }
  }
}
