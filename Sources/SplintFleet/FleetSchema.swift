#if SplintFleet
  import SplintSettings

  /// A suite's schema, as a cluster holds it under `<prefix><suite>/$schema`: the JSON Schema (draft 2020-12, the
  /// keywords `JSONSchema` checks) each of the suite's values is held to, by the commands that write one and by every
  /// follower before its machine takes one.
  struct FleetSchema: Sendable {
    /// The schema, as JSON: what a copy keeps of it, for a follower that resumes from the copy.
    let json: JSONValue
    /// The bytes it takes in the cluster, which count in a copy's size.
    let size: Int
    private let compiled: JSONSchema

    /// The schema `bytes` hold, as a cluster holds it, for `suite`.
    ///
    /// - Throws: ``FleetError/Code/invalidSchema`` for text that is not JSON, or not a schema checked here.
    init(_ bytes: [UInt8], suite: String) throws(FleetError) {
      let json: JSONValue
      do {
        json = try FleetCopy.parseValue(bytes).value
      } catch {
        throw FleetError(.invalidSchema(suite: suite, reason: "it is not JSON (\(FleetError.jsonReason(error)))."))
      }
      try self.init(json, size: bytes.count, suite: suite)
    }

    /// The schema `json` is, taking `size` bytes in the cluster.
    ///
    /// - Throws: ``FleetError/Code/invalidSchema`` for what is not a schema checked here.
    init(_ json: JSONValue, size: Int, suite: String) throws(FleetError) {
      do {
        compiled = try JSONSchema(json)
      } catch {
        throw FleetError(.invalidSchema(suite: suite, reason: "\(error)."))
      }
      self.json = json
      self.size = size
    }

    /// What is wrong with `value` as `key`'s, as people read it (the key, the rule, what was found): at most three
    /// violations; none when the schema allows it.
    func violations(of value: JSONValue, forKey key: String) -> [String] {
      compiled.validate(value, forKey: key, limit: 3).map(\.description)
    }
  }
#endif
