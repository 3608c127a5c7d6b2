#if SplintFleet
  // etcd's leases through the JSON gateway: a key put with a lease is deleted when the lease expires, which it does
  // `TTL` seconds after it was granted or last kept alive (a new leader extends every lease by its election timeout).

  /// `POST /v3/lease/grant`'s request (`TTL`), and keepalive's and revoke's (`ID`); the gateway takes int64s as text.
  struct EtcdLeaseRequest: Encodable, Sendable {
    var ttl: String?
    var id: String?

    enum CodingKeys: String, CodingKey {
      case ttl = "TTL"
      case id = "ID"
    }
  }

  /// A lease as grant and keepalive answer it: its ID and seconds to live (none, or 0: the cluster has no such lease).
  struct EtcdLeaseResponse: Decodable, Sendable {
    let id: EtcdInteger?
    let ttl: EtcdInteger?

    enum CodingKeys: String, CodingKey {
      case id = "ID"
      case ttl = "TTL"
    }
  }

  /// `POST /v3/lease/keepalive`'s answer, one line of a stream: `{"result": ...}`.
  struct EtcdKeepAliveResponse: Decodable, Sendable {
    let result: EtcdLeaseResponse?
  }

  /// `POST /v3/lease/revoke`'s answer.
  struct EtcdRevokeResponse: Decodable, Sendable {
    let header: EtcdHeader?
  }

  extension EtcdGateway {
    /// A new lease of `seconds`: its ID.
    ///
    /// - Throws: ``FleetError`` when no member grants it.
    func grantLease(seconds: Int64) async throws(FleetError) -> Int64 {
      let (response, endpoint) = try await call(
        "/v3/lease/grant", EtcdLeaseRequest(ttl: String(seconds)), as: EtcdLeaseResponse.self)
      guard let id = response.id?.value, id != 0, (response.ttl?.value ?? 0) > 0 else {
        let reason = "it granted a lease without an ID"  // coverage:ignore — a lying member
        let server = endpoints[endpoint]  // coverage:ignore — a lying member
        throw FleetError(.invalidResponse(server: server, reason: reason))  // coverage:ignore — a lying member
      }
      return id
    }

    /// Keeps lease `id` alive: the seconds it has now, 0 when the cluster no longer has it (it expired, or was
    /// revoked).
    func keepAlive(lease id: Int64) async throws(FleetError) -> Int64 {
      let response = try await call(
        "/v3/lease/keepalive", EtcdLeaseRequest(id: String(id)), as: EtcdKeepAliveResponse.self
      ).response
      return max(0, response.result?.ttl?.value ?? 0)
    }

    /// Revokes lease `id`, which deletes every key put with it; a lease the cluster no longer has is no failure.
    func revoke(lease id: Int64) async throws(FleetError) {
      do {
        _ = try await call("/v3/lease/revoke", EtcdLeaseRequest(id: String(id)), as: EtcdRevokeResponse.self)
      } catch {
        guard case .rejected(_, let message) = error.situation, message.contains("lease not found") else { throw error }
      }
    }
  }
#endif
