#if SplintConfiguration
  import Configuration
  import Foundation
  import SplintConfiguration
  import SplintSettings
  import TestSupport
  import Testing

  @Suite("System layers through SettingsProvider") struct SystemLayerProviderTests {
    let scratch = Scratch()

    @Test func systemLayersShowThroughAndTheirChangesArrive() async throws {
      let system = scratch.url("system.json")
      try Data(#"{"server": {"port": 80}, "mode": "system", "only": "sys"}"#.utf8).write(to: system)
      try Data(#"{"mode": "user"}"#.utf8).write(to: scratch.url("settings.json"))
      let store = SettingsStore(fileURL: scratch.url("settings.json"), systemFiles: [system])
      let provider = SettingsProvider(store: store)
      let config = ConfigReader(provider: provider)
      #expect(config.int(forKey: "server.port") == 80)
      #expect(config.string(forKey: "mode") == "user")
      #expect(config.string(forKey: "only") == "sys")
      let snapshot = provider.snapshot()
      #expect(try snapshot.value(forKey: ["server", "port"], type: .int).value?.content == .int(80))
      let seen = try await watched(until: { $0 == 81 }) { handle in
        try await config.watchInt(forKey: "server.port", default: 0) { updates in
          for await port in updates {
            if port == 80 {
              try Data(#"{"server": {"port": 81}, "mode": "system", "only": "sys"}"#.utf8).write(to: system)
            }
            if handle(port) { return }
          }
        }
      }
      #expect(seen == [80, 81])
      let snapshots = try await watched(until: { $0 == "gone" }) { handle in
        try await provider.watchSnapshot { updates in
          for await snapshot in updates {
            let only = try snapshot.value(forKey: ["only"], type: .string).value?.content
            let text = only == nil ? "gone" : "there"
            if text == "there" { try Data(#"{"server": {"port": 81}}"#.utf8).write(to: system) }
            if handle(text) { return }
          }
        }
      }
      #expect(snapshots == ["there", "gone"])
    }
  }
#endif
