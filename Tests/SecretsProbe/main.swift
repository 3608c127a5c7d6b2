// A test helper: runs Credential operations and shell commands as steps, in one process, and prints one line per
// step. The failure-state tests start it inside a D-Bus session of its own, so that locking, restarting or
// removing the Secret Service never disturbs the tests running beside them.
//
//   SecretsProbe STEP...
//   read S A | read-data S A | save S A TEXT | save-hex S A HEX | save-labelled S A LABEL TEXT | delete S A
//   accounts S | availability | read-async S A | read-timeout MS S A | read-cancel MS S A | sh COMMAND
//   save-async S A TEXT | delete-async S A | accounts-async S
//   conformance  (CredentialStoreConformance on the store; `ok conforms`, or the rules broken on standard error)
//   threads-cancel N S A PID  (N async reads while the server PID is stopped, cancelled once at the server: see
//                 Threads below)
//   threads-many N S A PID    (N async reads while the server PID is stopped for a second, then let go)
//   store-names  (the store names SPLINT_CREDENTIAL_STORES gives, as the default store reads them)
//   cycle N S A  (N rounds of save, read and delete of 4 KiB; prints the growth of the resident set in KiB)
//   file-name F  (a DeliveredCredentialStore given F as a file name: `ok`, or this process dies of the precondition)
//   store NAME   (the store the steps after it use: default, the default store; secret-service; systemd;
//                 containers; kernel-persistent, kernel-user or kernel-session; secret-portal, or
//                 secret-portal:SECONDS (with that timeout); vault, from BAO_ADDR and BAO_TOKEN (in a build with
//                 SplintFleet); or a directory of delivered secrets, by its path)
//
// The steps use DefaultCredentialStore until a `store` step, or the store SPLINT_PROBE_STORE names.
//
// Output per step: `ok VALUE` or `error CASE` (the CredentialError case name, with its description on standard
// error), flushed at once.

import Foundation
import SplintSecrets
import SplintSecretsTesting
import TestSupport

#if SplintFleet
  import SplintFleet
#endif

