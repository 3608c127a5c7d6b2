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
/// A struct rather than an enum, so that a new situation (a new store brings some) can come in a minor release
/// without breaking anyone's `switch`: compare an error with the static members (`error == .locked`, or
/// `catch .locked`), or its ``code`` with ``Code``'s (`error.code == .invalidArgument`), and keep a `default`.
///
/// Each error says what happened in ``summary`` (one sentence) and what to do in ``remedy``; ``description`` is
/// both on one line, for logs. (A new situation is a case of `Situation`, a ``Code``, and its words in one switch.)
///
/// No error ever carries a secret, and neither does any description.
public struct CredentialError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The situations there are now, for this package's own exhaustive switches (such as `splintctl`'s exit
  /// statuses). Users see ``code``, which can grow.
  package enum Situation: Sendable, Hashable {
    case noSessionBus
    case serviceUnavailable
    case noDefaultCollection
    case locked
    case promptDismissed
    case timedOut
    case cancelled
    case invalidArgument(String)
    case notText
    case backend(domain: String, code: Int, message: String)
    case readOnly(store: String, remedy: String)
    case storeUnavailable(store: String, reason: String)
    case unreadableSecret(String)
    case noStoreAnswered([StoreFailure])
    case invalidConfiguration(String)
    case portalRefused(String)
    case notDelivered(store: String, file: String, directory: String, closeNames: [String])
    case sealed(store: String, servers: [String])
    case unreachable(store: String, reason: String)
    case forbidden(store: String, path: String, capability: String)
    case notLoggedIn(store: String, reason: String)
    case secretIDSpent(store: String)
    case conflict(store: String, path: String)
    case serverError(store: String, reason: String)
  }

  /// Why one store of a chain did not answer, for ``CredentialError/noStoreAnswered(_:)``.
  public struct StoreFailure: Sendable, Hashable, CustomStringConvertible {
    /// The store's name, as ``CredentialStore/name`` gives it.
    public let store: String
    /// Why it did not answer.
    public let error: CredentialError

    /// A store and its failure.
    public init(store: String, error: CredentialError) {
      self.store = store
      self.error = error
    }

    /// The store's name and its error's description (which names the store itself, for a
    /// ``CredentialError/notDelivered(store:file:directory:closeNames:)``).
    public var description: String {
      if case .notDelivered = error.situation { return "\(error)" }
      return "\(store): \(error)"
    }
  }

  /// The situation, with its details.
  package let situation: Situation

  package init(_ situation: Situation) { self.situation = situation }

  /// Which kind of failure an error is, whatever its details: what to compare with when the details do not matter
  /// (`error.code == .invalidArgument`). New codes may come in minor releases.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as its static member is spelled.
    public let description: String

    private init(_ name: String) { description = name }

    /// See ``CredentialError/noSessionBus``.
    public static let noSessionBus = Code("noSessionBus")
    /// See ``CredentialError/serviceUnavailable``.
    public static let serviceUnavailable = Code("serviceUnavailable")
    /// See ``CredentialError/noDefaultCollection``.
    public static let noDefaultCollection = Code("noDefaultCollection")
    /// See ``CredentialError/locked``.
    public static let locked = Code("locked")
    /// See ``CredentialError/promptDismissed``.
    public static let promptDismissed = Code("promptDismissed")
    /// See ``CredentialError/timedOut``.
    public static let timedOut = Code("timedOut")
    /// See ``CredentialError/cancelled``.
    public static let cancelled = Code("cancelled")
    /// See ``CredentialError/invalidArgument(_:)``.
    public static let invalidArgument = Code("invalidArgument")
    /// See ``CredentialError/notText``.
    public static let notText = Code("notText")
    /// See ``CredentialError/backend(domain:code:message:)``.
    public static let backend = Code("backend")
    /// See ``CredentialError/readOnly(store:remedy:)``.
    public static let readOnly = Code("readOnly")
    /// See ``CredentialError/storeUnavailable(store:reason:)``.
    public static let storeUnavailable = Code("storeUnavailable")
    /// See ``CredentialError/unreadableSecret(_:)``.
    public static let unreadableSecret = Code("unreadableSecret")
    /// See ``CredentialError/noStoreAnswered(_:)``.
    public static let noStoreAnswered = Code("noStoreAnswered")
    /// See ``CredentialError/invalidConfiguration(_:)``.
    public static let invalidConfiguration = Code("invalidConfiguration")
    /// See ``CredentialError/portalRefused(_:)``.
    public static let portalRefused = Code("portalRefused")
    /// See ``CredentialError/notDelivered(store:file:directory:closeNames:)``.
    public static let notDelivered = Code("notDelivered")
    /// See ``CredentialError/sealed(store:servers:)``.
    public static let sealed = Code("sealed")
    /// See ``CredentialError/unreachable(store:reason:)``.
    public static let unreachable = Code("unreachable")
    /// See ``CredentialError/forbidden(store:path:capability:)``.
    public static let forbidden = Code("forbidden")
    /// See ``CredentialError/notLoggedIn(store:reason:)``.
    public static let notLoggedIn = Code("notLoggedIn")
    /// See ``CredentialError/secretIDSpent(store:)``.
    public static let secretIDSpent = Code("secretIDSpent")
    /// See ``CredentialError/conflict(store:path:)``.
    public static let conflict = Code("conflict")
    /// See ``CredentialError/serverError(store:reason:)``.
    public static let serverError = Code("serverError")
  }

  /// Which kind of failure this is.
  public var code: Code {
    switch situation {
    case .noSessionBus: .noSessionBus
    case .serviceUnavailable: .serviceUnavailable
    case .noDefaultCollection: .noDefaultCollection
    case .locked: .locked
    case .promptDismissed: .promptDismissed
    case .timedOut: .timedOut
    case .cancelled: .cancelled
    case .invalidArgument: .invalidArgument
    case .notText: .notText
    case .backend: .backend
    case .readOnly: .readOnly
    case .storeUnavailable: .storeUnavailable
    case .unreadableSecret: .unreadableSecret
    case .noStoreAnswered: .noStoreAnswered
    case .invalidConfiguration: .invalidConfiguration
    case .portalRefused: .portalRefused
    case .notDelivered: .notDelivered
    case .sealed: .sealed
    case .unreachable: .unreachable
    case .forbidden: .forbidden
    case .notLoggedIn: .notLoggedIn
    case .secretIDSpent: .secretIDSpent
    case .conflict: .conflict
    case .serverError: .serverError
    }
  }

  /// No D-Bus session bus is reachable, so no Secret Service can be.
  public static let noSessionBus = CredentialError(.noSessionBus)
  /// The session bus works, but nothing on it provides the Secret Service (`org.freedesktop.secrets`), or the
  /// provider went away in the middle of the call.
  public static let serviceUnavailable = CredentialError(.serviceUnavailable)
  /// The Secret Service has no default collection (keyring) to store secrets in, and a save could not have one made:
  /// the provider's prompt to create it (gnome-keyring asks for the new keyring's password) was dismissed or could not
  /// be shown.
  public static let noDefaultCollection = CredentialError(.noDefaultCollection)
  /// The collection holding the secret is locked, and no unlock prompt could be shown.
  public static let locked = CredentialError(.locked)
  /// The Secret Service showed an unlock prompt and it was dismissed.
  public static let promptDismissed = CredentialError(.promptDismissed)
  /// The Secret Service did not finish within the store's timeout (an unanswered prompt, a hung provider).
  public static let timedOut = CredentialError(.timedOut)
  /// The task waiting for the Secret Service was cancelled.
  public static let cancelled = CredentialError(.cancelled)
  /// The stored secret is not UTF-8 text, so ``Credential/read()-1kb2a`` cannot return it as a `String`.
  public static let notText = CredentialError(.notText)

  /// An argument can never be stored; `reason` says which and why. Nothing was sent to the Secret Service.
  public static func invalidArgument(_ reason: String) -> CredentialError { CredentialError(.invalidArgument(reason)) }

  /// Any other failure, as the Secret Service or libsecret reported it (a GLib error domain, code and message).
  public static func backend(domain: String, code: Int, message: String) -> CredentialError {
    CredentialError(.backend(domain: domain, code: code, message: message))
  }

  /// The store keeps secrets that something else delivered (systemd, Docker, Kubernetes), so it cannot save or
  /// delete them; `remedy` says where the secret is changed instead.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - remedy: How to change the secret, in a sentence.
  public static func readOnly(store: String, remedy: String) -> CredentialError {
    CredentialError(.readOnly(store: store, remedy: remedy))
  }

  /// A store other than the Secret Service cannot be used here; `reason` says why and what to do.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - reason: Why, and the remedy, in full sentences.
  public static func storeUnavailable(store: String, reason: String) -> CredentialError {
    CredentialError(.storeUnavailable(store: store, reason: reason))
  }

  /// A secret is there but cannot be a secret (a delivered file that is a FIFO, a directory or too large);
  /// `reason` names it and says what to do.
  public static func unreadableSecret(_ reason: String) -> CredentialError {
    CredentialError(.unreadableSecret(reason))
  }

  /// No store of a chain answered; `failures` says, store by store in the chain's order, why not.
  public static func noStoreAnswered(_ failures: [StoreFailure]) -> CredentialError {
    CredentialError(.noStoreAnswered(failures))
  }

  /// The stores were configured wrongly (an unknown name in `SPLINT_CREDENTIAL_STORES`); `reason` says how.
  public static func invalidConfiguration(_ reason: String) -> CredentialError {
    CredentialError(.invalidConfiguration(reason))
  }

  /// Inside a Flatpak sandbox, the Secret portal did not hand over the app's master secret, which unlocks the app's
  /// own keyring file; `reason` is what the portal said.
  public static func portalRefused(_ reason: String) -> CredentialError { CredentialError(.portalRefused(reason)) }

  /// A store of delivered secrets is set up here but holds no file for the credential: in a chain's
  /// ``noStoreAnswered(_:)``, beside why the other stores did not answer, so that a misnamed delivery (a systemd
  /// credential ID with `.` where `__` belongs) is told rather than hidden behind them.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - file: The file name it reads the credential from.
  ///   - directory: Where it looked.
  ///   - closeNames: The files there whose names are close to `file`, if any.
  public static func notDelivered(
    store: String, file: String, directory: String, closeNames: [String]
  ) -> CredentialError {
    CredentialError(.notDelivered(store: store, file: file, directory: directory, closeNames: closeNames))
  }

  /// The secrets server (OpenBao or HashiCorp Vault) is sealed at every address the store knows: it cannot decrypt
  /// anything until an operator unseals it. A chain of stores stops here rather than read another store's copy.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - servers: The addresses asked, each sealed.
  public static func sealed(store: String, servers: [String]) -> CredentialError {
    CredentialError(.sealed(store: store, servers: servers))
  }

  /// No address of the secrets server answered (refused, no route, no answer within the store's timeout, a TLS
  /// handshake that failed); `reason` says what happened at each. A chain of stores stops here rather than read
  /// another store's copy.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - reason: What happened, and what to check, in full sentences.
  public static func unreachable(store: String, reason: String) -> CredentialError {
    CredentialError(.unreachable(store: store, reason: reason))
  }

  /// The server refused the operation: the login is valid (the store checked), but its policies do not grant
  /// `capability` on `path`.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - path: The API path refused, such as `secret/data/splint/api.example.com/alice`.
  ///   - capability: The capability a policy must grant there: `read`, `create`, `update`, `delete` or `list`.
  public static func forbidden(store: String, path: String, capability: String) -> CredentialError {
    CredentialError(.forbidden(store: store, path: path, capability: capability))
  }

  /// The store has no valid login: none is configured, the token given has expired or was revoked, or the server
  /// refused the login; `reason` says which and what to do.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - reason: Which login failed, why, and the remedy, in full sentences (never the token or secret ID).
  public static func notLoggedIn(store: String, reason: String) -> CredentialError {
    CredentialError(.notLoggedIn(store: store, reason: reason))
  }

  /// The AppRole secret ID this process logged in with before is refused now: it was single-use (or limited in
  /// uses or time) and is spent, so the store cannot log in again once its token expires.
  public static func secretIDSpent(store: String) -> CredentialError { CredentialError(.secretIDSpent(store: store)) }

  /// Another client saved a new version of the secret between this save's read and its write, so the server's
  /// check-and-set refused this one: nothing was changed by it.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - path: The secret's path.
  public static func conflict(store: String, path: String) -> CredentialError {
    CredentialError(.conflict(store: store, path: path))
  }

  /// The secrets server answered with a failure of its own (an internal error, an answer that is not its API's);
  /// `reason` says what it said.
  ///
  /// - Parameters:
  ///   - store: The store's name.
  ///   - reason: What the server answered, in full sentences (never a token or a secret).
  public static func serverError(store: String, reason: String) -> CredentialError {
    CredentialError(.serverError(store: store, reason: reason))
  }

  /// Whether `error` is `pattern`, so that `catch CredentialError.locked` works where the error is untyped.
  public static func ~= (pattern: CredentialError, error: any Error) -> Bool {
    (error as? CredentialError) == pattern
  }

  /// What happened, in a sentence: the first thing to show (`splintctl` prints it on the first line).
  public var summary: String { words.summary }

  /// What to do about it, in full sentences; nil when there is nothing to do.
  public var remedy: String? { words.remedy }

  /// ``summary`` and ``remedy``, on one line, as a daemon logs it. It never holds a secret.
  public var description: String { [summary, remedy].compactMap(\.self).joined(separator: " ") }

  /// What works where there is no desktop session, for the errors that mean there is none.
  private static let headless = """
    hand the program its secrets: as systemd credentials (LoadCredential=), as files in /run/secrets, or in the \
    kernel keyring, with SPLINT_CREDENTIAL_STORES=delivered,kernel-keyring; in CI, run it under `splintctl sandbox`. \
    The SecretsForDaemons guide has the steps.
    """

  /// Each situation's words: the one place a new situation's go (with its ``Situation`` case and its ``Code``).
  private var words: (summary: String, remedy: String?) {
    switch situation {
    case .noSessionBus:
      return (
        "No D-Bus session bus is reachable (DBUS_SESSION_BUS_ADDRESS is unset or points nowhere), so no Secret Service is.",
        "On a desktop, run the program inside the desktop session. Over SSH, on a server or in a container, \(Self.headless)"
      )
    case .serviceUnavailable:
      return (
        """
        No Secret Service is running on the session bus (nothing provides org.freedesktop.secrets), or it stopped in \
        the middle of the call.
        """,
        """
        On a desktop, install one and log in again: gnome-keyring (`sudo apt-get install gnome-keyring`), KeePassXC \
        or KWallet. On a server or in a container, \(Self.headless)
        """
      )
    case .noDefaultCollection:
      return (
        """
        The Secret Service has no default keyring to store secrets in, and none was made: a save asks for one, as \
        libsecret does, and the prompt for the new keyring's password was dismissed or could not be shown (no \
        display).
        """,
        """
        Create one and make it the default (Seahorse: File > New > Password Keyring), or on a headless machine let \
        gnome-keyring create its login keyring: `echo -n PASSWORD | gnome-keyring-daemon --unlock --components=secrets`.
        """
      )
    case .locked:
      return (
        "The keyring is locked.",
        """
        Unlock it and try again: on a desktop, unlock it in Seahorse or log in again; on a headless machine, \
        `echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets`.
        """
      )
    case .promptDismissed:
      return (
        "The keyring is locked, and its unlock prompt was dismissed or could not be shown.",
        "Unlock the keyring (answer the prompt, or use Seahorse) and try again."
      )
    case .timedOut:
      return (
        "The Secret Service did not answer in time (an unanswered unlock prompt, or a provider that hangs).",
        "Answer the prompt or restart the provider, or allow more time with `SecretServiceStore(timeout:)`."
      )
    case .cancelled:
      return (
        "The call to the Secret Service was cancelled because its task was cancelled.",
        "Read the credential again to learn its current state."
      )
    case .invalidArgument(let reason):
      return ("Invalid argument: \(reason)", "Nothing was sent to the Secret Service.")
    case .notText:
      return ("The stored secret is not UTF-8 text.", "Read it as bytes with `readData()`.")
    case .backend(let domain, let code, let message):
      return (
        "The Secret Service failed: \(message) (\(domain), code \(code)).",
        """
        If this persists, check the provider's log, for gnome-keyring `journalctl --user -t gnome-keyring-daemon`.
        """
      )
    case .readOnly(let store, let remedy):
      return ("\(store) delivers its secrets read-only, so this one cannot be saved or deleted here.", remedy)
    case .storeUnavailable(let store, let reason):
      return Self.split("\(store) cannot be used: \(reason)")
    case .unreadableSecret(let reason):
      return Self.split("The secret cannot be read: \(reason)")
    case .noStoreAnswered(let failures):
      return (
        "No store answered (\(failures.map(\.store).joined(separator: ", "))).",
        failures.map(\.description).joined(separator: " ")
      )
    case .invalidConfiguration(let reason):
      return Self.split("The credential stores are configured wrongly: \(reason)")
    case .notDelivered(let store, let file, let directory, let closeNames):
      let close =
        switch closeNames.count {
        case 0: nil as String?
        case 1: "\(closeNames[0]) is there, a close name: rename it \(file)."
        default: "\(closeNames.joined(separator: ", ")) are there, close names: rename the one meant \(file)."
        }
      return (
        """
        \(store) holds no file \(file) in \(directory), the file it reads this credential from (a systemd \
        credential's ID, a container secret's target).
        """,
        close
      )
    case .sealed(let store, let servers):
      return (
        """
        \(store) is sealed (\(servers.joined(separator: ", "))), so no secret can be read or saved until it is \
        unsealed.
        """,
        """
        Ask its operators to unseal it (`bao operator unseal`, or the cluster's auto-unseal). Nothing was read from \
        another store instead.
        """
      )
    case .unreachable(let store, let reason):
      return (
        "\(store) cannot be reached.",
        """
        \(reason) Check that the server runs and that its address (BAO_ADDR or VAULT_ADDR, or the store's \
        configuration) names it. Nothing was read from another store instead.
        """
      )
    case .forbidden(let store, let path, let capability):
      return (
        "\(store) refused to \(capability) \(path): the login is valid, but its policies do not allow it.",
        "Grant it in a policy of the login's role: path \"\(path)\" { capabilities = [\"\(capability)\"] }."
      )
    case .notLoggedIn(let store, let reason):
      return Self.split("\(store) has no valid login: \(reason)")
    case .secretIDSpent(let store):
      return (
        """
        \(store) refused the AppRole secret ID this process logged in with before: it was single-use (or limited in \
        uses or time) and is spent, and the token it gave has expired.
        """,
        """
        Deliver a new secret ID (for a systemd unit, a new vault-secret-id credential, and restart it), or let the \
        role's secret IDs be used again (secret_id_num_uses=0, with a secret_id_ttl).
        """
      )
    case .conflict(let store, let path):
      return (
        """
        Another client saved a new version of \(path) in \(store) between this save's read and its write, so the \
        server's check-and-set refused this save: nothing was changed.
        """,
        "Read the secret again, and save once more if this one should still replace it."
      )
    case .serverError(let store, let reason):
      return Self.split("\(store) failed: \(reason)")
    case .portalRefused(let reason):
      return (
        """
        The Secret portal did not give this Flatpak app its master secret (\(reason)), so its keyring file cannot be \
        opened.
        """,
        """
        The portal's backend keeps that secret in the user's login keyring: unlock it (log in to the desktop, or \
        Seahorse) and try again; if it persists, see the portal's log, `journalctl --user -u xdg-desktop-portal`.
        """
      )
    }
  }

  /// A message whose first sentence says what happened and the rest what to do (the reasons stores give), split
  /// there: after the first ". " that a capital letter or a backtick follows.
  private static func split(_ message: String) -> (summary: String, remedy: String?) {
    var index = message.startIndex
    while let stop = message[index...].firstRange(of: ". ") {
      if let next = message[stop.upperBound...].first, next.isUppercase || next == "`" {
        return (String(message[..<stop.lowerBound]) + ".", String(message[stop.upperBound...]))
      }
      index = stop.upperBound
    }
    return (message, nil)
  }
}
