extension FleetCopy {
  /// What a `"$enforced"` member lists: the keys of the settings the fleet enforces, and what is wrong with the
  /// rest. The one reading of it, for the follower that copies it from a cluster, every store that reads a copy, and
  /// the operator's commands: an entry that is not a key is told, never passed over in silence.
  package struct EnforcedKeys: Sendable, Hashable {
    /// The keys listed, each once, in key order.
    package let keys: [String]
    /// What is wrong with the member, in words: it is not an array, or entries of it are not keys (not a string,
    /// empty, or reserved); nil when nothing is.
    package let problem: String?

    /// What the member `json` lists; none when there is no member.
    package init(_ json: JSONValue?) {
      guard let json else {
        self.init(keys: [], problem: nil)
        return
      }
      guard case .array(let entries) = json else {
        self.init(keys: [], problem: "it is not an array of keys")
        return
      }
      var keys = Set<JSONKey>()
      var others: [String] = []
      for entry in entries {
        if case .string(let key) = entry, !key.isEmpty, !FleetCopy.isReserved(key) {
          keys.insert(JSONKey(key))
        } else {
          others.append(entry.description)
        }
      }
      self.init(
        keys: keys.sorted().map(\.text),
        problem: others.isEmpty
          ? nil
          : "\(others.count == 1 ? "its entry" : "its entries") \(others.joined(separator: ", ")) "
            + "\(others.count == 1 ? "is" : "are") not the key of a setting (a string, not empty, without a leading $)")
    }

    /// What the member lists, as a cluster holds it: JSON text.
    package init(_ bytes: [UInt8]) {
      let value: JSONValue
      do {
        value = try FleetCopy.parseValue(bytes).value
      } catch {
        self.init(keys: [], problem: "it is not an array of keys (\(error.summary))")
        return
      }
      self.init(value)
    }

    private init(keys: [String], problem: String?) {
      self.keys = keys
      self.problem = problem
    }

    /// Whether `key` is among the keys listed.
    package func contains(_ key: JSONKey) -> Bool { keys.contains { JSONKey($0) == key } }
  }
}
