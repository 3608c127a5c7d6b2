import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SplintSecrets

/// `SecretsProbe` run against the kernel keyring, each time in a user namespace of its own (so that its user and
/// persistent keyrings are new, empty and gone when it ends, and the developer's own are never touched) and in a
/// new session keyring.
enum KernelProbe {
  static let probe = Programs.helper("SecretsProbe")

  /// Why the kernel keyring cannot be used by these tests here, or nil when it can.
  static let problem = Task<String?, Never> {
    do {
      let output = try await Programs.run(["unshare", "--user", "--map-root-user", "keyctl", "show", "@s"])
      if output.status == 0 { return nil }
      return "`unshare --user --map-root-user keyctl show @s` failed (a seccomp filter or no user namespaces?): "
        + output.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    } catch {
      return "\(error)"
    }
  }

  /// Enables a test only where the key retention calls and user namespaces are permitted, and says why not.
  static let required = ConditionTrait.enabled("needs the kernel keyring and user namespaces") {
    guard let problem = await problem.value else { return true }
    print("KernelKeyringStoreTests: skipped, the kernel keyring cannot be used here: \(problem)")
    return false
  }

  /// Runs the probe's `steps` with a ``KernelKeyringStore`` in `keyring` ("persistent", "user" or "session").
  static func run(_ keyring: String, _ steps: [String]) async throws -> ProgramOutput {
    try await Programs.run(
      ["unshare", "--user", "--map-root-user", "keyctl", "session", "-", probe] + steps,
      environment: environment(keyring))
  }

  /// The test's environment, with the probe's store chosen.
  static func environment(_ keyring: String) -> [String: String] {
    ProcessInfo.processInfo.environment.merging(["SPLINT_PROBE_STORE": "kernel-" + keyring]) { $1 }
  }

  /// A `sh` step that runs the probe's `steps` in a session keyring of its own, as a program started from another
  /// login of the same user: another process that does not possess the first one's session keyring.
  static func inAnotherSession(_ steps: [String]) -> String {
    (["keyctl", "session", "-", probe] + steps).map(quoted).joined(separator: " ")
  }

  /// A `sh` step that runs the probe's `steps` in the same session keyring, as another program of the same login.
  static func inTheSameSession(_ steps: [String]) -> String {
    ([probe] + steps).map(quoted).joined(separator: " ")
  }

  /// `text` quoted for the shell.
  static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
  }

  /// `count` bytes as the hexadecimal `save-hex` takes and `read-data` prints, NUL bytes among them.
  static func hex(_ count: Int) -> String {
    (0..<count).map { String(format: "%02x", ($0 * 7) % 256) }.joined()
  }
}

@Suite("KernelKeyringStore, in the kernel's keyrings", KernelProbe.required)
struct KernelKeyringStoreTests {
  typealias Probe = KernelProbe

