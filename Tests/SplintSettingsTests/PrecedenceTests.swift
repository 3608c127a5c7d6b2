import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SplintSettings

/// Which file a key's value comes from, over every combination of the user's file, a fleet copy, an enforced key, a
/// system file and the default, and what `changes()` tells of a change in each: the store's reads, a `Setting`'s and
/// a transaction's, against the rule written out here once more; and a change is told exactly when a key's value in
/// effect changes.
@Suite struct PrecedenceTests {
  let scratch = Scratch()

  /// What the files hold of the keys `k` and `$k` (reserved: never read from a copy, never enforced): each file
  /// its value, or none (the copy holds a `$k` of its own always); and whether the copy lists `k` in `"$enforced"`.
  struct State: Hashable, CustomStringConvertible {
    var user: Int?
    var copy: Int?
    var enforced: Bool
    var system: Int?

    var description: String {
      "user \(user.map(String.init) ?? "-"), copy \(copy.map(String.init) ?? "-")\(enforced ? " enforcing k" : ""), "
        + "system \(system.map(String.init) ?? "-")"
    }

    /// Every combination: each file holds a value or none, and the copy enforces `k` or not.
    static let all: [State] = [nil, 1].flatMap { user in
      [nil, 2].flatMap { copy in
        [false, true].flatMap { enforced in
          [nil, 3].map { State(user: user, copy: copy, enforced: enforced, system: $0) }
        }
      }
    }

    /// Each change a file can make from this state: a value added, removed or changed, enforcement turned on or off.
    var changes: [(name: String, next: State)] {
      var changes: [(String, State)] = []
      changes.append(("user's value \(user == nil ? "added" : "removed")", with { $0.user = $0.user == nil ? 1 : nil }))
      if let user { changes.append(("user's value changed", with { $0.user = user + 10 })) }
      changes.append(("copy's value \(copy == nil ? "added" : "removed")", with { $0.copy = $0.copy == nil ? 2 : nil }))
      if let copy { changes.append(("copy's value changed", with { $0.copy = copy + 10 })) }
      changes.append(("enforcement \(enforced ? "ended" : "begun")", with { $0.enforced.toggle() }))
      changes.append(
        ("system value \(system == nil ? "added" : "removed")", with { $0.system = $0.system == nil ? 3 : nil }))
      if let system { changes.append(("system value changed", with { $0.system = system + 10 })) }
      return changes
    }

    private func with(_ change: (inout State) -> Void) -> State {
      var state = self
      change(&state)
      return state
    }
  }

  /// The keys every state sets.
  static let keys = ["k", "$k"]

  /// One machine: a store with a user's file, a copy (written as its follower writes it) and a system file, a
  /// setting on each key, and what its changes told.
  final class Machine: Sendable {
    let user: URL
    let copy: URL
    let system: URL
    let store: SettingsStore
    let writer: FleetCopyWriter
    /// Stores on the user's file and the system file alone, which write them in this process (a change is heard
    /// before its write returns), as a hand edit would, whatever the copy enforces.
    let userWriter: SettingsStore
    let systemWriter: SettingsStore
    let settings: [String: Setting<Int>]
    let told: Shared<[Set<JSONKey>]>
    private let sentinel = Mutex(0)
    private let reader: Task<Void, Never>

    init(_ scratch: Scratch) throws {
      user = scratch.url("home", "app", "settings.json")
      copy = scratch.url("fleet", "app.json")
      system = scratch.url("xdg", "app", "settings.json")
      writer = FleetCopyWriter(url: copy)
      #expect(try writer.takeOver())
      userWriter = SettingsStore(fileURL: user)
      systemWriter = SettingsStore(fileURL: system)
      let store = SettingsStore(fileURL: user, systemFiles: [system], fleetCopies: [copy])
      self.store = store
      settings = Dictionary(
        uniqueKeysWithValues: PrecedenceTests.keys.map { ($0, Setting($0, default: 0, store: store)) })
      let changes = store.changes()
      let told = Shared<[Set<JSONKey>]>([])
      self.told = told
      reader = Task {
        for await keys in changes { told.value.withLock { $0.append(keys) } }
      }
    }

    deinit { reader.cancel() }

