import Foundation
import LibSecretFloor
import SplintSecrets
import TestSupport

// "A daemon's week in a minute": the paths a long-running program repeats, through the public API, in one process
// whose resident memory is measured after a warm-up and at the end. The process is a child of the suite
// (`SplintTorture daemon-week`), so that nothing the other scenarios did counts.

/// What `daemon-week` reports, as one JSON object on standard output.
struct WeekReport: Codable {
  struct Phase: Codable {
    let name: String
    let operations: Int
    /// Resident memory after the phase, in bytes.
    let resident: Int
  }
  var warmResident = 0
  var phases: [Phase] = []
  var problems: [String] = []
  var operations: Int { phases.reduce(0) { $0 + $1.operations } }
}

/// The process's resident memory now, in bytes (VmRSS).
func residentBytes() -> Int {
  let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
  let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
  return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

/// The secret the week reads: 64 KiB of text.
private let weekSecret = String((0..<65_536).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })

/// `SplintTorture daemon-week READS`: the week, with READS reads of the 64 KiB secret and the other operations in
/// proportion (for 20,000 reads: 2,000 async reads, 2,000 rounds of save, save again and delete, 2,000 listings and
/// availability checks, 500 reads while locked, 50 reads that time out and 50 that are cancelled, 200 reads across a provider restart).
/// Prints a ``WeekReport``.
func daemonWeek(reads: Int) async {
  var report = WeekReport()
  do {
    try await runWeek(reads: reads, &report)
  } catch {
    report.problems.append("stopped: \(error)")
  }
  let data = (try? JSONEncoder().encode(report)) ?? Data()
  print(String(decoding: data, as: UTF8.self))
}