  @Test(
    "a program in another session reads what one saved, NUL bytes and all; deleting removes it for both",
    arguments: ["persistent", "user"])
  func anotherSessionReadsWhatWasSaved(keyring: String) async throws {
    let other = ["read", "svc", "alice", "read-data", "svc", "bob", "accounts", "svc"]
    let output = try await Probe.run(
      keyring,
      [
        "save", "svc", "alice", "token",
        "save-hex", "svc", "bob", "00ff0000ff",
        "sh", Probe.inAnotherSession(other),
        "delete", "svc", "alice",
        "delete", "svc", "alice",
        "sh", Probe.inAnotherSession(other),
        "availability",
      ])
    #expect(
      output.lines == [
        "ok", "ok",
        "ok token", "ok 00ff0000ff", "ok alice,bob", "ok sh 0",
        "ok", "ok",  // deleting what is not there succeeds
        "ok nil", "ok 00ff0000ff", "ok bob", "ok sh 0",
        "ok available",
      ], "\(output.stderr)")
  }

  @Test("a session's secrets stay in it: a program of the session reads them, one in another session does not")
  func sessionKeyring() async throws {
    let output = try await Probe.run(
      "session",
      [
        "save", "svc", "alice", "token",
        "sh", Probe.inTheSameSession(["read", "svc", "alice"]),
        "sh", Probe.inAnotherSession(["read", "svc", "alice", "accounts", "svc"]),
        "availability",
      ])
    #expect(
      output.lines == ["ok", "ok token", "ok sh 0", "ok nil", "ok ", "ok sh 0", "ok available"], "\(output.stderr)")
  }

  @Test(
    "the user's processes that do not possess the keyring can read its keys, but for the session keyring's",
    arguments: [("persistent", true), ("user", true), ("session", false)])
  func readableByTheUser(keyring: String, readable: Bool) async throws {
    // /proc/keys lists every key of the user that the reader may view, whatever its namespace: a unique service.
    let service = "splint-test.\(UUID().uuidString)"
    let pipe = #"keyctl pipe $((16#$(grep -F " splint:\#(service):alice: " /proc/keys | cut -d" " -f1))) && echo"#
    let output = try await Probe.run(
      keyring, ["save", service, "alice", "token", "sh", "keyctl session - bash -c \(Probe.quoted(pipe))"])
    if readable {
      #expect(output.lines == ["ok", "token", "ok sh 0"], "\(output.stderr)")
    } else {
      #expect(output.lines == ["ok", "ok sh 1"], "\(output.stderr)")
      #expect(output.stderr.contains("Permission denied"))
    }
  }

  @Test("saving replaces the secret; an empty secret, one over 32,767 bytes or names over 4,095 bytes are refused")
  func limits() async throws {
    let longest = String(repeating: "s", count: 4_095 - "splint::a".count)
    let output = try await Probe.run(
      "session",
      [
        "save", "svc", "alice", "one",
        "save", "svc", "alice", "two",
        "read", "svc", "alice",
        "save-hex", "svc", "big", Probe.hex(32_767),
        "read-data", "svc", "big",
        "save-hex", "svc", "big", Probe.hex(32_768),
        "save-hex", "svc", "empty", "",
        "save", longest, "a", "x",
        "read", longest, "a",
        "save", longest + "s", "a", "x",
        "read", longest + "s", "a",
        "delete", longest + "s", "a",
        "read-data", "svc", "big",
        "accounts", "svc",
      ])
    #expect(
      output.lines == [
        "ok", "ok", "ok two",
        "ok", "ok \(Probe.hex(32_767))",
        "error invalidArgument", "error invalidArgument",
        "ok", "ok x",
        "error invalidArgument", "error invalidArgument", "error invalidArgument",
        "ok \(Probe.hex(32_767))",  // the refused save changed nothing
        "ok alice,big",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("1 to 32,767 bytes") && output.stderr.contains("at most 4,095 bytes"))
  }

  @Test("accounts lists this store's keys, sorted and decoded; a key keyctl adds in the same format is read too")
  func accountsAndOtherKeys() async throws {
    let others = [
      "keyctl add user splint:svc:zed z @s",  // as a person would, with keyctl: ours
      "keyctl add user 'splint:svc:%zz' x @s",  // not an escape
      "keyctl add user 'splint:svc:al%3aice' x @s",  // lowercase: not how this store writes it
      "keyctl add user 'splint:svc:%FF' x @s",  // not UTF-8
      "keyctl add user $'splint:svc:\\xff' x @s",  // not UTF-8 either
      "keyctl add user splint:svc:a:b x @s",  // three fields
      "keyctl add user svc:eve x @s",  // someone else's
      "keyctl add logon splint:svc:fay x @s",  // another type
      "keyctl newring splint:svc:ring @s",  // a keyring
    ]
    let output = try await Probe.run(
      "session",
      [
        "save", "svc", "bob", "b",
        "save", "svc", "al:i%ce\t", "a",
        "save", "svc", "carol", "c",
        "save", "other", "dave", "d",
        "sh", others.map { $0 + " >/dev/null" }.joined(separator: " && "),
        "accounts", "svc",
        "read", "svc", "zed",
        "read", "svc", "al:i%ce\t",
        "accounts", "other",
        "sh", "keyctl print %user:splint:svc:al%3Ai%25ce%09",
      ])
    #expect(
      output.lines == [
        "ok", "ok", "ok", "ok", "ok sh 0",
        "ok al:i%ce\t,bob,carol,zed", "ok z", "ok a", "ok dave",
        "a", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("a key revoked or expired counts as absent until saved again; one that may not be read is an error")
  func revokedExpiredAndUnreadableKeys() async throws {
    let output = try await Probe.run(
      "session",
      [
        "save", "svc", "alice", "a",
        "save", "svc", "bob", "b",
        "save", "svc", "carol", "c",
        "sh",
        """
        keyctl revoke %user:splint:svc:alice && keyctl timeout %user:splint:svc:bob 1 && \
        keyctl setperm %user:splint:svc:carol 0x01010000 && sleep 1.2
        """,
        "read", "svc", "alice",
        "read", "svc", "bob",
        "read", "svc", "carol",
        "accounts", "svc",
        "save", "svc", "carol", "new",
        "save", "svc", "alice", "a2",
        "save", "svc", "bob", "b2",
        "read", "svc", "alice",
        "read", "svc", "bob",
        "delete", "svc", "carol",
        "read", "svc", "carol",
      ])
    #expect(
      output.lines == [
        "ok", "ok", "ok", "ok sh 0",
        "ok nil", "ok nil", "error unreadableSecret",
        "ok carol",  // viewable, so listed
        "error storeUnavailable",  // nor may it be written
        "ok", "ok", "ok a2", "ok b2",
        "ok", "ok nil",  // removing it from the keyring needs only the keyring's permission
      ], "\(output.stderr)")
    #expect(output.stderr.contains("keyctl setperm"))
  }

  @Test("a session keyring that was revoked is reported as gone, never as an absent secret")
  func revokedSessionKeyring() async throws {
    let output = try await Probe.run(
      "session",
      [
        "save", "svc", "alice", "a",
        "sh", "keyctl revoke @s",
        "read", "svc", "alice",
        "accounts", "svc",
        "save", "svc", "alice", "b",
        "delete", "svc", "alice",
        "availability",
      ])
    #expect(
      output.lines == [
        "ok", "ok sh 0",
        "error unreadableSecret", "error unreadableSecret",
        "error storeUnavailable", "error storeUnavailable", "error storeUnavailable",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("keyctl new_session"))
  }

  @Test("when the persistent keyring is replaced (it expired), the next read says its secrets are gone, once")
  func replacedPersistentKeyring() async throws {
    let invalidate = "keyctl invalidate $(keyctl get_persistent @s)"
    let output = try await Probe.run(
      "persistent",
      [
        "save", "svc", "alice", "a",
        "sh", invalidate,
        "read", "svc", "alice",
        "read", "svc", "alice",
        "save", "svc", "alice", "b",
        "sh", invalidate,
        "save", "svc", "alice", "c",  // saving into the new one is what the user wants: no error
        "read", "svc", "alice",
        "sh", invalidate,
        "availability",  // does not take the notice away from the next read
        "accounts", "svc",
        "accounts", "svc",
      ])
    #expect(
      output.lines == [
        "ok", "ok sh 0",
        "error unreadableSecret", "ok nil",
        "ok", "ok sh 0", "ok", "ok c",
        "ok sh 0", "ok available", "error unreadableSecret", "ok ",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("persistent_keyring_expiry"))
  }

  @Test(
    "where a seccomp filter refuses add_key and keyctl, as Docker's default profile does, every call says so",
    arguments: ["EPERM", "ENOSYS"])
  func refusedBySeccomp(errno: String) async throws {
    let filter = """
      import errno, os, sys, seccomp
      rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
      for call in ("add_key", "keyctl"):
          rules.add_rule(seccomp.ERRNO(getattr(errno, sys.argv[1])), call)
      rules.load()
      os.execv(sys.argv[2], sys.argv[2:])
      """
    for keyring in ["persistent", "user", "session"] {
      let output = try await Programs.run(
        [
          Programs.python, "-c", filter, errno, Probe.probe,
          "availability", "read", "svc", "a", "save", "svc", "a", "x", "delete", "svc", "a", "accounts", "svc",
        ], environment: Probe.environment(keyring))
      #expect(output.lines == Array(repeating: "error storeUnavailable", count: 5), "\(output.stderr)")
      #expect(output.stderr.contains("allows add_key and keyctl") && output.stderr.contains(errno))
    }
  }

  @Test("a full key quota is reported with the limits and how to raise them; what was saved is still there")
  func quota() async throws {
    // As a user other than root (the quota is per user, root's is large), in a user namespace of its own, whose
    // keyrings go when it ends. A user ID of its own, so that a run beside this one does not share the quota.
    let maxbytes = try String(contentsOfFile: "/proc/sys/kernel/keys/maxbytes", encoding: .utf8)
    let limit = try #require(Int(maxbytes.trimmingCharacters(in: .whitespacesAndNewlines)))
    guard limit * 2 / 5 <= 32_767 else {
      print("KernelKeyringStoreTests.quota: skipped, maxbytes (\(limit)) is larger than three secrets can fill")
      return
    }
    let secret = Probe.hex(limit * 2 / 5)
    let user = String(200_000 + Int(getpid()) % 100_000)
    // The probe runs from a copy in a private tmpfs (RootNamespace), which that user can reach wherever the checkout
    // is: a home of mode 0700, or a directory bubblewrap made 0700 in script/test-distro's root.
    let steps =
      ["save-hex", "svc", "a", secret, "save-hex", "svc", "b", secret, "save-hex", "svc", "c", secret]
      + ["read-data", "svc", "b", "accounts", "svc"]
    let output = try await RootNamespace.run(
      """
      SPLINT_PROBE_STORE=kernel-session LLVM_PROFILE_FILE=/dev/null setpriv --reuid=\(user) --regid=\(user) \\
        --clear-groups unshare --user --map-root-user keyctl session - "$probe" \(steps.joined(separator: " "))
      """, helpers: ["probe": Probe.probe])
    #expect(output.lines == ["ok", "ok", "error storeUnavailable", "ok \(secret)", "ok a,b"], "\(output.stderr)")
    #expect(output.stderr.contains("EDQUOT") && output.stderr.contains("kernel.keys.maxbytes="))
  }

  @Test("saving, reading and deleting thousands of times does not grow the process", arguments: ["persistent", "user"])
  func memory(keyring: String) async throws {
    let output = try await Probe.run(keyring, ["cycle", "5000", "svc", "memory"])
    // What the store said, when a round failed, is on standard error.
    let growth = try #require(Int(output.lines.first?.dropFirst("ok ".count) ?? ""), "\(output.stdout)\(output.stderr)")
    // After 5,000 rounds of warming up, 5,000 more grow the resident set by less than 1 MiB: a 4 KiB secret
    // kept by each round would be 20 MiB.
    #expect(growth < 1_024, "grew by \(growth) KiB")
  }
}

