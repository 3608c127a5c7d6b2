#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSecrets
  import SplintSettings
  import Synchronization
  import TestSupport
  import Testing

  /// One machine of a fleet, for a test: a directory of copies, a follower of the given suites writing them (in
  /// this process, as a program that follows from its own process does), and stores reading them.
  final class Machine: Sendable {
    let scratch = Scratch()
    let cluster: EtcdCluster
    let suites: [String]
    let options: FleetFollower.Options
    /// The name the follower reports as: one of its own unless given, as each machine of a fleet has.
    let name: String
    /// What the follower told, in order.
    private let told = Mutex<[String]>([])

    /// What the follower told so far, in order, a line each.
    var events: [String] { told.withLock { $0 } }
    private let following = Mutex<Task<FleetError?, Never>?>(nil)
    /// What the follower last started ended with, once it ended (`.some(nil)`: it ended without an error).
    private let ended = Mutex<FleetError??>(nil)

    init(
      following suites: [String] = ["app"], cluster: EtcdCluster, machine: String? = nil,
      options: FleetFollower.Options = FleetFollower.Options()
    ) {
      self.suites = suites
      self.cluster = cluster
      self.options = options
      name = machine ?? "test-" + UUID().uuidString.prefix(8).lowercased()
    }

    /// The directory the copies are in.
    var directory: URL { scratch.url("fleet") }

    /// The copy of `suite`.
    func copy(_ suite: String = "app") -> URL { directory.appendingPathComponent("\(suite).json") }

    /// A store of `suite` as a program on this machine has it: its user's file, with the copy below.
    func store(_ suite: String = "app") -> SettingsStore {
      SettingsStore(fileURL: scratch.url("home", suite, "settings.json"), fleetCopies: [copy(suite)])
    }

    /// Starts the follower (again).
    @discardableResult
    func start() throws -> FleetFollower {
      let follower = try FleetFollower(
        suites: suites, cluster: cluster, directory: directory, machine: try FleetMachine(name: name), options: options
      ) { [weak self] event in self?.told.withLock { $0.append(event.description) } }
      ended.withLock { $0 = nil }
      let task = Task { [weak self] () async -> FleetError? in
        var failure: FleetError?
        do throws(FleetError) {
          try await follower.run()
        } catch {
          failure = error
        }
        self?.ended.withLock { $0 = .some(failure) }
        return failure
      }
      following.withLock { $0 = task }
      return follower
    }

    /// Stops the follower, as a SIGTERM to `splintctl fleet follow` does; what it ended with.
    @discardableResult
    func stop() async -> FleetError? {
      guard let task = following.withLock({ $0 }) else { return nil }
      task.cancel()
      return await task.value
    }

    /// What the follower ended with, once it ends by itself (within `seconds`).
    /// Nil when it did not end, or ended without an error. (Not by awaiting the task's value beside a timer: a task
    /// group waits for every child, and a wait for another task's value is not ended by cancelling it.)
    func ending(within seconds: Double = 30) async -> FleetError? {
      _ = await eventually(within: seconds) { ended.withLock { $0 != nil } }
      return ended.withLock { $0 } ?? nil
    }

    /// Waits until the copy of `suite` holds `value` for `key` (nil: holds none).
    func waitFor(_ key: String, _ value: JSONValue?, suite: String = "app", within seconds: Double = 30) async -> Bool {
      let store = SettingsStore(fileURL: scratch.url("probe", suite, "settings.json"), fleetCopies: [copy(suite)])
      return await eventually(within: seconds) { store.value(forKey: key) == value }
    }

    deinit {
      following.withLock { $0 }?.cancel()
    }
  }

  /// The elements `stream` yields until one satisfies `last`, or those it yielded before `seconds` passed: a wait that
  /// cannot hang a test.
  func collect<Element: Sendable>(
    _ stream: AsyncStream<Element>, within seconds: Double = 30, until last: @escaping @Sendable (Element) -> Bool
  ) async -> [Element] {
    let seen = Seen<Element>()
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await element in stream {
          seen.elements.withLock { $0.append(element) }
          if last(element) { return }
        }
      }
      group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
      await group.next()
      group.cancelAll()
    }
    return seen.elements.withLock { $0 }
  }

  /// What a stream yielded, shared with the task that reads it.
  final class Seen<Element: Sendable>: Sendable {
    let elements = Mutex<[Element]>([])
  }

  /// A cluster of `size` members, and the `EtcdCluster` that reaches it.
  func startCluster(size: Int = 1, tls: LocalEtcd.TLS? = nil) async throws -> (LocalEtcd, EtcdCluster) {
    let etcd = try await LocalEtcd.start(size: size, tls: tls)
    return (etcd, EtcdCluster(endpoints: etcd.endpoints, requestTimeout: .seconds(3)))
  }

  /// A one-member cluster with authentication on, as a fleet runs it: `root` (password `rootpw`, what etcdctl changes
  /// are made as), `reader` (read-only on /splint/), and `alice` and `bob`, who may read and write the settings and
  /// their records; and an `EtcdCluster` for each writer, whose records name `test as NAME`.
  func startAuthenticatedCluster() async throws -> (etcd: LocalEtcd, alice: EtcdCluster, bob: EtcdCluster) {
    let etcd = try await LocalEtcd.start(size: 1)
    try await etcd.enableAuthentication(user: "reader", password: "readpw", readOnly: "/splint/")
    var writers: [EtcdCluster] = []
    for name in ["alice", "bob"] {
      try await etcd.addUser(name, password: "\(name)pw", readWrite: ["/splint/", "/splint.history/"])
      var writer = EtcdCluster(
        endpoints: etcd.endpoints, user: name, password: try password("\(name)pw", for: name),
        requestTimeout: .seconds(5))
      writer.recording = EtcdCluster.Recording(command: "test as \(name)")
      writers.append(writer)
    }
    return (etcd, writers[0], writers[1])
  }

  /// A credential store holding one password, for a cluster's user.
  func password(_ secret: String, for user: String) throws -> Credential {
    let credential = Credential(service: "etcd", account: user, store: InMemoryCredentialStore())
    try credential.save(secret)
    return credential
  }
#endif
