#if SplintFleet
  package import SplintSettings

  #if canImport(FoundationEssentials)
    package import FoundationEssentials
  #else
    package import Foundation
  #endif

  /// Why following a fleet's settings, or changing them, failed, and what to do about it.
  ///
  /// A struct rather than an enum, so that a new situation (a new engine brings some) can come in a minor release:
  /// compare an error's ``code`` with ``Code``'s (`error.code == .authenticationFailed`), and keep a `default`. No
  /// error carries a password or a token.
  public struct FleetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The situations there are now, for this package's own exhaustive switches (`splintctl`'s exit statuses).
    package enum Situation: Sendable, Hashable {
      case invalidConfiguration(String)
      case unreachable([String])
      case timedOut(server: String, after: Duration)
      case noLeader(server: String)
      case tls(server: String, reason: String)
      case invalidResponse(server: String, reason: String)
      case insecureEndpoint(String)
      case noPassword(user: String, reason: String)
      case authenticationFailed(user: String, server: String)
      case permissionDenied(server: String, what: String)
      case rejected(server: String, message: String)
      case notJSON(key: String, reason: String)
      case reservedKey(String)
      case valueTooLarge(key: String, size: Int?, limit: Int)
      case keyTooLong(key: String, size: Int, limit: Int)
      case copyTooLarge(suite: String, size: Int, limit: Int)
      case schemaViolation(suite: String, violations: [String], existing: Bool)
      case invalidSchema(suite: String, reason: String)
      case unknownLabel(suite: String, label: String, labels: [String])
      case copyFailed(SettingsError)
      case conflict(key: String)
      case transactionTooLarge(what: String, compares: Int, operations: Int, bytes: Int, limits: TransactionLimits)
      case revisionNotKept(suite: String, revision: Int64, reason: String)
      case machineInUse(machine: String, host: String, since: Date)
      case machineEnrolled(machine: String, user: String)
      case rolloutFailed(suite: String, machines: [String])
      case rolloutIncomplete(
        suite: String, revision: Int64, following: Int, expected: Int, behind: [String], after: Duration)
      case cancelled
    }

    /// etcd's limits on one transaction, as an error names them.
    package struct TransactionLimits: Sendable, Hashable {
      /// The most comparisons, and the most operations, one transaction may hold (etcd's `--max-txn-ops`).
      package let operations: Int
      /// The largest request, in bytes (etcd's `--max-request-bytes`).
      package let bytes: Int

      package init(operations: Int, bytes: Int) {
        self.operations = operations
        self.bytes = bytes
      }
    }

    /// The situation, with its details.
    package let situation: Situation

    package init(_ situation: Situation) { self.situation = situation }

    /// Which kind of failure an error is, whatever its details. New codes may come in minor releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
      /// The code's name, as its static member is spelled.
      public let description: String

      private init(_ name: String) { description = name }

      /// The follower or the command was given something it cannot use: no endpoint, an address that is not a
      /// URL, a suite that is not a name, TLS files that cannot be read.
      public static let invalidConfiguration = Code("invalidConfiguration")
      /// No endpoint of the cluster answered.
      public static let unreachable = Code("unreachable")
      /// A member did not answer in time.
      public static let timedOut = Code("timedOut")
      /// The member answered, but has no leader: the cluster has lost its quorum.
      public static let noLeader = Code("noLeader")
      /// TLS failed: an untrusted certificate, or one the server refused.
      public static let tls = Code("tls")
      /// The member answered something that is not what etcd sends.
      public static let invalidResponse = Code("invalidResponse")
      /// A password would be sent over plain HTTP to another machine.
      public static let insecureEndpoint = Code("insecureEndpoint")
      /// The password for the cluster's user could not be read.
      public static let noPassword = Code("noPassword")
      /// The cluster refused the user and password.
      public static let authenticationFailed = Code("authenticationFailed")
      /// The cluster's user may not read (or write) the keys.
      public static let permissionDenied = Code("permissionDenied")
      /// The cluster refused the request for another reason, which the error gives.
      public static let rejected = Code("rejected")
      /// A value in the cluster, or one to store, is not JSON.
      public static let notJSON = Code("notJSON")
      /// A key starts with `$`, which the fleet's layout reserves.
      public static let reservedKey = Code("reservedKey")
      /// A value is larger than a copy takes.
      public static let valueTooLarge = Code("valueTooLarge")
      /// A key's name is longer than a copy takes.
      public static let keyTooLong = Code("keyTooLong")
      /// A suite's values together are larger than a copy takes.
      public static let copyTooLarge = Code("copyTooLarge")
      /// A value breaks the suite's schema (`$schema`), or a schema to set would refuse values the suite holds.
      public static let schemaViolation = Code("schemaViolation")
      /// A suite's schema is not JSON, or not a JSON Schema this package checks (an unsupported keyword such as
      /// `oneOf`, a misspelt one, a `$ref` to another document).
      public static let invalidSchema = Code("invalidSchema")
      /// A value is given for a label the suite's order of labels (`$labels`) does not name.
      public static let unknownLabel = Code("unknownLabel")
      /// The machine's copy could not be written.
      public static let copyFailed = Code("copyFailed")
      /// The keys changed in the cluster while a change was being made: nothing was changed.
      public static let conflict = Code("conflict")
      /// A change would take one transaction larger than etcd takes (its `--max-txn-ops` or `--max-request-bytes`):
      /// nothing was changed, and nothing is split.
      public static let transactionTooLarge = Code("transactionTooLarge")
      /// What a suite held at a revision is no longer known: etcd compacted its history past it, and the records of
      /// changes do not reach it.
      public static let revisionNotKept = Code("revisionNotKept")
      /// Another follower, alive, reports under this machine's name.
      public static let machineInUse = Code("machineInUse")
      /// The machine is enrolled already: the cluster has its user.
      public static let machineEnrolled = Code("machineEnrolled")
      /// A machine that follows the suite left a key out, refused a key's value (keeping its last good one), or cannot
      /// write its copy: the change did not reach it whole.
      public static let rolloutFailed = Code("rolloutFailed")
      /// Not every machine that follows the suite held the revision in time, or fewer followed it than expected.
      public static let rolloutIncomplete = Code("rolloutIncomplete")
      /// The task was cancelled.
      public static let cancelled = Code("cancelled")
    }

    /// Which kind of failure this is.
    public var code: Code {
      switch situation {
      case .invalidConfiguration: .invalidConfiguration
      case .unreachable: .unreachable
      case .timedOut: .timedOut
      case .noLeader: .noLeader
      case .tls: .tls
      case .invalidResponse: .invalidResponse
      case .insecureEndpoint: .insecureEndpoint
      case .noPassword: .noPassword
      case .authenticationFailed: .authenticationFailed
      case .permissionDenied: .permissionDenied
      case .rejected: .rejected
      case .notJSON: .notJSON
      case .reservedKey: .reservedKey
      case .valueTooLarge: .valueTooLarge
      case .keyTooLong: .keyTooLong
      case .copyTooLarge: .copyTooLarge
      case .schemaViolation: .schemaViolation
      case .invalidSchema: .invalidSchema
      case .unknownLabel: .unknownLabel
      case .copyFailed: .copyFailed
      case .conflict: .conflict
      case .transactionTooLarge: .transactionTooLarge
      case .revisionNotKept: .revisionNotKept
      case .machineInUse: .machineInUse
      case .machineEnrolled: .machineEnrolled
      case .rolloutFailed: .rolloutFailed
      case .rolloutIncomplete: .rolloutIncomplete
      case .cancelled: .cancelled
      }
    }

    /// Whether trying again later may succeed without anyone changing anything: the cluster, or a member, is down,
    /// slow or without a leader. (A follower goes on trying after more than these: it stops only for a configuration
    /// the operator must fix.)
    public var isTransient: Bool {
      switch situation {
      case .unreachable, .timedOut, .noLeader, .invalidResponse, .conflict: true
      case .invalidConfiguration, .tls, .insecureEndpoint, .noPassword, .authenticationFailed, .permissionDenied,
        .rejected, .notJSON, .reservedKey, .valueTooLarge, .keyTooLong, .copyTooLarge, .schemaViolation,
        .invalidSchema, .unknownLabel, .copyFailed, .transactionTooLarge,
        .revisionNotKept, .machineInUse, .machineEnrolled, .rolloutFailed, .rolloutIncomplete, .cancelled:
        false
      }
    }

    /// Whether a follower stops for this error: only for a configuration the operator must fix (a refused password,
    /// one that cannot be read, a role that may not read the prefix, an endpoint or a file it cannot use, a copy it
    /// cannot keep). Whatever else a member answers (it is starting, stopping, without a leader, compacting, lying,
    /// behind a certificate that does not verify) is a reason to try another member, or wait.
    package var stopsFollower: Bool {
      switch situation {
      case .invalidConfiguration, .insecureEndpoint, .noPassword, .authenticationFailed, .permissionDenied,
        .copyFailed, .cancelled:
        true
      case .unreachable, .timedOut, .noLeader, .tls, .invalidResponse, .rejected, .notJSON, .reservedKey,
        .valueTooLarge, .keyTooLong, .copyTooLarge, .schemaViolation, .invalidSchema, .unknownLabel, .conflict,
        .transactionTooLarge,
        .revisionNotKept, .machineInUse,
        .machineEnrolled, .rolloutFailed, .rolloutIncomplete:
        false
      }
    }

    /// Why `text` is not JSON, from the error that says so.
    package static func jsonReason(_ error: SettingsError) -> String {
      if case .invalidJSON(let reason) = error.situation { return reason }
      return error.description  // coverage:ignore — parsing a value fails only with invalidJSON
    }

    /// Why a key is left out of a copy, short, as the copy records it (``description`` says what to do).
    package var skipReason: String {
      switch situation {
      case .notJSON(_, let reason): "not JSON (\(reason))"
      case .reservedKey: "a reserved key (it starts with \"$\")"
      case .valueTooLarge(_, let size?, let limit): "\(size) bytes, more than the \(limit) a value may hold"
      case .valueTooLarge(_, nil, _): "larger than one answer of the cluster may be: not read"
      case .keyTooLong(_, let size, let limit): "a key of \(size) bytes, longer than the \(limit) a key may be"
      case .copyTooLarge(_, let size, let limit): "the copy would hold \(size) bytes, more than its \(limit)"
      case .schemaViolation(_, let violations, _): "breaks the schema (\(violations.joined(separator: "; ")))"
      case .invalidSchema(_, let reason): "not a schema this package checks (\(reason))"
      default: description
      }
    }

    /// What happened, in a sentence: the first thing to show (`splintctl` prints it on the first line).
    public var summary: String { words.summary }

    /// What to do about it, in full sentences; nil when there is nothing to do.
    public var remedy: String? { words.remedy }

    /// ``summary`` and ``remedy``, on one line, as a daemon logs it.
    public var description: String { [summary, remedy].compactMap(\.self).joined(separator: " ") }

    /// Each situation's words: the one place a new situation's go (with its ``Situation`` case and its ``Code``).
    private var words: (summary: String, remedy: String?) {
      switch situation {
      case .invalidConfiguration(let reason):
        return ("The fleet is configured wrongly: \(reason)", nil)
      case .unreachable(let failures):
        return (
          "No endpoint of the etcd cluster answered (\(failures.joined(separator: "; "))).",
          "Check that the cluster runs and that this machine reaches it (`etcdctl endpoint health --cluster`)."
        )
      case .timedOut(let server, let after):
        return (
          "\(server) did not answer within \(after).",
          "Check the member's health, or allow more time (--timeout)."
        )
      case .noLeader(let server):
        return (
          "\(server) has no leader: the etcd cluster has lost its quorum.",
          "Restart the members that are down (`etcdctl endpoint status --cluster`)."
        )
      case .tls(let server, let reason):
        return (
          "TLS with \(server) failed (\(reason)).",
          """
          Give the CA that signed the cluster's certificates (--ca-file), and a client certificate and key if the \
          cluster asks for one.
          """
        )
      case .invalidResponse(let server, let reason):
        return (
          "\(server) answered what etcd's gateway does not send (\(reason)).",
          "Check that it is an etcd v3 member's client URL."
        )
      case .insecureEndpoint(let endpoint):
        return (
          """
          \(endpoint) is plain HTTP to another machine: anyone on the way could read what crosses it (a password) \
          and change it (every machine's values, what the fleet enforces).
          """,
          "Use https (the member's --cert-file); plain http is only for a literal loopback address (127.0.0.1, [::1])."
        )
      case .noPassword(let user, let reason):
        return (
          "The password of etcd user \(user) could not be read: \(reason)",
          """
          Deliver it as the systemd credential etcd__\(user) (LoadCredential=), or store it with \
          `splintctl secret store etcd \(user)`.
          """
        )
      case .authenticationFailed(let user, let server):
        return (
          "\(server) refused the user \(user) and its password.",
          "Check the password (`etcdctl user get \(user)`), and that the cluster has authentication on."
        )
      case .permissionDenied(let server, let what):
        return (
          "\(server) does not let this user \(what).",
          """
          Grant its role the keys (`etcdctl role grant-permission ROLE read --prefix=true /splint/`: a follower needs \
          only read; a writer needs readwrite there and on /splint.history/, where each change is recorded). Users \
          and roles are made and removed by etcd's root alone (`fleet enroll`, `fleet forget`: --user root).
          """
        )
      case .rejected(let server, let message):
        return ("\(server) refused the request: \(message).", nil)
      case .notJSON(let key, let reason):
        return (
          "The value of \(key) is not JSON (\(reason)), so it is not a setting.",
          "Store JSON text: a number, true, \"a string\" in quotes, an array, an object."
        )
      case .reservedKey(let key):
        return (
          "\(key) starts with \"$\", which the fleet's layout reserves.",
          "Use another key ($enforced lists the keys the fleet enforces)."
        )
      case .valueTooLarge(let key, let size, let limit):
        return (
          """
          The value of \(key) \(size.map { "holds \($0) bytes" } ?? "is larger than one answer of the cluster may be"), \
          more than the \(limit) a machine's copy takes for one value.
          """,
          """
          A machine keeps the key's last good value (or leaves the key out, when it never had one). Keep settings \
          small (a large document is no setting), or raise the follower's maximumValueSize.
          """
        )
      case .keyTooLong(let key, let size, let limit):
        return (
          "The key \(key) is \(size) bytes long, longer than the \(limit) a machine's copy takes for a key.",
          "It is left out of the copy. A setting's key is a name: keep it short."
        )
      case .copyTooLarge(let suite, let size, let limit):
        return (
          "The fleet's values of \(suite) hold \(size) bytes, more than the \(limit) a machine's copy takes.",
          """
          The keys past it keep their last good values (or are left out). Remove what is not a setting, or raise the \
          follower's maximumCopySize.
          """
        )
      case .schemaViolation(let suite, let violations, let existing):
        let schema = "`splintctl fleet schema get --suite \(suite)`"
        guard existing else {
          return (
            "The schema of \(suite) refuses the value: \(violations.joined(separator: "; ")).",
            "Nothing was changed. Give a value the schema allows (\(schema) shows it), or change the schema first."
          )
        }
        return (
          "The schema would refuse values \(suite) holds now: \(violations.joined(separator: "; ")).",
          """
          Nothing was changed. Change those values first, or give --force: every machine then keeps them, and \
          reports them refused until they change.
          """
        )
      case .unknownLabel(let suite, let label, let labels):
        let named = labels.isEmpty ? "names none" : "names \(labels.joined(separator: ", "))"
        return (
          "The label \(label) is not one of \(suite)'s labels: its order of labels ($labels) \(named).",
          """
          Nothing was changed. Add it where its values should win: `splintctl fleet labels set --suite \(suite) \
          LABEL...`, labels first to last (a machine's host: label always wins first).
          """
        )
      case .invalidSchema(let suite, let reason):
        return (
          "The schema of \(suite) is not one this package checks: \(reason)",
          """
          Give JSON Schema (draft 2020-12) with the keywords SplintSettings' JSONSchema checks: type, enum, const, \
          the bounds, minLength, maxLength, pattern, items, prefixItems, minItems, maxItems, properties, \
          additionalProperties, $defs and $ref within it (`splintctl fleet schema set --suite \(suite) FILE`).
          """
        )
      case .copyFailed(let error):
        return ("The machine's copy could not be written: \(error.summary)", error.remedy)
      case .conflict(let key):
        return ("\(key) changed in the cluster while it was being changed here: nothing was changed.", "Try again.")
      case .transactionTooLarge(let what, let compares, let operations, let bytes, let limits):
        return (
          """
          \(what) takes one transaction of \(compares) comparisons and \(operations) operations, about \(bytes) bytes; \
          etcd takes at most \(limits.operations) of each (--max-txn-ops) and \(limits.bytes) bytes (--max-request-bytes).
          """,
          """
          Nothing was changed: a change is never split, so that no machine sees part of it. Make the suite smaller \
          (fewer or smaller values), or raise the cluster's --max-txn-ops and --max-request-bytes and give the same \
          to splintctl (--max-txn-ops, --max-request-bytes).
          """
        )
      case .revisionNotKept(let suite, let revision, let reason):
        return (
          "What \(suite) held at revision \(revision) is not known: \(reason).",
          """
          Give a revision etcd still holds, or one the records of changes reach (`splintctl fleet history --suite \
          \(suite)` shows both).
          """
        )
      case .machineInUse(let machine, let host, let since):
        return (
          "A follower, alive, reports as the machine \(machine) (on the host \(host), since \(since.timestampText)).",
          """
          A name is one machine's: give each machine its own (--machine, in /etc/splint/fleet.conf for the service). \
          A follower that died gives its name up once its lease expires; a machine is forgotten once its follower is \
          stopped (`systemctl disable --now splint-fleet` on it).
          """
        )
      case .machineEnrolled(let machine, let user):
        return (
          "The machine \(machine) is enrolled already: the cluster has its user \(user).",
          """
          Its password is not changed under its follower. To enrol it again, forget it first (`splintctl fleet \
          forget --machine \(machine)`); to give it a new password alone, `etcdctl user passwd \(user)`.
          """
        )
      case .rolloutFailed(let suite, let machines):
        return (
          "\(suite) did not reach every machine whole: \(machines.joined(separator: "; ")).",
          """
          Those machines keep the last good values of the keys named (or are without them). Mend the values \
          (`splintctl fleet get`), or the machines' copies (`splintctl fleet status` on them), and wait again.
          """
        )
      case .rolloutIncomplete(let suite, let revision, let following, let expected, let behind, let after):
        let waited = "after \(after.components.seconds) s"
        guard following >= expected else {
          return (
            "\(following) machines follow \(suite), fewer than the \(expected) expected (\(waited)).",
            """
            Check the suite's name, and that the machines' followers run (`splintctl fleet rollout --suite \
            \(suite)` lists those that stopped or are gone).
            """
          )
        }
        return (
          "Not every machine that follows \(suite) holds revision \(revision) \(waited): \(behind.joined(separator: ", ")).",
          """
          Those machines' followers are slow, or cannot reach the cluster: `splintctl fleet status --suite \(suite)` \
          on them says why. Wait longer (--timeout), or see where they stand with `splintctl fleet rollout`.
          """
        )
      case .cancelled:
        return ("The operation was cancelled.", nil)
      }
    }
  }
#endif
