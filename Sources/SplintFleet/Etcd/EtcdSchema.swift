#if SplintFleet
  import SplintSettings

  extension EtcdCluster {
    /// The JSON Schema `suite`'s values are held to, as the cluster holds its text (`<prefix><suite>/$schema`); nil
    /// when the suite has none.
    ///
    /// - Throws: The cluster's errors.
    public func schema(suite: String) async throws(FleetError) -> String? {
      try await reservedText(FleetCopy.schemaKey, suite: suite)
    }

    /// Holds `suite`'s values to the JSON Schema `jsonText` (draft 2020-12, with the keywords SplintSettings'
    /// `JSONSchema` checks): every writing command checks a value against it in the transaction that writes the
    /// value, and every machine's follower refuses a value it does not allow, keeping the key's last good value.
    /// The schema describes the suite's settings as one object: `properties` for each key, `additionalProperties`
    /// for the keys it does not name (`false`: no other key); `required` is refused, since a fleet's values are a
    /// partial layer. Recorded, as every change is.
    ///
    /// ```swift
    /// try await cluster.setSchema(
    ///   jsonText: #"{"properties": {"interval": {"type": "integer", "minimum": 1}}}"#, suite: "com.example.sync")
    /// ```
    ///
    /// - Parameters:
    ///   - jsonText: The schema, as JSON text.
    ///   - suite: The suite whose values it holds.
    ///   - force: Set it even though values the suite holds now break it: every machine then keeps those values, and
    ///     reports them refused, until they change. Without it, such a schema is refused.
    /// - Returns: The revision it was set at; ``Write/changed`` is false when the suite had this very schema.
    /// - Throws: ``FleetError/Code/invalidSchema`` for text that is not JSON, or a keyword that changes what is valid
    ///   and is not checked (`oneOf`, `if`, `format`, ...: an ignored rule would let through what it forbids);
    ///   ``FleetError/Code/schemaViolation`` listing the values it would refuse (nothing is changed); and the
    ///   cluster's errors.
    @discardableResult
    public func setSchema(jsonText: String, suite: String, force: Bool = false) async throws(FleetError) -> Write {
      let schema = try FleetSchema(Array(jsonText.utf8), suite: suite)
      // Every value is read and checked; the write holds only if no value was put since (one removed is no matter).
      let (write, _) = try await commit(suite: suite, reading: nil, comparingPuts: true) {
        current throws(FleetError) in
        if !force { try Self.check(current.mapValues(\.text), against: schema, suite: suite, existing: true) }
        return current[FleetCopy.schemaKey]?.text == jsonText ? nil : [FleetCopy.schemaKey: jsonText]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: nil)
    }

    /// Removes `suite`'s schema: its values are held to none. Recorded, as every change is.
    ///
    /// - Returns: The revision it was removed at; ``Write/changed`` is false when the suite had none.
    /// - Throws: The cluster's errors.
    @discardableResult
    public func removeSchema(suite: String) async throws(FleetError) -> Write {
      let name = FleetCopy.schemaKey
      let (write, _) = try await commit(suite: suite, reading: [name]) { current throws(FleetError) in
        current[name] == nil ? nil : [name: .none]
      }
      return Write(revision: write.revision, changed: write.changed, previousValue: nil)
    }

    /// Throws unless the schema `suite` holds once `changes` are made (the one `values` read, or the one the
    /// changes set) allows each setting they write (a label's value too). A change that writes no setting (a
    /// deletion, `$enforced`) is never refused.
    ///
    /// - Throws: ``FleetError/Code/schemaViolation`` naming each value refused, and
    ///   ``FleetError/Code/invalidSchema`` when the schema is not one checked here (written around splintctl):
    ///   no value is written on a schema no follower takes.
    func checkSchema(_ changes: [String: String?], on values: [String: Stored], suite: String) throws(FleetError) {
      let text = changes[FleetCopy.schemaKey] ?? values[FleetCopy.schemaKey]?.text
      guard let text, changes.contains(where: { FleetLabels.settingKey($0.key) != nil && $0.value != nil }) else {
        return
      }
      try Self.check(
        changes.compactMapValues { $0 }, against: FleetSchema(Array(text.utf8), suite: suite), suite: suite,
        existing: false)
    }

    /// Throws ``FleetError/Code/schemaViolation`` naming what `schema` refuses of `values` (each key's text), the
    /// first 20 in the order of their keys; `existing` says they are the values the suite holds, not ones written.
    /// A label's value is checked as its key's; another reserved key, or text that is not JSON (a follower leaves that
    /// out whatever the schema says), is not checked.
    private static func check(
      _ values: [String: String], against schema: FleetSchema, suite: String, existing: Bool
    ) throws(FleetError) {
      let refused = values.sorted { $0.key < $1.key }.flatMap { key, text -> [String] in
        guard let name = FleetLabels.settingKey(key), let value = try? FleetCopy.parseValue(Array(text.utf8)).value
        else { return [] }
        return schema.violations(of: value, forKey: name)
      }
      guard refused.isEmpty else {
        throw FleetError(.schemaViolation(suite: suite, violations: Array(refused.prefix(20)), existing: existing))
      }
    }
  }
#endif
