import ArgumentParser
import Dispatch
import SplintSecrets
import SplintSettings
import SplintSystemCalls

#if canImport(Glibc)
  import Glibc
#endif

@main
struct Splintctl: ParsableCommand {
  /// The version of Splint for Linux this is, as `splintctl --version` prints it (see `SplintVersion`).
  static let version = SplintVersion.current

  static let configuration = CommandConfiguration(
    commandName: "splintctl",
    abstract: "Secrets in the Secret Service and settings in JSON files, from a shell.",
    discussion: """
      Secrets (`splintctl secret ...`) are the items secret-tool, Python keyring and go-keyring use: attributes \
      `service` and `username`. Settings (`get`, `set`, `delete`, `list`, `path`, `watch`, and `export`, \
      `import`, `reset` to move them between machines or start over, `schema` to have editors check them) are \
      the JSON files Splint's SettingsStore uses; name one with --suite or --file. `splintctl sandbox -- \
      COMMAND` runs a command with a throw-away Secret Service, as tests in CI need.

      Environment:
        SPLINT_CREDENTIAL_STORES
            The stores secrets are read from, in order, named as --store names
            them and separated by commas; without a Secret Service, on a
            server: delivered,kernel-keyring; on a fleet (a splintctl built
            with SplintFleet): vault, with BAO_ADDR or VAULT_ADDR, and a
            token (BAO_TOKEN, VAULT_TOKEN, ~/.vault-token) or AppRole
            (systemd credentials vault-role-id and vault-secret-id).
        CREDENTIALS_DIRECTORY
            Where systemd puts a service's credentials (LoadCredential=):
            secrets are looked for there first.
        XDG_CONFIG_HOME
            Where --suite NAME's settings are: in NAME/settings.json there
            (in ~/.config when it is unset).
        XDG_CONFIG_DIRS
            Where system-wide defaults are: NAME/settings.json in each of its
            directories, the first wins (in /etc/xdg when it is unset).
        ETCDCTL_ENDPOINTS
            The etcd cluster of the fleet commands when --endpoints is not
            given, as etcdctl reads it (with ETCDCTL_CACERT, ETCDCTL_CERT and
            ETCDCTL_KEY); else the endpoints the machine's copy records.

      Examples:
        Store a token from a pipe (never an argument: ps shows those), and
        read it back:
            printf %s "$TOKEN" | splintctl secret store api.example.com alice
            splintctl secret read api.example.com alice
        Change a setting a daemon follows, and watch its changes:
            splintctl set --suite com.example.sync interval 60
            splintctl watch --suite com.example.sync
        Run a test suite against a throw-away Secret Service:
            splintctl sandbox -- swift test

      Exit status (`splintctl sandbox` exits with its command's status):
        0   success
        1   absent: no such secret or setting; `fleet wait`: not every machine
            held the change in time
        64  usage error: a bad argument, text that is not UTF-8, an empty secret, an invalid suite name
        65  `fleet wait`, `fleet rollout`: a machine left a value out, or
            cannot write its copy
        69  the Secret Service is unavailable or locked (or timed out); a vault
            is sealed, unreachable, or has no valid login
        70  any other failure, such as a settings file that cannot be written,
            or a vault's policy that refuses
        75  a fleet change found the cluster changed since it read it (a key
            changed since `fleet rollback` showed its diff): nothing was
            changed; try again
      """,
    version: version,
    subcommands: [
      SecretCommand.self, GetCommand.self, SetCommand.self, DeleteCommand.self, ListCommand.self,
      PathCommand.self, WatchCommand.self, ExportCommand.self, ImportCommand.self, ResetCommand.self,
      SchemaCommand.self, SandboxCommand.self,
    ] + fleetCommands
  )

  /// Runs the command the arguments name, once every argument is known to be UTF-8 (see ``UTF8Input``).
  ///
  /// Synchronous, unlike `AsyncParsableCommand`'s: the commands that only read or write (`get`, `set`, `secret
  /// read`, `--help`, ...) run on the main thread, and Swift concurrency, with its threads, starts only for the two
  /// that wait for something (`watch`, `sandbox`).
  static func main() {
    // Before the fast path too: its `secret read` may name the vault in SPLINT_CREDENTIAL_STORES.
    FleetStores.register()
    let arguments: [String]
    let command: any ParsableCommand
    do {
      arguments = try UTF8Input.arguments()
      FleetForwarding.forwardIfNeeded(arguments)
      if let hot = FastPath.command(arguments) {
        try hot()
        return
      }
      command = try parseAsRoot(arguments)
    } catch {
      exit(withError: error)
    }
    if let waiting = command as? any AsyncParsableCommand {
      run(waiting)
    }
    do {
      var command = command
      try command.run()
    } catch {
      exit(withError: error)
    }
  }

