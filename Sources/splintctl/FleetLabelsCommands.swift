#if SplintFleet
  import ArgumentParser
  import SplintFleet
  import SplintSettings

  struct FleetLabelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "labels",
      abstract: "Set or print the order in which a suite's labels win on a machine that carries several.",
      discussion: """
        A label's values (`fleet set --for LABEL`) go to the machines that carry it (`fleet follow --label LABEL`) \
        over the suite's values for every machine. The order is kept in the cluster with the suite's values \
        (/splint/<suite>/$labels), so that every machine resolves a key the same way: the first label it carries \
        that gives the key a value wins. A machine's host label (host:<machine>) always wins first, which the \
        order says with host:* at its start. A label the order does not name gives no machine a value.
        """,
      subcommands: [FleetLabelsSetCommand.self, FleetLabelsGetCommand.self])
  }

  struct FleetLabelsSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Set a suite's labels, first to last in the order their values win.",
      discussion: """
        Each LABEL is 1 to 128 letters, digits, ".", "_" and "-", not starting with "." or "-". The order is \
        written with host:* first (a machine's host label always wins first). A label left out of it no longer \
        gives any machine a value (its values stay in the cluster, and apply again once it is named; the command says \
        which keys such a label still holds). Prints the order and the revision it was set at; the change is \
        recorded (`fleet history`).
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: ArgumentHelp("The labels, first to last.", valueName: "label"))
    var labels: [String] = []

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let written = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.setLabels(labels, suite: suite)
      }
      let order = ([FleetLabels.anyHost] + labels.filter { $0 != FleetLabels.anyHost }).joined(separator: ", ")
      if written.changed {
        Output.line("the labels of \(suite) are \(order), at revision \(written.revision)")
      } else {
        Output.line(
          "the labels of \(suite) are already \(order): nothing was changed (the cluster is at revision \(written.revision))"
        )
      }
      // The labels the order it replaced named, and this one does not, that still hold values: said, with what to
      // do (written already: a read that fails costs the note alone).
      let before = written.previousValue.flatMap { try? FleetLabels.order(Array($0.utf8)) } ?? []
      for label in before where !labels.contains(label) && label != FleetLabels.anyHost {
        guard let held = try? await cluster.storedValues(suite: suite, label: label), !held.isEmpty else { continue }
        let keys = held.map { $0.key.shown() }.joined(separator: ", ")
        let shown = shellQuoted(label)
        Output.line(
          """
          \(label.shown()) still holds \(held.count == 1 ? "a value" : "values") (\(keys)), which no machine takes \
          while the order does not name it: name it again, promote \(held.count == 1 ? "it" : "them") (fleet promote \
          --suite \(shellQuoted(suite)) --from \(shown)), or remove \(held.count == 1 ? "it" : "them") (fleet delete \
          --suite \(shellQuoted(suite)) --for \(shown) KEY).
          """)
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: written.revision)
    }
  }

  struct FleetLabelsGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Print a suite's labels, first to last in the order their values win, a line each.",
      discussion: "Exit status 1 when the suite has none.")

    @Option(help: "The suite.")
    var suite: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      let labels = try await endpoints.reporting { () throws(FleetError) in try await cluster.labels(suite: suite) }
      guard !labels.isEmpty else { throw failure("\(suite) has no labels.", ExitStatus.absent) }
      for label in labels { Output.line(label.shown()) }
    }
  }
#endif

#if SplintFleet
  struct FleetPromoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "promote",
      abstract: "Make a label's values the suite's values for every machine, and remove them from the label.",
      discussion: """
        In one transaction, recorded as one change (`fleet history`; `fleet rollback` undoes it): each KEY's value \
        for the label (every value it holds, without KEY) becomes the key's value for every machine, and the \
        label's value is removed, so that the label's machines keep what they hold and every other machine takes \
        it. Checked against the suite's schema, as every write is. Prints the keys and the revision. A KEY the \
        label holds no value of is refused (exit status 64), and nothing is changed.
        """)

    @Option(help: "The suite.")
    var suite: String

    @Option(name: .customLong("from"), help: ArgumentHelp("The label (canary, host:web-07).", valueName: "label"))
    var label: String

    @Argument(
      help: ArgumentHelp("The keys to promote; every key the label holds a value of by default.", valueName: "key"))
    var keys: [String] = []

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let (written, promoted) = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.promote(suite: suite, label: label, keys: keys.isEmpty ? nil : keys)
      }
      guard written.changed else {
        Output.line(
          "\(label.shown()) holds no value in \(suite): nothing was promoted (the cluster is at revision \(written.revision))"
        )
        return
      }
      Output.line(
        """
        \(promoted.map { $0.shown() }.joined(separator: ", ")) of \(label.shown()) promoted to every machine of \
        \(suite), at revision \(written.revision)
        """)
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: written.revision)
    }
  }
#endif