/// The kernel's keyring calls, answered from memory for one keyring (ID 1) and failing as told: a stand-in for what
/// the real kernel shows only by chance (a race with another process) or elsewhere (a container that refuses).
final class FakeKernel: KeyringCalls {
  private struct State {
    var keys: [KeySerial: (description: String, payload: Data)] = [:]
    var next: KeySerial = 100
    var failures: [KeyringFailure.Call: Int32] = [:]
  }

  private let state = Mutex(State())

  /// From now on, `call` fails with `errno`.
  func fail(_ call: KeyringFailure.Call, with errno: Int32) {
    state.withLock { $0.failures[call] = errno }
  }

  private func check(_ call: KeyringFailure.Call, _ subject: KeySerial) throws(KeyringFailure) {
    if let errno = state.withLock({ $0.failures[call] }) {
      throw KeyringFailure(call: call, subject: subject, errno: errno)
    }
  }

  func keyringID(_ special: KeySerial) throws(KeyringFailure) -> KeySerial {
    try check(.getKeyringID, special)
    return 1
  }

  func persistentKeyring(linkingInto keyring: KeySerial) throws(KeyringFailure) -> KeySerial {
    try check(.getPersistent, keyring)
    return 1
  }

  func link(_ key: KeySerial, into keyring: KeySerial) throws(KeyringFailure) {
    try check(.link, keyring)
  }