@main
struct SecretsProbe {
  static func main() async {
    var arguments = Array(CommandLine.arguments.dropFirst())
    var store = selectStore(ProcessInfo.processInfo.environment["SPLINT_PROBE_STORE"] ?? "default")
    while !arguments.isEmpty {
      let verb = arguments.removeFirst()
      let count = min(arity[verb] ?? 0, arguments.count)
      let line: String
      if verb == "store", let name = arguments.first {
        store = selectStore(name)
        line = "ok \(store.name)"
      } else {
        line = await run(verb, Array(arguments.prefix(count)), store: store)
      }
      arguments.removeFirst(count)
      FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
  }

  static let arity = [
    "read": 2, "read-data": 2, "save": 3, "save-hex": 3, "save-labelled": 4, "delete": 2, "accounts": 1,
    "availability": 0, "read-async": 2, "read-timeout": 3, "read-cancel": 3, "sh": 1, "store": 1, "cycle": 3,
    "conformance": 0, "file-name": 1, "save-async": 3, "delete-async": 2, "accounts-async": 1, "threads-cancel": 4,
    "threads-many": 4, "store-names": 0,
  ]

  /// The store a `store NAME` step names.
  static func selectStore(_ name: String) -> any CredentialStore {
    switch name {
    case "default": DefaultCredentialStore.shared
    case "secret-service": SecretServiceStore.shared
    case "secret-portal": SecretPortalStore.shared
    case let timed where timed.hasPrefix("secret-portal:"):
      SecretPortalStore(timeout: .seconds(Int(timed.dropFirst("secret-portal:".count)) ?? 1))
    case "kernel-persistent": KernelKeyringStore(keyring: .persistent)
    case "kernel-user": KernelKeyringStore(keyring: .user)
    case "kernel-session": KernelKeyringStore(keyring: .session)
    case "systemd": DeliveredCredentialStore.systemd
    case "containers": DeliveredCredentialStore.containerSecrets
    #if SplintFleet
      case "vault": vaultStore()
    #endif
    default: DeliveredCredentialStore(directory: URL(fileURLWithPath: name))
    }
  }

  #if SplintFleet
    /// The vault store BAO_ADDR and BAO_TOKEN give; a configuration it refuses is a mistake of the test that ran the
    /// probe, which dies of it, saying why.
    static func vaultStore() -> any CredentialStore {
      do {
        return try VaultCredentialStore(.fromEnvironment())
      } catch {
        preconditionFailure("store vault: \(error)")
      }
    }
  #endif

  static func run(_ verb: String, _ a: [String], store: any CredentialStore) async -> String {
    do throws(CredentialError) {
      switch verb {
      case "read-async":
        return "ok \(try await Credential(service: a[0], account: a[1], store: store).read() ?? "nil")"
      case "save-async":
        try await Credential(service: a[0], account: a[1], store: store).save(a[2])
        return "ok"
      case "delete-async":
        try await Credential(service: a[0], account: a[1], store: store).delete()
        return "ok"
      case "accounts-async":
        return "ok \(try await Credential.accounts(service: a[0], store: store).joined(separator: ","))"
      case "read-cancel":
        let credential = Credential(service: a[1], account: a[2], store: store)
        let task = Task { try await credential.read() }
        try? await Task.sleep(for: .milliseconds(Int(a[0]) ?? 0))
        task.cancel()
        switch await task.result {
        case .success(let value): return "ok \(value ?? "nil")"
        case .failure(let error):
          throw error as? CredentialError ?? .backend(domain: "probe", code: 0, message: "\(error)")
        }
      case "sh":
        return await shell(a[0])
      case "threads-cancel":
        return await Threads.cancelMidRequest(
          Int(a[0]) ?? 1, Credential(service: a[1], account: a[2], store: store), server: Int32(a[3]) ?? 0)
      case "threads-many":
        return await Threads.manyAtOnce(
          Int(a[0]) ?? 1, Credential(service: a[1], account: a[2], store: store), server: Int32(a[3]) ?? 0)
      case "store-names":
        return "ok \(DefaultCredentialStore.namesInEnvironment.map { $0.joined(separator: "|") } ?? "nil")"
      case "file-name":
        // A file name that is no file name is a programming error: this process dies of it.
        _ = DeliveredCredentialStore(
          directory: URL(fileURLWithPath: "/run/secrets"), fileNames: [.init(service: "s", account: "a"): a[0]])
        return "ok"
      default:
        return try runBlocking(verb, a, store: store)
      }
    } catch {
      return failure(error)
    }
  }

  /// The steps that call the synchronous API, which async code cannot pick.
  static func runBlocking(_ verb: String, _ a: [String], store: any CredentialStore) throws(CredentialError) -> String {
    switch verb {
    case "read":
      return "ok \(try Credential(service: a[0], account: a[1], store: store).read() ?? "nil")"
    case "read-data":
      return "ok \(try Credential(service: a[0], account: a[1], store: store).readData().map(hex) ?? "nil")"
    case "save":
      try Credential(service: a[0], account: a[1], store: store).save(a[2])
      return "ok"
    case "save-hex":
      try Credential(service: a[0], account: a[1], store: store).save(bytes(hex: a[2]))
      return "ok"
    case "save-labelled":
      try Credential(service: a[0], account: a[1], label: a[2], store: store).save(a[3])
      return "ok"
    case "delete":
      try Credential(service: a[0], account: a[1], store: store).delete()
      return "ok"
    case "accounts":
      return "ok \(try Credential.accounts(service: a[0], store: store).joined(separator: ","))"
    case "availability":
      switch Credential.availability(store: store) {
      case .available: return "ok available"
      case .unavailable(let reason): return failure(reason)
      }
    case "read-timeout":
      let store = SecretServiceStore(timeout: .milliseconds(Int(a[0]) ?? 0))
      return "ok \(try Credential(service: a[1], account: a[2], store: store).read() ?? "nil")"
    case "conformance":
      do {
        try CredentialStoreConformance(store: store).run()
        return "ok conforms"
      } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        return "error conformance"
      }
    case "cycle":
      return "ok \(try cycle(Int(a[0]) ?? 0, Credential(service: a[1], account: a[2], store: store)))"
    default:
      return "usage: unknown step \(verb)"
    }
  }

  /// Saves, reads and deletes a 4 KiB secret `rounds` times, after as many rounds to warm up, and returns how many KiB
  /// the resident set grew meanwhile.
  static func cycle(_ rounds: Int, _ credential: Credential) throws(CredentialError) -> Int {
    let secret = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
    func run() throws(CredentialError) {
      for _ in 0..<rounds {
        try credential.save(secret)
        guard try credential.readData() == secret else { throw .unreadableSecret("read back something else") }
        try credential.delete()
      }
    }
    try run()
    let before = residentKiB()
    try run()
    return residentKiB() - before
  }

