#if SplintFleet
  import SplintSettings

  extension EtcdCluster {
    /// `suite`'s labels, first to last in the order their values win (its `$labels`); empty when it has none.
    ///
    /// - Throws: ``FleetError/Code/notJSON`` when `$labels` is not an array of labels, and the cluster's errors.
    public func labels(suite: String) async throws(FleetError) -> [String] {
      guard let text = try await reservedText(FleetCopy.labelsKey, suite: suite) else { return [] }
      return try FleetLabels.order(Array(text.utf8))
    }

    /// Sets the order in which `suite`'s labels win on a machine that carries several: `labels`, first to last,
    /// after the machine's host label (`host:<machine>`), which always wins first (the order starts with `host:*`
    /// to say so). A value for a label the order does not name gives no machine a value, and
    /// ``setValue(jsonText:forKey:suite:label:)`` refuses one. Recorded, as every change is.
    ///
    /// ```swift
    /// try await cluster.setLabels(["canary", "eu"], suite: "com.example.sync")  // ["host:*", "canary", "eu"]
    /// ```
    ///
    /// - Returns: The revision it was set at, and the order it replaced (``Write/previousValue``, its JSON text; nil
    ///   when the suite had none); ``Write/changed`` is false when the suite had this very order.
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, or one given twice; and the
    ///   cluster's errors.
    @discardableResult
    public func setLabels(_ labels: [String], suite: String) async throws(FleetError) -> Write {
      var order = [FleetLabels.anyHost]
      for label in labels where label != FleetLabels.anyHost {
        guard !order.contains(label) else {
          throw FleetError(.invalidConfiguration("the label \(label.shown()) is given twice."))
        }
        order.append(try FleetLabels.checked(label))
      }
      let text = JSONValue.array(order.map(JSONValue.string)).description
      let name = FleetCopy.labelsKey
      let (write, before) = try await commit(suite: suite, reading: [name]) { current throws(FleetError) in
        current[name]?.text == text ? nil : [name: text]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: before[name]?.text)
    }

    /// Stores `jsonText` as `key`'s value in `suite` on the machines that carry `label`: a machine takes it over the
    /// suite's value for every machine, unless a label before `label` in the suite's order (``labels(suite:)``)
    /// gives the key a value there too. The key `<prefix><suite>/$for/<label>/<key>`, which etcdctl may write too.
    /// With `label` nil, as ``setValue(jsonText:forKey:suite:)``. Checked against the suite's schema, and recorded,
    /// as every write is.
    ///
    /// ```swift
    /// try await cluster.setValue(jsonText: "30", forKey: "interval", suite: "com.example.sync", label: "canary")
    /// ```
    ///
    /// - Returns: The revision it was written at, and the value it replaced for the label.
    /// - Throws: ``FleetError/Code/unknownLabel`` for a label the suite's order does not name (a host label,
    ///   `host:<machine>`, needs none), ``FleetError/Code/invalidConfiguration`` for one that is not a label, and
    ///   the errors of ``setValue(jsonText:forKey:suite:)``.
    @discardableResult
    public func setValue(
      jsonText: String, forKey key: String, suite: String, label: String?
    ) async throws(FleetError) -> Write {
      guard let label else { return try await setValue(jsonText: jsonText, forKey: key, suite: suite) }
      let name = try labelledKey(key, suite: suite, label: label)
      try Self.requireJSON(jsonText, key: key)
      let order = FleetCopy.labelsKey
      let (write, before) = try await commit(suite: suite, reading: [name, order]) { current throws(FleetError) in
        if !label.hasPrefix(FleetLabels.hostPrefix) {
          let labels = try current[order].map { stored throws(FleetError) in
            try FleetLabels.order(Array(stored.text.utf8))
          }
          guard let labels, labels.contains(label) else {
            throw FleetError(.unknownLabel(suite: suite, label: label, labels: labels ?? []))
          }
        }
        return [name: jsonText]
      }
      return Write(revision: write.revision, changed: true, previousValue: before[name]?.text)
    }

    /// Removes `label`'s value of `key` in `suite`: the machines that carry it take the key's next label's value, or
    /// the suite's. With `label` nil, as ``removeValue(forKey:suite:)``. Recorded, as every change is.
    ///
    /// - Returns: The revision it was removed at, and the value it held (``Write/changed`` is false when the label
    ///   held none).
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, and the cluster's errors.
    @discardableResult
    public func removeValue(forKey key: String, suite: String, label: String?) async throws(FleetError) -> Write {
      guard let label else { return try await removeValue(forKey: key, suite: suite) }
      let name = try labelledKey(key, suite: suite, label: label)
      let (write, before) = try await commit(suite: suite, reading: [name]) { current throws(FleetError) in
        current[name] == nil ? nil : [name: .none]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: before[name]?.text)
    }

    /// The values `suite` holds for `label`, sorted by key, with their JSON text as the cluster holds it.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, and the cluster's errors.
    public func storedValues(suite: String, label: String) async throws(FleetError) -> [(key: String, text: String)] {
      try await storedValues(
        under: prefix(ofSuite: suite) + Array(FleetLabels.key("", label: FleetLabels.checked(label)).utf8))
    }

    /// The suite's key (under its prefix) of `key`'s value for `label`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, and the errors of
    ///   ``key(_:suite:)``.
    private func labelledKey(_ key: String, suite: String, label: String) throws(FleetError) -> String {
      _ = try self.key(key, suite: suite)
      return FleetLabels.key(key, label: try FleetLabels.checked(label))
    }
  }