  func unlink(_ key: KeySerial, from keyring: KeySerial) throws(KeyringFailure) {
    try check(.unlink, key)
    state.withLock { _ = $0.keys.removeValue(forKey: key) }
  }

  func keys(in keyring: KeySerial) throws(KeyringFailure) -> [KeySerial] {
    try check(.list, keyring)
    return state.withLock { $0.keys.keys.sorted() }
  }

  func describe(_ key: KeySerial) throws(KeyringFailure) -> KeyDescription {
    try check(.describe, key)
    let description = state.withLock { $0.keys[key]?.description } ?? ""
    return KeyDescription(type: "user", description: description)
  }

  func read(_ key: KeySerial) throws(KeyringFailure) -> Data {
    try check(.read, key)
    return state.withLock { $0.keys[key]?.payload } ?? Data()
  }

  func add(_ description: String, payload: Data, to keyring: KeySerial) throws(KeyringFailure) -> KeySerial {
    try check(.add, keyring)
    return state.withLock { state in
      let key = state.keys.first { $0.value.description == description }?.key ?? state.next
      state.next += 1
      state.keys[key] = (description, payload)
      return key
    }
  }

  func setPermissions(_ permissions: UInt32, of key: KeySerial) throws(KeyringFailure) {
    try check(.setPermissions, key)
  }
}