private func runWeek(reads: Int, _ report: inout WeekReport) async throws {
  let token = Credential(service: "torture.week", account: "token")
  let scratch = Credential(service: "torture.week", account: "scratch")
  var problems: [String] = []
  func expect(_ condition: Bool, _ problem: @autoclosure () -> String) {
    if !condition && problems.count < 20 { problems.append(problem()) }
  }
  defer { report.problems += problems }

  func readTokens(_ count: Int) throws {
    for round in 0..<count {
      let value = try token.read()
      expect(value == weekSecret, "read \(round) returned \(value.map { "\($0.utf8.count) other bytes" } ?? "nil")")
    }
  }
  func readTokensAsync(_ count: Int) async throws {
    for round in 0..<count {
      let value = try await token.readData()
      expect(value == Data(weekSecret.utf8), "async read \(round) returned something else")
    }
  }
  func saveAndDelete(_ count: Int) throws {
    for round in 0..<count {
      // Created (text, or bytes), replaced in place, then deleted.
      if round.isMultiple(of: 2) { try scratch.save("scratch \(round)") } else { try scratch.save(Data([0, 1, 2])) }
      try scratch.save("replaced \(round)")
      try scratch.delete()
    }
    expect(try scratch.read() == nil, "the scratch credential survived its deletes")
  }
  func listAccounts(_ count: Int) throws {
    for _ in 0..<count {
      let accounts = try Credential.accounts(service: "torture.week")
      expect(accounts == ["token"], "accounts listed \(accounts)")
      let availability = Credential.availability()
      expect(availability.isAvailable, "availability said \(availability)")
    }
  }
  func readWhileLocked(_ count: Int) async throws {
    _ = try await Programs.run(["sh", "-c", "secret-tool lock --collection=login >/dev/null 2>&1; true"])
    for round in 0..<count {
      do throws(CredentialError) {
        let value = try await token.read()
        expect(false, "read \(round) while locked returned \(value == nil ? "nil" : "the secret")")
      } catch {
        expect(error == .locked, "read \(round) while locked failed with \(error)")
      }
    }
    try await unlockKeyring()
  }
  func interruptedReads(_ count: Int) async throws {
    // A provider that hangs: reads end by their timeout, or by their task's cancellation.
    guard let pid = try await keyringPID() else { throw TortureError("no Secret Service to freeze") }
    kill(pid, SIGSTOP)
    defer { kill(pid, SIGCONT) }
    let hasty = Credential(
      service: "torture.week", account: "token", store: SecretServiceStore(timeout: .milliseconds(20)))
    for round in 0..<count {
      do throws(CredentialError) {
        _ = try await hasty.read()
        expect(false, "read \(round) from a frozen provider returned")
      } catch {
        expect(error == .timedOut, "read \(round) from a frozen provider failed with \(error)")
      }
      let task = Task { try await token.read() }
      try await Task.sleep(for: .milliseconds(2))
      task.cancel()
      let result = await task.result
      let cancelled = if case .failure(let error as CredentialError) = result { error == .cancelled } else { false }
      expect(cancelled, "cancelled read \(round) ended with \(result)")
    }
  }
  func readsAcrossARestart(_ count: Int) async throws {
    var failures = 0
    for round in 0..<count {
      if round == count / 4, let pid = try await keyringPID() { kill(pid, SIGKILL) }
      // D-Bus starts gnome-keyring again, locked, at the next call; it is unlocked again halfway.
      if round == count / 2 { try await unlockKeyring() }
      do throws(CredentialError) {
        let value = try await token.read()
        expect(value == weekSecret, "read \(round) across the restart returned something else")
      } catch {
        failures += 1
        expect(round >= count / 4 && round < count / 2, "read \(round), after the restart, failed: \(error)")
      }
    }
    expect(failures > 0, "no read failed while the provider was gone")
  }

  try await unlockKeyring()
  try await token.save(weekSecret)
  try await scratch.delete()

  // The warm-up runs every path once, so that what is made once per process (the connection, GLib's types, the
  // caches of the Swift runtime and of malloc) is in place before the first measurement.
  try readTokens(200)
  try await readTokensAsync(20)
  try saveAndDelete(20)
  try listAccounts(20)
  try await readWhileLocked(5)
  try await interruptedReads(2)
  try await readsAcrossARestart(8)
  report.warmResident = residentBytes()

  let tenth = reads / 10
  let (locked, interrupted, restart) = (max(reads / 40, 5), max(reads / 400, 2), max(reads / 100, 8))
  let phases: [(name: String, operations: Int, run: () async throws -> Void)] = [
    ("read()", reads, { try readTokens(reads) }),
    ("async readData()", tenth, { try await readTokensAsync(tenth) }),
    ("save, save again, delete", tenth * 3, { try saveAndDelete(tenth) }),
    ("accounts and availability", tenth * 2, { try listAccounts(tenth) }),
    ("read() while locked", locked, { try await readWhileLocked(locked) }),
    ("timed out and cancelled reads", interrupted * 2, { try await interruptedReads(interrupted) }),
    ("read() across a provider restart", restart, { try await readsAcrossARestart(restart) }),
  ]
  for phase in phases {
    try await phase.run()
    report.phases.append(.init(name: phase.name, operations: phase.operations, resident: residentBytes()))
  }
}

/// `SplintTorture c-lookups COUNT`: libsecret's own `secret_service_lookup_sync` of the week's secret, COUNT times
/// after a warm-up; prints the resident memory before and after, in bytes.
func cLookups(_ count: Int) {
  for _ in 0..<50 { _ = LibSecretFloor.lookup(service: "torture.week", account: "token") }
  let before = residentBytes()
  for _ in 0..<count { _ = LibSecretFloor.lookup(service: "torture.week", account: "token") }
  print(before, residentBytes())
}

