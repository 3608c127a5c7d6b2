#if SplintFleet
  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// etcd as a follower's engine: reads and checks through the gateway's range, changes through its watch.
  struct EtcdEngine: FleetEngine {
    let gateway: EtcdGateway

    var name: String { "etcd" }
    var endpoints: [String] { gateway.endpoints }

    func read(from key: [UInt8], to rangeEnd: [UInt8]) async throws(FleetError) -> FleetSnapshot {
      let (response, member) = try await gateway.call(
        "/v3/kv/range", EtcdRangeRequest(key: EtcdBytes(key), rangeEnd: EtcdBytes(rangeEnd)), as: EtcdRangeResponse.self
      )
      let at = try Self.revision(of: response.header, server: gateway.endpoints[member])
      let pairs = (response.kvs ?? []).map { pair in
        (key: pair.key.bytes, value: pair.value?.bytes ?? [], revision: pair.modRevision?.value ?? 0)
      }
      return FleetSnapshot(at: at, member: member, pairs: pairs)
    }

    func check(
      member: Int, from key: [UInt8], to rangeEnd: [UInt8], timeout: Duration
    ) async throws(FleetError) -> FleetRevision {
      // A linearizable count: the member must reach its leader to answer, so a member cut off from its quorum, or
      // stopped, fails it within the timeout, while it still keeps a watch's connection open.
      let request = EtcdRangeRequest(key: EtcdBytes(key), rangeEnd: EtcdBytes(rangeEnd), countOnly: true)
      let response = try await gateway.call(
        "/v3/kv/range", request, as: EtcdRangeResponse.self, on: member, timeout: timeout)
      return try Self.revision(of: response.header, server: gateway.endpoints[member])
    }

    func changes(
      from revision: Int64, key: [UInt8], rangeEnd: [UInt8], member: Int
    ) async throws(FleetError) -> AsyncThrowingStream<FleetChange, any Error> {
      let lines = try await gateway.watch(from: revision, key: key, rangeEnd: rangeEnd, on: member)
      let server = gateway.endpoints[member]
      let user = gateway.cluster.user
      let gateway = gateway
      return AsyncThrowingStream { continuation in
        let reading = Task {
          do {
            for try await line in lines {
              let change = try Self.change(in: line, server: server, user: user, gateway: gateway)
              if let change { continuation.yield(change) }
              if case .compacted? = change {
                continuation.finish()
                return
              }
            }
            // The member ended the stream: it shut down, or was cut off.
            continuation.finish(throwing: FleetError(.unreachable(["\(server): the watch ended"])))
          } catch {
            let timeout = gateway.cluster.requestTimeout
            continuation.finish(
              throwing: (error as? FleetTransportError).map { FleetError(transport: $0, timeout: timeout) } ?? error)
          }
        }
        continuation.onTermination = { _ in reading.cancel() }
      }
    }

    func avoid(member: Int) {
      gateway.avoid(member)
    }

    /// What one line of a watch says, or nil for a line that says nothing (the watch's creation is told as
    /// ``FleetChange/started(_:)``).
    static func change(
      in line: [UInt8], server: String, user: String?, gateway: EtcdGateway
    ) throws(FleetError) -> FleetChange? {
      guard !line.isEmpty else { return nil }
      guard let decoded = try? JSONDecoder().decode(EtcdWatchLine.self, from: Data(line)) else {
        throw FleetError(.invalidResponse(server: server, reason: "a line of its watch is not etcd's"))
      }
      if let failure = decoded.error { throw FleetError(failure: failure, server: server, user: user) }
      guard let result = decoded.result, let header = result.header else {
        throw FleetError(.invalidResponse(server: server, reason: "a line of its watch holds no result"))
      }
      if let compacted = result.compactRevision, compacted.value > 0 { return .compacted(compacted.value) }
      let at = try revision(of: header, server: server)
      if result.canceled == true {
        let reason = result.cancelReason ?? "the member cancelled the watch"
        if reason.contains("invalid auth token") { gateway.forgetToken() }
        throw Self.error(cancelled: reason, server: server, user: user)
      }
      if result.created == true { return .started(at) }
      guard let events = result.events, !events.isEmpty else { return .progress(at) }
      return .changed(
        at: at,
        events: events.map { event in
          FleetEvent(
            key: event.kv.key.bytes, value: event.isDeletion ? nil : (event.kv.value?.bytes ?? []),
            revision: event.kv.modRevision?.value ?? at.revision)
        })
    }

    /// The error a watch cancelled for `reason` stands for.
    private static func error(cancelled reason: String, server: String, user: String?) -> FleetError {
      if reason.contains("PermissionDenied") || reason.contains("permission denied") {
        return FleetError(.permissionDenied(server: server, what: "watch these keys"))
      }
      if reason.contains("Unauthenticated") || reason.contains("invalid auth token") {
        // An expired token: the token is forgotten, and the next watch authenticates again.
        return FleetError(.unreachable(["\(server): its token expired"]))
      }
      if reason.contains("leader") { return FleetError(.noLeader(server: server)) }
      return FleetError(.unreachable(["\(server): \(reason)"]))
    }

    /// The cluster and revision `header` names; an answer that names neither is not etcd's.
    private static func revision(of header: EtcdHeader, server: String) throws(FleetError) -> FleetRevision {
      guard let revision = header.revision?.value, !header.cluster.isEmpty else {
        throw FleetError(.invalidResponse(server: server, reason: "its answer names no cluster or revision"))
      }
      return FleetRevision(cluster: header.cluster, revision: revision)
    }
  }
#endif
