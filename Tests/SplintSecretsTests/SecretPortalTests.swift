import Foundation
import TestSupport
import Testing

@testable import SplintSecrets

/// What the sandbox tests need.
enum PortalSandbox {
  /// What keeps these tests from running here, if anything: a program, or namespaces bubblewrap may not make.
  static let missing: String? = {
    let needed = [
      "/usr/bin/bwrap", "/usr/libexec/xdg-desktop-portal", "/usr/share/xdg-desktop-portal/portals/gnome-keyring.portal",
    ]
    if let absent = needed.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
      return "\(absent) is missing: apt-get install bubblewrap xdg-desktop-portal gnome-keyring (script/bootstrap does)"
    }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/bwrap")
    probe.arguments = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true"]
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return "bwrap does not start" }
    probe.waitUntilExit()
    return probe.terminationStatus == 0 ? nil : "bubblewrap may not make namespaces here (user namespaces are off)"
  }()

}

/// `SecretPortalStore` for real: `SecretsProbe` inside a bubblewrap sandbox that looks like a Flatpak to libsecret
/// and to xdg-desktop-portal (a `/.flatpak-info` naming an app), in a private D-Bus session where gnome-keyring runs
/// and the real xdg-desktop-portal is started by D-Bus activation, with gnome-keyring's Secret portal backend.
@Suite(
  "SecretPortalStore in a bubblewrap Flatpak sandbox, with the real xdg-desktop-portal",
  .serialized,  // each test starts a session, gnome-keyring, the portal and its helpers: one at a time is plenty
  .enabled(
    if: PortalSandbox.missing == nil,
    """
    bubblewrap, xdg-desktop-portal or gnome-keyring's portal file is missing (apt-get install bubblewrap \
    xdg-desktop-portal gnome-keyring), or bubblewrap may not make namespaces here: see PortalSandbox.missing
    """))
struct SecretPortalTests {
  typealias Shell = PrivateSession.Shell

  /// An `sh` step that lets D-Bus start xdg-desktop-portal with gnome-keyring's Secret backend, as a GNOME session
  /// does: the backend's `.portal` file names the desktops it serves.
  static let gnomeDesktop = "dbus-update-activation-environment XDG_CURRENT_DESKTOP=gnome"

  /// An `sh` step that runs `SecretsProbe` with `steps` inside a bubblewrap sandbox that is a Flatpak of `app` to
  /// libsecret and the portal: `/.flatpak-info` names the app and an instance, whose `bwrapinfo.json` in the runtime
  /// directory's `.flatpak` holds the sandbox's process ID, as `flatpak run` leaves them (xdg-desktop-portal 1.20,
  /// Debian 13's, refuses an app without it: "Portal operation not allowed"); its data directory is its own, as
  /// `~/.var/app/<app>/data` is. The host's root is not there: /usr, /etc and the toolchain, read-only, the session
  /// bus's socket, the app's data directory (read-only with `readOnlyData`), and this build (read-only, but for
  /// where coverage profiles go). The runtime directory is the sandbox's own, as in a Flatpak: the host's holds the
  /// document portal's FUSE mount, which a sandbox must not reach past.
  static func sandboxed(_ app: String, readOnlyData: Bool = false, _ steps: [String]) -> String {
    let probe = Programs.helper("SecretsProbe")
    let build = URL(fileURLWithPath: probe).deletingLastPathComponent().path
    let profiles = ProcessInfo.processInfo.environment["LLVM_PROFILE_FILE"].map {
      URL(fileURLWithPath: $0).deletingLastPathComponent().path
    }
    let quoted = ([probe] + steps).map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
    return """
      bus=${DBUS_SESSION_BUS_ADDRESS#unix:path=}; bus=${bus%%,*}
      info="$XDG_RUNTIME_DIR/\(app).flatpak-info"; data="$XDG_RUNTIME_DIR/apps/\(app)/data"; mkdir -p "$data"
      instance=$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); mkdir -p "$XDG_RUNTIME_DIR/.flatpak/$instance"
      printf '[Application]\\nname=%s\\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\\n\\n[Instance]\\ninstance-id=%s\\n' \
        '\(app)' "$instance" >"$info"
      bwrap --tmpfs / --ro-bind /usr /usr --ro-bind /etc /etc --ro-bind /opt /opt \
        --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin \
        --dev /dev --proc /proc --tmpfs /tmp --bind "$bus" "$bus" --ro-bind "\(build)" "\(build)" \
        \(profiles.map { "--bind \"\($0)\" \"\($0)\"" } ?? "") \
        --\(readOnlyData ? "ro-bind" : "bind") "$data" "$data" --ro-bind "$info" /.flatpak-info --dir /run/app --setenv XDG_RUNTIME_DIR /run/app \
        --setenv HOME "$data" --setenv XDG_DATA_HOME "$data" --unsetenv SPLINT_CREDENTIAL_STORES \
        --die-with-parent --info-fd 3 \(quoted) 3>"$XDG_RUNTIME_DIR/.flatpak/$instance/bwrapinfo.json"
      """
  }

