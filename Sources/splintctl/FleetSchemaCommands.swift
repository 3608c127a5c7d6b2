#if SplintFleet
  import ArgumentParser
  import SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  struct FleetSchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "schema",
      abstract: "Hold a suite's fleet values to a JSON Schema: set it, print it, or remove it.",
      discussion: """
        The schema is kept in the cluster with the suite's values (/splint/<suite>/$schema), so that it reaches \
        every machine with them, in order. Every writing command (fleet set, delete, rollback, ...) checks the \
        values it writes against it, in the transaction that writes them, and refuses one it does not allow (exit \
        status 65, with the key, the rule and the value). Every machine's follower checks each value too, whoever \
        wrote it (etcdctl): a value the schema refuses does not replace the key's last good value on the machine, \
        and is listed as refused (`fleet status`, `fleet rollout`). The same schema serves the hand-kept settings \
        file (`splintctl schema --from FILE`).
        """,
      subcommands: [FleetSchemaSetCommand.self, FleetSchemaGetCommand.self, FleetSchemaDeleteCommand.self])
  }

  struct FleetSchemaSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Set the JSON Schema a suite's fleet values are held to.",
      discussion: """
        FILE (or - for standard input) holds JSON Schema draft 2020-12 describing the suite's settings as one \
        object: properties for each key, additionalProperties for the keys it does not name (false: no other key). \
        The keywords checked: type, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, \
        minLength, maxLength, pattern, items, prefixItems, minItems, maxItems, properties, additionalProperties, \
        and $defs with $ref within the schema; annotations (title, description, default, examples, x-...) are \
        kept. A schema with another keyword that changes what is valid (oneOf, if, format, ...) is refused, as is \
        required (a fleet's values are a partial layer): an ignored rule would let through what it forbids. \
        A pattern costs at most its size times the value's length (no backtracking). Every value the suite holds \
        is checked against it first: a schema they break is refused, listing them, unless --force, after which \
        every machine keeps them and reports them refused until they change. Prints the revision it was set at; \
        the change is recorded (`fleet history`).
        """)

    @Option(help: "The suite.")
    var suite: String

    @Argument(help: ArgumentHelp("The schema: a JSON Schema file, or - for standard input.", valueName: "file"))
    var file: String

    @Flag(help: "Set it even though values the suite holds now break it.")
    var force = false

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let text: Data
      if file == "-" {
        text = Output.readAll()
      } else {
        do throws(Output.ReadError) {
          text = try Output.readAll(path: file)
        } catch {
          throw failure("cannot read \(file): \(error.reason).", remedy: "Nothing was changed.", ExitStatus.usage)
        }
      }
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let written = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.setSchema(jsonText: String(decoding: text, as: UTF8.self), suite: suite, force: force)
      }
      if written.changed {
        Output.line("the schema of \(suite) is set, at revision \(written.revision)")
      } else {
        Output.line(
          "\(suite) already holds this schema: nothing was changed (the cluster is at revision \(written.revision))")
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: written.revision)
    }
  }

  struct FleetSchemaGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Print the JSON Schema a suite's fleet values are held to. Exit status 1 when it has none.")

    @Option(help: "The suite.")
    var suite: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [suite])
      guard
        let text = try await endpoints.reporting({ () throws(FleetError) in try await cluster.schema(suite: suite) })
      else { throw failure("The cluster holds no schema for \(suite).", ExitStatus.absent) }
      Output.line(text.escapingControlCharacters(keepingLines: true))
    }
  }

  struct FleetSchemaDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Remove a suite's schema: its fleet values are held to none. Removing none succeeds.",
      discussion: "Prints the revision it was removed at; the change is recorded (`fleet history`).")

    @Option(help: "The suite.")
    var suite: String

    @OptionGroup var cluster: ClusterOptions

    @OptionGroup var records: RecordOptions

    func run() async throws {
      let (cluster, endpoints) = try records.writing(with: self.cluster, suite: suite)
      let removed = try await endpoints.reporting { () throws(FleetError) in
        try await cluster.removeSchema(suite: suite)
      }
      if removed.changed {
        Output.line("the schema of \(suite) is removed, at revision \(removed.revision)")
      } else {
        Output.line("\(suite) holds no schema: nothing was removed (the cluster is at revision \(removed.revision))")
      }
      try await records.waitIfAsked(cluster, endpoints, suite: suite, revision: removed.revision)
    }
  }
#endif