    /// Makes the files hold `state`, one write each.
    func write(_ state: State) throws {
      try userWriter.update { settings in
        for key in PrecedenceTests.keys { settings[key] = state.user.map { .int($0) } }
      }
      // The copy holds `$k` always, as a member of its own, which no store reads: a copy is never read for a reserved
      // key.
      let values = [("$k", JSONValue.int(9), String?.none)] + (state.copy.map { [("k", .int($0), nil)] } ?? [])
      try writer.write(
        values: values, enforced: state.enforced ? ["k"] : [],
        metadata: FleetCopy.Metadata(
          engine: "etcd", cluster: "42", revision: 7, endpoints: [], prefix: "/splint/app/", state: .following,
          since: Date(timeIntervalSince1970: 1_800_000_000)))
      try systemWriter.update { settings in
        for key in PrecedenceTests.keys { settings[key] = state.system.map { .int($0) } }
      }
    }

    /// What `changes()` told since the last call: a change of the user's file's sentinel key, which it tells after
    /// everything told before it (every change here is made in this process, and told before its write returns),
    /// marks the end.
    func toldSinceLastCall() async throws -> Set<JSONKey> {
      let mark = sentinel.withLock { value in
        value += 1
        return value
      }
      try store.set(.int(mark), forKey: "sentinel")
      let isMark = { (keys: Set<JSONKey>) in keys == ["sentinel"] }
      #expect(await eventually { told.value.withLock { isMark($0.last ?? []) } })
      return told.value.withLock { told in
        defer { told = [] }
        return Set(told.dropLast().joined())
      }
    }

    /// Where `key`'s value comes from in `state`, by the rule: the copy's when it enforces the key (and may); else
    /// the user's, else the copy's (never for a reserved key), else the system file's; nil for the default.
    func expected(_ key: String, in state: State, trusted: Bool) -> (value: Int, origin: SettingsOrigin)? {
      let reserved = key.hasPrefix("$")
      if !reserved, state.enforced, trusted, let value = state.copy { return (value, .fleet(copy)) }
      if let value = state.user { return (value, .user(user)) }
      if !reserved, let value = state.copy { return (value, .fleet(copy)) }
      if let value = state.system { return (value, .system(system)) }
      return nil
    }
  }

  /// Checks every read of every key against the rule, in `state`: the store's, a `Setting`'s, a transaction's.
  private func check(_ machine: Machine, in state: State, trusted: Bool, _ comment: Comment) throws {
    for key in Self.keys {
      let expected = machine.expected(key, in: state, trusted: trusted)
      #expect(machine.store.value(forKey: key) == expected.map { .int($0.value) }, "\(key): \(comment)")
      #expect(machine.store.origin(ofKey: key) == expected?.origin, "\(key): \(comment)")
      #expect(machine.settings[key]?.value == expected?.value ?? 0, "\(key), a Setting: \(comment)")
      let read = try machine.store.update { $0[SettingKey(key, default: 0)] }
      #expect(read == expected?.value ?? 0, "\(key), a transaction: \(comment)")
    }
  }

  @Test(
    "every combination of user file, fleet copy, enforced key, system file and default, and a change in each: the value, its origin, and a change told exactly when the value in effect changes"
  )
  func precedence() async throws {
    let machine = try Machine(scratch)
    try machine.write(State(user: nil, copy: 2, enforced: true, system: nil))
    let trusted = machine.store.fleetStatus.first?.isTrusted == true
    #expect(trusted || getuid() != 0, "root's copy, in root's directories, may enforce keys")
    for state in State.all {
      for (change, next) in state.changes {
        try machine.write(state)
        _ = try await machine.toldSinceLastCall()
        try check(machine, in: state, trusted: trusted, "\(state)")
        try machine.write(next)
        let told = try await machine.toldSinceLastCall()
        try check(machine, in: next, trusted: trusted, "\(state), then \(change)")
        let changed = Set(
          Self.keys.filter {
            machine.expected($0, in: state, trusted: trusted)?.value
              != machine.expected($0, in: next, trusted: trusted)?.value
          }.map { JSONKey($0) })
        #expect(told == changed, "\(state), then \(change): told \(told.sorted()), not \(changed.sorted())")
      }
    }
  }
}
