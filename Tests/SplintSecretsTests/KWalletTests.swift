import Foundation
import TestSupport
import Testing
import splintctl

/// SecretServiceStore against a third real Secret Service provider: KWallet (kwalletd6, or kwalletd5 where that is
/// the one installed, its Secret Service API on), with a new wallet made through its own first-use dialogs, on a
/// virtual X display and a private D-Bus session. Skipped where neither daemon is installed, or the display tools are
/// missing.
@Suite(
  "KWallet as the Secret Service, in a private D-Bus session",
  .enabled(
    if: KWallet.missing == nil,
    """
    KWallet, secret-tool, xvfb-run, xdotool or xwininfo is missing: apt-get install kwallet6 libqca-qt6-plugins \
    libsecret-tools xvfb xdotool x11-utils (Debian 13), with libkf5wallet-bin libqca-qt5-2-plugins for the first two \
    on Debian 12
    """))
struct KWalletTests {
  @Test("CredentialStoreConformance passes against KWallet")
  func conformance() async throws {
    let expected = ["ok available", "ok conforms"]
    guard let output = try await KWallet.probe(["availability", "conformance"], expecting: expected) else { return }
    #expect(output.lines == expected, "\(output.stderr)")
  }

  @Test("bytes with NUL, text with KeePass-like placeholders and an empty account read back verbatim")
  func verbatim() async throws {
    let expected = [
      "ok", "ok 00ff0041000a", "ok", "ok {REF:T@I:abc} {USERNAME}", "ok", "ok default item", "ok ,bin,ref", "ok",
      "ok nil",
    ]
    guard
      let output = try await KWallet.probe(
        [
          "save-hex", "svc", "bin", "00ff0041000a",
          "read-data", "svc", "bin",
          "save", "svc", "ref", "{REF:T@I:abc} {USERNAME}",
          "read", "svc", "ref",
          "save", "svc", "", "default item",
          "read", "svc", "",
          "accounts", "svc",
          "delete", "svc", "bin",
          "read-data", "svc", "bin",
        ], expecting: expected)
    else { return }
    #expect(output.lines == expected, "\(output.stderr)")
  }

  @Test("secret-tool and SecretServiceStore read what the other stored in KWallet")
  func secretTool() async throws {
    guard let output = try await KWallet.probe(SecretToolBothWays.steps, expecting: SecretToolBothWays.expected)
    else { return }
    #expect(output.lines == SecretToolBothWays.expected, "\(output.stderr)")
  }

  @Test("a closed wallet: locked until a person types its password into KWallet's dialog; dismissed, still locked")
  func locked() async throws {
    let expected = [
      "ok", "ok sh 0", "error locked",
      "ok sh 0", "ok token", "ok available",
      "ok sh 0", "ok sh 0", "error locked",  // dismissed: still locked, never absent
      "ok sh 0", "ok alice",
    ]
    guard
      let output = try await KWallet.probe(
        [
          "save", "svc", "alice", "token",
          "sh", KWallet.lock,
          "availability",
          "sh", KWallet.answerUnlock(),
          "read", "svc", "alice",
          "availability",
          "sh", KWallet.lock,
          "sh", KWallet.answerUnlock(dismissing: true),
          "read", "svc", "alice",
          "sh", KWallet.answerUnlock(),
          "accounts", "svc",
        ], expecting: expected)
    else { return }
    #expect(output.lines == expected, "\(output.stderr)")
  }
}

/// Probe steps that have `secret-tool` and SecretServiceStore each read what the other stored, whichever provider
/// the session runs.
enum SecretToolBothWays {
  static let steps = [
    "sh", "printf 'from secret-tool' | secret-tool store --label tool service svc username tool",
    "read", "svc", "tool",
    "save", "svc", "ours", "from Splint",
    "sh", reads("ours", "from Splint"),
    "save", "svc", "tool", "changed by Splint",
    "sh", reads("tool", "changed by Splint"),
    "sh", "secret-tool clear service svc username ours",
    "read", "svc", "ours",
  ]
  /// An `sh` step that succeeds when `secret-tool lookup` reads `secret` for `account` within two seconds, and says
  /// what it read if not. Once in about twenty runs of KWalletTests, the lookup right after an in-place change did not
  /// read the new secret (what it read was not recorded then); a change that never arrives still fails.
  static func reads(_ account: String, _ secret: String) -> String {
    """
    for _ in $(seq 20); do
      read=$(secret-tool lookup service svc username \(account)); [ "$read" = '\(secret)' ] && exit 0; sleep 0.1
    done
    echo "secret-tool lookup read '$read' for \(account)" >&2; exit 1
    """
  }

