import Foundation
import SplintSecrets
import SplintSettings
import Subprocess
import Synchronization
import SystemPackage
import TestSupport

/// Unlocks the login keyring of whichever gnome-keyring owns the Secret Service's name, starting one through D-Bus
/// if none does, and waits until it answers with its default collection unlocked.
///
/// This is how a keyring comes back in real life: a call starts the daemon again, locked, and the login unlocks it
/// with the password. Here the password goes over D-Bus (gnome-keyring's `UnlockWithMasterPassword`, as its
/// control tools do) from Python reading it from the environment, never from argv. `gnome-keyring-daemon
/// --replace` would race a loop that keeps calling: in the moment the old daemon lets go of the name, a call
/// starts another one, locked.
func unlockKeyring() async throws {
  let probe = SecretServiceStore(timeout: .seconds(5))
  let deadline = Date().addingTimeInterval(15)
  var problem = ""
  repeat {
    // A daemon that is still starting, or that another call started a moment ago, may refuse; try again.
    let output = try await Programs.run([Programs.python, "-"], input: Data(unlockScript.utf8))
    let availability = probe.availability()
    if output.status == 0, case .available = availability { return }
    problem =
      output.status == 0
      ? "it reports \(availability)" : output.stderr.split(separator: "\n").last.map(String.init) ?? ""
    usleep(100_000)
  } while Date() < deadline
  throw TortureError("could not unlock the keyring within 15 s: \(problem)")
}

private let unlockScript =
  GnomeKeyringUnlock.python + """
    import os
    from jeepney.io.blocking import open_dbus_connection
    with open_dbus_connection(bus='SESSION') as bus:
        unlock_login(bus, 'org.freedesktop.secrets', os.environ['TORTURE_PASSWORD'])
    """

/// The process ID of the Secret Service now, or nil while nobody owns its name.
func keyringPID() async throws -> Int32? {
  let output = try await Programs.run([
    "dbus-send", "--session", "--print-reply=literal", "--dest=org.freedesktop.DBus", "/",
    "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
  ])
  guard output.status == 0 else { return nil }
  return output.stdout.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}

func concurrentSecrets() async -> Outcome {
  await scenario("16 threads x 200 save/read/delete on distinct accounts") { outcome in
    try await unlockKeyring()
    let start = DispatchTime.now()
    let failures = Mutex<[String]>([])
    let wrong = Mutex(0)
    DispatchQueue.concurrentPerform(iterations: 16) { thread in
      for round in 0..<200 {
        let credential = Credential(service: "torture.threads", account: "thread-\(thread)")
        let secret = "secret-\(thread)-\(round)-\(UUID())"
        do {
          try credential.save(secret)
          if try credential.read() != secret { wrong.withLock { $0 += 1 } }
          try credential.delete()
          if try credential.read() != nil { wrong.withLock { $0 += 1 } }
        } catch {
          failures.withLock { $0.append("thread \(thread) round \(round): \(error)") }
        }
      }
    }
    outcome.operations = 16 * 200 * 3
    for failure in failures.withLock({ $0 }) { outcome.fail(failure) }
    let wrongValues = wrong.withLock { $0 }
    if wrongValues > 0 { outcome.lose("\(wrongValues) reads returned another value", count: wrongValues) }
    outcome.figure = String(format: "%.0f operations/s", Double(outcome.operations) / seconds(since: start))
  }
}

/// Reads `credential` in a loop on a thread of its own until `stop`, recording each outcome and how long it took.
final class ReadLoop: Sendable {
  struct Read { let started: Date; let seconds: Double; let result: Result<String?, CredentialError> }
  let reads = Mutex<[Read]>([])
  let stop = Mutex(false)
  private let done = DispatchSemaphore(value: 0)

  init(_ credential: Credential) {
    Thread { [self] in
      while !stop.withLock({ $0 }) {
        let started = Date()
        let result = Result { () throws(CredentialError) in try credential.read() }
        reads.withLock { $0.append(Read(started: started, seconds: Date().timeIntervalSince(started), result: result)) }
        usleep(5_000)
      }
      done.signal()
    }.start()
  }

  func finish() -> [Read] {
    stop.withLock { $0 = true }
    done.wait()
    return reads.withLock { $0 }
  }
}

func keyringKilledMidLoop() async -> Outcome {
  await scenario("the Secret Service killed and restarted in the middle of a loop") { outcome in
    let timeout = 2.0
    let store = SecretServiceStore(timeout: .seconds(timeout))
    let credential = Credential(service: "torture.restart", account: "a", store: store)
    try await unlockKeyring()
    try await credential.save("before the restart")
    let loop = ReadLoop(credential)
    try await Task.sleep(for: .seconds(1))
    let killed = Date()
    if let pid = try await keyringPID() { kill(pid, SIGKILL) }
    // The loop's next call starts gnome-keyring again through D-Bus, with its keyring locked, as after a crash.
    try await Task.sleep(for: .seconds(1))
    try await unlockKeyring()
    let restarted = Date()
    try await Task.sleep(for: .seconds(2))
    let reads = loop.finish()
    outcome.operations = reads.count
    var gapErrors = Set<String>()
    for read in reads {
      let when = String(format: "a read started %+.2f s after the kill", read.started.timeIntervalSince(killed))
      if read.seconds > timeout + 1 {
        outcome.fail(String(format: "\(when) took %.1f s (the timeout is %.0f s)", read.seconds, timeout))
      }
      switch read.result {
      case .success("before the restart"): break
      case .success(let other): outcome.lose("\(when) returned \(other ?? "nil")")
      case .failure(let error) where read.started > restarted.addingTimeInterval(0.5):
        outcome.fail("\(when), after the restart, failed: \(error)")
      case .failure(let error): gapErrors.insert("\(error)")  // during the gap: a typed error, as it should be
      }
    }
    log("    errors during the gap: \(gapErrors.sorted().joined(separator: "; "))")
    let gap = reads.filter { if case .failure = $0.result { true } else { false } }.count
    outcome.figure = "\(gap) reads failed with a typed error during the gap"
  }
}

