#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport
  import Testing

  /// A suite's schema in the cluster (`$schema`): the writing commands check values against it in their transaction,
  /// and every machine's follower keeps the last good value of a key whose value it refuses.
  @Suite(.startsServers) struct FleetSchemaTests {
    /// A schema for `interval` (an integer up to `maximum`) and `name` (a pattern that backtracks in a backtracking
    /// engine), and no other key.
    func schema(maximum: Int = 300) -> String {
      """
      {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "app",
       "properties": {"interval": {"type": "integer", "minimum": 1, "maximum": \(maximum), "description": "seconds"},
                      "name": {"type": "string", "pattern": "^(a+)+$"}},
       "additionalProperties": false}
      """
    }

    /// The keys `machine` refused, keeping their last good values, and why.
    static func refused(_ machine: Machine) -> [String: String] {
      machine.store().fleetStatus.first?.rejectedKeys ?? [:]
    }

    @Test(
      "writes are checked against the schema in their transaction; a schema today's values break, or one not checked, is refused"
    )
    func writesChecked() async throws {
      let (etcd, cluster) = try await startCluster()
      try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "app")
      for (text, words) in [
        (#"{"properties": {"interval": {"oneOf": [{"type": "integer"}]}}}"#, "oneOf"),
        (#"{"required": ["interval"]}"#, "required"), ("{not json", "it is not JSON"),
      ] {
        do {
          try await cluster.setSchema(jsonText: text, suite: "app")
          Issue.record("the schema \(text) was set")
        } catch {
          #expect(error.code == .invalidSchema && error.description.contains(words), "\(error)")
        }
      }
      #expect(try await cluster.schema(suite: "app") == nil)
      let set = try await cluster.setSchema(jsonText: schema(), suite: "app")
      let stored = try await cluster.schema(suite: "app")
      #expect(set.changed && stored == schema())
      #expect(try await cluster.setSchema(jsonText: schema(), suite: "app").changed == false)

      // Refused, with the key, the rule and the value; nothing written.
      for (key, text, words) in [
        ("interval", "600", "interval: must be at most 300 (maximum), found 600"),
        ("interval", #""sixty""#, #"interval: must be an integer (type), found "sixty""#),
        ("intervall", "1", "intervall: "),
      ] {
        do {
          try await cluster.setValue(jsonText: text, forKey: key, suite: "app")
          Issue.record("\(key) = \(text) was written")
        } catch {
          #expect(error.code == .schemaViolation && error.description.contains(words), "\(error)")
        }
      }
      await #expect(throws: FleetError.self) {
        try await cluster.setValues([("interval", "30"), ("name", #""b""#)], suite: "app")
      }
      #expect(try await cluster.storedValue(forKey: "interval", suite: "app") == "60")
      #expect(try await cluster.setValue(jsonText: "30", forKey: "interval", suite: "app").changed)
      try await cluster.setEnforced(true, forKey: "interval", suite: "app")

      // A schema the values break: refused, listing them, unless forced.
      do {
        try await cluster.setSchema(jsonText: schema(maximum: 10), suite: "app")
        Issue.record("a schema the values break was set")
      } catch {
        #expect(
          error.code == .schemaViolation
            && error.description.contains("values app holds now: interval: must be at most 10"),
          "\(error)")
      }
      #expect(try await cluster.setSchema(jsonText: schema(maximum: 10), suite: "app", force: true).changed)
      // A schema put around splintctl that is not one: no value is written on it; a deletion always is.
      try await etcd.put("/splint/app/$schema", #"{"if": {}}"#)
      do {
        try await cluster.setValue(jsonText: "5", forKey: "interval", suite: "app")
        Issue.record("a value was written on a schema no follower takes")
      } catch {
        #expect(error.code == .invalidSchema && error.description.contains("if"), "\(error)")
      }
      try await cluster.setEnforced(false, forKey: "interval", suite: "app")
      #expect(try await cluster.removeValue(forKey: "interval", suite: "app").changed, "a deletion is always allowed")
      let history = try await cluster.history(suite: "app")
      #expect(history.changes.first?.keys.map(\.key) == ["interval"])
      #expect(
        history.changes.contains { $0.keys.map(\.key) == ["$schema"] && $0.author?.command.isEmpty == false },
        "the schema set is recorded, with its author")
      #expect(try await cluster.removeSchema(suite: "app").changed)
      #expect(try await cluster.removeSchema(suite: "app").changed == false)
      #expect(try await cluster.setValue(jsonText: "600", forKey: "interval", suite: "app").changed)
      await etcd.stopAll()
    }

    @Test(
      "three machines keep the last good value of what the schema refuses; a schema changed, or removed, is applied to every value"
    )
    func machinesKeepLastGood() async throws {
      let (etcd, cluster) = try await startCluster()
      try await cluster.setValue(jsonText: "60", forKey: "interval", suite: "app")
      try await cluster.setSchema(jsonText: schema(), suite: "app")
      let machines = (0..<3).map { _ in Machine(cluster: cluster) }
      for machine in machines { try machine.start() }
      func everywhere(_ condition: @escaping @Sendable (Machine) -> Bool) async -> Bool {
        await eventually { machines.allSatisfy(condition) }
      }
      #expect(await everywhere { $0.store().value(forKey: "interval") == 60 })

      // Put around splintctl: refused on every machine, the last good value kept, for a program started afterwards.
      try await etcd.put("/splint/app/interval", "600")
      #expect(await everywhere { Self.refused($0)["interval"]?.contains("interval: must be at most 300") == true })
      #expect(machines.allSatisfy { $0.store().value(forKey: "interval") == 60 })
      // A pattern a backtracking engine would take years over: refused at once, and the follower goes on.
      try await etcd.put("/splint/app/name", "\"" + String(repeating: "a", count: 30_000) + "b\"")
      // Never good on the machines, it is left out.
      #expect(
        await everywhere { $0.store().fleetStatus.first?.skippedKeys["name"]?.contains("(pattern)") == true })

      // Restarted, a follower holds the schema still (its copy keeps it), and refuses again what it refuses.
      await machines[0].stop()
      try machines[0].start()
      try await etcd.put("/splint/app/interval", "700")
      #expect(await everywhere { Self.refused($0)["interval"]?.contains("found 700") == true })
      #expect(machines[0].store().value(forKey: "interval") == 60)

      // A schema that is not one is refused whole: the last good schema holds.
      try await etcd.put("/splint/app/$schema", #"{"oneOf": []}"#)
      #expect(await everywhere { Self.refused($0)["$schema"]?.contains("oneOf") == true })
      try await etcd.put("/splint/app/interval", "800")
      #expect(await everywhere { Self.refused($0)["interval"]?.contains("found 800") == true })

      // A good value applies; a schema changed so that it refuses what the machines hold keeps it, and says so.
      try await etcd.put("/splint/app/interval", "120")
      #expect(await everywhere { $0.store().value(forKey: "interval") == 120 && Self.refused($0)["interval"] == nil })
      try await cluster.setSchema(jsonText: schema(maximum: 100), suite: "app", force: true)
      #expect(await everywhere { Self.refused($0)["interval"]?.contains("must be at most 100") == true })
      #expect(machines.allSatisfy { $0.store().value(forKey: "interval") == 120 && Self.refused($0)["$schema"] == nil })

      // Removed: what it refused applies.
      try await etcd.put("/splint/app/interval", "900")
      try await cluster.removeSchema(suite: "app")
      #expect(await everywhere { $0.store().value(forKey: "interval") == 900 && Self.refused($0).isEmpty })
      for machine in machines { await machine.stop() }
    }
  }
#endif
