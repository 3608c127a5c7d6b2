// Settings for a fleet (SplintFleet): how fast an etcd put reaches a program on a following machine, against etcd's
// own `etcdctl watch` seeing the same put; what a follower of 1,000 keys costs; and what 100 followers cost the
// cluster and themselves. The cluster is a real etcd on loopback, started here; the followers are the installed
// `splintctl fleet follow` (FLEET_SPLINTCTL).

#if SplintFleet
  import Foundation
  import SplintFleet
  import SplintSettings
  import TestSupport

  #if canImport(Glibc)
    import Glibc
  #endif

  /// Child mode: `SplintBench fleet-watch SUITE READY`, a program on a following machine (its copies where
  /// `SPLINT_FLEET_DIRECTORY` says): a `Setting` "t" of SUITE, printing each value as it arrives, until a negative
  /// one.
  func fleetWatchMode(suite: String, ready: String) async -> Never {
    await watch(Setting("t", default: 0, store: SettingsStore(suite: suite)), ready: ready, echo: true)
  }

  func benchmarkFleetSettings(_ sizes: Sizes, into report: inout Report) async throws {
    guard let splintctl = ProcessInfo.processInfo.environment["FLEET_SPLINTCTL"] else {
      throw BenchError("FLEET_SPLINTCTL is not set: run the benchmark through script/bench")
    }
    let quick = sizes.propagationChanges < Sizes.full.propagationChanges
    let etcd = try await LocalEtcd.start(size: 1)
    let endpoint = etcd.endpoints[0]
    let cluster = EtcdCluster(endpoints: [endpoint])
    var rows: [Distribution] = []

    // A put → a program's Setting on a following machine, beside etcdctl watch seeing the same put.
    try await withScratch { directory in
      let copies = directory.appendingPathComponent("fleet").path
      let follower = try Child([
        "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(copies)", splintctl, "fleet", "follow", "--suite", "bench",
        "--endpoints", endpoint,
      ])
      defer {
        follower.terminate()
        follower.wait()
      }
      try await cluster.setValue(jsonText: "0", forKey: "t", suite: "bench")
      waitForFile(copies + "/bench.json")
      let ready = directory.appendingPathComponent("ready").path
      let program = try Child(
        [
          "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(copies)", "XDG_CONFIG_HOME=\(directory.path)/home", benchBinary,
          "fleet-watch", "bench", ready,
        ], output: true)
      waitForFile(ready)
      let floor = try Child(
        [
          "/usr/bin/env", "ETCDCTL_API=3", "/usr/bin/stdbuf", "-oL", "etcdctl", "--endpoints", endpoint, "watch",
          "/splint/bench/t",
        ], output: true)
      let (viaFleet, viaEtcdctl) = (
        StampArrivals(program.output!) { Int($0) }, StampArrivals(floor.output!) { Int($0) }
      )
      for _ in 0..<20 {
        try await cluster.setValue(jsonText: String(now()), forKey: "t", suite: "bench")
        usleep(2_000)
      }
      usleep(200_000)
      viaFleet.clear()
      viaEtcdctl.clear()
      for _ in 0..<sizes.propagationChanges {
        try await cluster.setValue(jsonText: String(now()), forKey: "t", suite: "bench")
        usleep(3_000)
      }
      try await cluster.setValue(jsonText: "-1", forKey: "t", suite: "bench")
      let (ours, theirs) = (Summary(viaFleet.wait()), Summary(viaEtcdctl.wait()))
      program.wait()
      floor.terminate()
      floor.wait()
      let met = ours.median <= theirs.median + 3_000_000
      rows.append(
        Distribution(
          what: "an etcd put → `Setting.updates()` in another process, through the machine's follower and copy",
          summary: ours, target: "p50 within 3 ms of `etcdctl watch`'s", met: met, versus: theirs))
      rows.append(Distribution(what: "the same put → `etcdctl watch` (etcd's own watch, the floor)", summary: theirs))
      report.target(
        "etcd put → `Setting.updates()` in another process",
        result: "p50 \(format(ours.median)) against `etcdctl watch`'s \(format(theirs.median))",
        target: "p50 within 3 ms of `etcdctl watch`'s", met: met)
    }
    report.distributionTable(
      "Settings for a fleet: a change in etcd reaching a program", rows,
      explanation: """
        A put through the fleet's own client (`EtcdCluster.setValue`), stamped with the time it was sent, to a \
        single-member etcd on loopback; a `splintctl fleet follow` writes the machine's copy, and a program in \
        another process prints its `Setting`'s value as it arrives. `etcdctl watch` prints the same puts. Each \
        latency is the stamp's age on arrival, put included.
        """)

    // 1,000 keys under one suite: a follower's first read of them, its memory, and a program's first read of one.
    let keys = 1_000
    for start in stride(from: 0, to: keys, by: 100) {
      try await cluster.setValues((start..<start + 100).map { ("k\($0)", String($0)) }, suite: "many")
    }
    var scaleRows: [Report.Row] = []
    try await withScratch { directory in
      let copies = directory.appendingPathComponent("fleet").path
      let started = now()
      let follower = try Child([
        "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(copies)", splintctl, "fleet", "follow", "--suite", "many",
        "--endpoints", endpoint,
      ])
      defer {
        follower.terminate()
        follower.wait()
      }
      let store = SettingsStore(
        fileURL: directory.appendingPathComponent("home/settings.json"),
        fleetCopies: [URL(fileURLWithPath: copies + "/many.json")])
      while store.value(forKey: "k\(keys - 1)") == nil {
        guard now() - started < 60_000_000_000 else { throw BenchError("the follower did not write 1,000 keys") }
        usleep(1_000)
      }
      let firstRead = Double(now() - started)
      usleep(500_000)
      let resident = residentBytes(of: follower.pid)
      setenv("SPLINT_FLEET_DIRECTORY", copies, 1)
      defer { unsetenv("SPLINT_FLEET_DIRECTORY") }
      let reads = Summary(
        (0..<sizes.processRuns).map { _ in
          Double(runProgram([splintctl, "get", "--suite", "many", "k500"]).nanoseconds)
        })
      scaleRows.append(
        Report.Row(
          what: "a follower's first read of 1,000 keys, from its start to the copy holding them",
          ours: Summary([firstRead]),
          anchorName: "", anchor: nil, target: "", met: nil,
          note: String(format: "the follower's resident memory then: %.1f MB", Double(resident) / 1_048_576)))
      scaleRows.append(
        Report.Row(
          what: "`splintctl get` of one of them (a process reading the 1,000-key copy)", ours: reads, anchorName: "",
          anchor: nil, target: "", met: nil))
    }

    // Followers on one cluster: etcd's CPU and memory while they idle, and each follower's.
    let followers = quick ? 10 : 100
    let seconds = quick ? 3 : 10
    try await withScratch { directory in
      var children: [Child] = []
      defer {
        for child in children {
          child.terminate()
          child.wait()
        }
      }
      for index in 0..<followers {
        let copies = directory.appendingPathComponent("machine\(index)").path
        children.append(
          try Child([
            "/usr/bin/env", "SPLINT_FLEET_DIRECTORY=\(copies)", splintctl, "fleet", "follow", "--suite", "bench",
            "--endpoints", endpoint,
          ]))
      }
      for index in 0..<followers {
        waitForFile(directory.appendingPathComponent("machine\(index)/bench.json").path)
      }
      usleep(1_000_000)
      guard let server = etcd.processID(of: etcd.members[0]) else { throw BenchError("etcd's process is gone") }
      let before = (etcd: cpuTicks(of: server), followers: children.map { cpuTicks(of: $0.pid) })
      sleep(UInt32(seconds))
      let after = (etcd: cpuTicks(of: server), followers: children.map { cpuTicks(of: $0.pid) })
      let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
      let etcdShare = Double(after.etcd - before.etcd) / ticks / Double(seconds) * 100
      let shares = zip(before.followers, after.followers).map { Double($1 - $0) / ticks / Double(seconds) * 100 }
      let followerRSS = children.map { residentBytes(of: $0.pid) }.reduce(0, +) / max(children.count, 1)
      report.line("## Settings for a fleet: \(followers) followers on one cluster")
      report.line()
      report.line(
        """
        \(followers) `splintctl fleet follow` processes, each with a copy of its own, on one single-member etcd, idle \
        for \(seconds) s (each checks its member every 3 seconds with a linearizable count, and keeps its watch open). \
        CPU from /proc's utime and stime, at \(Int(ticks)) ticks a second.
        """)
      report.line()
      report.line("| measured | value |")
      report.line("| --- | --- |")
      report.line(String(format: "| etcd's CPU | %.2f%% of a core |", etcdShare))
      report.line(
        String(format: "| etcd's resident memory | %.1f MB |", Double(residentBytes(of: server)) / 1_048_576))
      report.line(
        String(
          format: "| a follower's idle CPU | mean %.3f%%, max %.3f%% of a core |",
          shares.reduce(0, +) / Double(max(shares.count, 1)), shares.max() ?? 0))
      report.line(String(format: "| a follower's resident memory | mean %.1f MB |", Double(followerRSS) / 1_048_576))
      report.line()
    }
    report.table("Settings for a fleet: 1,000 keys under one suite", scaleRows)
    await etcd.stopAll()
  }

  /// The user and system CPU time process `pid` has used, in clock ticks (/proc/PID/stat); 0 when it is gone.
  func cpuTicks(of pid: pid_t) -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let end = stat.lastIndex(of: ")")
    else { return 0 }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    // After the command's ")": state is field 3, utime 14 and stime 15 of the whole line.
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
    return user + system
  }

  /// Process `pid`'s resident memory, in bytes (VmRSS); 0 when it is gone.
  func residentBytes(of pid: pid_t) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
  }
#endif