  static let expected = [
    "ok sh 0", "ok from secret-tool", "ok", "ok sh 0", "ok", "ok sh 0", "ok sh 0", "ok nil",
  ]
}

/// Starts KWallet for one test and runs `SecretsProbe` against it.
enum KWallet {
  /// The daemon the suite runs: the first of ``Daemon/all`` installed here (kwalletd5 when neither is, for
  /// ``missing`` to name).
  static let daemon = Daemon.all.first { DesktopProvider.missing([$0.name]) == nil } ?? .kwalletd5

  /// The first program the suite needs that is not installed, if any.
  static let missing = DesktopProvider.missing([daemon.name, "secret-tool"] + DesktopProvider.tools)

  static let password = "kwallet-test-password"

  /// Closes the wallet through the Secret Service, which KWallet does at once, without a prompt.
  static let lock = """
    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
      org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/aliases/default >/dev/null
    """

  /// Starts a person who waits for KWallet's dialog that opens the wallet and answers it: presses Escape, or types
  /// the wallet's password and Return. In the background, so that the next step can be the one that prompts.
  static func answerUnlock(dismissing: Bool = false) -> String {
    DesktopProvider.person(
      after: "shown '\(daemon.window(daemon.openDialog))'",
      dismissing
        ? "xdotool key Escape"
        : """
        xdotool mousemove \(daemon.openPasswordField) click 1
        xdotool type --delay 20 '\(password)'
        xdotool key Return
        """)
  }

  /// What KWallet before KDE Frameworks 6.25 (KDE bug 514194; kwalletd5 too) and libsecret say when they did not agree
  /// on a session's key, as happens in about one session in 128 (libsecret opens one per process). libsecret sends
  /// its DH public key without leading zero bytes, and KWallet refuses one shorter than 128 bytes; and KWallet derives
  /// the AES key from the shared secret without its leading zero bytes, where libsecret keeps them. In the second case
  /// the session opens, but no secret crosses it either way until the process ends.
  static let sessionKeyMismatch = [
    "Client public key size is invalid",  // OpenSession refused libsecret's 127-byte key (the next call opens another)
    "Can't find session /org/freedesktop/secrets/session/",  // KWallet could not decrypt a SetSecret or CreateItem
    "(secret-error, code 1)",  // libsecret could not decrypt what GetSecrets returned
  ]

  /// The exit status of a start script whose wallet was not made because of ``sessionKeyMismatch``.
  static let mismatched: Int32 = 75

  /// Runs `SecretsProbe` on SecretServiceStore with `steps`, KWallet serving a new wallet, and returns its output;
  /// nil, with a message, when KWallet cannot start here. Runs it again, at most twice, when its lines are not
  /// `expected` and a process met ``sessionKeyMismatch``, which another process, with another session, does not.
  static func probe(_ steps: [String], expecting expected: [String]) async throws -> ProgramOutput? {
    let started = { try await DesktopProvider.started("KWalletTests") { try await probe(steps) } }
    for _ in 1..<3 {
      guard let output = try await started() else { return nil }
      guard output.lines != expected,
        output.status == mismatched || sessionKeyMismatch.contains(where: output.stderr.contains)
      else { return output }
      print("KWalletTests: run again, KWallet and libsecret did not agree on a session key: \(output.stderr)")
    }
    return try await started()
  }