@Suite("KernelKeyringStore's errors and key descriptions, with a stand-in for the kernel")
struct KernelKeyringErrorTests {
  @Test("each failure of a kernel call becomes the error that says what happened and what to do")
  func errorsNameTheRemedy() {
    typealias Case = (errno: Int32, call: KeyringFailure.Call, keyring: KernelKeyringStore.Keyring, reading: Bool)
    let cases: [(Case, CredentialError.Code, [String])] = [
      ((EPERM, .getKeyringID, .session, true), .storeUnavailable, ["(EPERM)", "Docker", "allows add_key and keyctl"]),
      ((ENOSYS, .add, .user, false), .storeUnavailable, ["add_key (ENOSYS)", "CONFIG_KEYS", "another store"]),
      ((EOPNOTSUPP, .getPersistent, .persistent, true), .storeUnavailable, ["CONFIG_PERSISTENT_KEYRINGS", ".user"]),
      ((EDQUOT, .add, .persistent, false), .storeUnavailable, ["EDQUOT", "maxkeys", "root_maxbytes", "sysctl -w"]),
      ((EACCES, .read, .user, true), .unreadableSecret, ["ID 42", "keyctl setperm 42 0x3f3f0000", "keyctl unlink 42"]),
      ((EACCES, .add, .session, false), .storeUnavailable, ["add_key: EACCES", "Remove that key"]),
      ((EACCES, .setPermissions, .user, false), .storeUnavailable, ["KEYCTL_SETPERM", "Remove that key"]),
      ((EACCES, .list, .user, true), .storeUnavailable, ["user keyring does not let", "SELinux"]),
      ((EKEYREVOKED, .list, .session, true), .unreadableSecret, ["session keyring", "was revoked", "new_session"]),
      ((EKEYEXPIRED, .getKeyringID, .user, false), .storeUnavailable, ["user keyring", "expired", "new user keyring"]),
      ((ENOKEY, .list, .persistent, true), .unreadableSecret, ["no longer exists", "persistent_keyring_expiry"]),
      ((ENOMEM, .read, .session, true), .unreadableSecret, ["KEYCTL_READ) failed: Cannot allocate memory (errno 12)"]),
      ((ENOMEM, .link, .user, false), .storeUnavailable, ["KEYCTL_LINK) failed", "(errno 12)"]),
    ]
    for (failure, code, phrases) in cases {
      let error = KernelKeyringStore.error(
        KeyringFailure(call: failure.call, subject: 42, errno: failure.errno), in: failure.keyring,
        reading: failure.reading)
      #expect(error.code == code, "\(failure)")
      for phrase in phrases { #expect(error.description.contains(phrase), "\(error)") }
    }
    // Every call is named in the errors, as its manual page names it.
    for call in KeyringFailure.Call.allCases {
      let error = KernelKeyringStore.error(
        KeyringFailure(call: call, subject: 1, errno: EPERM), in: .user, reading: false)
      #expect(error.description.contains("refused \(call.name) ("), "\(error)")
    }
  }

  @Test("a container that refuses the calls: unavailable, and every call says so without touching anything")
  func refused() {
    let kernel = FakeKernel()
    for call in KeyringFailure.Call.allCases { kernel.fail(call, with: EPERM) }
    for keyring in [KernelKeyringStore.Keyring.persistent, .user, .session] {
      let store = KernelKeyringStore(keyring: keyring, calls: kernel)
      let credential = Credential(service: "svc", account: "alice", store: store)
      guard case .unavailable(let reason) = store.availability() else {
        Issue.record("available through refused calls")
        continue
      }
      #expect(reason.code == .storeUnavailable && reason.description.contains("seccomp"))
      #expect(throws: reason) { try credential.read() }
      #expect(throws: reason) { try credential.save("x") }
      #expect(throws: reason) { try credential.delete() }
      #expect(throws: reason) { try Credential.accounts(service: "svc", store: store) }
    }
  }

  @Test("a full quota fails the save alone: what was saved can still be read and deleted")
  func fullQuota() throws {
    let kernel = FakeKernel()
    let store = KernelKeyringStore(keyring: .persistent, calls: kernel)
    let credential = Credential(service: "svc", account: "alice", store: store)
    try credential.save("token")
    kernel.fail(.add, with: EDQUOT)
    #expect(
      throws: KernelKeyringStore.error(
        KeyringFailure(call: .add, subject: 1, errno: EDQUOT), in: .persistent, reading: false)
    ) { try credential.save("longer token") }
    #expect(try credential.read() == "token")
    try credential.delete()
    #expect(try credential.read() == nil)
  }

