#if SplintFleet
  import SplintSettings

  /// A suite's labels in the cluster: the values some machines take over the suite's value for every machine, and the
  /// one order in which they win.
  ///
  /// | keys | what they hold |
  /// | --- | --- |
  /// | `/splint/<suite>/$for/<label>/<key>` | `<key>`'s JSON text on the machines that carry `<label>` |
  /// | `/splint/<suite>/$labels` | the labels, first to last in the order their values win: `["host:*", "canary"]` |
  ///
  /// A label is a name (`canary`, `eu`: 1 to 128 letters, digits, `.`, `_` and `-`, not starting with `.` or `-`), or
  /// `host:` and a machine's name, which only that machine carries. Every follower carries its host label and the
  /// labels it is given; for each key it takes the value of its first label in the order that has one (its host
  /// label always first, whatever the order says), else the suite's value for every machine. A label the order does
  /// not name gives no machine a value.
  package enum FleetLabels {
    /// What every host label starts with.
    static let hostPrefix = "host:"
    /// The order's name for every machine's host label.
    package static let anyHost = "host:*"

    /// Whether `label` is a label: a name, or `host:` and a machine's name.
    static func isLabel(_ label: some StringProtocol) -> Bool {
      let name = label.hasPrefix(hostPrefix) ? String(label.dropFirst(hostPrefix.count)) : String(label)
      return FleetMachine.isName(name)
    }

    /// `label`, if it is one.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for one that is not a label.
    static func checked(_ label: String) throws(FleetError) -> String {
      guard isLabel(label) else {
        throw FleetError(
          .invalidConfiguration(
            """
            \(label.shown()) is not a label: use 1 to 128 letters, digits, ".", "_" and "-", not starting with "." \
            or "-" (such as canary), or host: and a machine's name (host:web-07).
            """))
      }
      return label
    }

    /// The host label of `machine`.
    static func host(_ machine: FleetMachine) -> String { hostPrefix + machine.name }

    /// The suite's key (under its prefix) of `key`'s value for `label`: `$for/<label>/<key>`.
    static func key(_ key: String, label: String) -> String {
      FleetCopy.labelValuePrefix + label + "/" + key
    }

    /// The label and setting key that the suite's key `name` (under its prefix) holds a value of, when it is a
    /// label's value: `$for/<label>/<key>`, with a label and a key that is not reserved; nil otherwise.
    static func labelled(_ name: some StringProtocol) -> (label: String, key: String)? {
      guard name.hasPrefix(FleetCopy.labelValuePrefix) else { return nil }
      let rest = name.dropFirst(FleetCopy.labelValuePrefix.count)
      guard let slash = rest.firstIndex(of: "/") else { return nil }
      let label = rest[..<slash]
      let key = rest[rest.index(after: slash)...]
      guard isLabel(label), !key.isEmpty, !FleetCopy.isReserved(key) else { return nil }
      return (String(label), String(key))
    }

    /// The setting a change of the suite's key `name` writes: `name` itself, the key of a label's value, or nil for
    /// another reserved key (`$enforced`, `$schema`, `$labels`).
    static func settingKey(_ name: String) -> String? {
      FleetCopy.isReserved(name) ? labelled(name)?.key : name
    }

    /// The labels `$labels` lists, first to last.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` for text that is not a JSON array of labels (`host:*` among them),
    ///   each once, saying what is wrong.
    package static func order(_ text: [UInt8]) throws(FleetError) -> [String] {
      let value: JSONValue
      do {
        value = try FleetCopy.parseValue(text).value
      } catch {
        throw FleetError(.notJSON(key: FleetCopy.labelsKey, reason: FleetError.jsonReason(error)))
      }
      guard case .array(let entries) = value else {
        throw FleetError(.notJSON(key: FleetCopy.labelsKey, reason: "it is not an array of labels"))
      }
      var labels: [String] = []
      for entry in entries {
        guard case .string(let label) = entry, label == anyHost || isLabel(label), !labels.contains(label) else {
          throw FleetError(
            .notJSON(
              key: FleetCopy.labelsKey,
              reason: "its entry \(entry.description.shown(limit: 100)) is not a label, or is listed twice"))
        }
        labels.append(label)
      }
      return labels
    }

    /// The order a machine that carries `labels` resolves a key's value in: its host labels first, then the order's
    /// labels it carries, first to last.
    static func resolving(_ order: [String], carried labels: Set<String>) -> [String] {
      labels.filter { $0.hasPrefix(hostPrefix) }.sorted()
        + order.filter { !$0.hasPrefix(hostPrefix) && labels.contains($0) }
    }
  }
#endif
