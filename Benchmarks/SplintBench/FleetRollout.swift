// A change followed across many machines (SplintFleet): N followers, each a machine of its own that reports what it
// holds and keeps its presence on a lease, on one 3-member etcd, at N = 10, 50 and 150: how long from a put until
// every machine's copy holds it, and until `splintctl fleet wait` returns; what the followers cost the cluster; and
// one follower's memory beside `etcdctl watch`'s. Only in the full run (`SplintBench run`, or `SplintBench rollout`
// for this group alone).

#if SplintFleet
  import Foundation
  import SplintFleet
  import TestSupport

  #if canImport(Glibc)
    import Glibc
  #endif

  func benchmarkRollout(into report: inout Report) async throws {
    guard let splintctl = ProcessInfo.processInfo.environment["FLEET_SPLINTCTL"] else {
      throw BenchError("FLEET_SPLINTCTL is not set: run the benchmark through script/bench")
    }
    let suite = "bench-rollout"
    let changes = 50
    let idle = 10
    let etcd = try await LocalEtcd.start(size: 3)
    let endpoints = etcd.endpoints.joined(separator: ",")
    let cluster = EtcdCluster(endpoints: etcd.endpoints)
    try await cluster.setValue(jsonText: "0", forKey: "t", suite: suite)
    var rows: [Distribution] = []
    var costs: [String] = []
    try await withScratch { directory in
      var followers: [Child] = []
      var copies: [String] = []
      defer {
        for follower in followers { follower.terminate() }
        for follower in followers { follower.wait() }
      }
      for count in [10, 50, 150] {
        while followers.count < count {
          let machine = directory.appendingPathComponent("machine\(followers.count)").path
          followers.append(
            try Child([
              "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(machine)", splintctl, "fleet", "follow", "--suite", suite,
              "--machine", "bench-\(followers.count)", "--endpoints", endpoints,
            ]))
          copies.append(machine + "/\(suite).json")
        }
        // Every follower has claimed its name and reported the suite.
        let waiting = [
          splintctl, "fleet", "wait", "--suite", suite, "--expect", String(count), "--endpoints", endpoints,
        ]
        guard runProgram(waiting + ["--timeout", "120"]).status == 0 else {
          throw BenchError("\(count) followers did not all report within 2 minutes")
        }

        // What the cluster spends on them, idle: their watches, their leases kept alive, their checks.
        let members = etcd.members.compactMap { etcd.processID(of: $0) }
        let before = (etcd: members.map(cpuTicks), followers: followers.map { cpuTicks(of: $0.pid) })
        sleep(UInt32(idle))
        let after = (etcd: members.map(cpuTicks), followers: followers.map { cpuTicks(of: $0.pid) })
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK))) * Double(idle)
        let etcdCPU = Double(zip(before.etcd, after.etcd).map { $1 - $0 }.reduce(0, +)) / ticks * 100
        let followerCPU = Double(zip(before.followers, after.followers).map { $1 - $0 }.reduce(0, +)) / ticks * 100
        let etcdMemory = Double(members.map(residentBytes).reduce(0, +)) / 1_048_576
        let followerMemory =
          Double(followers.map { residentBytes(of: $0.pid) }.reduce(0, +)) / Double(count) / 1_048_576
        costs.append(
          String(
            format: "| %d | %.1f%% | %.0f MB | %.1f%% | %.1f MB |", count, etcdCPU, etcdMemory, followerCPU,
            followerMemory))

        // A put until every copy holds it: each copy's own record of the revision it holds, read until all do.
        var held: [Double] = []
        for value in 1...changes {
          let started = now()
          let revision = try await cluster.setValue(jsonText: String(value), forKey: "t", suite: suite).revision
          var behind = copies
          while !behind.isEmpty {
            behind.removeAll { copyRevision($0) >= revision }
            guard now() - started < 60_000_000_000 else { throw BenchError("\(behind.count) copies stayed behind") }
            if !behind.isEmpty { usleep(1_000) }
          }
          held.append(Double(now() - started))
        }
        // A put until `splintctl fleet wait --revision R` (started at once, as `fleet set --wait` does) returns 0.
        var waited: [Double] = []
        for value in 1...changes {
          let started = now()
          let revision = try await cluster.setValue(jsonText: String(-value), forKey: "t", suite: suite).revision
          guard runProgram(waiting + ["--revision", String(revision), "--timeout", "60"]).status == 0 else {
            throw BenchError("fleet wait failed for revision \(revision) with \(count) followers")
          }
          waited.append(Double(now() - started))
        }
        rows.append(
          Distribution(what: "\(count) followers: a put → every machine's copy holds it", summary: Summary(held)))
        rows.append(
          Distribution(what: "\(count) followers: a put → `splintctl fleet wait` returns 0", summary: Summary(waited)))
      }
    }

    // One follower beside `etcdctl watch` of the same suite, each alone and settled.
    let (follower, floor) = try await withScratch { directory in
      let copies = directory.appendingPathComponent("fleet").path
      let follower = try Child([
        "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(copies)", splintctl, "fleet", "follow", "--suite", suite, "--machine",
        "bench-alone", "--endpoints", endpoints,
      ])
      let watch = try Child(
        [
          "/usr/bin/env", "ETCDCTL_API=3", "etcdctl", "--endpoints", endpoints, "watch", "--prefix",
          "/splint/\(suite)/",
        ],
        output: true)
      defer {
        for child in [follower, watch] { child.terminate() }
        for child in [follower, watch] { child.wait() }
      }
      waitForFile(copies + "/\(suite).json")
      sleep(2)
      return (residentBytes(of: follower.pid), residentBytes(of: watch.pid))
    }
    await etcd.stopAll()

    report.distributionTable(
      "Settings for a fleet: a change followed across N machines", rows,
      explanation: """
        N `splintctl fleet follow` processes, each a machine of its own (`--machine`, a copy of its own), on one \
        3-member etcd on loopback; each reports what its copy holds and keeps its presence on a lease (15 s). \
        \(changes) puts at each N, one after another: the first \(changes) timed until every copy records the \
        revision (read from each copy's own record, polled every millisecond), the next \(changes) until \
        `splintctl fleet wait --revision R --expect N`, started right after the put, returns 0 (its first look comes \
        at once, then after 0.1 s, 0.2 s, 0.4 s ...).
        """)
    report.line("## Settings for a fleet: what N reporting followers cost")
    report.line()
    report.line(
      """
      The same followers, idle for \(idle) s after all had reported. etcd's CPU and memory are the three members' \
      together; CPU from /proc's utime and stime, as a share of one core.
      """)
    report.line()
    report.line(
      "| followers | etcd's CPU | etcd's resident memory | the followers' CPU, together | a follower's memory |")
    report.line("| --- | --- | --- | --- | --- |")
    for cost in costs { report.line(cost) }
    report.line()
    report.line(
      String(
        format:
          "One follower's resident memory, settled: %.1f MB; `etcdctl watch --prefix` of the same suite: %.1f MB.",
        Double(follower) / 1_048_576, Double(floor) / 1_048_576))
    report.line()
  }

  /// The revision a fleet copy records that it holds (its `$fleet` member); 0 while it cannot be read.
  private func copyRevision(_ path: String) -> Int64 {
    guard let data = FileManager.default.contents(atPath: path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let metadata = object["$fleet"] as? [String: Any], let revision = metadata["revision"] as? Int
    else { return 0 }
    return Int64(revision)
  }
#endif
