#if SplintFleet
  import Glibc
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// Reports to the cluster what a follower's copies hold, as one machine: a report per suite
  /// (`/splint.machines/<machine>/reports/<suite>`, a plain key, written when what the copy holds changes), and the
  /// machine's presence (`/splint.machines/<machine>/alive`, on a lease kept alive every third of its time to live),
  /// which claims the machine's name: a second follower, alive, claiming the same name is refused. One prefix holds
  /// all of a machine's keys, so that a role may confine a machine's writes to its own.
  ///
  /// It runs beside the follower, never on the path that applies values: a follower that cannot report (no
  /// permission, the cluster away, its name in use) goes on following, and tells why.
  actor FleetReporter {
    private let gateway: EtcdGateway
    let machine: FleetMachine
    private let suites: [String]
    private let presenceKey: [UInt8]
    private let reportKeys: [String: [UInt8]]
    /// The lease's time to live, in whole seconds.
    private let seconds: Int64
    private let report: @Sendable (FleetFollower.Event) -> Void
    /// The lease the presence is put with, while the follower holds the name.
    private var lease: Int64?
    /// What each suite's report last written says, and since when its copy holds that revision.
    private var written: [String: FleetCopies.Held] = [:]
    private var since: [String: (revision: Int64, date: Date)] = [:]
    /// What failed last, told once until something else fails or reporting works again.
    private var failure: FleetError.Code?
    /// The copies reported, which record whether reporting works.
    private var copies: FleetCopies?

    init(
      gateway: EtcdGateway, machine: FleetMachine, suites: [String], timeToLive: Duration,
      report: @escaping @Sendable (FleetFollower.Event) -> Void
    ) throws(FleetError) {
      self.gateway = gateway
      self.machine = machine
      self.suites = suites
      let layout = gateway.cluster.layout
      presenceKey = Array(try layout.presenceKey(of: machine).utf8)
      var keys: [String: [UInt8]] = [:]
      for suite in suites { keys[suite] = Array(try layout.reportKey(of: machine, suite: suite).utf8) }
      reportKeys = keys
      seconds = max(2, timeToLive.components.seconds)
      self.report = report
    }

    /// Whether the follower holds its name and its last report went through.
    var isReporting: Bool { lease != nil && failure == nil }

    /// Reports what `copies` hold, and keeps the machine's presence, until the task is cancelled.
    func run(copies: FleetCopies) async {
      self.copies = copies
      let (changes, changed) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
      await copies.observe { changed.yield() }
      changed.yield()
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          for await _ in changes { await self.publish(await copies.held) }
        }
        group.addTask {
          // Claims the name, then keeps it: each third of the lease's time, a keep-alive (a lease lost while the
          // cluster was away is granted again), and any report that failed is written again.
          repeat {
            await self.keep()
            changed.yield()
          } while (try? await Task.sleep(for: .seconds(self.seconds) / 3)) != nil
        }
        await group.next()
        group.cancelAll()
        changed.finish()
      }
    }

    /// Claims the name when the follower does not hold it, or keeps its lease alive.
    private func keep() async {
      do throws(FleetError) {
        if let lease {
          guard try await gateway.keepAlive(lease: lease) == 0 else { return }
          // The lease expired (the cluster was away longer than its time to live): the presence went with it.
          self.lease = nil
        }
        try await claim()
      } catch {
        await failed(error)
      }
    }

    /// Claims the machine's name with a new lease: the presence is put when no follower holds the name, or when the
    /// one that does is stale (this machine's, of an earlier boot or a process that is gone).
    ///
    /// - Throws: ``FleetError/Code/machineInUse`` when another follower, alive, holds it.
    private func claim() async throws(FleetError) {
      let lease = try await gateway.grantLease(seconds: seconds)
      let boot = FleetMachine.bootID
      let presence = FleetPresence(
        identity: machine.identity, host: FleetMachine.hostName, boot: boot, pid: getpid(), started: Date(),
        suites: suites)
      var held: Int64 = 0
      let presenceName = String(decoding: presenceKey, as: UTF8.self)
      do throws(FleetError) {
        // A few rounds: the name may be claimed, or given up, between the read and the claim.
        for _ in 0..<3 {
          let put = EtcdPutRequest(
            key: EtcdBytes(presenceKey), value: EtcdBytes(presence.json), lease: String(lease))
          let request = EtcdTransactionRequest(
            compare: [.init(key: EtcdBytes(presenceKey), modRevision: held)], success: [.init(requestPut: put)],
            failure: [.init(requestRange: EtcdRangeRequest(key: EtcdBytes(presenceKey)))])
          let response = try await gateway.call("/v3/kv/txn", request, as: EtcdTransactionResponse.self).response
          if response.succeeded == true {
            self.lease = lease
            written = [:]
            await works()
            return
          }
          // None: the presence expired since it was read. What is not a presence was not put by a follower: no
          // follower holds the name.
          let holder = response.responses?.first?.responseRange?.kvs?.first
          if let other = FleetPresence.decode(holder?.value?.bytes ?? []),
            !other.isStale(identity: machine.identity, boot: boot)
          {
            throw FleetError(.machineInUse(machine: machine.name, host: other.host, since: other.started))
          }
          held = holder?.modRevision?.value ?? 0
        }
        throw FleetError(.conflict(key: presenceName))  // coverage:ignore — the name changed hands in all three rounds
      } catch {
        try? await gateway.revoke(lease: lease)
        throw error
      }
    }

    /// Writes the report of each suite whose copy holds something else than its report last said.
    private func publish(_ held: [FleetCopies.Held]) async {
      guard lease != nil else { return }
      for copy in held where written[copy.suite] != copy {
        do throws(FleetError) {
          try await put(reportOf: copy, stopped: nil)
          written[copy.suite] = copy
          if failure != nil { await works() }
        } catch {
          await failed(error)
          return
        }
      }
    }

    /// Writes `copy`'s report.
    private func put(reportOf copy: FleetCopies.Held, stopped: Date?) async throws(FleetError) {
      guard let key = reportKeys[copy.suite] else { return }  // coverage:ignore — the copies are of these suites
      let revision = copy.at?.revision ?? 0
      if since[copy.suite]?.revision != revision { since[copy.suite] = (revision, Date()) }
      let report = FleetReport(
        machine: machine.name, suite: copy.suite, cluster: copy.at?.cluster, revision: revision, keys: copy.keys,
        since: since[copy.suite]?.date ?? Date(),
        clockOffset: gateway.clockOffset.map { ($0 * 10).rounded() / 10 }, skipped: copy.skipped,
        skippedMore: copy.skippedMore, rejected: copy.rejected,
        copyFailure: copy.failure, pid: getpid(), version: SplintVersion.current, stopped: stopped,
        labels: copy.labels)
      _ = try await gateway.call(
        "/v3/kv/put", EtcdPutRequest(key: EtcdBytes(key), value: EtcdBytes(report.json)), as: EtcdPutResponse.self)
    }

    /// Tells that reporting failed for `error`, once until something else fails or reporting works again.
    private func failed(_ error: FleetError) async {
      guard error.code != failure else { return }
      failure = error.code
      // The copies first: once the log says it, `fleet status` does.
      await copies?.recordReporting(machine: nil, failure: error.description)
      report(.reportingFailed(error))
    }

    /// Tells that reporting works (again).
    private func works() async {
      failure = nil
      await copies?.recordReporting(machine: machine.name, failure: nil)
      report(.reporting(machine: machine.name))
    }

    /// Reports that the follower stopped (each suite's report says so, with what its copy holds), and gives the name
    /// up (the lease is revoked, and the presence with it).
    func stop(holding held: [FleetCopies.Held]) async {
      guard let lease else { return }
      for copy in held { try? await put(reportOf: copy, stopped: Date()) }
      try? await gateway.revoke(lease: lease)
      self.lease = nil
    }
  }
#endif
