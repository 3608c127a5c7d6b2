// The fleet's commands, in a build with the SplintFleet trait; a build without it forwards them to one with it
// (FleetForwarding.swift).
#if SplintFleet
  import ArgumentParser
  import Dispatch
  import SplintFleet
  import SplintSettings

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
      abstract: "Settings for a fleet: follow an etcd cluster into this machine's copy, and change its values.",
      discussion: """
        Each setting of a suite is the etcd key /splint/<suite>/<key>, holding its JSON text; \
        /splint/<suite>/$enforced lists the keys the fleet enforces. `fleet follow` keeps this machine's copy of \
        them (/var/lib/splint-fleet/<suite>.json for root and the splint-fleet user, \
        $XDG_STATE_HOME/splint-fleet/<suite>.json otherwise, $SPLINT_FLEET_DIRECTORY when set), which every \
        program's SettingsStore reads below the user's own file; `fleet status` tells how the copy fares; `fleet \
        set`, `get`, `delete`, `list` and `enforce` change and read the cluster (etcdctl works as well). The \
        SettingsForAFleet guide has the whole picture.
        """,
      subcommands: [
        FleetFollowCommand.self, FleetStatusCommand.self, FleetGetCommand.self, FleetSetCommand.self,
        FleetDeleteCommand.self, FleetListCommand.self, FleetEnforceCommand.self,
      ])
  }

  /// Where the cluster is and how to reach it.
  struct ClusterOptions: ParsableArguments {
    @Option(
      help: ArgumentHelp(
        "The members' client URLs, separated by commas; by default those the machine's copy of the suite records.",
        valueName: "url,..."))
    var endpoints: String?

    @Option(help: "What every key of the fleet's settings starts with.")
    var prefix = "/splint/"

    @Option(
      name: .customLong("ca-file"), help: "A PEM file of the CA that signed the members' certificates.",
      completion: .file())
    var caFile: String?

    @Option(
      name: .customLong("cert-file"), help: "A PEM client certificate, for members that ask for one.",
      completion: .file())
    var certificateFile: String?

    @Option(name: .customLong("key-file"), help: "The client certificate's PEM key.", completion: .file())
    var keyFile: String?

    @Option(
      help: """
        The etcd user, when the cluster has authentication on. Its password is read as the credential etcd/USER: \
        the systemd credential etcd__USER, or the keyring's (splintctl secret store etcd USER).
        """)
    var user: String?

    @Option(help: "How long each request may take, in seconds.")
    var timeout: Double = 5

    /// The cluster these options name, with the endpoints given, or else those a copy of `suite` records.
    func cluster(suite: String?) throws -> EtcdCluster {
      var endpoints = (endpoints ?? "").split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }
        .filter { !$0.isEmpty }
      if endpoints.isEmpty, let suite,
        let store = try? SettingsStore(
          fileURL: SettingsStore.fileURL(forSuite: suite), fleetCopies: SettingsStore.fleetCopyURLs(forSuite: suite))
      {
        endpoints = store.fleetStatus.first?.endpoints ?? []
      }
      guard !endpoints.isEmpty else {
        throw ValidationError("Name the cluster: --endpoints https://HOST:2379,... (no copy of the suite records any).")
      }
      guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout is a number of seconds above 0.") }
      return EtcdCluster(
        endpoints: endpoints, prefix: prefix,
        tls: FleetTLS(caFile: caFile, clientCertificateFile: certificateFile, clientKeyFile: keyFile), user: user,
        requestTimeout: .milliseconds(Int(timeout * 1000)))
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
      case .noPassword, .authenticationFailed, .permissionDenied, .rejected, .valueTooLarge, .copyTooLarge,
        .copyFailed, .conflict, .cancelled:
        ExitStatus.failure
      }
    }
  }

  /// `error` as ``failure(_:remedy:_:)`` prints it, and its exit status to throw.
  func failure(_ error: FleetError) -> ExitCode { failure(error.summary, remedy: error.remedy, error.status) }

  /// Runs `body`, turning a fleet error into splintctl's message and exit status.
  private func reporting<T>(_ body: () async throws(FleetError) -> T) async throws -> T {
    do {
      return try await body()
    } catch {
      throw failure(error)
    }
  }

  struct FleetFollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "follow",
      abstract: "Keep this machine's copy of the suites' fleet settings, until stopped (SIGTERM or SIGINT).",
      discussion: """
        One watch follows every suite given. What happens is told on standard error, a line each (journald keeps \
        them under splint-fleet.service). A member or the whole cluster that is down is waited for; a refused \
        password, a missing permission or untrusted certificates end it (exit status 70 or 69). A second follower \
        of the same copy waits, and takes over when the first ends.
        """)

    @Option(name: .customLong("suite"), help: "A suite to follow; give --suite once for each.")
    var suites: [String] = []

    @OptionGroup var cluster: ClusterOptions

    func validate() throws {
      guard !suites.isEmpty else { throw ValidationError("Name the suites to follow: --suite NAME (once each).") }
      guard cluster.endpoints != nil else {
        throw ValidationError("Name the cluster: --endpoints https://HOST:2379,...")
      }
    }

    func run() async throws {
      let cluster = try self.cluster.cluster(suite: nil)
      let follower = try await reporting { () throws(FleetError) in
        try FleetFollower(suites: suites, cluster: cluster) { event in
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
      if let error = await following.value { throw failure(error) }
    }
  }

  struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract:
        "Tell how this machine's copy of a suite's fleet settings fares: from where, as of when, followed or not.",
      discussion: """
        Reads the copy alone (no cluster is asked). Exit status: 0 while a follower follows the cluster, 69 when \
        the cluster is lost or no follower runs (the values are the last it wrote), 1 when there is no copy. Keys \
        the user's own file sets over the fleet's are listed as overridden.
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
      for copy in copies {
        Output.line("copy: \(copy.url.path)\(copy.isTrusted ? " (a system copy: it may enforce keys)" : "")")
        Output.line("cluster: \(copy.engine) \(copy.cluster), revision \(copy.revision)")
        Output.line("endpoints: \(copy.endpoints.joined(separator: ", "))")
        Output.line("follower: \(copy.follower)")
        let state: String
        switch (copy.isFollowed, copy.state) {
        case (false, _):
          state =
            "no follower since \(copy.state == .stopped ? copy.since : copy.written) (the values are the last it wrote)"
          healthy = false
        case (true, .unreachable):
          state = "the cluster is unreachable since \(copy.since.timestampText): \(copy.reason ?? "no member answered")"
          healthy = false
        case (true, _):
          state = "following since \(copy.since.timestampText)"
        }
        Output.line("state: \(state)")
        Output.line("keys: \(copy.keys.count)\(copy.keys.isEmpty ? "" : " (\(copy.keys.joined(separator: ", ")))")")
        if !copy.enforcedKeys.isEmpty {
          let note = copy.isTrusted ? "" : " (not enforced here: only a system copy may enforce)"
          Output.line("enforced: \(copy.enforcedKeys.joined(separator: ", "))\(note)")
        }
        for (key, reason) in copy.skippedKeys.sorted(by: { $0.key < $1.key }) {
          Output.line("left out: \(key): \(reason)")
        }
        let mine = Set(store.keys)
        let overridden = copy.keys.filter { mine.contains($0) && !(copy.isTrusted && copy.enforcedKeys.contains($0)) }
        if !overridden.isEmpty {
          Output.line("overridden by \(store.fileURL.path): \(overridden.joined(separator: ", "))")
        }
      }
      if !healthy { throw ExitStatus.unavailable }
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
      let cluster = try self.cluster.cluster(suite: suite)
      guard
        let text = try await reporting({ () throws(FleetError) in
          try await cluster.storedValue(forKey: key, suite: suite)
        })
      else { throw failure("The cluster holds no \(key) in \(suite).", ExitStatus.absent) }
      Output.line(text)
    }
  }

  struct FleetSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Set a fleet setting: every machine's follower takes it into its copy.",
      discussion: """
        VALUE is JSON text, stored as given: 60, true, '"fast"' (a string, in quotes), '["a", "b"]'. With \
        --string, VALUE is stored as a JSON string. A value that starts with "-" goes after --.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @Argument(help: "The value, as JSON text.")
    var value: String

    @Flag(help: "Store VALUE as a JSON string.")
    var string = false

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let cluster = try self.cluster.cluster(suite: suite)
      let text = string ? JSONValue.string(value).description : value
      try await reporting { () throws(FleetError) in
        try await cluster.setValue(jsonText: text, forKey: key, suite: suite)
      }
    }
  }

  struct FleetDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract:
        "Remove a fleet setting: programs read their own value, or the default, again. Removing one that is not set succeeds."
    )

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let cluster = try self.cluster.cluster(suite: suite)
      try await reporting { () throws(FleetError) in _ = try await cluster.removeValue(forKey: key, suite: suite) }
    }
  }

  struct FleetListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "Print every fleet setting of a suite as the cluster holds it, a line each: KEY VALUE.",
      discussion: "Enforced keys are marked with a line of their own: `$enforced [KEY, ...]`.")

    @Option(help: "The suite.")
    var suite: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let cluster = try self.cluster.cluster(suite: suite)
      let (values, enforced) = try await reporting { () throws(FleetError) in
        (try await cluster.storedValues(suite: suite), try await cluster.enforcedKeys(suite: suite))
      }
      for (key, text) in values { Output.line("\(key) \(text)") }
      if !enforced.isEmpty { Output.line("$enforced \(JSONValue.array(enforced.map(JSONValue.string)))") }
    }
  }

  struct FleetEnforceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "enforce",
      abstract: "Enforce a fleet setting over each user's own (on machines with a system copy), or stop (--stop).",
      discussion: """
        Changes /splint/<suite>/$enforced with a transaction. Local writes of an enforced key fail, naming the \
        fleet; a user's own value of it stays in the user's file, unused until the key is no longer enforced.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: "The setting's key.")
    var key: String

    @Flag(help: "Stop enforcing the key.")
    var stop = false

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let cluster = try self.cluster.cluster(suite: suite)
      try await reporting { () throws(FleetError) in try await cluster.setEnforced(!stop, forKey: key, suite: suite) }
    }
  }
  /// This build has the fleet's commands itself: nothing is forwarded.
  enum FleetForwarding {
    static func forwardIfNeeded(_ arguments: [String]) {}
  }
#endif
