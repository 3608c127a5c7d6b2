// A daemon that reads its secret from OpenBao (SplintFleet's VaultCredentialStore) again and again: its resident
// memory measured after a warm-up and at the end, in a process of its own (`SplintTorture vault-reads`), against a
// real OpenBao dev server the scenario starts (`SPLINT_BAO`). script/leaks runs the same loop under valgrind.

#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSecrets
  import TestSupport

  /// What `vault-reads` reports, as one JSON object on standard output.
  struct VaultReadsReport: Codable {
    var reads = 0
    var warmResident = 0
    var resident = 0
    var problems: [String] = []
  }

  /// The secret the loop reads: 64 KiB of text, as the daemon's week reads from the keyring.
  let vaultSecret = String((0..<65_536).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })

  /// `SplintTorture vault-reads COUNT`: COUNT reads of `torture.vault`/`token` through the `vault` store the
  /// environment configures (BAO_ADDR, BAO_TOKEN), after a warm-up of a twentieth as many; then a save, a listing and
  /// an availability check every hundred reads. Prints a ``VaultReadsReport``.
  func vaultReads(_ count: Int) {
    var report = VaultReadsReport()
    do {
      let store = try VaultCredentialStore(.fromEnvironment())
      let token = Credential(service: "torture.vault", account: "token", store: store)
      let scratch = Credential(service: "torture.vault", account: "scratch", store: store)
      func readOnce() throws {
        let value = try token.read()
        if value != vaultSecret, report.problems.count < 20 {
          report.problems.append("read \(value?.utf8.count ?? -1) bytes, not the secret's 65536")
        }
      }
      for _ in 0..<max(count / 20, 1) { try readOnce() }
      report.warmResident = residentBytes()
      for round in 0..<count {
        try readOnce()
        if round % 100 == 99 {
          try scratch.save("round \(round)")
          _ = try Credential.accounts(service: "torture.vault", store: store)
          _ = store.availability()
        }
        report.reads += 1
      }
      try scratch.delete()
      report.resident = residentBytes()
    } catch {
      report.problems.append("stopped: \(error)")
    }
    print(String(decoding: (try? JSONEncoder().encode(report)) ?? Data(), as: UTF8.self))
  }

  /// The scenario: 20,000 reads (2,000 with `--quick`) of a 64 KiB secret from a real OpenBao, memory flat.
  func vaultReadsScenario(quick: Bool) async -> Outcome {
    let reads = quick ? 2_000 : 20_000
    let limit = 4 << 20
    return await scenario("a daemon reading from OpenBao: memory stays flat") { outcome in
      let server = try await OpenBaoServer.dev()  // killed when the scenario ends, if it fails before its stop
      try await server.run(
        ["kv", "put", "-mount=secret", "splint/torture.vault/token", "value=-"], input: vaultSecret)
      var environment = ProcessInfo.processInfo.environment
      environment["BAO_ADDR"] = server.address
      environment["BAO_TOKEN"] = server.rootToken
      let output = try await Programs.run(
        [CommandLine.arguments[0], "vault-reads", String(reads)], environment: environment, seconds: 900)
      guard let report = try? JSONDecoder().decode(VaultReadsReport.self, from: Data(output.stdout.utf8)) else {
        throw TortureError("vault-reads did not report (exit \(output.status)): \(output.stderr.suffix(2_000))")
      }
      for problem in report.problems { outcome.fail(problem) }
      outcome.operations = report.reads
      let growth = report.resident - report.warmResident
      if growth > limit {
        outcome.fail(String(format: "resident memory grew by %.1f MB (at most 4 MB)", Double(growth) / 1_048_576))
      }
      outcome.figure = String(
        format: "RSS %+.1f MB after %d reads of 64 KiB (and a save, a listing, a check every 100)",
        Double(growth) / 1_048_576, report.reads)
      await server.stop()
    }
  }
#endif
