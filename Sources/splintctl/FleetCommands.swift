// The fleet's commands, in a build with the SplintFleet trait; a build without it forwards them to one with it
// (FleetForwarding.swift).
#if SplintFleet
  import ArgumentParser
  import Dispatch
  import SplintFleet
  import SplintSecrets
  import SplintSettings
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The fleet's commands, in a `splintctl` built with the SplintFleet trait.
  let fleetCommands: [any ParsableCommand.Type] = [FleetCommand.self]

  struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "fleet",
      abstract: fleetAbstract,
      discussion: """
        Each setting of a suite is the etcd key /splint/<suite>/<key>, holding its JSON text; \
        /splint/<suite>/$enforced lists the keys the fleet enforces. `fleet follow` keeps this machine's copy of \
        them (/var/lib/splint-fleet/<suite>.json for root and the splint-fleet user, \
        $XDG_STATE_HOME/splint-fleet/<suite>.json otherwise, $SPLINT_FLEET_DIRECTORY when set), which \
        SettingsStore(suite:) reads below the user's own file; `fleet status` tells how the copy fares; `fleet \
        set`, `get`, `delete`, `list` and `enforce` change and read the cluster (etcdctl works as well). Each change \
        they make is recorded beside the suite (/splint.history/<suite>/), with who made it: `fleet history` shows \
        a suite's changes, `fleet diff` what differs between two revisions, `fleet rollback` puts a suite back as \
        it was. The SettingsForAFleet guide has the whole picture.
        """,
      subcommands: [
        FleetFollowCommand.self, FleetStatusCommand.self, FleetGetCommand.self, FleetSetCommand.self,
        FleetDeleteCommand.self, FleetListCommand.self, FleetEnforceCommand.self, FleetHistoryCommand.self,
        FleetDiffCommand.self, FleetRollbackCommand.self, FleetRolloutCommand.self, FleetWaitCommand.self,
        FleetEnrollCommand.self, FleetForgetCommand.self, FleetSchemaCommand.self, FleetLabelsCommand.self,
        FleetPromoteCommand.self,
      ])
  }

  /// Where the cluster is and how to reach it.
  struct ClusterOptions: ParsableArguments {
    @Option(
      help: ArgumentHelp(
        """
        The members' client URLs, separated by commas (HOST:PORT alone is http://, or https:// with --ca-file or \
        --cert-file); by default $ETCDCTL_ENDPOINTS, as etcdctl takes it, else those the machine's copy of the suite \
        records.
        """,
        valueName: "url,..."))
    var endpoints: String?

    @Option(help: "What every key of the fleet's settings starts with.")
    var prefix = "/splint/"

    @Option(
      name: .customLong("ca-file"),
      help: "A PEM file of the CA that signed the members' certificates; by default $ETCDCTL_CACERT.",
      completion: .file())
    var caFile: String?

    @Option(
      name: .customLong("cert-file"),
      help: "A PEM client certificate, for members that ask for one; by default $ETCDCTL_CERT.", completion: .file())
    var certificateFile: String?

    @Option(
      name: .customLong("key-file"), help: "The client certificate's PEM key; by default $ETCDCTL_KEY.",
      completion: .file())
    var keyFile: String?

    @Option(
      help: """
        The etcd user, when the cluster has authentication on. Its password is read as the credential etcd/USER: \
        the systemd credential etcd__USER, or the keyring's (splintctl secret store etcd USER).
        """)
    var user: String?

    @Option(
      help:
        "How long each request may take, in seconds: 5 unless given (`fleet wait`: how long to wait, 60 unless given).")
    var timeout: Double?

    /// The cluster these options name, and where its endpoints came from (``Endpoints/source``): those given, else
    /// those of `$ETCDCTL_ENDPOINTS`, else those the first copy of `suites` that records any records.
    func cluster(suites: [String]) throws -> (EtcdCluster, Endpoints) {
      let timeout = self.timeout ?? 5
      guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout is a number of seconds above 0.") }
      let tls = FleetTLS(
        caFile: caFile ?? Self.variable("ETCDCTL_CACERT"),
        clientCertificateFile: certificateFile ?? Self.variable("ETCDCTL_CERT"),
        clientKeyFile: keyFile ?? Self.variable("ETCDCTL_KEY"))
      let endpoints = try self.endpoints(suites: suites, secure: tls.caFile != nil || tls.clientCertificateFile != nil)
      let cluster = EtcdCluster(
        endpoints: endpoints.urls, prefix: prefix, tls: tls, user: user,
        requestTimeout: .milliseconds(Int(timeout * 1000)))
      return (cluster, endpoints)
    }

    /// The endpoints a command uses, and where they came from.
    struct Endpoints {
      let urls: [String]
      /// Where they came from, as a person reads it: `--endpoints`, `ETCDCTL_ENDPOINTS`, `the copy PATH`.
      let source: String

      /// Whether they are the ones named on the command line.
      var areGiven: Bool { source == "--endpoints" }
    }

    /// The endpoints to use (see ``cluster(suites:)``). `secure` makes a bare HOST:PORT https.
    private func endpoints(suites: [String], secure: Bool) throws -> Endpoints {
      for (text, source) in [(endpoints, "--endpoints"), (Self.variable("ETCDCTL_ENDPOINTS"), "ETCDCTL_ENDPOINTS")] {
        guard let text else { continue }
        let urls = text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
          .map { $0.contains("://") ? $0 : (secure ? "https://" : "http://") + $0 }
        guard !urls.isEmpty else { throw ValidationError("\(source) names no endpoint: give https://HOST:2379,...") }
        return Endpoints(urls: urls, source: source)
      }
      var looked: [String] = []
      for suite in suites {
        let copies = try SettingsStore.fleetCopyURLs(forSuite: suite)
        looked += copies.map(\.path)
        let store = SettingsStore(fileURL: try SettingsStore.fileURL(forSuite: suite), fleetCopies: copies)
        if let copy = store.fleetStatus.first(where: { !$0.endpoints.isEmpty }) {
          return Endpoints(urls: copy.endpoints, source: "the copy \(copy.url.path)")
        }
      }
      throw ValidationError(
        """
        Name the cluster: --endpoints https://HOST:2379,... or ETCDCTL_ENDPOINTS (no copy on this machine records \
        any: looked at \(looked.joined(separator: ", "))).
        """)
    }

    /// The environment variable `name`, unless it is unset or empty.
    private static func variable(_ name: String) -> String? {
      SystemCall.environment(name).flatMap { $0.isEmpty ? nil : $0 }
    }
  }

  extension FleetError {
    /// The exit status for this error.
    var status: ExitCode {
      switch situation {
      case .unreachable, .timedOut, .noLeader, .tls, .invalidResponse:
        ExitStatus.unavailable
      case .invalidConfiguration, .insecureEndpoint, .notJSON, .reservedKey:
        ExitStatus.usage
      case .noPassword, .authenticationFailed, .permissionDenied, .rejected, .valueTooLarge, .keyTooLong,
        .copyTooLarge, .copyFailed, .transactionTooLarge, .revisionNotKept, .machineInUse, .machineEnrolled,
        .cancelled:
        ExitStatus.failure
      case .rolloutFailed, .schemaViolation, .invalidSchema, .unknownLabel:
        ExitStatus.rejected
      case .rolloutIncomplete:
        ExitStatus.incomplete
      case .conflict:
        ExitStatus.tryAgain
      }
    }
  }

  /// `error` as ``failure(_:remedy:_:)`` prints it, and its exit status to throw.
  func failure(_ error: FleetError) -> ExitCode { failure(error.summary, remedy: error.remedy, error.status) }

  extension ClusterOptions.Endpoints {
    /// Runs `body`, turning a fleet error into splintctl's message and exit status; one of a cluster that did not
    /// answer says where these endpoints came from, unless they were given.
    func reporting<T>(_ body: () async throws(FleetError) -> T) async throws -> T {
      do {
        return try await body()
      } catch {
        guard !areGiven, [.unreachable, .timedOut].contains(error.code) else { throw failure(error) }
        let note = "The endpoints are those of \(source); name others with --endpoints."
        throw failure(
          error.summary, remedy: [error.remedy, note].compactMap(\.self).joined(separator: " "), error.status)
      }
    }
  }

  struct FleetFollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "follow",
      abstract: "Keep this machine's copy of the suites' fleet settings, until stopped (SIGTERM or SIGINT).",
      discussion: """
        One watch follows every suite given. What happens is told on standard error, a line each (journald keeps \
        them under splint-fleet.service); a lost cluster is told once, and again only when what the follower finds \
        changes. Whatever a member answers (down, starting, stopping, without a leader, a certificate that does \
        not verify) is waited for, or another member tried; only a configuration the operator must fix ends it, \
        with exit status 78 (a refused or unreadable password, a role that may not read the prefix, a copy that \
        cannot be kept): splint-fleet.service starts it again (Restart=on-failure). Stopped (SIGTERM, SIGINT), it \
        exits 0. A second follower of the same copy waits, and takes over when the first ends. It reports to the \
        cluster what each copy holds, as this machine (/splint.machines/<machine>/reports/<suite>), and that the \
        machine is alive (/splint.machines/<machine>/alive, on a lease of --presence-ttl); a follower that cannot \
        report goes on following, and says why. With --label, the machine takes each suite's values for its \
        labels (`fleet set --for LABEL`) over the values for every machine.
        """)

    @Option(name: .customLong("suite"), help: "A suite to follow; give --suite once for each.")
    var suites: [String] = []

    @Option(
      help: """
        The name this machine reports as: by default its host name and 8 hex digits derived from /etc/machine-id \
        (machines cloned from one image differ once each has its own machine ID).
        """)
    var machine: String?

    @Option(
      name: .customLong("presence-ttl"),
      help: ArgumentHelp(
        """
        How long the cluster holds this machine's presence after it last heard from the follower (the lease's time \
        to live, 2 or more): a follower that died, or is cut off, is gone after it.
        """, valueName: "seconds"))
    var presenceTTL = 15

    @Option(
      help: ArgumentHelp(
        """
        Keep a metrics file here for node_exporter's textfile collector (a .prom file in its \
        --collector.textfile.directory, which must exist): each copy's revision, keys, left-out keys and write \
        failure, and whether the follower follows and reports, rewritten whole when it changes.
        """, valueName: "path"))
    var metricsFile: String?

    @Option(
      name: .customLong("label"),
      help: ArgumentHelp(
        """
        A label this machine carries (canary, eu); give --label once for each. A suite's values for a label win over \
        its values for every machine here, in the suite's order of labels (`fleet labels`); the machine's host \
        label, host:<machine>, it carries always, first.
        """, valueName: "label"))
    var labels: [String] = []

    @OptionGroup var cluster: ClusterOptions

    func validate() throws {
      guard !suites.isEmpty else { throw ValidationError("Name the suites to follow: --suite NAME (once each).") }
      guard presenceTTL >= 2 else { throw ValidationError("--presence-ttl is a number of seconds, 2 or more.") }
    }

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: suites)
      if !endpoints.areGiven {
        Output.error(
          "splintctl fleet follow: the endpoints of \(endpoints.source): \(cluster.endpoints.joined(separator: ", "))")
      }
      let follower = try await endpoints.reporting { () throws(FleetError) in
        try FleetFollower(
          suites: suites, cluster: cluster,
          machine: try machine.map { name throws(FleetError) in
            try FleetMachine(name: name)
          },
          options: FleetFollower.Options(
            presenceTimeToLive: .seconds(presenceTTL), metricsFile: metricsFile.map { URL(fileURLWithPath: $0) },
            labels: labels)
        ) { event in
          Output.error("splintctl fleet follow: \(event)")
        }
      }
      let following = Task { () async -> FleetError? in
        do throws(FleetError) {
          try await follower.run()
          return nil
        } catch {
          return error
        }
      }
      let stop = { following.cancel() }
      let signals = [SIGTERM, SIGINT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
        source.setEventHandler(handler: stop)
        source.resume()
        return source
      }
      defer { signals.forEach { $0.cancel() } }
      // The follower ends by itself only for a configuration the operator must fix (FleetError.stopsFollower).
      if let error = await following.value {
        throw failure(error.summary, remedy: error.remedy, Self.configurationStatus)
      }
    }

    /// The exit status of a follower that ended for its configuration: EX_CONFIG, which systemd calls "CONFIG".
    static let configurationStatus = ExitCode(78)
  }

  struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract:
        "Tell how this machine's copy of a suite's fleet settings fares: from where, as of when, followed or not.",
      discussion: """
        Reads the copy alone (no cluster is asked). Exit status: 0 while a follower follows the cluster and took \
        every value, 65 while it follows but refused a value (not JSON, too large, refused by the suite's schema: \
        the copy keeps the key's last good value, listed as refused) or left a key out, 69 when the cluster is lost or no follower runs (the \
        values are the last it wrote), 1 when there is no copy. Keys the user's own file sets over the fleet's are \
        listed as overridden.
        """)

    @Option(help: "The suite.")
    var suite: String

    func run() throws {
      let store: SettingsStore
      do {
        store = SettingsStore(
          fileURL: try SettingsStore.fileURL(forSuite: suite),
          fleetCopies: try SettingsStore.fleetCopyURLs(forSuite: suite))
      } catch {
        throw failure(error)
      }
      let copies = store.fleetStatus
      guard !copies.isEmpty else {
        let places = store.fleetCopyURLs.map(\.path).joined(separator: " or ")
        throw failure("No fleet copy of \(suite) is on this machine (looked for \(places)).", ExitStatus.absent)
      }
      var healthy = true
      var refused = false
      for copy in copies {
        // What the copy says is printed escaped: a copy may be another user's.
        Output.line("copy: \(copy.url.path)\(copy.isTrusted ? " (a system copy: it may enforce keys)" : "")")
        Output.line("cluster: \(copy.engine.shown()) \(copy.cluster.shown()), revision \(copy.revision)")
        Output.line("endpoints: \(copy.endpoints.map { $0.shown() }.joined(separator: ", "))")
        Output.line("follower: \(copy.follower.shown())")
        let state: String
        switch (copy.isFollowed, copy.state) {
        case (false, _):
          state = "no follower since \(copy.lastSeen.timestampText) (the values are the last it wrote)"
          healthy = false
        case (true, .unreachable):
          let reason = (copy.reason ?? "no member answered").shown(limit: 1000)
          state = "the cluster is unreachable since \(copy.since.timestampText): \(reason)"
          healthy = false
        case (true, _):
          state = "following since \(copy.since.timestampText)"
        }
        Output.line("state: \(state)")
        if let failure = copy.reportingFailure {
          Output.line("reporting: cannot report to the cluster (following goes on): \(failure.shown(limit: 1000))")
        } else if let machine = copy.machine {
          Output.line("reporting: as the machine \(machine.shown())")
        }
        let keys = copy.keys.map { $0.shown() }
        Output.line("keys: \(keys.count)\(keys.isEmpty ? "" : " (\(keys.joined(separator: ", ")))")")
        if !copy.labels.isEmpty {
          let labelled = copy.labelledKeys.sorted { $0.key < $1.key }.map {
            "\($0.key.shown()) for \($0.value.shown())"
          }
          let from = labelled.isEmpty ? "" : " (values: \(labelled.joined(separator: ", ")))"
          Output.line("labels: \(copy.labels.map { $0.shown() }.joined(separator: ", "))\(from)")
        }
        if !copy.enforcedKeys.isEmpty {
          let note = copy.isTrusted ? "" : " (not enforced here: only a system copy may enforce)"
          Output.line("enforced: \(copy.enforcedKeys.map { $0.shown() }.joined(separator: ", "))\(note)")
        }
        for (key, reason) in copy.skippedKeys.sorted(by: { $0.key < $1.key }) {
          Output.line("left out: \(key.shown()): \(reason.shown(limit: 1000))")
        }
        if copy.moreSkippedKeys > 0 { Output.line("left out: \(copy.moreSkippedKeys) more keys, not listed") }
        for (key, reason) in copy.rejectedKeys.sorted(by: { $0.key < $1.key }) {
          Output.line("refused: \(key.shown()): \(reason.shown(limit: 1000)) (the last good value is kept)")
        }
        refused = refused || !copy.skippedKeys.isEmpty || copy.moreSkippedKeys > 0 || !copy.rejectedKeys.isEmpty
        let mine = Set(store.keys)
        let overridden = copy.keys.filter { mine.contains($0) && !(copy.isTrusted && copy.enforcedKeys.contains($0)) }
        if !overridden.isEmpty {
          Output.line("overridden by \(store.fileURL.path): \(overridden.map { $0.shown() }.joined(separator: ", "))")
        }
      }
      if !healthy { throw ExitStatus.unavailable }
      if refused { throw ExitStatus.rejected }
    }
  }

  struct FleetGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Print a fleet setting's value as the cluster holds it. Exit status 1 when it has none.")

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      guard
        let text = try await endpoints.reporting({ () throws(FleetError) in
          try await cluster.storedValue(forKey: key, suite: suite)
        })
      else { throw failure("The cluster holds no \(key) in \(suite).", ExitStatus.absent) }
      // As the cluster holds it, but for what a terminal would act on.
      Output.line(text.escapingControlCharacters(keepingLines: true))
    }
  }

  struct FleetSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Set a fleet setting: every machine's follower takes it into its copy.",
      discussion: """
        VALUE is JSON text, stored as given: 60, true, '"fast"' (a string, in JSON's quotes inside the shell's), \
        '["a", "b"]'. With --string, VALUE is stored as a JSON string. A value that starts with "-" goes after --. \
        Prints what was written and the cluster's revision it was written at (a machine's copy holds it once its \
        revision, in `fleet status`, reaches that), and says so when the key is new to the suite, naming its keys \
        that are close (a misspelt key is a new one). With --json: {"suite": S, "key": K, "value": VALUE, \
        "revision": N, "new": BOOL}, and with --for "label": LABEL and "machines": N, how many machines following the \
        suite carry it (left out when their reports cannot be read). With --for LABEL, the value is for the machines that \
        carry the label alone (`fleet follow --label`, or host:<machine> for one machine): they take it over the \
        value for every machine; LABEL must be in the suite's order of labels (`fleet labels set`) unless it is a \
        host label. The change is recorded, with who made it (`fleet history`). With --dry-run, \
        nothing is written: it prints the diff the write would make (with --json, as `fleet diff --json` does), or \
        refuses a value the suite's schema refuses (exit status 65), as the write would.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @Argument(help: "The value, as JSON text.")
    var value: String

    @Flag(help: "Store VALUE as a JSON string.")
    var string = false

    @Flag(help: "Print what was written as one JSON object.")
    var json = false

    @Flag(help: "Write nothing: print the diff the write would make.")
    var dryRun = false

    @Option(
      name: .customLong("for"),
      help: ArgumentHelp(
        "Set the value for the machines that carry this label alone (canary, host:web-07).", valueName: "label"))
    var label: String?

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let text = string ? JSONValue.string(value).description : value
      // Before the cluster is looked for: text that is not JSON is refused here, with how to write it.
      let parsed: JSONValue
      do {
        parsed = try FleetCopy.parseValue(Array(text.utf8)).value
      } catch {
        let command = "splintctl fleet set --suite \(shellQuoted(suite)) \(shellQuoted(key))"
        let reason = FleetError.jsonReason(error)
        throw failure(
          "The value of \(key) is not JSON (\(reason)), so it is not a setting.",
          remedy: """
            Give JSON text: a number, true, an array, an object, or a string in JSON's quotes inside the shell's: \
            \(command) \(shellQuoted(JSONValue.string(value).description)). Or give --string, which stores VALUE as \
            a string: \(command) \(shellQuoted(value)) --string.
            """, ExitStatus.usage)
      }
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      if dryRun {
        let diff = try await endpoints.reporting { () throws(FleetError) in
          try await cluster.diff(settingValues: [(key, text)], suite: suite, label: label)
        }
        printDryRun(diff, text: text)
        return
      }
      let written = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.setValue(jsonText: text, forKey: key, suite: suite, label: label)
      }
      let isNew = written.previousValue == nil
      let scope = label.map { " for \($0.shown())" } ?? ""
      // Written already: a role that may not read the machines' reports costs the count alone.
      var carrying: Int?
      if let label, let rollout = try? await cluster.rollout(suite: suite) {
        carrying = rollout.carrying(label).following.count
      }
      if json {
        var object: [JSONKey: JSONValue] = [
          "suite": .string(suite), "key": .string(key), "value": parsed, "revision": .int(Int(written.revision)),
          "new": .bool(isNew),
        ]
        if let label { object["label"] = .string(label) }
        if let carrying { object["machines"] = .int(carrying) }
        Output.line(JSONValue.object(object).description)
      } else {
        let was = written.previousValue.map { " (it was \(shownJSON($0)))" } ?? ""
        Output.line("\(key) = \(shownJSON(text)) in \(suite)\(scope), written at revision \(written.revision)\(was)")
        if let label, let carrying {
          Output.line(
            "\(carrying) \(carrying == 1 ? "machine" : "machines") following \(suite) \(carrying == 1 ? "carries" : "carry") \(label.shown())"
          )
        }
        if isNew, label == nil {
          // Written already: a read that fails now (a role that may only write) costs the note its close keys alone.
          let others = ((try? await cluster.storedValues(suite: suite)) ?? []).map(\.key).filter { $0 != key }
          Output.line(
            "\(key) is a new key: \(suite) held no value of it before\(closeKeys(to: key, in: others, of: suite)).")
        }
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: written.revision)
    }

    /// Prints what setting the key to `text` would change.
    private func printDryRun(_ diff: EtcdCluster.Diff, text: String) {
      if json {
        Output.line(diffJSON(diff, extra: ["dryRun": true]).description)
      } else if diff.differences.isEmpty {
        Output.line(
          """
          \(key) in \(suite) already holds \(shownText(text)): setting it would change nothing (dry run; the cluster \
          is at revision \(diff.fromRevision))
          """)
      } else {
        Output.line(
          """
          Setting \(key) in \(suite) would change (dry run: nothing was written; the cluster is at revision \
          \(diff.fromRevision)):
          """)
        printDifferences(diff)
      }
    }
  }

  struct FleetDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract:
        "Remove a fleet setting: programs read their own value, or the default, again. Removing one that is not set succeeds.",
      discussion: """
        Prints what was removed and the cluster's revision it was removed at. With --json: {"suite": S, "key": K, \
        "revision": N, "removed": BOOL} (false when the suite held no such key). With --for LABEL, removes the \
        label's value alone: its machines take the key's value for every machine again (or the next label's). The \
        change is recorded, with who made it (`fleet history`).
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @Option(
      name: .customLong("for"), help: ArgumentHelp("Remove the value of this label alone.", valueName: "label"))
    var label: String?

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    @Flag(help: "Print what was removed as one JSON object.")
    var json = false

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let removed = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.removeValue(forKey: key, suite: suite, label: label)
      }
      let scope = label.map { " for \($0.shown())" } ?? ""
      if json {
        Output.line(
          JSONValue.object([
            "suite": .string(suite), "key": .string(key), "revision": .int(Int(removed.revision)),
            "removed": .bool(removed.changed),
          ]).description)
      } else if let was = removed.previousValue {
        Output.line("\(key) removed from \(suite)\(scope) at revision \(removed.revision) (it was \(shownJSON(was)))")
      } else {
        Output.line(
          "\(suite) holds no \(key)\(scope): nothing was removed (the cluster is at revision \(removed.revision))")
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: removed.revision)
    }
  }

  struct FleetListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "Print every fleet setting of a suite as the cluster holds it, a line each: KEY VALUE.",
      discussion: """
        Enforced keys are marked with a line of their own: `$enforced [KEY, ...]`. With --for LABEL, the label's \
        values alone (`fleet set --for`), a line each.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(name: .customLong("for"), help: ArgumentHelp("List this label's values.", valueName: "label"))
    var label: String?

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      // A label's values alone, or the suite's with its enforced keys.
      let (values, enforced) = try await endpoints.reporting { () throws(FleetError) in
        if let label { return (try await cluster.storedValues(suite: suite, label: label), [String]()) }
        return (try await cluster.storedValues(suite: suite), try await cluster.enforcedKeys(suite: suite))
      }
      for (key, text) in values {
        Output.line("\(key.escapingControlCharacters()) \(text.escapingControlCharacters(keepingLines: true))")
      }
      if !enforced.isEmpty { Output.line("$enforced \(JSONValue.array(enforced.map(JSONValue.string)))") }
    }
  }

  struct FleetEnforceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "enforce",
      abstract: "Enforce a fleet setting over each user's own (on machines with a system copy), or stop (--stop).",
      discussion: """
        Changes /splint/<suite>/$enforced with a transaction. Local writes of an enforced key fail, naming the \
        fleet; a user's own value of it stays in the user's file, unused until the key is no longer enforced. A key \
        the suite holds no value of is refused (exit status 1), as a misspelt one would be, unless --allow-unset \
        says it is set later. Prints what changed and the cluster's revision it changed at. With --json: \
        {"suite": S, "key": K, "enforced": BOOL, "revision": N, "changed": BOOL} (false when the list already said \
        so). The change is recorded, with who made it (`fleet history`).
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @Flag(help: "Stop enforcing the key.")
    var stop = false

    @Flag(help: "Enforce the key though the suite holds no value of it yet: it is enforced once one is set.")
    var allowUnset = false

    @Flag(help: "Print what changed as one JSON object.")
    var json = false

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      if !stop, !allowUnset {
        let keys = try await endpoints.reporting { () throws(FleetError) in
          try await cluster.storedValues(suite: suite).map(\.key)
        }
        guard keys.contains(key) else {
          throw failure(
            "\(suite) holds no value of \(key): enforcing it would change nothing until one is set.",
            remedy: """
              Check the key\(closeKeys(to: key, in: keys, of: suite)). To enforce it before it is set, give \
              --allow-unset.
              """, ExitStatus.absent)
        }
      }
      let changed = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.setEnforced(!stop, forKey: key, suite: suite)
      }
      if json {
        Output.line(
          JSONValue.object([
            "suite": .string(suite), "key": .string(key), "enforced": .bool(!stop),
            "revision": .int(Int(changed.revision)), "changed": .bool(changed.changed),
          ]).description)
      } else if changed.changed {
        let what = stop ? "no longer enforced" : "enforced"
        Output.line("\(key) is \(what) in \(suite), from revision \(changed.revision)")
      } else {
        let what = stop ? "was not enforced" : "was already enforced"
        Output.line("\(key) \(what) in \(suite): nothing changed (the cluster is at revision \(changed.revision))")
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: changed.revision)
    }
  }

  /// ` (S's keys close to it: "A", "B")` for the keys of `keys`, suite S's, that look like a misspelling of `key`
  /// (the same but for case and the marks between words, or two edits away), in JSON's quotes (so that a key's
  /// control characters reach no terminal), or ` (S holds no key close to it)`; nothing for a suite of no keys.
  func closeKeys(to key: String, in keys: [String], of suite: String) -> String {
    guard !keys.isEmpty else { return "" }
    let close = keys.filter { DeliveredCredentialStore.isClose($0, to: key) }.sorted()
    guard !close.isEmpty else { return " (\(suite) holds no key close to it)" }
    return " (\(suite)'s keys close to it: \(close.map { JSONValue.string($0).description }.joined(separator: ", ")))"
  }

  /// `text`, JSON a cluster holds, as one line of compact JSON (its control characters escaped, as JSON writes them),
  /// or `not JSON`.
  func shownJSON(_ text: String) -> String { JSONValue.compactText(of: text) ?? "not JSON" }

  /// `text` as a shell reads it back as one word (as a change's record writes its command).
  func shellQuoted(_ text: String) -> String { EtcdCluster.Recording.quoted(text) }
  /// This build has the fleet's commands itself: nothing is forwarded.
  enum FleetForwarding {
    static func forwardIfNeeded(_ arguments: [String]) {}
  }
#endif
