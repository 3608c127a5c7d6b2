import Foundation
import TestSupport
import Testing

/// The paths of the Secret Service specification that gnome-keyring never takes, and replies that break it, each
/// against ``ScriptedSecretService`` in a private D-Bus session.
@Suite("Prompts a person answers, and providers that break the specification")
struct SpecificationPathTests {
  typealias Scripted = ScriptedSecretService

  @Test("accepted prompts: unlocking, creating and deleting each go through, and their results are used")
  func acceptedPrompts() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.accepting),
        // The collection is locked: the create fails, its collection is unlocked through a prompt, and the create
        // itself asks through another.
        "save", "svc", "alice", "token",
        "read", "svc", "alice",
        "sh", Scripted.lock,
        // The unlock prompt's result names what it unlocked.
        "read", "svc", "alice",
        "save", "svc", "alice", "changed",
        "read", "svc", "alice",
        "delete", "svc", "alice",
        "read", "svc", "alice",
        "sh", Scripted.called("Prompt", times: 4),
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok", "ok token", "ok sh 0", "ok token", "ok", "ok changed", "ok", "ok nil", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("dismissed prompts: a create or a delete that asked first says locked, and changes nothing")
  func dismissedPrompts() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.dismissing),
        "save", "svc", "alice", "token",
        "delete", "svc", "bob",
        "read", "svc", "alice",
        "read", "svc", "bob",
      ])
    #expect(output.lines == ["ok sh 0", "error locked", "error locked", "ok nil", "ok kept"], "\(output.stderr)")
  }

  @Test("a provider that offers no encrypted session is refused before any secret crosses the bus, saying why")
  func plainSessionIsRefused() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.plainOnly),
        "availability",
        "read", "svc", "bob",
        "save", "svc", "alice", "token",
        "delete", "svc", "bob",
        "accounts", "svc",
        "read-async", "svc", "bob",
        // Each call asked for the encrypted session, then the plain one libsecret falls back to, and nothing more.
        "sh", Scripted.called("OpenSession", times: 12),
        "sh", "! grep -qx 'GetSecrets\\|CreateItem\\|SetSecret\\|SearchItems' \"$XDG_RUNTIME_DIR/scripted.log\"",
      ])
    #expect(
      output.lines == ["ok sh 0"] + Array(repeating: "error storeUnavailable", count: 6) + ["ok sh 0", "ok sh 0"],
      "\(output.stderr)")
    #expect(output.stderr.contains("the provider offers no encrypted session"), "\(output.stderr)")
    #expect(output.stderr.contains("secrets would cross the session bus unencrypted"))
  }

  @Test("a session whose key the provider gets wrong (KWallet before 6.25) is opened again, once, and the call goes on")
  func sessionKeyMismatch() async throws {
    // The first key offered is refused, the second session's secrets do not decode: each ends in a new session.
    let read = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.flakySession),
        "read", "svc", "bob",
        "read", "svc", "bob",
        "sh", Scripted.called("OpenSession", times: 3),
      ])
    #expect(read.lines == ["ok sh 0", "ok kept", "ok kept", "ok sh 0"], "\(read.stderr)")
    // The second session's SetSecret is refused as naming an unknown session: saved in the third.
    let saved = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.flakySession),
        "save", "svc", "bob", "changed",
        "read", "svc", "bob",
        "sh", Scripted.called("OpenSession", times: 3),
      ])
    #expect(saved.lines == ["ok sh 0", "ok", "ok changed", "ok sh 0"], "\(saved.stderr)")
    // A provider that never agrees: one more session, then the error, never a loop.
    let broken = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.mismatchedSession),
        "read", "svc", "bob",
        "save", "svc", "bob", "changed",
        // The read's session and one more; the save's, which the read left, and one more.
        "sh", Scripted.called("OpenSession", times: 3),
      ])
    #expect(
      broken.lines == [
        "ok sh 0", "error backend secret-error 1", "error backend g-dbus-error-quark 41", "ok sh 0",
      ], "\(broken.stderr)")
    #expect(broken.stderr.contains("A secret did not decode."), "\(broken.stderr)")
    #expect(broken.stderr.contains("Can't find session /org/freedesktop/secrets/session/1"), "\(broken.stderr)")
  }

  @Test("the provider's signals for collections coming and going: no crash and no GLib criticals, reads go on")
  func collectionSignals() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.dismissing),
        "read", "svc", "bob",
        "sh", Scripted.announce,
        // The signals are dispatched by the next operation.
        "read", "svc", "bob",
        "availability",
      ])
    #expect(output.lines == ["ok sh 0", "ok kept", "ok sh 0", "ok kept", "ok available"], "\(output.stderr)")
    #expect(!output.stderr.contains("CRITICAL"), "\(output.stderr)")
  }

  @Test("no collection at all: a save creates the default one through the provider's prompt; reads create nothing")
  func noCollection() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.noCollection),
        "availability",
        "read", "svc", "alice",
        "accounts", "svc",
        "delete", "svc", "alice",
        "sh", Scripted.called("CreateCollection", times: 0),
        // The collection is created (its prompt accepted), labelled and aliased as libsecret makes it, then the item
        // in it (another prompt).
        "save", "svc", "alice", "token",
        "sh", "grep -qx 'collection Default keyring as default' \"$XDG_RUNTIME_DIR/scripted.log\"",
        "read", "svc", "alice",
        "availability",
        // There now: not created again.
        "save", "svc", "bob", "second",
        "read", "svc", "bob",
        "sh", Scripted.called("CreateCollection", times: 1),
      ])
    #expect(
      output.lines == [
        "ok sh 0", "error noDefaultCollection", "ok nil", "ok ", "ok", "ok sh 0", "ok", "ok sh 0", "ok token",
        "ok available", "ok", "ok second", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("no collection, and the prompt to create one cannot be shown: noDefaultCollection, saying what to do")
  func noCollectionHeadless() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.noCollectionHeadless),
        "save", "svc", "alice", "token",
        "save-async", "svc", "alice", "token",
        "read", "svc", "alice",
        "sh", Scripted.called("CreateCollection", times: 2),
        "sh", "! grep -qx CreateItem \"$XDG_RUNTIME_DIR/scripted.log\"",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "error noDefaultCollection", "error noDefaultCollection", "ok nil", "ok sh 0", "ok sh 0",
      ],
      "\(output.stderr)")
    #expect(output.stderr.contains("gnome-keyring-daemon --unlock"), "\(output.stderr)")
  }

  @Test("a prompt left up past the timeout is dismissed, and the call says timedOut")
  func promptDismissedAtTheTimeout() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.hanging),
        // Long enough for a busy machine to reach the prompt (a timeout before it has no prompt to dismiss); the
        // prompt hangs, so the timeout comes all the same.
        "read-timeout", "2000", "svc", "bob",
        "sh", Scripted.called("Dismiss", times: 1),
      ])
    #expect(output.lines == ["ok sh 0", "error timedOut", "ok sh 0"], "\(output.stderr)")
  }

  @Test("oo7-daemon: a locked collection that searches do not see into is unlocked before anything is called absent")
  func oo7LockedCollection() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.oo7),
        // Its searches find nothing while it is locked, but it lists items: unlocked (a prompt), then found.
        "read", "svc", "bob",
        "sh", Scripted.lock,
        "accounts", "svc",
        "sh", Scripted.lock,
        // The existing item gets the new secret; no second item is created beside it.
        "save", "svc", "bob", "changed",
        "read", "svc", "bob",
        "sh", Scripted.lock,
        "delete", "svc", "carol",
        "read", "svc", "carol",
        "sh", Scripted.lock,
        // Absent is still absent, once the collection has been unlocked to be sure.
        "read", "svc", "nobody",
        "sh", Scripted.called("Prompt", times: 5),
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok kept", "ok sh 0", "ok bob,carol", "ok sh 0", "ok", "ok changed", "ok sh 0", "ok", "ok nil",
        "ok sh 0", "ok nil", "ok sh 0",
      ], "\(output.stderr)")
  }

  @Test("oo7-daemon, which forgets a SetSecret when it restarts: a save over a credential outlives the restart")
  func oo7KeepsSaves() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.oo7),
        "save", "svc", "bob", "changed",
        "sh", Scripted.restart,
        "read", "svc", "bob",
        // Bytes now: the item's content type changes, so the create leaves the old item, which is deleted.
        "save-hex", "svc", "bob", "00ff",
        "sh", Scripted.restart,
        "read-data", "svc", "bob",
        "sh", Scripted.called("Delete", times: 1),
        "save-labelled", "svc", "carol", "Carol's", "c2",
        "sh", Scripted.restart,
        "read", "svc", "carol",
        "accounts", "svc",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "ok", "ok sh 0", "ok changed", "ok", "ok sh 0", "ok 00ff", "ok sh 0", "ok", "ok sh 0", "ok c2",
        "ok bob,carol",
      ], "\(output.stderr)")
  }

  @Test("oo7-daemon with no prompter (SSH, CI): its refused prompts mean locked, never absent or a backend error")
  func oo7Headless() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.oo7Headless),
        "read", "svc", "bob",
        "save", "svc", "bob", "x",
        "delete", "svc", "bob",
        "accounts", "svc",
        "read", "svc", "nobody",
        "availability",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "error locked", "error locked", "error locked", "error locked", "error locked", "error locked",
      ], "\(output.stderr)")
  }

  @Test("replies that break the specification are typed errors, never a crash, a hang or a wrong value")
  func brokenReplies() async throws {
    let output = try await PrivateSession.probe(
      .noProvider,
      [
        "sh", Scripted.start(.breaking),
        // Nothing found: whether that proves absence depends on the collections' Locked, which is not a boolean.
        "read", "svc-unused", "nobody",
        // Listed unlocked, but no secret given: asked three times, then absent.
        "read", "empty", "alice",
        "sh", Scripted.called("GetSecrets", times: 3),
        "read", "othersession", "alice",
        "accounts", "badattributes",
        "read", "badreply", "alice",
        // Two items: the newest is chosen by their properties, which break the specification.
        "read", "badproperties", "alice",
        "availability",
      ])
    #expect(
      output.lines == [
        "ok sh 0", "error backend secret-error 1", "ok nil", "ok sh 0", "error backend secret-error 1",
        "error backend secret-error 1",
        "error backend g-io-error-quark 13", "error backend secret-error 1", "error backend secret-error 1",
      ], "\(output.stderr)")
    #expect(output.stderr.contains("An item's properties lack Label, Attributes, Created, Modified or Locked."))
  }
}
