// A test helper: runs Credential operations and shell commands as steps, in one process, and prints one line per
// step. The failure-state tests start it inside a D-Bus session of its own, so that locking, restarting or
// removing the Secret Service never disturbs the tests running beside them.
//
//   SecretsProbe STEP...
//   read S A | read-data S A | save S A TEXT | save-hex S A HEX | save-labelled S A LABEL TEXT | delete S A
//   accounts S | availability | read-async S A | read-timeout MS S A | read-cancel MS S A | sh COMMAND
//   save-async S A TEXT | delete-async S A | accounts-async S
//   conformance  (CredentialStoreConformance on the store; `ok conforms`, or the rules broken on standard error)
//   store-names  (the store names SPLINT_CREDENTIAL_STORES gives, as the default store reads them)
//   cycle N S A  (N rounds of save, read and delete of 4 KiB; prints the growth of the resident set in KiB)
//   file-name F  (a DeliveredCredentialStore given F as a file name: `ok`, or this process dies of the precondition)
//   store NAME   (the store the steps after it use: default, the default store; secret-service; systemd;
//                 containers; kernel-persistent, kernel-user or kernel-session; secret-portal, or
//                 secret-portal:SECONDS (with that timeout); or a directory of delivered secrets, by its path)
//
// The steps use DefaultCredentialStore until a `store` step, or the store SPLINT_PROBE_STORE names.
//
// Output per step: `ok VALUE` or `error CASE` (the CredentialError case name, with its description on standard
// error), flushed at once.

import Foundation
import SplintSecrets
import SplintSecretsTesting
import TestSupport

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
    "conformance": 0, "file-name": 1, "save-async": 3, "delete-async": 2, "accounts-async": 1,
    "store-names": 0,
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
    default: DeliveredCredentialStore(directory: URL(fileURLWithPath: name))
    }
  }

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
