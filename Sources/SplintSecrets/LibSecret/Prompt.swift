// Prompts: what the Secret Service returns in place of a result when a person must agree first (to unlock a
// keyring, to delete or create an item in a locked one). We show them and wait for them ourselves, on a main
// context of our own that is drained before it goes.

import CLibSecretLoader

extension SecretServiceConnection {
  /// Shows the prompt at `path` and waits until it ends. Returns its result, whose type the call that returned the
  /// prompt defines, or nil when it ended without one: dismissed by the person, refused by the provider (headless,
  /// it cannot show one; gnome-keyring completes it dismissed, oo7-daemon answers the Prompt call with an error),
  /// or the provider went away in the middle.
  ///
  /// libsecret 0.20.5 waits forever for a prompt whose provider went away (its task completes with a NULL error,
  /// which GLib refuses); this ends it when the provider's bus name goes. An interruption of `call` dismisses the
  /// prompt and throws why.
  func prompt(_ path: String, call: LibSecretCall) throws(CredentialError) -> Variant? {
    let context = MainContext()
    let outcome = PromptOutcome()
    let bus = self.bus
    let shown = Result { () throws(CredentialError) in
      try context.asThreadDefault { () throws(CredentialError) in
        // Subscribed before the prompt is shown, so that an answer cannot come before anyone listens.
        let completion = SignalSubscription(
          on: bus, sender: owner, interface: SecretServiceAPI.prompt, member: "Completed", path: path
        ) { parameters in outcome.complete(with: Variant(retaining: parameters)) }
        let disappearance = SignalSubscription(
          on: bus, sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
          path: "/org/freedesktop/DBus", arg0: owner
        ) { _ in outcome.end() }
        do throws(CredentialError) {
          _ = try callMethod(
            "Prompt", on: path, of: SecretServiceAPI.prompt, .tuple(.string("")), returning: "()", call: call)
        } catch  where error.code == .backend {
          // The provider refused to show it, and will send no Completed: oo7-daemon does so where it has no
          // prompter to ask (SSH, CI: no graphical session and no `oo7-cli` running) and when its command-line
          // prompt is dismissed. gnome-keyring dismisses such a prompt instead; both mean the same to the caller.
          return
        }
        call.waking(context) {
          while !outcome.ended && call.interruption == nil { context.iterate() }
        }
        // Ended here, so that their ends are queued on `context` before it drains itself and goes.
        _ = consume completion
        _ = consume disappearance
      }
    }
    switch call.interruption {
    case .timedOut:
      dismiss(path)
      throw .timedOut
    case .cancelled:
      dismiss(path)
      throw .cancelled
    case nil:
      try shown.get()
      return outcome.takeResult()
    }
  }

  /// Asks the provider to take the prompt at `path` down. Waits for nothing: a provider whose prompt hangs may not
  /// answer (gnome-keyring waits for its prompter first), and the call that gave up on it has waited long enough.
  private func dismiss(_ path: String) {
    send("Dismiss", to: path, of: SecretServiceAPI.prompt, .tuple())
  }
}

/// How a prompt ended, as its signals tell it. Only the thread waiting for the prompt touches it, from the
/// callbacks of the context it iterates.
private final class PromptOutcome {
  private(set) var ended = false
  private var result: Variant?

  /// `Completed(dismissed: b, result: v)`.
  func complete(with parameters: consuming Variant) {
    guard !ended else { return }
    if parameters.is("(bv)") && !parameters.child(0).boolean { result = parameters.child(1).unboxed }
    ended = true
  }

  /// The provider went away, or the prompt ended without a result.
  func end() { ended = true }

  func takeResult() -> Variant? {
    let taken = result.take()
    return taken
  }
}
