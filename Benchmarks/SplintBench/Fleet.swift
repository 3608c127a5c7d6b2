// OpenBao and Vault (SplintFleet): what a read through `VaultCredentialStore` costs over the bare request it makes,
// and what `splintctl secret read` costs against the server's own command, `bao kv get`. The server is a real OpenBao
// dev server (`SPLINT_BAO`, which script/bench sets from script/openbao) on loopback, in memory, started here.

#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSecrets

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The group's rows; with `commands` false, the store's read against the bare GET alone (`SplintBench vault`).
  func benchmarkFleet(_ sizes: Sizes, into report: inout Report, commands: Bool = true) async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let bao = environment["SPLINT_BAO"], let splintctl = environment["FLEET_SPLINTCTL"] ?? (commands ? nil : "")
    else {
      throw BenchError("SPLINT_BAO and FLEET_SPLINTCTL are not set: run the benchmark through script/bench")
    }
    let port = try freePort()
    let address = "http://127.0.0.1:\(port)"
    let root = "bench-\(UUID().uuidString)"
    let server = try Child([
      bao, "server", "-dev", "-dev-root-token-id=\(root)", "-dev-listen-address=127.0.0.1:\(port)",
      "-dev-no-store-token",
    ])
    defer {
      server.terminate()
      _ = server.wait()
    }
    var configuration = VaultConfiguration(addresses: [address], login: .token(root))
    configuration.timeout = .seconds(30)
    let store = try VaultCredentialStore(configuration)
    let credential = Credential(service: "splint-bench", account: "token", store: store)
    let started = now()
    while (try? await credential.save("bench-token-0123456789")) == nil {
      guard now() - started < 30_000_000_000 else { throw BenchError("the OpenBao dev server did not start") }
      usleep(50_000)
    }

    let bare = try VaultFloor(credential, in: store)
    let reads = try interleaved(sizes.secretCalls, [{ _ = try credential.read() }, { _ = try bare.read() }])
    let (ours, floor) = (Summary(reads[0]), Summary(reads[1]))
    let read = Report.Row(
      what: "`Credential.read()` through `VaultCredentialStore`", ours: ours,
      anchorName: "a bare GET of the secret, same client and token", anchor: floor,
      target: "at most 10% over the bare GET", met: ours.median <= floor.median * 1.10)
    let serverName = "An OpenBao \(bao.split(separator: "/").dropLast().last ?? "") dev server on loopback"
    let readExplained = """
      \(serverName) (in memory, plain HTTP, a root token). The store's read checks the token it holds, sends the \
      request, reads the JSON answer and decodes the field into memory that is wiped when freed; the bare GET only \
      sends the same request with the same HTTP client and token, and keeps the answer as it came. \(ours.count) \
      reads each, alternating.
      """
    guard commands else {
      return report.table("Secrets on a fleet: OpenBao and Vault", [read], explanation: readExplained)
    }

    // Each program as a shell script would run it: a process of its own, with the address and token in its
    // environment (set here for both, as an operator's shell has them).
    setenv("BAO_ADDR", address, 1)
    setenv("BAO_TOKEN", root, 1)
    setenv("SPLINT_CREDENTIAL_STORES", "vault", 1)
    defer {
      for name: String in ["BAO_ADDR", "BAO_TOKEN", "SPLINT_CREDENTIAL_STORES"] { unsetenv(name) }
    }
    func run(_ arguments: [String]) throws {
      let result = runProgram(arguments, output: true)
      guard result.status == 0, result.output.hasPrefix("bench-token-0123456789") else {
        throw BenchError("\(arguments.joined(separator: " ")) exited with status \(result.status): \(result.output)")
      }
    }
    let processes = try interleaved(
      sizes.processRuns, warmup: 3,
      [
        { try run([splintctl, "secret", "read", "splint-bench", "token"]) },
        { try run([bao, "kv", "get", "-mount=secret", "-field=value", "splint/splint-bench/token"]) },
      ])
    let (command, baoCommand) = (Summary(processes[0]), Summary(processes[1]))

    report.table(
      "Secrets on a fleet: OpenBao and Vault",
      [
        read,
        .init(
          what: "`splintctl secret read` (vault)", ours: command, anchorName: "`bao kv get -field=value`",
          anchor: baoCommand, target: "faster", met: command.median < baoCommand.median),
      ],
      explanation: """
        \(readExplained) The commands: \(command.count) runs each, alternating, a new process each time (as a shell script pays; \
        this `splintctl` is the release build with the SplintFleet trait, linked against the Swift runtime \
        dynamically, not the installed static one), with BAO_ADDR and BAO_TOKEN in the environment.
        """)
  }

  /// A loopback port nothing listens on now.
  private func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
      }
    }
    guard bound else { throw BenchError("no free loopback port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
  }
#endif
