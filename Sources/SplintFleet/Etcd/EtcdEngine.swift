#if SplintFleet
  import SplintSettings

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

    /// The most keys one part of a whole read asks for.
    static let pageKeys: Int64 = 256
    /// The largest answer one part of a whole read takes: a part that would be larger is asked again with half as
    /// many keys, down to one; a single value larger than this is not read (its key is, and it is left out).
    static let pageBytes = 8 << 20

    func position(from key: [UInt8], to rangeEnd: [UInt8]) async throws(FleetError) -> (at: FleetRevision, member: Int)
    {
      let request = EtcdRangeRequest(key: EtcdBytes(key), rangeEnd: EtcdBytes(rangeEnd), countOnly: true)
      let (response, member) = try await gateway.call("/v3/kv/range", request, as: EtcdRangeResponse.self)
      return (try Self.revision(of: response.header, server: gateway.endpoints[member]), member)
    }

    func read(
      from key: [UInt8], to rangeEnd: [UInt8], at: FleetRevision, member: Int, keysOnly: Bool,
      into take: ([FleetPair]) async -> Void
    ) async throws(FleetError) {
      let server = gateway.endpoints[member]
      var start = key
      var limit = Self.pageKeys
      while true {
        var request = EtcdRangeRequest(
          key: EtcdBytes(start), rangeEnd: EtcdBytes(rangeEnd), limit: limit, keysOnly: keysOnly ? true : nil)
        request.revision = String(at.revision)
        guard
          let page = try await gateway.call(
            "/v3/kv/range", request, as: EtcdRangeResponse.self, on: member, limit: Self.pageBytes)
        else {
          if limit > 1 {
            limit /= 2
            continue
          }
          // One value larger than an answer may be: its key alone is read, and the key is left out.
          request.keysOnly = true
          let alone = try await gateway.call("/v3/kv/range", request, as: EtcdRangeResponse.self, on: member)
          guard let pair = alone.kvs?.first, !pair.key.bytes.lexicographicallyPrecedes(start) else {
            let reason = "it has no key where its answer was too large"  // coverage:ignore — a lying member
            throw FleetError(.invalidResponse(server: server, reason: reason))  // coverage:ignore — a lying member
          }
          await take([FleetPair(key: pair.key.bytes, value: nil, revision: try Self.revision(of: pair, at: at, server))]
          )
          start = pair.key.bytes + [0]
          continue
        }
        guard try Self.revision(of: page.header, server: server).cluster == at.cluster else {
          throw FleetError(.invalidResponse(server: server, reason: "a part of its answer is of another cluster"))
        }
        let kvs = page.kvs ?? []
        var pairs: [FleetPair] = []
        pairs.reserveCapacity(kvs.count)
        for pair in kvs {
          // Each part must move on, or a member that says "more" for ever would keep the read going.
          guard !pair.key.bytes.lexicographicallyPrecedes(start) else {
            let reason = "a part of its answer goes backwards"  // coverage:ignore — a lying member
            throw FleetError(.invalidResponse(server: server, reason: reason))  // coverage:ignore — a lying member
          }
          pairs.append(
            FleetPair(
              key: pair.key.bytes, value: pair.value?.bytes ?? [], revision: try Self.revision(of: pair, at: at, server)
            ))
        }
        await take(pairs)
        guard page.more == true, let last = kvs.last?.key.bytes else { return }
        start = last + [0]
        limit = min(limit * 2, Self.pageKeys)
      }  // coverage:ignore — the end of an endless loop, left only by a return or a throw
    }  // coverage:ignore — a function left only from inside its loop

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
    ) async throws(FleetError) -> any AsyncSequence<FleetChange, any Error> & Sendable {
      let lines = try await gateway.watch(from: revision, key: key, rangeEnd: rangeEnd, on: member)
      return Changes(lines: lines, server: gateway.endpoints[member], gateway: gateway)
    }

    /// A watch's changes, each read from the member's stream as it is asked for (see `FleetHTTPClient.Lines`).
    struct Changes: AsyncSequence, Sendable {
      typealias Element = FleetChange

      let lines: FleetHTTPClient.Lines
      let server: String
      let gateway: EtcdGateway

      func makeAsyncIterator() -> Iterator { Iterator(changes: self, lines: lines.makeAsyncIterator()) }

      struct Iterator: AsyncIteratorProtocol {
        let changes: Changes
        var lines: FleetHTTPClient.Lines.Iterator
        /// Whether the watch has said its last (a compaction, a line too large).
        var ended = false

        mutating func next() async throws -> FleetChange? {
          guard !ended else { return nil }
          while true {
            let line: [UInt8]?
            do {
              line = try await lines.next()
            } catch let error as FleetTransportError where error.kind == .tooLarge {
              ended = true  // coverage:ignore — a watch line past 16 MiB: etcd's 1.5 MiB requests cannot make one
              return .overflowed(limit: changes.lines.maximumLineSize)  // coverage:ignore — as the line above
            } catch let error as FleetTransportError {
              throw FleetError(transport: error, timeout: changes.gateway.cluster.requestTimeout)
            }
            // The member ended the stream: it shut down, or was cut off.
            guard let line else { throw FleetError(.unreachable(["\(changes.server): the watch ended"])) }
            let user = changes.gateway.cluster.user
            guard
              let change = try EtcdEngine.change(in: line, server: changes.server, user: user, gateway: changes.gateway)
            else { continue }
            if case .compacted = change { ended = true }
            return change
          }  // coverage:ignore — the end of an endless loop, left only by a return or a throw
        }  // coverage:ignore — a function left only from inside its loop
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
      if let compacted = result.compactRevision, compacted.value != 0 {
        guard let revision = compacted.revision else { throw notARevision(server) }
        return .compacted(revision)
      }
      let at = try revision(of: header, server: server)
      if result.canceled == true {
        let reason = result.cancelReason?.shown() ?? "the member cancelled the watch"
        if EtcdFailure.isStaleToken(reason) { gateway.forgetToken() }
        throw Self.error(cancelled: reason, server: server, user: user)
      }
      if result.created == true { return .started(at) }
      guard let events = result.events, !events.isEmpty else { return .progress(at) }
      var changes: [FleetEvent] = []
      changes.reserveCapacity(events.count)
      for event in events {
        let value = event.isDeletion ? nil : (event.kv.value?.bytes ?? [])
        let revision = try event.kv.modRevision.map { modified throws(FleetError) in
          guard let revision = modified.revision, revision <= at.revision else { throw notARevision(server) }
          return revision
        }
        changes.append(FleetEvent(key: event.kv.key.bytes, value: value, revision: revision ?? at.revision))
      }
      return .changed(at: at, events: changes)
    }

    /// The error a watch cancelled for `reason` stands for.
    private static func error(cancelled reason: String, server: String, user: String?) -> FleetError {
      if reason.contains("PermissionDenied") || reason.contains("permission denied") {
        return FleetError(.permissionDenied(server: server, what: "watch these keys"))
      }
      if reason.contains("Unauthenticated") || EtcdFailure.isStaleToken(reason) {
        // An expired or stale token: the token is forgotten, and the next watch authenticates again.
        return FleetError(
          .unreachable(["\(server): its token is no longer valid (expired, or made before a change of users or roles)"])
        )
      }
      if reason.contains("leader") { return FleetError(.noLeader(server: server)) }
      return FleetError(.unreachable(["\(server): \(reason)"]))
    }

    /// The cluster and revision `header` names; an answer that names neither, or a revision that cannot be one,
    /// is not etcd's.
    private static func revision(of header: EtcdHeader, server: String) throws(FleetError) -> FleetRevision {
      guard let given = header.revision, !header.cluster.isEmpty else {
        throw FleetError(.invalidResponse(server: server, reason: "its answer names no cluster or revision"))
      }
      guard let revision = given.revision else { throw notARevision(server) }
      return FleetRevision(cluster: header.cluster, revision: revision)
    }

    /// The revision a whole read's pair was last changed at: at most the read's.
    private static func revision(
      of pair: EtcdKeyValue, at: FleetRevision, _ server: String
    ) throws(FleetError) -> Int64 {
      guard let modified = pair.modRevision else { return at.revision }
      guard let revision = modified.revision, revision <= at.revision else { throw notARevision(server) }
      return revision
    }

    /// The error of an answer whose revision cannot be one.
    private static func notARevision(_ server: String) -> FleetError {
      FleetError(.invalidResponse(server: server, reason: "it gave a revision that cannot be one"))
    }
  }
#endif