#endif

#if SplintFleet
  extension EtcdCluster {
    /// Makes `label`'s values of `keys` (every value the label holds, when nil) the suite's values for every machine,
    /// and removes them from the label, in one transaction recorded as one change: the label's machines keep the
    /// values they hold, and every other machine takes them. Checked against the suite's schema, as every write is.
    ///
    /// ```swift
    /// let (written, promoted) = try await cluster.promote(suite: "com.example.sync", label: "canary")
    /// print("\(promoted.joined(separator: ", ")) for every machine at revision \(written.revision)")
    /// ```
    ///
    /// - Returns: The revision it was made at (``Write/changed`` is false, and nothing was written, when the label
    ///   holds no value), and the keys promoted, sorted.
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a label that is not one, or a key the label holds no
    ///   value of (nothing is changed); ``FleetError/Code/transactionTooLarge`` for more than one transaction takes;
    ///   and the cluster's errors.
    public func promote(
      suite: String, label: String, keys: [String]? = nil
    ) async throws(FleetError) -> (write: Write, promoted: [String]) {
      _ = try FleetLabels.checked(label)
      for key in keys ?? [] { _ = try self.key(key, suite: suite) }
      let reading = keys.map { keys in keys.flatMap { [$0, FleetLabels.key($0, label: label)] } }
      var promoted: [String] = []
      let (write, _) = try await commit(
        suite: suite, reading: reading, what: "Promoting the values of \(label) in \(suite)"
      ) { current throws(FleetError) in
        var held: [String: String] = [:]
        for (name, stored) in current {
          if let labelled = FleetLabels.labelled(name), labelled.label == label { held[labelled.key] = stored.text }
        }
        if let missing = keys?.first(where: { held[$0] == nil }) {
          throw FleetError(
            .invalidConfiguration(
              "\(label.shown()) holds no value of \(missing.shown()) in \(suite): nothing was promoted."))
        }
        promoted = (keys.map { Array(Set($0)) } ?? Array(held.keys)).sorted()
        guard !promoted.isEmpty else { return nil }
        var changes: [String: String?] = [:]
        for key in promoted {
          changes[key] = held[key]
          changes[FleetLabels.key(key, label: label)] = .some(nil)
        }
        return changes
      }
      return (Write(revision: write.revision, changed: write.changed, previousValue: nil), promoted)
    }
  }
#endif