/// The scenario: the week in a child process, and libsecret's lookup loop beside it for comparison.
func daemonsWeek(quick: Bool) async -> Outcome {
  let reads = quick ? 2_000 : 20_000
  let limit = 4 << 20
  return await scenario("a daemon's week in a minute: memory stays flat") { outcome in
    let torture = CommandLine.arguments[0]
    let week = try await Programs.run([torture, "daemon-week", String(reads)], seconds: 900)
    guard let report = try? JSONDecoder().decode(WeekReport.self, from: Data(week.stdout.utf8)) else {
      throw TortureError("daemon-week did not report (exit \(week.status)): \(week.stderr.suffix(2_000))")
    }
    for problem in report.problems { outcome.fail(problem) }
    outcome.operations = report.operations
    var previous = report.warmResident
    for phase in report.phases {
      log(
        String(
          format: "    %@: %d operations, %+.2f MB", phase.name, phase.operations, megabytes(phase.resident - previous))
      )
      previous = phase.resident
    }
    let growth = (report.phases.last?.resident ?? report.warmResident) - report.warmResident
    if growth > limit {
      outcome.fail(String(format: "resident memory grew by %.1f MB (at most 4 MB)", megabytes(growth)))
    }

    // libsecret's own lookup, in a process of its own: a tenth as many reads, for the comparison only.
    let lookups = reads / 10
    let floor = try await Programs.run([torture, "c-lookups", String(lookups)], seconds: 600)
    let figures = floor.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    guard figures.count == 2 else { throw TortureError("c-lookups did not report: \(floor.stderr.suffix(2_000))") }
    let floorGrowth = figures[1] - figures[0]
    outcome.figure = String(
      format:
        "RSS %+.1f MB after %d reads of 64 KiB and the rest; libsecret's C lookup %+.1f MB after %d (%.1f KB a read)",
      megabytes(growth), reads, megabytes(floorGrowth), lookups, Double(floorGrowth) / Double(lookups) / 1024)
  }
}

private func megabytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

// MARK: - Secrets in a core dump

/// `SplintTorture hold-secret SERVICE ACCOUNT COUNT`: reads the credential's bytes COUNT times and keeps the last
/// `Data`; then saves, COUNT times, a text it builds from that one (the marker on its own, which it keeps); prints
/// "ready" and waits to be killed (and, before that, dumped).
func holdSecret(service: String, account: String, count: Int) -> Never {
  let credential = Credential(service: service, account: account)
  let scratch = Credential(service: service, account: account + ".saved")
  var held: Data?
  var text = ""
  do {
    for _ in 0..<count { held = try credential.readData() }
    // The text to save, built in one buffer from the marker alone, so that no copy of the text but the kept one is
    // left behind by its making: padding, the marker, ".saved", padding.
    let secret = held ?? Data()
    // The standard library's search, which reads the Data in place. Foundation's `range(of:)` copies the Data
    // (valgrind --trace-malloc shows a malloc of its size), and that copy, freed unwiped, was a second one in 2 of
    // 15 cores.
    guard let start = secret.firstRange(of: Array(markerPrefix.utf8)) else { throw TortureError("no marker read") }
    let marker = String(decoding: secret[start.lowerBound..<start.lowerBound + markerLength], as: UTF8.self)
    let padding = String(repeating: "-", count: 100)
    text.reserveCapacity(2 * padding.utf8.count + markerLength + 6)
    text += padding
    text += marker
    text += ".saved"
    text += padding
    for _ in 0..<count { try scratch.save(text) }
  } catch {
    print("error \(error)")
    exit(1)
  }
  print("ready \(held?.count ?? 0)")
  fflush(nil)
  while true { withExtendedLifetime(held) { withExtendedLifetime(text) { _ = sleep(60) } } }
}

/// How the secret of the core-dump scenario begins, and how long it is (the prefix and a UUID).
private let markerPrefix = "splint-core-marker-"
private let markerLength = markerPrefix.utf8.count + 36

/// The number of times `needle` occurs in `haystack`.
private func occurrences(of needle: String, in haystack: Data) -> Int {
  var count = 0
  var searched = haystack.startIndex..<haystack.endIndex
  while let found = haystack.range(of: Data(needle.utf8), in: searched) {
    count += 1
    searched = found.upperBound..<haystack.endIndex
  }
  return count
}

