#if SplintFleet
  #if canImport(FoundationEssentials)
    public import FoundationEssentials
  #else
    public import Foundation
  #endif

  // A user and role per machine, through etcd's auth API on the JSON gateway: roles grant key ranges, and the gateway
  // does not take a client certificate's name as the user, so "a machine writes its own keys alone" takes a user of
  // its own.

  extension FleetMachine {
    /// The etcd user, and role, that ``EtcdCluster/enroll(_:password:)`` makes for this machine:
    /// `splint-machine-<name>`.
    public var etcdUser: String { "splint-machine-" + name }
  }

  extension EtcdCluster {
    /// Makes `machine` an etcd user of its own (``FleetMachine/etcdUser``, `splint-machine-<name>`) with `password`,
    /// of a role of the same name that may read the fleet's settings (the prefix) and read and write the machine's
    /// own keys (``FleetLayout/machinePrefix(of:)``: its presence and reports), and nothing else. Its follower,
    /// authenticating as that user, reports for its machine alone: a report it writes for another machine is refused.
    ///
    /// ```swift
    /// var root = cluster
    /// root.user = "root"  // only a user of etcd's root role may make users and roles
    /// let machine = try FleetMachine(name: "web-07-de230db1")
    /// try await root.enroll(machine, password: password)
    /// // the machine's follower: --user splint-machine-web-07-de230db1, the password as the systemd credential
    /// // etcd__splint-machine-web-07-de230db1
    /// ```
    ///
    /// A role left from an enrolment cut short is used again; a machine that has its user already is refused, so
    /// that no machine's password is changed under its follower.
    ///
    /// - Throws: ``FleetError/Code/machineEnrolled`` when the machine's user exists (``forget(_:)`` it first),
    ///   ``FleetError/Code/permissionDenied`` when this cluster's user may not make users and roles,
    ///   ``FleetError/Code/invalidConfiguration`` for a prefix that does not end with `/`, and the cluster's errors.
    public func enroll(_ machine: FleetMachine, password: Data) async throws(FleetError) {
      let gateway = try EtcdGateway(cluster: self)
      let user = machine.etcdUser
      let settings = Array(layout.prefix.utf8)
      let own = Array(try layout.machinePrefix(of: machine).utf8)
      guard var body = EtcdGateway.authenticationBody(user: user, password: password) else {
        throw FleetError(.invalidConfiguration("a machine's password is UTF-8 text: nothing was made."))
      }
      defer { body.withUnsafeMutableBufferPointer { $0.initialize(repeating: 0) } }
      try await managing(machine) { () throws(FleetError) in
        if try await gateway.userExists(user) { throw FleetError(.machineEnrolled(machine: machine.name, user: user)) }
        try await gateway.authCall("/v3/auth/role/add", EtcdAuthName(name: user), unless: "role name already exists")
        for (type, prefix) in [("READ", settings), ("READWRITE", own)] {
          let permission = EtcdRoleGrant.Permission(
            permType: type, key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)))
          try await gateway.authCall("/v3/auth/role/grant", EtcdRoleGrant(name: user, perm: permission))
        }
        _ = try await gateway.call("/v3/auth/user/add", body: body, as: EtcdAuthAnswer.self)
        try await gateway.authCall("/v3/auth/user/grant", EtcdUserGrant(user: user, role: user))
      }
    }

    /// What ``EtcdCluster/forget(_:)`` removed of a machine.
    public struct Forgotten: Sendable, Hashable {
      /// Whether the machine's user (``FleetMachine/etcdUser``) was there, and was removed.
      public let user: Bool
      /// Whether its role was there, and was removed.
      public let role: Bool
      /// How many of its keys (its reports; its presence is never removed while its follower is alive) were removed.
      public let keys: Int64
      /// Whether nothing of the machine was there: a name misspelt, or a machine forgotten already.
      public var isEmpty: Bool { !user && !role && keys == 0 }
    }

    /// Removes a decommissioned machine from the fleet: its reports (so that `fleet rollout` no longer lists it), its
    /// user and its role. Refused while the machine's follower is alive, which would take its name again.
    ///
    /// - Returns: What was there, and was removed (``Forgotten/isEmpty`` when nothing was).
    /// - Throws: ``FleetError/Code/machineInUse`` while the machine's follower is alive (stop it first:
    ///   `systemctl disable --now splint-fleet` on it; a follower that died is gone once its lease expires),
    ///   ``FleetError/Code/permissionDenied`` when this cluster's user may not remove users and roles, and the
    ///   cluster's errors.
    public func forget(_ machine: FleetMachine) async throws(FleetError) -> Forgotten {
      let gateway = try EtcdGateway(cluster: self)
      let user = machine.etcdUser
      let own = Array(try layout.machinePrefix(of: machine).utf8)
      let presence = Array(try layout.presenceKey(of: machine).utf8)
      return try await managing(machine) { () throws(FleetError) in
        // The keys first, and only while no presence is there: a follower that claims the name meanwhile keeps it.
        let request = EtcdTransactionRequest(
          compare: [.init(key: EtcdBytes(presence), modRevision: 0)],
          success: [
            .init(
              requestDeleteRange: EtcdDeleteRequest(
                key: EtcdBytes(own), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: own))))
          ],
          failure: [.init(requestRange: EtcdRangeRequest(key: EtcdBytes(presence)))])
        let response = try await gateway.call("/v3/kv/txn", request, as: EtcdTransactionResponse.self).response
        guard response.succeeded == true else {
          let holder = response.responses?.first?.responseRange?.kvs?.first?.value.flatMap {
            FleetPresence.decode($0.bytes)
          }
          throw FleetError(
            .machineInUse(machine: machine.name, host: holder?.host ?? "unknown", since: holder?.started ?? Date()))
        }
        let keys = response.responses?.first?.responseDeleteRange?.deleted?.value ?? 0
        let hadUser = try await gateway.authCall(
          "/v3/auth/user/delete", EtcdAuthName(name: user), unless: "user name not found")
        let hadRole = try await gateway.authCall(
          "/v3/auth/role/delete", EtcdRoleDelete(role: user), unless: "role name not found")
        return Forgotten(user: hadUser, role: hadRole, keys: keys)
      }
    }

    /// `body`, with a refused permission told as what it is here: only etcd's root role manages users and roles.
    private func managing<Result>(
      _ machine: FleetMachine, _ body: () async throws(FleetError) -> Result
    ) async throws(FleetError) -> Result {
      do {
        return try await body()
      } catch  where error.code == .permissionDenied {
        // The code says the situation: the guard cannot fail.
        guard case .permissionDenied(let server, _) = error.situation else { throw error }
        throw FleetError(
          .permissionDenied(
            server: server,
            what: """
              (\(user ?? "no user")) make or remove the user and role of the machine \(machine.name): only a user \
              of etcd's root role may (give --user root)
              """))
      }
    }
  }

  extension EtcdGateway {
    /// Whether the cluster has the user `name`.
    func userExists(_ name: String) async throws(FleetError) -> Bool {
      try await authCall("/v3/auth/user/get", EtcdAuthName(name: name), unless: "user name not found")
    }

    /// Calls one of etcd's auth API's `path` with `request`: true when it was done, false when the cluster answered
    /// `absent` (a message of etcd's: a user or role that is not there, or is there already).
    @discardableResult
    func authCall(
      _ path: String, _ request: some Encodable & Sendable, unless absent: String? = nil
    ) async throws(FleetError) -> Bool {
      do {
        _ = try await call(path, request, as: EtcdAuthAnswer.self)
        return true
      } catch {
        guard let absent, case .rejected(_, let message) = error.situation, message.contains(absent) else {
          throw error
        }
        return false
      }
    }
  }

  /// The request of `/v3/auth/role/add`, `/v3/auth/user/get` and `/v3/auth/user/delete`.
  struct EtcdAuthName: Encodable, Sendable {
    let name: String
  }

  /// `/v3/auth/role/delete`'s request.
  struct EtcdRoleDelete: Encodable, Sendable {
    let role: String
  }

  /// `/v3/auth/user/grant`'s request: give `user` the role `role`.
  struct EtcdUserGrant: Encodable, Sendable {
    let user: String
    let role: String
  }

  /// `/v3/auth/role/grant`'s request: let the role `name` read (or read and write) a key range.
  struct EtcdRoleGrant: Encodable, Sendable {
    struct Permission: Encodable, Sendable {
      /// `READ`, `WRITE` or `READWRITE`.
      let permType: String
      let key: EtcdBytes
      let rangeEnd: EtcdBytes

      enum CodingKeys: String, CodingKey {
        case permType, key
        case rangeEnd = "range_end"
      }
    }

    let name: String
    let perm: Permission
  }

  /// The answer of an auth call, whose fields are not read.
  struct EtcdAuthAnswer: Decodable, Sendable {
    let header: EtcdHeader?
  }
#endif
