import Foundation
import TestSupport
import Testing

/// The Secret Service in each state users meet, made real: gnome-keyring locked, restarted, stopped, absent, or
/// no bus at all. Each test runs `SecretsProbe` in a D-Bus session of its own (see `PrivateSession`).
@Suite("Failure states, each in a private D-Bus session")
struct FailureStateTests {
  typealias Shell = PrivateSession.Shell

  @Test("a shell step says how it ended: its exit status, or 128 plus the signal that killed it")
  func shellStepsReportTheirEnd() async throws {
    let output = try await PrivateSession.probe(
      .noProvider, ["sh", "exit 3", "sh", "kill -9 $$", "sh", "echo >&2 seen"])
    #expect(output.lines == ["ok sh 3", "ok sh 137", "ok sh 0"], "\(output.stderr)")
    #expect(output.stderr.contains("seen"), "a step's standard error reaches the probe's")
  }

  @Test("a locked collection is reported as locked, never as absent, until it is unlocked")
  func locked() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.lock,
        "read", "svc", "alice",
        "read-data", "svc", "alice",
        "read", "svc", "nobody",
        "save", "svc", "alice", "changed",
        "save", "svc", "bob", "new",
        "delete", "svc", "alice",
        "accounts", "svc",
        "availability",
        "sh", Shell.unlock,
        "read", "svc", "alice",
        "accounts", "svc",
        "availability",
      ])
    #expect(
      output.lines == [
        "ok", "ok sh 0",
        "error locked", "error locked",
        "ok nil",  // nothing matches "nobody": absent is still absent
        "error locked", "error locked", "error locked", "error locked", "error locked",
        "ok sh 0",
        "ok token", "ok alice", "ok available",  // nothing was changed while locked
      ], "\(output.stderr)")
  }

  @Test("with a display, a collection that stays locked means the unlock prompt was dismissed")
  func promptDismissed() async throws {
    // gnome-keyring in this session cannot open the display, so it dismisses its prompt, as a user would.
    let output = try await PrivateSession.probe(
      .unlockedKeyring, display: ":99",
      ["save", "svc", "alice", "token", "sh", Shell.lock, "read", "svc", "alice", "save", "svc", "alice", "x"])
    #expect(output.lines == ["ok", "ok sh 0", "error promptDismissed", "error promptDismissed"], "\(output.stderr)")
  }

  @Test("after gnome-keyring restarts locked, items show only hashed attributes: still locked, never absent")
  func lockedAfterRestart() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "save", "svc", "bob", "other",
        "sh", Shell.restartLocked,
        "read", "svc", "alice",
        "accounts", "svc",
        "sh", Shell.unlock,
        "accounts", "svc",
        "read", "svc", "bob",
      ])
    #expect(
      output.lines == [
        "ok", "ok", "ok sh 0", "error locked", "error locked", "ok sh 0", "ok alice,bob", "ok other",
      ], "\(output.stderr)")
  }

  @Test("the next call after the Secret Service restarts succeeds, in the same process")
  func restart() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.unlock,  // gnome-keyring-daemon --replace --unlock: a new process, a new bus name
        "read", "svc", "alice",
        "save", "svc", "alice", "second",
        "sh", Shell.unlock,
        "accounts", "svc",
        "sh", Shell.unlock,
        "availability",
        "sh", Shell.unlock,
        "read-async", "svc", "alice",
      ])
    #expect(
      output.lines == [
        "ok", "ok sh 0", "ok token", "ok", "ok sh 0", "ok alice", "ok sh 0", "ok available", "ok sh 0", "ok second",
      ], "\(output.stderr)")
  }

  @Test("a killed Secret Service is started again by D-Bus, locked; after unlocking, everything reads back")
  func killed() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.kill,
        "read", "svc", "alice",
        "sh", Shell.unlock,
        "read", "svc", "alice",
      ])
    #expect(output.lines == ["ok", "ok sh 0", "error locked", "ok sh 0", "ok token"], "\(output.stderr)")
  }

  @Test("the Secret Service killed while its unlock prompt is up: locked, nothing hangs, later calls work")
  func killedMidPrompt() async throws {
    // libsecret 0.20.5 leaves a call waiting forever when a prompt ends without a result; ours end.
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.lock,
        "sh", Shell.prompter(.killProvider),
        "read-timeout", "20000", "svc", "alice",  // D-Bus starts gnome-keyring again, locked
        "sh", Shell.prompter(.killProvider),
        "delete", "svc", "alice",
        "sh", Shell.unlock,
        "read", "svc", "alice",
      ])
    #expect(
      output.lines == ["ok", "ok sh 0", "ok sh 0", "error locked", "ok sh 0", "error locked", "ok sh 0", "ok token"],
      "\(output.stderr)")
  }

  @Test("an unlock prompt nobody answers: timedOut, or cancelled with the task; later calls work")
  func unansweredPrompt() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.lock,
        "sh", Shell.prompter(.hang),
        // Long enough for a busy machine to reach the prompt before the timeout or the cancellation; the prompt
        // hangs, so both come all the same, while it is up.
        "read-timeout", "2000", "svc", "alice",
        "read-cancel", "2000", "svc", "alice",
        "sh", Shell.unlock,
        "read", "svc", "alice",
      ])
    #expect(
      output.lines == ["ok", "ok sh 0", "ok sh 0", "error timedOut", "error cancelled", "ok sh 0", "ok token"],
      "\(output.stderr)")
  }

  @Test("a keyring unlocked behind a dismissed prompt reads back, never as absent")
  func unlockedBehindPrompt() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.lock,
        "sh", Shell.prompter(.unlockThenRefuse),
        "read", "svc", "alice",
      ])
    #expect(output.lines == ["ok", "ok sh 0", "ok sh 0", "ok token"], "\(output.stderr)")
  }

  @Test("no Secret Service provider on the bus: serviceUnavailable from every call")
  func noProvider() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "read", "svc", "alice", "save", "svc", "alice", "x", "delete", "svc", "alice", "accounts", "svc",
        "availability",
      ])
    #expect(output.lines == Array(repeating: "error serviceUnavailable", count: 5), "\(output.stderr)")
  }

  @Test("a provider that fails to start: serviceUnavailable")
  func brokenProvider() async throws {
    let output = try await PrivateSession.probe(.brokenProvider, ["read", "svc", "alice", "availability"])
    #expect(output.lines == ["error serviceUnavailable", "error serviceUnavailable"], "\(output.stderr)")
  }

  @Test("no session bus: noSessionBus from every call, and nothing hangs")
  func noBus() async throws {
    let output = try await PrivateSession.probe(
      .noBus,
      [
        "read", "svc", "alice", "save", "svc", "alice", "x", "delete", "svc", "alice", "accounts", "svc",
        "availability", "read-async", "svc", "alice",
      ])
    #expect(output.lines == Array(repeating: "error noSessionBus", count: 6), "\(output.stderr)")
  }

  @Test("a session bus that never answers: timedOut, not noSessionBus, and the next call is bounded too")
  func wedgedBus() async throws {
    let output = try await PrivateSession.probe(
      .wedgedBus, ["read-timeout", "300", "svc", "alice", "read-timeout", "300", "svc", "alice"])
    #expect(output.lines == ["error timedOut", "error timedOut"], "\(output.stderr)")
  }

  @Test(
    "gnome-keyring without a login keyring, headless: no prompt for a new keyring can be shown, so a save says noDefaultCollection"
  )
  func noDefaultCollection() async throws {
    let output = try await PrivateSession.probe(
      .noLoginKeyring,
      [
        "availability", "read", "svc", "alice", "save", "svc", "alice", "x", "accounts", "svc", "delete", "svc", "a",
        "sh", Shell.defaultLabel,
      ])
    #expect(
      output.lines == ["error noDefaultCollection", "ok nil", "error noDefaultCollection", "ok ", "ok", "ok sh 1"],
      "\(output.stderr)")
    #expect(output.stderr.contains("Seahorse"), "\(output.stderr)")
  }

  @Test(
    "gnome-keyring without a login keyring, on a desktop: a save has it ask for a new keyring's password, then stores",
    .enabled(if: Shell.missingForADisplay == nil, "needs xvfb-run, xdotool and xwininfo (script/bootstrap)"))
  func noDefaultCollectionOnADesktop() async throws {
    let output = try await PrivateSession.probe(
      .noLoginKeyringOnADisplay,
      [
        "availability",
        "read", "svc", "alice",  // reads create nothing
        "sh", Shell.defaultLabel,
        "sh", Shell.answerPrompter(typing: "new-keyring-password", twice: true),
        "save", "svc", "alice", "token",
        "sh", Shell.defaultLabel,
        "availability",
        "read", "svc", "alice",
        "sh", "echo \"$(secret-tool lookup service svc username alice)\"",
        "save", "svc", "bob", "second",  // the keyring is there: no prompt
        "read", "svc", "bob",
      ])
    #expect(
      output.lines == [
        "error noDefaultCollection", "ok nil", "ok sh 1", "ok sh 0", "ok", "Default keyring", "ok sh 0",
        "ok available", "ok token", "token", "ok sh 0", "ok", "ok second",
      ], "\(output.stderr)")
  }

  @Test(
    "on a desktop, `splintctl secret search --secret` unlocks through the prompt and prints each item as it is then",
    .enabled(if: Shell.missingForADisplay == nil, "needs xvfb-run, xdotool and xwininfo (script/bootstrap)"))
  func searchShowsItemsUnlocked() async throws {
    let splintctl = "'\(Programs.helper("splintctl"))'"  // quoted: the checkout's path may have spaces
    let search = "\(splintctl) secret search --secret service svc | grep -x 'locked = .*\\|secret = .*'"
    let output = try await PrivateSession.probe(
      .noLoginKeyringOnADisplay,
      [
        "sh", Shell.answerPrompter(typing: "keyring-password", twice: true),
        "save", "svc", "alice", "token",
        "sh", Shell.lockDefault,
        "sh", "\(splintctl) secret search service svc | grep -x 'locked = .*'",
        "sh", Shell.answerPrompter(typing: "keyring-password", twice: false),
        "sh", search,
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok", "ok sh 0", "locked = yes", "ok sh 0", "ok sh 0", "locked = no", "secret = token", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("a Secret Service that hangs: the call ends with timedOut after the store's timeout; later calls work")
  func timeout() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.freeze,
        "read-timeout", "300", "svc", "alice",
        "sh", Shell.thaw,
        "read", "svc", "alice",
      ])
    #expect(output.lines == ["ok", "ok sh 0", "error timedOut", "ok sh 0", "ok token"], "\(output.stderr)")
  }

  @Test("cancelling the task of an async read ends the wait with cancelled; later calls work")
  func cancellation() async throws {
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "save", "svc", "alice", "token",
        "sh", Shell.freeze,
        "read-cancel", "200", "svc", "alice",
        "sh", Shell.thaw,
        "read-async", "svc", "alice",
      ])
    #expect(output.lines == ["ok", "ok sh 0", "error cancelled", "ok sh 0", "ok token"], "\(output.stderr)")
  }
}