  /// The resident set size, from /proc/self/status.
  static func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
  }

  /// The step's output line for `error`; its description, which says why, goes to standard error.
  static func failure(_ error: CredentialError) -> String {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    return "error \(name(of: error))"
  }

  static func name(of error: CredentialError) -> String {
    if case .backend(let domain, let code, _) = error.situation { return "backend \(domain) \(code)" }
    return error.code.description
  }

  /// Runs `command` with bash through the tests' one runner, which waits for bash alone (its output goes to files,
  /// so a daemon the command starts cannot hold it up), and passes its output on. The status is 128 plus the signal
  /// when a signal ended it.
  static func shell(_ command: String) async -> String {
    do {
      let output = try await Programs.run(["/bin/bash", "-c", command])
      FileHandle.standardOutput.write(Data(output.stdout.utf8))  // before the step's own line, as it came first
      FileHandle.standardError.write(Data(output.stderr.utf8))
      return "ok sh \(output.status)"
    } catch {
      return "error sh \(error)"
    }
  }

  static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

  static func bytes(hex: String) -> Data {
    var data = Data()
    var digits = hex.makeIterator()
    while let high = digits.next(), let low = digits.next(), let byte = UInt8(String([high, low]), radix: 16) {
      data.append(byte)
    }
    return data
  }
}

// What a store's async calls cost in threads, in this process of their own (a test process runs other tests' threads
// beside them): reads that wait for a server stopped with SIGSTOP (its port still takes connections and requests,
// which the kernel holds for it), then cancelled, or let go.
enum Threads {
  /// Starts `count` async reads of `credential` while the server (process `server`) is stopped, waits until the
  /// requests have reached it, and cancels them: `ok threads BASELINE DURING AFTER at-server N ended CODES in MS ms`,
  /// where the thread counts are the process's before the reads, while they wait, and once every one has ended.
  static func cancelMidRequest(_ count: Int, _ credential: Credential, server: Int32) async -> String {
    _ = try? await credential.read()  // the connection, the HTTP client's threads, the login: made before counting
    let baseline = threadCount()
    stop(server)
    defer { kill(server, SIGCONT) }
    let reads = (0..<count).map { _ in
      Task { () async -> String in
        do throws(CredentialError) {
          return "value \(try await credential.read() ?? "nil")"
        } catch {
          return error.code.description
        }
      }
    }
    // At the server: its side of the connections holds bytes it has not read.
    let port = Int(ProcessInfo.processInfo.environment["BAO_ADDR"]?.split(separator: ":").last ?? "") ?? 0
    // Within 5 seconds: the HTTP client gives up a request that waited 10 for a connection of its pool.
    var atServer = 0
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline {
      atServer = WaitingRequests.count(port: port)
      if atServer >= min(count, 8) { break }
      try? await Task.sleep(for: .milliseconds(5))
    }
    let during = threadCount()
    let cancelled = ContinuousClock.now
    for read in reads { read.cancel() }
    var ended: Set<String> = []
    for read in reads { ended.insert(await read.value) }
    let took = ContinuousClock.now - cancelled
    let after = threadCount()
    return
      "ok threads \(baseline) \(during) \(after) at-server \(atServer) ended \(ended.sorted().joined(separator: ",")) "
      + "in \(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000) ms"
  }

  /// Starts `count` async reads of `credential` while the server (process `server`) is stopped for two seconds, and
  /// meanwhile wakes every 5 ms on Swift's cooperative pool: `ok threads BASELINE MOST gap MS read N`, the process's
  /// threads before and at the most, the longest the pool kept a wake-up waiting, and how many reads then gave
  /// their value.
  static func manyAtOnce(_ count: Int, _ credential: Credential, server: Int32) async -> String {
    guard let expected = try? await credential.read() else { return "error no value to read" }
    let baseline = threadCount()
    stop(server)
    return await withTaskGroup(of: String?.self) { group in
      for _ in 0..<count {
        group.addTask { try? await credential.read() }
      }
      var most = baseline
      var gap = Duration.zero
      let started = ContinuousClock.now
      var last = started
      while ContinuousClock.now - started < .seconds(2) {
        try? await Task.sleep(for: .milliseconds(5))
        let now = ContinuousClock.now
        gap = max(gap, now - last)
        last = now
        most = max(most, threadCount())
      }
      kill(server, SIGCONT)
      var read = 0
      for await value in group where value == expected { read += 1 }
      let milliseconds = gap.components.seconds * 1000 + gap.components.attoseconds / 1_000_000_000_000_000
      return "ok threads \(baseline) \(most) gap \(milliseconds) read \(read)"
    }
  }

  /// The threads of this process now.
  static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
  }

  /// Stops process `pid` (SIGSTOP), and returns once every thread of it has stopped.
  static func stop(_ pid: Int32) {
    kill(pid, SIGSTOP)
    for _ in 0..<2_000 {
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      if stat.split(separator: ")").last?.split(separator: " ").first == "T" { return }
      usleep(1_000)
    }
  }
}