  @Test("a key removed by another process between listing and reading, or unlinking, is absent, not an error")
  func raceWithAnotherProcess() throws {
    let kernel = FakeKernel()
    let store = KernelKeyringStore(keyring: .user, calls: kernel)
    let credential = Credential(service: "svc", account: "alice", store: store)
    try credential.save("token")
    kernel.fail(.read, with: ENOKEY)
    #expect(try credential.read() == nil)
    kernel.fail(.unlink, with: EKEYREVOKED)
    try credential.delete()
    #expect(try Credential.accounts(service: "svc", store: store) == ["alice"])
  }

  @Test("the store is named for errors and chains, and keeps its secrets in the persistent keyring by default")
  func nameAndDefault() {
    let store = KernelKeyringStore()
    #expect(store.name == "kernel keyring")
    #expect(store.keyring == .persistent)
    #expect(KernelKeyringStore(keyring: .session).keyring.description == "session keyring")
  }

  @Test("descriptions encode service and account so that every pair has its own, which decodes back to it")
  func descriptions() throws {
    let names = [
      ("api.example.com", "alice"), ("a:b", "c"), ("a", "b:c"), ("a%3Ab", "c"), ("%", ":"), ("tab\there", "new\nline"),
      ("ünïcødé ✓", "日本"), ("del\u{7f}", ";semi;colon;"),
    ]
    var seen = Set<String>()
    for (service, account) in names {
      let description = try KernelKeyringStore.description(of: Credential(service: service, account: account))
      #expect(description.hasPrefix("splint:") && seen.insert(description).inserted, "\(description)")
      #expect(description.dropFirst("splint:".count).filter { $0 == ":" }.count == 1, "\(description)")
      #expect(!description.contains { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 }, "\(description)")
      let decoded = try #require(KernelKeyringStore.credentialName(description))
      #expect(decoded.service == service && decoded.account == account)
    }
    #expect(try KernelKeyringStore.description(of: Credential(service: "a:b", account: "%")) == "splint:a%3Ab:%25")
    for foreign in [
      "other:svc:alice", "splint:svc", "splint:a:b:c", "splint:svc:%zz", "splint:svc:%4", "splint:svc:al%3aice",
      "splint:svc:%FF", "splint:sv%63:alice",
    ] {
      #expect(KernelKeyringStore.credentialName(foreign) == nil, "\(foreign)")
    }
  }
}