  /// A command that prints the process ID of the portal on this session's bus: the owner of its name, not a pattern
  /// (which would match the shell that looks for it).
  static let portalPID = """
    dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.portal.Desktop | awk '{print $2}'
    """

  /// The app's keyring file, as libsecret keeps it in the app's data directory.
  static func keyringFile(of app: String) -> String { "$XDG_RUNTIME_DIR/apps/\(app)/data/keyrings/default.keyring" }

  @Test(
    "inside the sandbox: round trip, bytes with NUL, overwrite, accounts, delete, async, status; none of it outside")
  func roundTripInsideTheSandbox() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "save", "svc", "host", "on the host",
        "sh",
        Self.sandboxed(
          "org.example.SplintA",
          [
            "availability",
            "save-hex", "svc", "alice", "6f6e650074776f00",
            "read-data", "svc", "alice",
            "save", "svc", "alice", "replaced",
            "read", "svc", "alice",
            "save-async", "svc", "bob", "second",
            "read-async", "svc", "bob",
            "accounts", "svc",
            "accounts-async", "svc",
            "read", "svc", "host",
            "delete", "svc", "alice",
            "delete-async", "svc", "bob",
            "read", "svc", "alice",
            "accounts", "svc",
            "save", "svc", "carol", "kept",
            "sh", "'\(Programs.helper("splintctl"))' secret status",
          ]),
        "sh", "test -s \(Self.keyringFile(of: "org.example.SplintA"))",
        "read", "svc", "carol",
        "accounts", "svc",
        "store", "secret-portal",
        "availability",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok",
        "ok available",
        "ok", "ok 6f6e650074776f00",
        "ok", "ok replaced",
        "ok", "ok second",
        "ok alice,bob", "ok alice,bob",
        "ok nil",
        "ok", "ok", "ok nil", "ok ",
        "ok",
        "Flatpak sandbox: secrets kept through the Secret portal.",
        "Stores, in the order they are asked:",
        "- Secret portal: available",
        "ok sh 0",
        "ok sh 0",
        "ok sh 0",
        "ok nil",
        "ok host",
        "ok Secret portal",
        "error storeUnavailable",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("does not run in a Flatpak or Snap sandbox"))
  }

  @Test("another app finds none of the first app's secrets, and its own do not touch them")
  func anotherAppCannotRead() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["save", "svc", "alice", "first app"]),
        "sh",
        Self.sandboxed(
          "org.example.SplintB", ["read", "svc", "alice", "accounts", "svc", "save", "svc", "alice", "second app"]),
        "sh", Self.sandboxed("org.example.SplintA", ["read", "svc", "alice"]),
        "sh", Self.sandboxed("org.example.SplintB", ["read", "svc", "alice"]),
      ])
    #expect(
      output.lines == [
        "ok sh 0",
        "ok", "ok sh 0",
        "ok nil", "ok ", "ok", "ok sh 0",
        "ok first app", "ok sh 0",
        "ok second app", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("the store contract holds inside the sandbox, and a daemon's loop does not grow the process")
  func conformanceAndMemory() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh",
        Self.sandboxed(
          "org.example.SplintA", ["store", "secret-portal", "conformance", "cycle", "300", "svc", "loop"]),
      ])
    #expect(output.lines.prefix(3) == ["ok sh 0", "ok Secret portal", "ok conforms"], "\(output.stderr)")
    let growth = try #require(output.lines.dropFirst(3).first.flatMap { Int($0.dropFirst(3)) }, "\(output.lines)")
    #expect(growth < 512, "300 rounds of save, read and delete grew the process by \(growth) KiB")
  }

  @Test("without the portal, a sandboxed app's store is unavailable, says what to install, and reaches no keyring")
  func withoutThePortal() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh",
        Self.sandboxed(
          "org.example.SplintA",
          ["availability", "read", "svc", "alice", "store", "secret-portal", "save", "svc", "alice", "x"]),
      ])
    #expect(
      output.lines == [
        "error storeUnavailable", "error storeUnavailable", "ok Secret portal", "error storeUnavailable", "ok sh 0",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("the Secret portal (org.freedesktop.portal.Secret) does not answer"))
    #expect(output.stderr.contains("apt-get install xdg-desktop-portal gnome-keyring"))
    #expect(output.stderr.contains("--talk-name=org.freedesktop.secrets"))
  }

  @Test("a portal that refuses the master secret (the login keyring locked, no prompt possible) is portalRefused")
  func refusedMasterSecret() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Shell.lock,
        "sh", Self.sandboxed("org.example.SplintA", ["read", "svc", "alice", "save", "svc", "alice", "x"]),
      ])
    #expect(
      output.lines == ["ok sh 0", "ok sh 0", "error portalRefused", "error portalRefused", "ok sh 0"],
      "\(output.stderr)")
    #expect(output.stderr.contains("did not give this Flatpak app its master secret (user interaction failed)"))
  }

  @Test("a portal that hangs ends in timedOut at the store's timeout")
  func hungPortal() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["availability"]),
        "sh", "kill -STOP $(\(Self.portalPID))",
        "sh", Self.sandboxed("org.example.SplintA", ["store", "secret-portal:1", "read", "svc", "alice"]),
        "sh", "kill -CONT $(\(Self.portalPID))",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok available", "ok sh 0", "ok sh 0", "ok Secret portal", "error timedOut", "ok sh 0", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("an app keyring file that is not one is unreadableSecret, names the file, and is left as it is")
  func brokenKeyringFile() async throws {
    let file = Self.keyringFile(of: "org.example.SplintA")
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["save", "svc", "alice", "token"]),
        "sh", "echo garbage >\(file)",
        "sh", Self.sandboxed("org.example.SplintA", ["read", "svc", "alice", "save", "svc", "alice", "x"]),
        "sh", "grep -qx garbage \(file)",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok", "ok sh 0", "ok sh 0", "error unreadableSecret", "error unreadableSecret", "ok sh 0", "ok sh 0",
      ], "\(output.stderr)")
    #expect(
      output.stderr.contains(
        "apps/org.example.SplintA/data/keyrings/default.keyring, is not a keyring libsecret can read (file header mismatch)"
      ))
  }

  @Test("a cancelled task ends a call that waits for the portal, with cancelled")
  func cancelledWhileThePortalHangs() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["availability"]),
        "sh", "kill -STOP $(\(Self.portalPID))",
        "sh", Self.sandboxed("org.example.SplintA", ["read-cancel", "300", "svc", "alice"]),
        "sh", "kill -CONT $(\(Self.portalPID))",
      ])
    #expect(
      output.lines == ["ok sh 0", "ok available", "ok sh 0", "ok sh 0", "error cancelled", "ok sh 0", "ok sh 0"],
      "\(output.stderr)")
  }

  @Test("an attempt to open the keyring that gets no answer is left behind and made again, within the timeout")
  func unansweredAttemptIsMadeAgain() async throws {
    // gnome-keyring, the portal's backend, frozen: the portal answers libsecret's request only once it thaws, three
    // seconds on, after the first attempt's two seconds of patience; libsecret 0.20.5 misses answers the same way.
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["availability"]),  // the portal runs; the next asks it again
        "sh", "kill -STOP $(\(Shell.providerPID)); (sleep 3; kill -CONT $(\(Shell.providerPID))) >/dev/null 2>&1 &",
        "sh", Self.sandboxed("org.example.SplintA", ["store", "secret-portal:20", "save", "svc", "alice", "late"]),
        "sh", Self.sandboxed("org.example.SplintA", ["read", "svc", "alice"]),
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok available", "ok sh 0", "ok sh 0", "ok Secret portal", "ok", "ok sh 0", "ok late", "ok sh 0",
      ],
      "\(output.stderr)")
  }

  @Test("an app data directory that cannot be written fails a save with the file system's words; reads still work")
  func readOnlyDataDirectory() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Self.gnomeDesktop,
        "sh", Self.sandboxed("org.example.SplintA", ["save", "svc", "alice", "kept"]),
        "sh",
        Self.sandboxed(
          "org.example.SplintA", readOnlyData: true, ["read", "svc", "alice", "save", "svc", "alice", "x"]),
      ])
    #expect(
      output.lines == ["ok sh 0", "ok", "ok sh 0", "ok kept", "error backend g-io-error-quark 21", "ok sh 0"],
      "\(output.stderr)")
    #expect(output.stderr.contains("Read-only file system"))
  }

  @Test("outside a sandbox the default chain is the Secret Service's, as before")
  func outsideNothingChanges() {
    #expect(!SecretPortalStore.isSandboxed)
    #expect(DefaultCredentialStore.defaultChain == ["delivered", "secret-service"])
    #expect(throws: Never.self) { try DefaultCredentialStore.chain(named: ["secret-portal"]) }
  }
}
