import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// The machine's copy of a fleet's settings as every store reads it: a layer between the user's file and the system
/// files, written here as a follower writes it (SplintFleet's tests follow a real etcd cluster into it).
@Suite struct FleetLayerTests {
  let scratch = Scratch()

  /// A copy of `values` at `copy`, as a follower writes it, with its follower lock held by `writer` (returned).
  @discardableResult
  func follow(
    _ values: [String: JSONValue], enforced: [String] = [], at copy: URL, state: FleetCopyStatus.State = .following,
    revision: Int64 = 7, writer: FleetCopyWriter? = nil
  ) throws -> FleetCopyWriter {
    let writer = writer ?? FleetCopyWriter(url: copy)
    #expect(try writer.takeOver())
    try writer.write(
      values: values.sorted { $0.key < $1.key }.map { ($0.key, $0.value, nil) }, enforced: enforced,
      metadata: FleetCopy.Metadata(
        engine: "etcd", cluster: "42", revision: revision, endpoints: ["http://127.0.0.1:2379"],
        prefix: "/splint/app/", state: state, since: Date(timeIntervalSince1970: 1_800_000_000),
        reason: state == .unreachable ? "no member answered" : nil))
    return writer
  }

  func save(_ text: String, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
  }

  @Test("a store of a suite looks for copies in $SPLINT_FLEET_DIRECTORY alone, else the user's state, then /var/lib")
  func copiesOfASuite() async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["SPLINT_FLEET_DIRECTORY"] = nil
    environment["XDG_STATE_HOME"] = scratch.url("state").path
    var output = try await probe("fleet-copies", "app", environment: environment)
    #expect(output.lines == [scratch.url("state").path + "/splint-fleet/app.json", "/var/lib/splint-fleet/app.json"])
    environment["XDG_STATE_HOME"] = "relative"
    environment["HOME"] = scratch.url("home").path
    output = try await probe("fleet-copies", "app", environment: environment)
    #expect(output.lines.first == scratch.url("home").path + "/.local/state/splint-fleet/app.json")
    environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
    output = try await probe("fleet-copies", "app", environment: environment)
    #expect(output.lines == [scratch.url("fleet").path + "/app.json"])
    environment["SPLINT_FLEET_DIRECTORY"] = "not/absolute"
    output = try await probe("fleet-copies", "app", environment: environment)
    #expect(output.lines.count == 2, "a relative directory is ignored, as XDG's are")
    #expect(throws: SettingsError.invalidSuiteName("a/b")) { try SettingsStore.fleetCopyURLs(forSuite: "a/b") }
  }

  @Test("the fleet's values sit below the user's file and above the system files; origin says fleet")
  func precedence() throws {
    let copy = scratch.url("fleet", "app.json")
    let system = scratch.url("xdg", "app", "settings.json")
    let user = scratch.url("home", "app", "settings.json")
    let writer = try follow(["interval": 60, "mode": "fast"], at: copy)
    defer { withExtendedLifetime(writer) {} }
    try save(#"{"interval": 10, "retries": 3, "mode": "system"}"#, to: system)
    try save(#"{"mode": "slow"}"#, to: user)
    let store = SettingsStore(fileURL: user, systemFiles: [system], fleetCopies: [copy, copy])
    #expect(store.fleetCopyURLs == [copy])
    #expect(store.value(forKey: "interval") == 60)
    #expect(store.value(forKey: "mode") == "slow")
    #expect(store.value(forKey: "retries") == 3)
    #expect(store.value(forKey: "$fleet") == nil, "a copy's description is no setting")
    #expect(store.origin(ofKey: "interval") == .fleet(copy))
    #expect(store.origin(ofKey: "mode") == .user(user))
    #expect(store.origin(ofKey: "retries") == .system(system))
    #expect(store.keys == ["mode"], "keys are the user's file's alone")
    #expect(Setting("interval", default: 0, store: store).value == 60)
    #expect(Setting("mode", default: "", store: store).value == "slow")
    #expect(Setting("$fleet", default: JSONValue.null, store: store).value == .null)
    let status = try #require(store.fleetStatus.first)
    #expect(status.cluster == "42" && status.revision == 7 && status.keys == ["interval", "mode"])
    #expect(status.state == .following && status.isFollowed && status.engine == "etcd")
    #expect(status.endpoints == ["http://127.0.0.1:2379"] && status.prefix == "/splint/app/")
  }

  @Test("a change to the copy reaches Settings and changes(), unless the user's file holds the key")
  func live() async throws {
    let copy = scratch.url("fleet", "app.json")
    let user = scratch.url("home", "app", "settings.json")
    let writer = try follow(["interval": 60], at: copy)
    try save(#"{"mode": "mine"}"#, to: user)
    let store = SettingsStore(fileURL: user, fleetCopies: [copy])
    let interval = Setting("interval", default: 0, store: store)
    var values = interval.updates().makeAsyncIterator()
    #expect(await values.next() == 60)
    let changes = store.changes()
    try follow(["interval": 90, "mode": "fleet's"], at: copy, writer: writer)
    #expect(await values.next() == 90)
    let seen = await take(1, from: changes)
    #expect(seen == [["interval"]], "mode is the user's: its fleet value changes nothing anyone reads")
    // The copy is gone (the fleet's key deleted): the Setting reads its default.
    try follow([:], at: copy, writer: writer)
    #expect(await values.next() == 0)
  }

  @Test("an enforced key wins over the user's value, and a local write of it fails naming the fleet")
  func enforced() async throws {
    let copy = scratch.url("fleet", "app.json")
    let user = scratch.url("home", "app", "settings.json")
    try save(#"{"interval": 5}"#, to: user)
    let writer = try follow(["interval": 60], enforced: ["interval"], at: copy)
    let store = SettingsStore(fileURL: user, fleetCopies: [copy])
    let interval = Setting("interval", default: 0, store: store)
    #expect(interval.value == 60)
    #expect(store.value(forKey: "interval") == 60)
    #expect(store.origin(ofKey: "interval") == .fleet(copy))
    #expect(store.fleetStatus.first?.isTrusted == true)
    #expect(throws: SettingsError.enforcedByFleet(key: "interval", copy: copy)) {
      try store.set(30, forKey: "interval")
    }
    #expect(throws: SettingsError.enforcedByFleet(key: "interval", copy: copy)) {
      try store.update { $0[interval] = 30 }
    }
    #expect(throws: SettingsError.enforcedByFleet(key: "interval", copy: copy)) { try interval.save(30) }
    // A transaction reads what programs read: the fleet's value.
    #expect(try store.update { $0[SettingKey("interval", default: 0)] } == 60)
    let errors = store.errors()
    interval.value = 30
    let told = await collect(errors) { $0.code == .enforcedByFleet }
    #expect(told.last?.description.contains("enforced by the fleet") == true)
    #expect(store.values == ["interval": 5], "the user's own value stays, unused")
    #expect(interval.value == 60)
    // Removing the user's own value is allowed: it is not read anyway.
    try store.removeValue(forKey: "interval")
    #expect(store.values.isEmpty)

    // No longer enforced (and another value): the fleet's value is read, below the user's, and a write succeeds.
    var values = interval.updates(initial: false).makeAsyncIterator()
    try follow(["interval": 61], at: copy, writer: writer)
    #expect(await values.next() == 61)
    try store.set(6, forKey: "interval")
    #expect(interval.value == 6)
    #expect(store.origin(ofKey: "interval") == .user(user))
  }

  @Test("splintctl watch prints nothing when what the fleet enforces changes and no value in effect does")
  func watchTellsChangedValuesOnly() async throws {
    let copy = scratch.url("fleet", "app.json")
    let home = scratch.url("home")
    try save(#"{"mode": "mine"}"#, to: home.appendingPathComponent("app/settings.json"))
    let values: [String: JSONValue] = ["interval": 60, "mode": "fleet's"]
    let writer = try follow(values, at: copy)
    var environment = ProcessInfo.processInfo.environment
    environment["SPLINT_FLEET_DIRECTORY"] = scratch.url("fleet").path
    environment["XDG_CONFIG_HOME"] = home.path
    environment["XDG_CONFIG_DIRS"] = scratch.url("xdg").path
    let watcher = try await Programs.start(
      [Programs.helper("splintctl"), "watch", "--suite", "app"], environment: environment)
    defer { watcher.send(SIGTERM) }
    // The watcher may not be watching yet: change the copy until it tells, then end that with one more change.
    var attempt = 0
    let started = await eventually {
      attempt += 1
      _ = try? follow(values.merging(["ready": .int(attempt)]) { $1 }, at: copy, writer: writer)
      return watcher.stdoutSoFar.contains("ready ")
    }
    #expect(started, "\(watcher.stdoutSoFar)")
    try follow(values, at: copy, writer: writer)
    #expect(await eventually { watcher.stdoutSoFar.hasSuffix("ready removed\n") }, "\(watcher.stdoutSoFar)")
    let mark = watcher.stdoutSoFar.count
    let since = { String(watcher.stdoutSoFar.dropFirst(mark)) }
    // Enforcing interval changes no value (the user's file has none): nothing to print. Enforcing mode does: the
    // fleet's value takes the user's place. Then both again as they were: mode is the user's once more.
    try follow(values, enforced: ["interval"], at: copy, writer: writer)
    try follow(values, enforced: ["interval", "mode"], at: copy, writer: writer)
    #expect(await eventually { since().hasSuffix("mode \"fleet's\"\n") }, "\(since())")
    #expect(since() == "mode \"fleet's\"\n")
    try follow(values, at: copy, writer: writer)
    #expect(await eventually { since().hasSuffix("mode \"mine\"\n") }, "\(since())")
    #expect(since() == "mode \"fleet's\"\nmode \"mine\"\n")
    watcher.send(SIGTERM)
    _ = await watcher.wait()
  }

  @Test("one reading of $enforced: the keys it lists, and each entry that is not a key told, never dropped silently")
  func enforcedEntries() async throws {
    let parse = { (json: JSONValue?) in FleetCopy.EnforcedKeys(json) }
    #expect(parse(nil).keys.isEmpty && parse(nil).problem == nil)
    #expect(parse("interval").keys.isEmpty && parse("interval").problem == "it is not an array of keys")
    let mixed = parse(["mode", 5, "", "$fleet", "interval", "mode", nil])
    #expect(mixed.keys == ["interval", "mode"])
    #expect(
      mixed.problem
        == #"its entries 5, "", "$fleet", null are not the key of a setting (a string, not empty, without a leading $)"#
    )
    #expect(parse([true]).problem?.hasPrefix("its entry true is not") == true)
    #expect(FleetCopy.EnforcedKeys(Array(#"["a", "b"]"#.utf8)).keys == ["a", "b"])
    #expect(FleetCopy.EnforcedKeys(Array("[a".utf8)).problem?.hasPrefix("it is not an array of keys (") == true)
    #expect(mixed.contains("mode") && !mixed.contains("$fleet"))

    // A copy that lists them (written by something other than a follower): its keys enforced, the rest told.
    let copy = scratch.url("fleet", "app.json")
    let user = scratch.url("home", "app", "settings.json")
    try save(#"{"interval": 5, "$x": 1}"#, to: user)
    let writer = try follow(["interval": 60], enforced: ["interval", "$x", ""], at: copy)
    let store = SettingsStore(fileURL: user, fleetCopies: [copy])
    #expect(store.value(forKey: "interval") == 60)
    #expect(store.fleetStatus.first?.enforcedKeys == ["interval"])
    try store.set(2, forKey: "$x")  // not enforced: a reserved key is never the fleet's
    let told = await collect(store.errors()) { $0.code == .invalidEnforcement }
    #expect(told.last == .invalidEnforcement(copy, reason: mixedProblem(#""", "$x""#)), "\(told)")
    #expect(told.last?.description.contains(#"lists in "$enforced" what is not the key of a setting"#) == true)
    // Fixed: no longer a problem of the copy.
    try follow(["interval": 60], enforced: ["interval"], at: copy, writer: writer)
    #expect(store.layers.copies.first?.problems.isEmpty == true)
  }

  /// What `FleetCopy.EnforcedKeys` says of `entries`, several entries that are not keys.
  private func mixedProblem(_ entries: String) -> String {
    "its entries \(entries) are not the key of a setting (a string, not empty, without a leading $)"
  }

  @Test("a copy another user could have written enforces nothing, and says why")
  func untrusted() async throws {
    let directory = scratch.url("fleet")
    let copy = directory.appendingPathComponent("app.json")
    let user = scratch.url("home", "app", "settings.json")
    try save(#"{"interval": 5}"#, to: user)
    let writer = try follow(["interval": 60], enforced: ["interval"], at: copy)
    // The copy and its directory are another user's (or, for a user who may not give files away, the directory is
    // writable by others): anyone could have written it.
    if getuid() == 0 {
      // The copy, its directory and its follower's presence, as a follower run by that user would have made them.
      for path in [directory.path, copy.path, copy.path + ".alive"] { #expect(chown(path, 65534, 65534) == 0) }
    } else {
      #expect(chmod(directory.path, 0o777) == 0)
    }
    let store = SettingsStore(fileURL: user, fleetCopies: [copy])
    #expect(store.value(forKey: "interval") == 5)
    #expect(store.origin(ofKey: "interval") == .user(user))
    #expect(store.fleetStatus.first?.isTrusted == false)
    #expect(store.fleetStatus.first?.enforcedKeys == ["interval"])
    try store.set(6, forKey: "interval")
    let told = await collect(store.errors()) { $0.code == .untrustedFleetCopy }
    #expect(told.last?.code == .untrustedFleetCopy, "\(told)")
    #expect(told.last?.description.contains(directory.path) == true, "\(told)")
    withExtendedLifetime(writer) {}
  }

  @Test("a copy in a trusted directory below one that is not (another owner, or writable by others) is not trusted")
  func untrustedAbove() throws {
    guard getuid() == 0 else { return }  // only root gives a directory to another user
    let above = scratch.url("above")
    let copy = above.appendingPathComponent("fleet").appendingPathComponent("app.json")
    let writer = try follow(["interval": 60], enforced: ["interval"], at: copy)
    #expect(trust(of: copy) == .trusted)
    #expect(chown(above.path, 65534, 65534) == 0)
    let owned = trust(of: copy)
    #expect(
      owned.problem?.hasPrefix("\(above.path), on the way to it, belongs to \(Users.name(65534)), not root")
        == true,
      "\(owned)")
    #expect(chown(above.path, 0, 0) == 0 && chmod(above.path, 0o777) == 0)
    #expect(
      trust(of: copy).problem
        == "\(above.path), on the way to it, may be written by others than its owner (mode 0777)")
    #expect(chmod(above.path, 0o1777) == 0)
    #expect(trust(of: copy) == .trusted, "a sticky directory, as /tmp is, lets no one rename it")
    withExtendedLifetime(writer) {}
  }

  @Test("trust is judged on the file whose content is in use, by its own name, in a directory only its owner writes")
  func trustOfTheFileRead() throws {
    guard getuid() == 0 else { return }  // only root gives files to another user
    let directory = scratch.url("judged")
    let copy = directory.appendingPathComponent("app.json")
    let writer = try follow(["interval": 60], enforced: ["interval"], at: copy)
    let read = try identity(of: copy)
    #expect(FleetCopy.trust(ofCopyAt: copy.path, readAs: read) == .trusted)
    // Written again since: the content read was another file's, which is judged once it is read.
    try follow(["interval": 61], enforced: ["interval"], at: copy, writer: writer)
    #expect(FleetCopy.trust(ofCopyAt: copy.path, readAs: read) == .replaced)
    // The copy's mode, its owner, its directory's mode, each on what was read.
    #expect(chmod(copy.path, 0o666) == 0)
    #expect(trust(of: copy).problem == "it may be written by others than its owner (mode 0666)")
    #expect(chmod(copy.path, 0o644) == 0 && chown(copy.path, 65534, 65534) == 0)
    #expect(trust(of: copy).problem?.hasPrefix("it belongs to \(Users.name(65534)), not root") == true)
    #expect(chown(copy.path, 0, 0) == 0 && chmod(directory.path, 0o775) == 0)
    #expect(
      trust(of: copy).problem == "its directory \(directory.path) may be written by others than its owner (mode 0775)")
    #expect(chmod(directory.path, 0o755) == 0 && chown(directory.path, 65534, 65534) == 0)
    #expect(trust(of: copy).problem?.hasPrefix("\(directory.path), on the way to it, belongs to") == true)
    #expect(chown(directory.path, 0, 0) == 0)
    #expect(trust(of: copy) == .trusted)
    // A link by the copy's name, even root's own to a trusted file, is not the file a follower writes there.
    let real = directory.appendingPathComponent("real.json")
    try FileManager.default.moveItem(at: copy, to: real)
    try FileManager.default.createSymbolicLink(at: copy, withDestinationURL: real)
    var status = stat()
    #expect(lstat(copy.path, &status) == 0)
    #expect(
      FleetCopy.trust(ofCopyAt: copy.path, readAs: FileIdentity(status)).problem
        == "it is a symbolic link, not the file a follower writes in \(directory.path)")
    #expect(FleetCopy.trust(ofCopyAt: scratch.url("missing", "app.json").path, readAs: read).problem != nil)
    #expect(
      FleetCopy.trust(ofCopyAt: real.path + "/app.json", readAs: read).problem == "\(real.path) is not a directory")
    withExtendedLifetime(writer) {}
  }

  @Test("a copy in the user's own copy directory is never a system copy, whoever owns it")
  func usersOwnCopy() async throws {
    let state = scratch.url("state")
    var environment = ProcessInfo.processInfo.environment
    environment["SPLINT_FLEET_DIRECTORY"] = nil
    environment["XDG_STATE_HOME"] = state.path
    environment["XDG_CONFIG_HOME"] = scratch.url("home").path
    let copy = state.appendingPathComponent("splint-fleet").appendingPathComponent("app.json")
    let writer = try follow(["interval": 60], enforced: ["interval"], at: copy)
    try save(#"{"interval": 5}"#, to: scratch.url("home", "app", "settings.json"))
    let output = try await Programs.run(
      [Programs.helper("splintctl"), "get", "--suite", "app", "interval", "--origin"], environment: environment)
    #expect(
      output.lines == ["5", "user file \(scratch.url("home", "app", "settings.json").path)"],
      "the user's own value: nothing is enforced from a user's copy: \(output)")
    #expect(FleetCopy.isUsersOwnCopy("/var/lib/splint-fleet/app.json") == false)
    withExtendedLifetime(writer) {}
  }

  /// Whether the copy at `url` may enforce keys, judged on the file there now.
  func trust(of url: URL) -> FleetCopy.Trust {
    guard let identity = try? identity(of: url) else { return .untrusted("no file") }
    return FleetCopy.trust(ofCopyAt: url.path, readAs: identity)
  }

  /// The identity of the file at `url` now.
  func identity(of url: URL) throws -> FileIdentity {
    var status = stat()
    guard stat(url.path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
    return FileIdentity(status)
  }

  @Test("what a copy says of itself: the fields a follower may leave out, values kept as written, users by name")
  func descriptions() throws {
    let since = "2027-01-15T08:00:00Z"
    let minimal: JSONValue = .object([
      "engine": "etcd", "cluster": "42", "revision": 7, "state": "following", "since": .string(since),
    ])
    let metadata = try #require(FleetCopy.Metadata(minimal))
    #expect(metadata.endpoints == [] && metadata.prefix == "" && metadata.skipped.isEmpty)
    #expect(metadata.processID == 0 && metadata.host == "" && metadata.user == "" && metadata.reason == nil)
    #expect(metadata.written == metadata.since)
    #expect(FleetCopy.Metadata(.object(["engine": "etcd"])) == nil)
    // A number with more digits than a Double keeps is written back as the cluster holds it.
    let exact = try FleetCopy.parseValue(Array(" 12345678901234567890123 \n".utf8))
    #expect(exact.text == "12345678901234567890123")
    #expect(try FleetCopy.parseValue(Array("60".utf8)).text == nil)
    #expect(Users.id(named: "root") == 0)
    #expect(Users.id(named: "no-such-user-of-splint") == nil)
  }

  @Test("a file at a copy's path that no follower wrote is started over; a copy that cannot be made is told")
  func strayFiles() throws {
    let copy = scratch.url("fleet", "app.json")
    try save(#"{"stray": 1, "interval": 5}"#, to: copy)
    let writer = try follow(["interval": 60], at: copy)
    #expect(writer.current.values == ["interval": 60])
    #expect(writer.current.metadata?.cluster == "42")
    let blocked = scratch.url("a-file")
    try save("", to: blocked)
    let nowhere = FleetCopyWriter(url: blocked.appendingPathComponent("fleet").appendingPathComponent("app.json"))
    #expect(throws: SettingsError.self) { try nowhere.takeOver() }
    #expect(!nowhere.holdsLock)
  }

  @Test("errors() tells a follower that lost its cluster, and one that ended, as they happen")
  func followerState() async throws {
    let copy = scratch.url("fleet", "app.json")
    let writer = try follow(["interval": 60], at: copy)
    let store = SettingsStore(fileURL: scratch.url("home", "app", "settings.json"), fleetCopies: [copy])
    let errors = store.errors()
    try follow(["interval": 60], at: copy, state: .unreachable, writer: writer)
    let unreachable = await collect(errors) { $0.code == .fleetUnreachable }
    #expect(unreachable.last?.description.contains("2027-01-15 08:00:00 UTC") == true, "\(unreachable)")
    #expect(store.fleetStatus.first?.state == .unreachable)
    // The follower ends: its lock file is closed, which the watcher sees.
    writer.release()
    let gone = await collect(errors) { $0.code == .noFleetFollower }
    #expect(gone.last?.url == copy)
    #expect(store.fleetStatus.first?.isFollowed == false)
    // A process that starts on such a copy hears it at once.
    let later = SettingsStore(fileURL: scratch.url("home", "app", "settings.json"), fleetCopies: [copy])
    let first = await take(1, from: later.errors())
    #expect(first.first?.code == .noFleetFollower)
  }

  @Test("two writers of one copy: the second cannot take it over while the first holds it")
  func oneFollower() throws {
    let copy = scratch.url("fleet", "app.json")
    let first = try follow(["a": 1], at: copy)
    let second = FleetCopyWriter(url: copy)
    #expect(try second.takeOver() == false)
    #expect(throws: SettingsError.self) {
      try second.write(
        values: [], enforced: [],
        metadata: .init(
          engine: "etcd", cluster: "1", revision: 1, endpoints: [], prefix: "", state: .following, since: Date()))
    }
    first.release()
    #expect(try second.takeOver())
    #expect(try first.takeOver() == false)
    #expect(second.current.values == ["a": 1])
    #expect(second.current.metadata?.cluster == "42")
    try second.sync()
  }

  @Test("a system copy is readable by every user; a user's own is not")
  func modes() throws {
    let shared = FleetCopyWriter(url: scratch.url("system", "app.json"), shared: true)
    let own = FleetCopyWriter(url: scratch.url("own", "app.json"), shared: false)
    for (writer, mode) in [(shared, 0o644), (own, 0o600)] {
      try follow(["a": 1], at: writer.url, writer: writer)
      var status = stat()
      #expect(stat(writer.url.path, &status) == 0)
      #expect(Int(status.st_mode & 0o777) == mode)
      #expect(stat(writer.url.deletingLastPathComponent().path, &status) == 0)
      #expect(Int(status.st_mode & 0o777) == (mode == 0o644 ? 0o755 : 0o700))
    }
  }

  @Test("the fleet's errors say what happened and what to do, and name the copy and the key")
  func errorWords() {
    let copy = URL(fileURLWithPath: "/var/lib/splint-fleet/app.json")
    let since = Date(timeIntervalSince1970: 1_800_000_000)
    let errors: [(SettingsError, SettingsError.Code, [String])] = [
      (.enforcedByFleet(key: "interval", copy: copy), .enforcedByFleet, ["interval", "splintctl fleet set"]),
      (
        .fleetUnreachable(copy, since: since, reason: "no member answered"), .fleetUnreachable,
        ["2027-01-15 08:00:00 UTC", "no member answered", "fleet status"]
      ),
      (.noFleetFollower(copy, since: since), .noFleetFollower, ["since 2027-01-15 08:00:00 UTC", "systemctl start"]),
      (.noFleetFollower(copy, since: nil), .noFleetFollower, ["up to date.", "splintctl fleet follow"]),
      (.untrustedFleetCopy(copy, reason: "it belongs to nobody"), .untrustedFleetCopy, ["nobody", "Enforced keys"]),
      (.invalidEnforcement(copy, reason: "its entry 5 is not"), .invalidEnforcement, ["entry 5", "fleet follow"]),
    ]
    for (error, code, words) in errors {
      #expect(error.code == code)
      #expect(error.url == copy)
      #expect(error.remedy != nil)
      for word in words { #expect(error.description.contains(word), "\(error.description)") }
    }
    #expect(SettingsError.enforcedByFleet(key: "interval", copy: copy).key == "interval")
    #expect(SettingsError.fleetUnreachable(copy, since: since, reason: "r").key == nil)
  }
}

extension FleetCopy.Trust {
  /// Why the copy may not enforce keys, when that is the verdict.
  var problem: String? {
    if case .untrusted(let problem) = self { return problem }
    return nil
  }
}