  private static func probe(_ steps: [String]) async throws -> DesktopProvider.Attempt {
    let sandbox = try Sandbox(home: true)
    defer { sandbox.end() }
    let configuration = URL(fileURLWithPath: sandbox.environment["XDG_CONFIG_HOME"] ?? sandbox.root)
    try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
    // The Secret Service API on, one wallet, kept open until closed.
    try """
    [Wallet]
    Enabled=true
    First Use=false
    Use One Wallet=true
    Close When Idle=false
    Prompt on Open=false

    [org.freedesktop.secrets]
    apiEnabled=true

    """.write(to: configuration.appendingPathComponent("kwalletrc"), atomically: true, encoding: .utf8)

    // The first item stored makes KWallet create its wallet, which it asks a person about: a wizard (the classic
    // blowfish file, then Finish), then the new wallet's password, twice.
    let start = """
      QT_QPA_PLATFORM=xcb \(daemon.name) >"$XDG_RUNTIME_DIR/kwalletd.log" 2>&1 &
      kwalletd=$!
      failed() {
        echo "$1" >&2; xwininfo -root -tree >&2; cat "$XDG_RUNTIME_DIR/kwalletd.log" >&2
        kill -KILL $kwalletd; cat "$XDG_RUNTIME_DIR/created.log" >&2 2>/dev/null
        grep -qF \(sessionKeyMismatch.map { "-e \"\($0)\"" }.joined(separator: " ")) "$XDG_RUNTIME_DIR/created.log" &&
          exit \(mismatched)
        exit \(DesktopProvider.notStarted)
      }
      owned || failed '\(daemon.name) did not take org.freedesktop.secrets'
      printf x | timeout 20 secret-tool store --label created splint-test created 2>"$XDG_RUNTIME_DIR/created.log" &
      store=$!
      shown '\(daemon.window(daemon.wizard))' || failed 'no first-use wizard'
      sleep 0.5; xdotool mousemove \(daemon.classic) click 1; sleep 0.3; xdotool mousemove \(daemon.finish) click 1
      shown '\(daemon.window(daemon.newPassword))' || failed 'no password dialog'
      sleep 0.5; xdotool mousemove \(daemon.newPasswordField) click 1; xdotool type --delay 20 '\(password)'
      xdotool key Tab; xdotool type --delay 20 '\(password)'; sleep 0.3; xdotool key Return
      wait $store && secret-tool clear splint-test created || failed 'no wallet made'
      \(DesktopProvider.runProbe(killing: "$kwalletd"))
      """
    return try await DesktopProvider.run(in: sandbox, start: start, argument: "kwallet", steps)
  }

  /// A KWallet daemon, and where its dialogs are on the 1024x768 display: the sizes `xwininfo -root -tree` shows for its
  /// windows, and the places (x y) clicked in them. Qt centres each dialog on the display.
  struct Daemon {
    /// The program, which is also its windows' class.
    let name: String
    /// The first-use wizard, its "Classic, blowfish encrypted file" choice (the GPG one is chosen at first), and its
    /// Finish button, enabled once the classic file is chosen.
    let wizard: String
    let classic: String
    let finish: String
    /// The new wallet's password dialog, and its first field (Password, then Verify after a Tab).
    let newPassword: String
    let newPasswordField: String
    /// The dialog that opens a closed wallet, and its password field.
    let openDialog: String
    let openPasswordField: String

    /// The pattern `shown` waits for: the line of one of this daemon's windows of `size`.
    func window(_ size: String) -> String { "(\"\(name)\" \"\(name)\")  \(size)" }

    /// KDE Frameworks 6 (Debian 13's kwallet6, KWallet 6.13): the wizard's shorter heading puts its choices higher, and
    /// the dialogs are smaller than kwalletd5's.
    static let kwalletd6 = Daemon(
      name: "kwalletd6", wizard: "500x360", classic: "371 305", finish: "614 501", newPassword: "296x238",
      newPasswordField: "535 345", openDialog: "422x132", openPasswordField: "535 356")
    /// KDE Frameworks 5 (Debian 12's libkf5wallet-bin, KWallet 5.103).
    static let kwalletd5 = Daemon(
      name: "kwalletd5", wizard: "500x360", classic: "361 331", finish: "614 500", newPassword: "314x241",
      newPasswordField: "537 339", openDialog: "422x152", openPasswordField: "537 358")
    /// The daemons the suite knows, the newer first: Debian packages only one of them (kwallet6 replaces
    /// libkf5wallet-bin).
    static let all = [kwalletd6, kwalletd5]
  }
}
