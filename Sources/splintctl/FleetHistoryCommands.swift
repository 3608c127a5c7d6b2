#if SplintFleet
  import ArgumentParser
  import SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// How a writing command records its change, and how large a transaction the cluster takes.
  struct RecordOptions: ParsableArguments {
    @Option(
      name: .customLong("history-limit"),
      help: "How many records of changes each suite keeps: recording one removes the oldest past it.")
    var historyLimit = 1000

    @Option(
      name: .customLong("history-days"),
      help: "Recording a change also removes the records older than this many days (by default none, for their age).")
    var historyDays: Int?

    @Option(
      name: .customLong("max-txn-ops"),
      help: "The most comparisons, and operations, the cluster takes in one transaction (its --max-txn-ops).")
    var maxTransactionOperations = 128

    @Option(
      name: .customLong("max-request-bytes"),
      help: "The largest request the cluster takes, in bytes (its --max-request-bytes).")
    var maxRequestBytes = 1_572_864

    @Option(
      help: ArgumentHelp(
        """
        After the write, wait at most this many seconds until every machine that follows the suite holds it, as \
        `fleet wait` does (its exit statuses: 1 at the timeout, 65 when a machine left the value out), telling what \
        it found on standard error.
        """, valueName: "seconds"))
    var wait: Double?

    func validate() throws {
      guard (wait ?? 1) > 0, (wait ?? 1).isFinite else {
        throw ValidationError("--wait is a number of seconds above 0.")
      }
      guard historyLimit >= 1 else { throw ValidationError("--history-limit is a number of records, 1 or more.") }
      guard (historyDays ?? 1) >= 1 else { throw ValidationError("--history-days is a number of days, 1 or more.") }
      guard maxTransactionOperations >= 1, maxRequestBytes >= 1 else {
        throw ValidationError("--max-txn-ops and --max-request-bytes are numbers above 0, as the cluster's are.")
      }
    }

    /// The cluster `options` name, writing records of its changes that name this command.
    func writing(
      with options: ClusterOptions, suite: String
    ) throws -> (EtcdCluster, ClusterOptions.Endpoints) {
      var (cluster, endpoints) = try options.cluster(suites: [suite])
      let command = (["splintctl"] + CommandLine.arguments.dropFirst().map(shellQuoted)).joined(separator: " ")
      cluster.recording = EtcdCluster.Recording(
        command: command, limit: historyLimit, maximumAge: historyDays.map { .seconds($0 * 86_400) })
      cluster.maximumTransactionOperations = maxTransactionOperations
      cluster.maximumRequestSize = maxRequestBytes
      return (cluster, endpoints)
    }

    /// With --wait, waits until every machine that follows `suite` holds `revision`, as `fleet wait` does: the rollout
    /// it ends with on standard error (standard output is the write's), its failure thrown as `fleet wait`'s.
    func waitIfAsked(
      _ cluster: EtcdCluster, _ endpoints: ClusterOptions.Endpoints, suite: String, revision: Int64
    ) async throws {
      guard let wait else { return }
      let timeout = Duration.milliseconds(Int(min(wait, 86_400) * 1000))
      let rollout = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.waitForRollout(suite: suite, revision: revision, timeout: timeout, expect: 1)
      }
      for line in FleetRolloutCommand.lines(rollout) { Output.error(line) }
    }
  }

  struct FleetHistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "history",
      abstract: "Print a suite's changes, newest first: each revision's keys, old and new values, and who made it.",
      discussion: """
        Merges the records splintctl writes with each change (who, on which host, as which etcd user, when, with \
        which command; kept beside the suite, /splint.history/<suite>/, and not lost to etcd's compaction) with \
        what etcd's own history still holds, which also has the changes made around splintctl (etcdctl): those \
        show as not recorded. The first line says where etcd's own history ends (its compacted revision): before \
        it, only recorded changes show; once records past --history-limit were dropped, the changes before the \
        oldest kept show as having no record kept. With --json: {"suite": S, "revision": N, "compactedRevision": N, \
        "recordsBegin": N or null, \
        "changes": [{"revision": N, "recorded": BOOL, "time", "user", "host", "etcdUser", "command" (null when \
        not recorded), "keys": [{"key": K, "old": TEXT, "new": TEXT}]}]}, each value the text the cluster held, \
        null where it held none.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "Only this key's changes.")
    var key: String?

    @Option(help: "At most this many changes, the newest.")
    var limit: Int?

    @Flag(help: "Print the history as one JSON object.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    func validate() throws {
      guard (limit ?? 1) >= 1 else { throw ValidationError("--limit is a number of changes, 1 or more.") }
    }

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      let history = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.history(suite: suite, key: key, limit: limit)
      }
      if json {
        Output.line(historyJSON(history).description)
        return
      }
      let ends =
        history.compactedRevision > 0
        ? """
        etcd holds its changes after revision \(history.compactedRevision) (it compacted the ones before): an older \
        change shows only as splintctl recorded it
        """
        : "etcd holds every change of it"
      Output.line("\(suite) at revision \(history.revision): \(ends).")
      if history.changes.isEmpty { Output.line("No change\(key.map { " of \($0)" } ?? "") is known.") }
      for change in history.changes {
        if let author = change.author {
          let etcdUser = author.etcdUser.map { " as etcd user \($0)" } ?? ""
          Output.line(
            """
            revision \(change.revision), \(author.time.timestampText), \(author.user) on \(author.host)\(etcdUser): \
            \(author.command)
            """)
        } else if let begin = history.recordsBegin, change.revision < begin {
          Output.line(
            "revision \(change.revision), no record kept (the records before revision \(begin) were dropped)")
        } else {
          Output.line("revision \(change.revision), not recorded: made around splintctl (etcdctl, or another client)")
        }
        for key in change.keys {
          Output.line("  \(shownJSONKey(key.key)): \(shownText(key.oldValue)) -> \(shownText(key.newValue))")
        }
      }
    }
  }

  struct FleetDiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "diff",
      abstract: "Print what differs in a suite between two revisions (by default, from now), key by key.",
      discussion: """
        Each line is KEY: VALUE AT --from -> VALUE AT --to, `(not set)` where the suite held no such key; $enforced \
        is a key too. A revision etcd compacted its history past is rebuilt from the records of changes, which \
        know only the changes made through splintctl (a line says so). Exit status: 0 when nothing differs, 1 when \
        something does (as diff's), 70 when a revision's state is not known any more. With --json: {"suite": S, \
        "from": N, "to": N, "rebuiltFromRecords": BOOL, "differences": [{"key": K, "from": TEXT, "to": TEXT}]}.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(help: "The revision whose state the differences start from; by default the cluster's now.")
    var from: Int64?

    @Option(help: "The revision whose state they lead to.")
    var to: Int64

    @Flag(help: "Print the differences as one JSON object.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      let diff = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.diff(suite: suite, from: from, to: to)
      }
      if json {
        Output.line(diffJSON(diff).description)
      } else if diff.differences.isEmpty {
        Output.line("\(suite) holds the same at \(describe(diff.fromRevision, now: from == nil)) and revision \(to).")
        printRebuiltNote(diff)
      } else {
        Output.line("\(suite) from \(describe(diff.fromRevision, now: from == nil)) to revision \(to):")
        printDifferences(diff)
        printRebuiltNote(diff)
      }
      if !diff.differences.isEmpty { throw ExitStatus.absent }
    }
  }

  struct FleetRollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rollback",
      abstract: "Put every key of a suite back as it was at a revision ($enforced too), removing keys made since.",
      discussion: """
        Prints the diff from now to that revision, and changes nothing unless --yes is given (exit status 1 then, \
        when there is something to roll back). With --yes, makes the diff true in one transaction, which fails, \
        changing nothing, if any key of the suite changed since the diff was made, or a key was made or removed \
        (exit status 75: look at the diff again); the rollback is recorded as a change. A suite too large for one \
        transaction (etcd's --max-txn-ops, 128 unless set otherwise, counts the comparisons, one per key; a \
        request is at most --max-request-bytes, 1.5 MiB) is refused (exit status 70), never split. A revision \
        etcd compacted its history past is rebuilt from the records of changes. Exit status 0 when rolled back, or \
        when there is nothing to roll back. With --json: {"suite": S, "from": N, "to": N, "rebuiltFromRecords": \
        BOOL, "differences": [...], "applied": BOOL, "revision": N (the one it was made at, when applied)}.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(help: "The revision to roll back to.")
    var to: Int64

    @Flag(help: "Roll back: without it, the diff is shown and nothing is changed.")
    var yes = false

    @Flag(help: "Print the diff, and what was done, as one JSON object.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let diff = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.diff(suite: suite, to: to)
      }
      if diff.differences.isEmpty {
        if json {
          Output.line(diffJSON(diff, extra: ["applied": false]).description)
        } else {
          Output.line(
            "\(suite) holds at revision \(diff.fromRevision) what it held at revision \(to): nothing to roll back.")
          printRebuiltNote(diff)
        }
        return
      }
      if !json {
        Output.line("Rolling \(suite) back from revision \(diff.fromRevision) (now) to revision \(to) changes:")
        printDifferences(diff)
        printRebuiltNote(diff)
      }
      guard yes else {
        if json { Output.line(diffJSON(diff, extra: ["applied": false]).description) }
        throw failure("Nothing was changed: give --yes to roll \(suite) back to revision \(to).", ExitStatus.absent)
      }
      let written = try await endpoints.reporting { () throws(FleetError) in try await cluster.apply(diff) }
      if json {
        Output.line(diffJSON(diff, extra: ["applied": true, "revision": .int(Int(written.revision))]).description)
      } else {
        Output.line("\(suite) rolled back to revision \(to), at revision \(written.revision)")
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: written.revision)
    }
  }

  /// `revision now` or `revision N`.
  private func describe(_ revision: Int64, now: Bool) -> String {
    now ? "revision \(revision) (now)" : "revision \(revision)"
  }

  /// Prints a diff's keys, a line each: `  KEY: FROM -> TO`.
  func printDifferences(_ diff: EtcdCluster.Diff) {
    for change in diff.differences {
      Output.line("  \(shownJSONKey(change.key)): \(shownText(change.oldValue)) -> \(shownText(change.newValue))")
    }
  }

  /// Says, when it is so, that a state of `diff` was rebuilt from the records.
  private func printRebuiltNote(_ diff: EtcdCluster.Diff) {
    guard diff.isRebuiltFromRecords else { return }
    Output.line(
      """
      note: etcd compacted its history past revision \(diff.toRevision ?? diff.fromRevision): the state then is rebuilt \
      from the records of changes, which know only the changes made through splintctl.
      """)
  }

  /// A key as a line shows it: as it is, unless it holds what a terminal acts on (then in JSON's quotes).
  private func shownJSONKey(_ key: String) -> String {
    key.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control && $0 != " " })
      ? key : JSONValue.string(key).description
  }

  /// A value the cluster holds as a line shows it: compact JSON, `not JSON: "TEXT"`, or `(not set)` for none.
  func shownText(_ text: String?) -> String {
    guard let text else { return "(not set)" }
    return JSONValue.compactText(of: text) ?? "not JSON: \(JSONValue.string(text))"
  }

  /// `diff` as `--json` prints it, with `extra` members.
  func diffJSON(_ diff: EtcdCluster.Diff, extra: [JSONKey: JSONValue] = [:]) -> JSONValue {
    var object: [JSONKey: JSONValue] = [
      "suite": .string(diff.suite), "from": .int(Int(diff.fromRevision)),
      "rebuiltFromRecords": .bool(diff.isRebuiltFromRecords),
      "differences": .array(
        diff.differences.map { change in
          .object(["key": .string(change.key), "from": optional(change.oldValue), "to": optional(change.newValue)])
        }),
    ]
    if let to = diff.toRevision { object["to"] = .int(Int(to)) }
    object.merge(extra) { _, new in new }
    return .object(object)
  }

  /// `history` as `--json` prints it.
  private func historyJSON(_ history: EtcdCluster.History) -> JSONValue {
    .object([
      "suite": .string(history.suite), "revision": .int(Int(history.revision)),
      "compactedRevision": .int(Int(history.compactedRevision)),
      "recordsBegin": history.recordsBegin.map { .int(Int($0)) } ?? .null,
      "changes": .array(
        history.changes.map { change in
          let author = change.author
          return .object([
            "revision": .int(Int(change.revision)), "recorded": .bool(author != nil),
            "time": author.map { .string($0.time.isoTimestamp) }
              ?? .null,
            "user": optional(author?.user), "host": optional(author?.host), "etcdUser": optional(author?.etcdUser),
            "command": optional(author?.command),
            "keys": .array(
              change.keys.map { key in
                .object(["key": .string(key.key), "old": optional(key.oldValue), "new": optional(key.newValue)])
              }),
          ])
        }),
    ])
  }

  /// `text` as a JSON string, or `null`.
  private func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
#endif