  /// Runs an asynchronous command on Swift's concurrency threads while the main thread serves the main queue, and
  /// exits when it is done, as `AsyncParsableCommand.main()` does.
  private static func run(_ command: sending any AsyncParsableCommand) -> Never {
    Task {
      var command = command
      do {
        try await command.run()
      } catch {
        exit(withError: error)
      }
      exit()
    }
    dispatchMain()
  }
}

/// The exit statuses `splintctl` documents.
enum ExitStatus {
  static let absent = ExitCode(1)
  static let usage = ExitCode(64)
  static let unavailable = ExitCode(69)
  static let failure = ExitCode(70)
  /// The cluster changed meanwhile: nothing was changed, and trying again may succeed (sysexits' EX_TEMPFAIL).
  static let tryAgain = ExitCode(75)
  /// A change did not reach every machine in time (`fleet wait`), or fewer machines follow the suite than expected.
  static let incomplete = ExitCode(1)
  /// A machine left a value out, refused one (keeping the last good value), or cannot write its copy (sysexits' EX_DATAERR).
  static let rejected = ExitCode(65)
}

/// Prints what went wrong to standard error, as people read it, and returns `status` to throw: `splintctl: ` and what
/// happened on the first line (at most 160 characters: a longer summary goes on on the next), then what to do, a
/// sentence a line.
func failure(_ summary: String, remedy: String? = nil, _ status: ExitCode) -> ExitCode {
  Output.problem("splintctl: \(summary)", remedy: remedy)
  return status
}

/// `error` as ``failure(_:remedy:_:)`` prints it, and its exit status to throw.
func failure(_ error: SettingsError) -> ExitCode { failure(error.summary, remedy: error.remedy, error.status) }

/// `error` as ``failure(_:remedy:_:)`` prints it, and its exit status to throw; when `store`, which gave it, is the
/// default chain, with how to have the vault asked where that is what the error calls for (see ``vaultNote(for:)``).
func failure(_ error: CredentialError, from store: (any CredentialStore)? = nil) -> ExitCode {
  let note = store is DefaultCredentialStore ? vaultNote(for: error) : nil
  let remedy = [error.remedy, note].compactMap(\.self).joined(separator: " ")
  return failure(error.summary, remedy: remedy.isEmpty ? nil : remedy, error.status)
}

/// How to have the vault asked, when no store of the default chain could be reached (`error`, or nil for `secret
/// status`'s own finding) while BAO_ADDR or VAULT_ADDR is set: the vault is never added to the chain because an
/// address is, and an operator who set one expects it to be.
func vaultNote(for error: CredentialError?) -> String? {
  let unreachable: [CredentialError.Code] = [
    .noStoreAnswered, .noSessionBus, .serviceUnavailable, .noDefaultCollection, .storeUnavailable, .notDelivered,
  ]
  guard error.map({ unreachable.contains($0.code) }) ?? true,
    (SystemCall.environment("SPLINT_CREDENTIAL_STORES") ?? "").allSatisfy(\.isWhitespace),
    let variable = ["BAO_ADDR", "VAULT_ADDR"].first(where: { !(SystemCall.environment($0) ?? "").isEmpty })
  else { return nil }
  return """
    \(variable) is set, but the vault is asked only when it is named: SPLINT_CREDENTIAL_STORES=vault (or \
    vault,secret-service, to ask the keyring after it), or --store vault.
    """
}

extension CredentialError {
  /// The exit status for this error.
  var status: ExitCode {
    switch situation {
    case .noSessionBus, .serviceUnavailable, .noDefaultCollection, .locked, .promptDismissed, .timedOut,
      .storeUnavailable, .noStoreAnswered, .portalRefused, .notDelivered, .sealed, .unreachable, .notLoggedIn,
      .secretIDSpent, .serverError:
      ExitStatus.unavailable
    case .invalidArgument, .invalidConfiguration:
      ExitStatus.usage
    case .cancelled, .notText, .backend, .readOnly, .unreadableSecret, .forbidden, .conflict:
      ExitStatus.failure
    }
  }
}

extension SettingsError {
  /// The exit status for this error.
  var status: ExitCode {
    switch situation {
    case .invalidJSON, .invalidSuiteName, .unencodableValue, .reservedKey, .versionMismatch:
      ExitStatus.usage
    case .corruptFile, .unreadableFile, .corruptSystemFile, .unreadableSystemFile, .notARegularFile, .undecodableValue,
      .writeFailed, .newerVersion, .migrationFailed, .unsafePath, .fileTooLarge, .lockTimeout, .watchedByPolling,
      .enforcedByFleet, .fleetUnreachable, .noFleetFollower, .untrustedFleetCopy, .invalidEnforcement:
      ExitStatus.failure
    }
  }
}
