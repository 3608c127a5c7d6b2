/// Why a ``Credential`` operation failed, with what to do about it.
///
/// Match the situation you handle and let the rest fall through:
///
/// ```swift
/// do {
///   token = try credential.read()
/// } catch .locked, .promptDismissed {
///   showUnlockHint()
/// } catch {
///   print(error)  // a full sentence that names the remedy
/// }
/// ```
///
/// No case ever carries a secret, and neither does any description.
public enum CredentialError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No D-Bus session bus is reachable, so no Secret Service can be.
  case noSessionBus
  /// The session bus works, but nothing on it provides the Secret Service (`org.freedesktop.secrets`), or the
  /// provider went away in the middle of the call.
  case serviceUnavailable
  /// The Secret Service has no default collection (keyring) to store secrets in.
  case noDefaultCollection
  /// The collection holding the secret is locked, and no unlock prompt could be shown.
  case locked
  /// The Secret Service showed an unlock prompt and it was dismissed.
  case promptDismissed
  /// The Secret Service did not finish within the store's timeout (an unanswered prompt, a hung provider).
  case timedOut
  /// The task waiting for the Secret Service was cancelled.
  case cancelled
  /// An argument can never be stored; the text says which and why. Nothing was sent to the Secret Service.
  case invalidArgument(String)
  /// The stored secret is not UTF-8 text, so ``Credential/read()-4yx99`` cannot return it as a `String`.
  case notText
  /// Any other failure, as the Secret Service or libsecret reported it (a GLib error domain, code and message).
  case backend(domain: String, code: Int, message: String)

  /// What happened and what to do, in full sentences.
  public var description: String {
    switch self {
    case .noSessionBus:
      return """
        No D-Bus session bus is reachable, so the Secret Service cannot be reached \
        (DBUS_SESSION_BUS_ADDRESS is unset or points nowhere, as over SSH or in a container). \
        Run the program inside a desktop session, or give it a session bus of its own: \
        `dbus-run-session -- <command>`.
        """
    case .serviceUnavailable:
      return """
        No Secret Service is running on the session bus (nothing provides org.freedesktop.secrets), or it stopped \
        in the middle of the call. Install and start one, for example gnome-keyring: `sudo apt-get install gnome-keyring`, then log in to \
        a desktop session or run `echo -n PASSWORD | gnome-keyring-daemon --unlock --components=secrets`. \
        KeePassXC and KWallet can provide the Secret Service too.
        """
    case .noDefaultCollection:
      return """
        The Secret Service has no default keyring to store secrets in. \
        Create one and make it the default (Seahorse: File > New > Password Keyring), or on a headless machine \
        let gnome-keyring create its login keyring: `echo -n PASSWORD | gnome-keyring-daemon --unlock --components=secrets`.
        """
    case .locked:
      return """
        The keyring is locked. \
        Unlock it and try again: on a desktop, unlock it in Seahorse or log in again; on a headless machine, \
        `echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets`.
        """
    case .promptDismissed:
      return """
        The keyring is locked and its unlock prompt was dismissed or could not be shown. \
        Unlock the keyring (answer the prompt, or use Seahorse) and try again.
        """
    case .timedOut:
      return """
        The Secret Service did not answer in time (an unanswered unlock prompt, or a provider that hangs). \
        Answer the prompt or restart the provider, or allow more time with `SecretServiceStore(timeout:)`.
        """
    case .cancelled:
      return """
        The call to the Secret Service was cancelled because its task was cancelled. \
        Read the credential again to learn its current state.
        """
    case .invalidArgument(let reason):
      return "Invalid argument: \(reason) Nothing was sent to the Secret Service."
    case .notText:
      return "The stored secret is not UTF-8 text. Read it as bytes with `readData()`."
    case .backend(let domain, let code, let message):
      return """
        The Secret Service failed: \(message) (\(domain), code \(code)). \
        If this persists, check the provider's log, for gnome-keyring `journalctl --user -t gnome-keyring-daemon`.
        """
    }
  }
}