/// A process that read a secret a thousand times holds it once, in the `Data` it kept, and one that saved a secret
/// a thousand times holds it once, in the `String` it kept: every copy on the way (the D-Bus messages, libsecret's
/// values, our own) was encrypted, wiped or handed over. Checked in a core dump of the process, taken with gdb's
/// `gcore`.
func secretInACoreDump(_ scratch: Scratch) async -> Outcome {
  await scenario("secrets read and saved 1,000 times appear once in a core dump: where the caller keeps them") {
    outcome in
    try await unlockKeyring()
    let marker = markerPrefix + UUID().uuidString
    let credential = Credential(service: "torture.core", account: "marker")
    // Saved here, not in the reader, so that the reader never had the secret but from the Secret Service. The
    // marker sits in the middle, where malloc's bookkeeping in a freed block does not overwrite it.
    let padding = String(repeating: "-", count: 2_000)
    try await credential.save(Data((padding + marker + padding).utf8))
    defer {
      _ = try? credential.delete()
      _ = try? Credential(service: "torture.core", account: "marker.saved").delete()
    }
    let reader = try await Programs.start(
      [CommandLine.arguments[0], "hold-secret", "torture.core", "marker", "1000"], seconds: nil)
    defer { reader.kill() }
    guard await eventually(within: 120, { reader.stdoutSoFar.hasPrefix("ready") }) else {
      throw TortureError("the reader did not get ready: \(reader.stdoutSoFar)")
    }
    let core = scratch.url("core", "reader")
    try FileManager.default.createDirectory(
      at: core.deletingLastPathComponent(), withIntermediateDirectories: true)
    let dump = try await Programs.run(["gcore", "-o", core.path, String(reader.pid)], seconds: 120)
    let file = core.path + ".\(reader.pid)"
    defer { try? FileManager.default.removeItem(atPath: file) }
    guard dump.status == 0, let image = FileManager.default.contents(atPath: file) else {
      throw TortureError("gcore failed (exit \(dump.status)): \(dump.stderr.suffix(1_000))")
    }
    // The saved text is the marker with ".saved"; the read one is followed by its padding.
    let read = occurrences(of: marker + "-", in: image)
    let saved = occurrences(of: marker + ".saved", in: image)
    outcome.operations = 2_000
    for (what, copies) in [("read", read), ("saved", saved)] as [(String, Int)] where copies != 1 {
      outcome.fail(
        copies == 0
          ? "the core dump lacks the \(what) secret the process kept: the search is broken"
          : "the core dump holds \(copies) copies of the \(what) secret; only the one kept may")
    }
    let megabytes = Int((Double(image.count) / 1_048_576).rounded())
    outcome.figure = "copies of the secret read: \(read), of the secret saved: \(saved), in a \(megabytes) MB core"
  }
}

/// `SplintTorture portal-cycle ROUNDS READS`: through the Secret portal (`SecretPortalStore`, which needs a sandbox:
/// `SNAP_NAME` set will do, outside bubblewrap, where valgrind runs), ROUNDS rounds of save, read, listing and
/// delete of a 4 KiB secret, then READS reads of a secret saved once, each after as many to warm up; prints how many KiB the
/// resident set grew in each, on one line. script/leaks runs it under memcheck.
func portalCycle(rounds: Int, reads: Int) throws {
  let credential = Credential(service: "torture.portal", account: "cycle", store: SecretPortalStore.shared)
  let secret = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
  func read() throws {
    guard try credential.readData() == secret else { throw TortureError("the portal store read back something else") }
  }
  func cycles() throws {
    for _ in 0..<rounds {
      try credential.save(secret)
      try read()
      guard try Credential.accounts(service: "torture.portal", store: SecretPortalStore.shared) == ["cycle"] else {
        throw TortureError("the portal store listed other accounts")
      }
      try credential.delete()
    }
  }
  func readLoop() throws { for _ in 0..<reads { try read() } }
  try cycles()
  var before = residentBytes()
  try cycles()
  let cycled = (residentBytes() - before) / 1024
  try credential.save(secret)
  try readLoop()
  before = residentBytes()
  try readLoop()
  print("\(cycled) \((residentBytes() - before) / 1024)")
  try credential.delete()
}