func lockedMidLoop() async -> Outcome {
  await scenario("the keyring locked in the middle of a loop") { outcome in
    let credentials = (0..<20).map { Credential(service: "torture.lock", account: "account-\($0)") }
    try await unlockKeyring()
    for credential in credentials { try await credential.save("value of \(credential.account)") }
    var locked = false
    var lockedErrors = 0
    for round in 0..<200 {
      if round == 60 {
        _ = try await Programs.run(["sh", "-c", "secret-tool lock --collection=login >/dev/null 2>&1; true"])
        locked = true
      }
      if round == 140 {
        try await unlockKeyring()
        locked = false
      }
      let credential = credentials[round % credentials.count]
      outcome.operations += 1
      do throws(CredentialError) {
        let value = try await credential.read()
        if value == nil {
          outcome.fail("round \(round): absent while \(locked ? "locked" : "unlocked"), a wrong 'absent'")
        }
        if let value, value != "value of \(credential.account)" { outcome.lose("round \(round): read \(value)") }
      } catch .locked where locked {
        lockedErrors += 1  // as it should be
      } catch {
        outcome.fail("round \(round): \(error) while \(locked ? "locked" : "unlocked")")
      }
    }
    for credential in credentials where (try? await credential.read()) != "value of \(credential.account)" {
      outcome.lose("\(credential.account) does not read back after unlocking")
    }
    // Every read while locked must say so; one that returned the value would mean the lock never took.
    if lockedErrors != 80 { outcome.fail("\(lockedErrors) of the 80 reads while locked said locked") }
    outcome.figure = "\(lockedErrors) of the 80 reads while locked said locked"
  }
}

// MARK: - Security

func security(_ scratch: Scratch) async -> Outcome {
  await scenario("security: file modes, and no secret in files, output or command lines") { outcome in
    let splintctl = ProcessInfo.processInfo.environment["SPLINTCTL"] ?? "splintctl"
    let secret = "torture-secret-\(UUID().uuidString)"
    try await unlockKeyring()

    // Modes of what the settings store creates.
    let directory = scratch.url("modes", "suite")
    let settings = SettingsStore(fileURL: directory.appendingPathComponent("settings.json"))
    try settings.set(.string("not secret"), forKey: "k")
    for (path, mode) in [
      (directory.path, 0o700), (settings.fileURL.path, 0o600), (settings.fileURL.path + ".lock", 0o600),
    ] {
      outcome.operations += 1
      let actual = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
      if actual != mode { outcome.fail("\(path) has mode \(String(actual, radix: 8)), not \(String(mode, radix: 8))") }
    }

    // A store blocked on standard input shows no secret in its command line; then the secret is stored.
    let stored = try await Subprocess.run(
      .path(FilePath(splintctl)), arguments: ["secret", "store", "torture.cli", "alice"], input: .inputWriter,
      output: .discarded, error: .discarded
    ) { execution in
      try await Task.sleep(for: .milliseconds(300))
      let commandLine =
        (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(execution.processIdentifier.value)/cmdline"))) ?? Data()
      outcome.operations += 1
      if commandLine.isEmpty || String(decoding: commandLine, as: UTF8.self).contains(secret) {
        outcome.fail("splintctl's command line holds the secret, or could not be read")
      }
      _ = try await execution.standardInputWriter.write(secret)
      try await execution.standardInputWriter.finish()
    }
    if !stored.terminationStatus.isSuccess { outcome.fail("splintctl secret store ended \(stored.terminationStatus)") }
    try await Credential(service: "torture.library", account: "bob").save(secret)

    // Failing commands say what failed, never with the secret.
    for arguments in [
      ["secret", "store", "--store", "vault", "torture.cli", "alice"], ["secret", "store", "torture.cli"],
      ["set", "--suite", "../x", "k", "v"],
    ] {
      let output = try await Programs.run([splintctl] + arguments, input: Data(secret.utf8))
      outcome.operations += 1
      if output.status == 0 { outcome.fail("\(arguments) succeeded") }
      if (output.stdout + output.stderr).contains(secret) { outcome.fail("\(arguments) printed the secret") }
    }
    var noBus = ProcessInfo.processInfo.environment
    noBus["DBUS_SESSION_BUS_ADDRESS"] = nil
    noBus["XDG_RUNTIME_DIR"] = "/nonexistent"
    let unavailable = try await Programs.run(
      [splintctl, "secret", "store", "s", "a"], input: Data(secret.utf8), environment: noBus)
    outcome.operations += 1
    if (unavailable.stdout + unavailable.stderr).contains(secret) {
      outcome.fail("an unavailable store printed the secret")
    }

    // No file the library, the CLI or the keyring wrote holds it in the clear.
    let environment = ProcessInfo.processInfo.environment
    let roots = [
      "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "TMPDIR", "HOME",
    ]
    .compactMap { environment[$0] }
    let needle = Data(secret.utf8)
    var files = 0
    for root in Set(roots) {
      guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
      for case let relative as String in walker {
        let path = root + "/" + relative
        guard let data = FileManager.default.contents(atPath: path) else { continue }
        files += 1
        if data.range(of: needle) != nil { outcome.fail("\(path) holds the secret") }
      }
    }
    outcome.operations += files
    outcome.figure = "\(files) files searched"
  }
}
