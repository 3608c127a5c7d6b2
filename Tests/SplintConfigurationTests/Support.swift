#if SplintConfiguration
  import Configuration
  import Foundation
  import SplintSettings
  import Synchronization
  import TestSupport

  extension Scratch {
    /// A settings file in the scratch directory holding `json`, and its store.
    func store(_ json: String, name: String = "settings.json") throws -> SettingsStore {
      try Data(json.utf8).write(to: url(name))
      return SettingsStore(fileURL: url(name))
    }
  }

  /// A value that tasks share.
  final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
  }

  /// The values `watch` hands its handler, until `last` holds for one or `seconds` pass.
  func watched<Value: Sendable>(
    within seconds: Double = 30, until last: @escaping @Sendable (Value) -> Bool,
    _ watch: @escaping @Sendable (@Sendable (Value) -> Bool) async throws -> Void
  ) async throws -> [Value] {
    let seen = Shared<[Value]>([])
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        try await watch { value in
          seen.value.withLock { $0.append(value) }
          return last(value)
        }
      }
      group.addTask { try await Task.sleep(for: .seconds(seconds)) }
      try await group.next()
      group.cancelAll()
    }
    return seen.value.withLock { $0 }
  }

  /// The first `count` elements of `stream`, or fewer when `seconds` pass first.
  func take<Element: Sendable>(
    _ count: Int, from stream: AsyncStream<Element>, within seconds: Double = 30
  ) async
    -> [Element]
  {
    let seen = Shared<[Element]>([])
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await element in stream {
          if seen.value.withLock({
            $0.append(element); return $0.count == count
          }) {
            return
          }
        }
      }
      group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
      await group.next()
      group.cancelAll()
    }
    return seen.value.withLock { $0 }
  }

  /// An access reporter that keeps every event, for tests of what swift-configuration reports.
  final class RecordingReporter: AccessReporter {
    let events = Mutex<[AccessEvent]>([])
    func report(_ event: AccessEvent) { events.withLock { $0.append(event) } }
    /// Every event as swift-configuration describes it.
    var text: String { events.withLock { $0.map { "\($0)" }.joined(separator: "\n") } }
  }

  /// The settings file ProviderCompatTest reads (its required data, as swift-configuration's own JSON tests write it).
  let compatibilityJSON = """
    {
      "string": "Hello", "int": 42, "double": 3.14, "bool": true, "bytes": "bWFnaWM=",
      "other": {
        "string": "Other Hello", "int": 24, "double": 2.72, "bool": false, "bytes": "bWFnaWMy",
        "stringy": {"array": ["Hello", "Swift"]}, "inty": {"array": [16, 32]}, "doubly": {"array": [0.9, 1.8]},
        "booly": {"array": [false, true, true]}, "byteChunky": {"array": ["bWFnaWM=", "bWFnaWMy", "bWFnaWM="]}
      },
      "stringy": {"array": ["Hello", "World"]}, "inty": {"array": [42, 24]}, "doubly": {"array": [3.14, 2.72]},
      "booly": {"array": [true, false]}, "byteChunky": {"array": ["bWFnaWM=", "bWFnaWMy"]}
    }
    """
#endif
