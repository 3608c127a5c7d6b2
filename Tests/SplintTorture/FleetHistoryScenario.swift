// A fleet change's way back under concurrency: rollbacks racing two writers on one suite of a real 3-member etcd
// cluster, each either applied whole or refused with nothing changed.

#if SplintFleet
  import Foundation
  import SplintFleet
  import Synchronization
  import TestSupport

  /// What the writers of ``rollbacksAmongWriters(quick:)`` share with it: the revisions they wrote (what the
  /// rollbacks go back to), whether to go on, and what failed.
  private final class Writers: Sendable {
    let revisions = Mutex<[Int64]>([])
    let writing = Atomic(true)
    let failures = Mutex<[String]>([])
  }

  /// Two writers change 8 keys of a suite (values, and now and then a key removed, so that a rollback makes keys
  /// again and removes others) while rollbacks go back to revisions they wrote, each applying a diff made a moment
  /// before. Every rollback either applies whole (the suite at the revision it made is the state it went back to)
  /// or is refused as a conflict having changed nothing (no revision of it, no record of it); the history records
  /// each applied one, once.
  func rollbacksAmongWriters(quick: Bool) async -> Outcome {
    let attempts = quick ? 30 : 150
    return await scenario("fleet history: rollbacks racing two writers, each applied whole or not at all") { outcome in
      let suite = "torture-rollbacks"
      let etcd = try await LocalEtcd.start(size: 3)
      var writer = EtcdCluster(endpoints: etcd.endpoints)
      writer.recording = EtcdCluster.Recording(command: "torture write", limit: nil)
      var roller = writer
      roller.recording = EtcdCluster.Recording(command: "torture rollback", limit: nil)
      let keys = (0..<8).map { "k\($0)" }
      let shared = Writers()
      let first = try await writer.setValues(keys.map { ($0, "0") }, suite: suite)
      shared.revisions.withLock { $0.append(first.revision) }
      let writing = (1...2).map { number in
        Task { [writer] in
          var value = 0
          while shared.writing.load(ordering: .relaxed) {
            value += 1
            let chosen = Array(keys.shuffled().prefix(Int.random(in: 1...3)))
            do throws(FleetError) {
              let write =
                value % 7 == 0
                ? try await writer.removeValue(forKey: chosen[0], suite: suite)
                : try await writer.setValues(chosen.map { ($0, "\(number * 1_000_000 + value)") }, suite: suite)
              if write.changed { shared.revisions.withLock { $0.append(write.revision) } }
            } catch {
              shared.failures.withLock { $0.append("a writer's call failed: \(error)") }
            }
            // A pause of up to 20 ms, so that some rollbacks meet no write between their diff and their transaction.
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
          }
        }
      }
      var applied: [(revision: Int64, target: Int64)] = []
      var (refused, unchanged) = (0, 0)
      for _ in 0..<attempts {
        guard let target = shared.revisions.withLock({ $0.randomElement() }) else { continue }
        let diff = try await roller.diff(suite: suite, to: target)
        // (Not a typed `do` with a partial catch: Swift 6.2.3's SIL verifier crashes on one.)
        do {
          let write = try await roller.apply(diff)
          if write.changed { applied.append((write.revision, target)) } else { unchanged += 1 }
        } catch let error as FleetError where error.code == .conflict {
          refused += 1
        }
      }
      shared.writing.store(false, ordering: .relaxed)
      for task in writing { await task.value }
      for failure in shared.failures.withLock({ $0 }) { outcome.fail(failure) }
      // Applied whole: the suite as the rollback's own revision left it is the state it went back to.
      for (revision, target) in applied {
        let left = try await roller.diff(suite: suite, from: revision, to: target).differences
        if !left.isEmpty {
          outcome.lose("the rollback to \(target) made at \(revision) left \(left.map(\.key)) otherwise")
        }
      }
      // Nothing of a refused one: the only rollbacks the history knows are those applied, each once.
      let recorded = try await roller.history(suite: suite).changes.filter { $0.author?.command == "torture rollback" }
      let (made, seen) = (Set(applied.map(\.revision)), recorded.map(\.revision))
      if Set(seen) != made || seen.count != made.count {
        outcome.fail(
          "the history holds rollbacks at \(seen.filter { !made.contains($0) }) that were refused, "
            + "misses \(made.subtracting(seen).sorted()), or holds one twice")
      }
      // The race is what is tried: some rollbacks must have met a write after their diff, and some none.
      if applied.isEmpty || refused == 0 {
        outcome.fail("no race: \(applied.count) rollbacks applied, \(refused) refused")
      }
      outcome.operations = attempts
      outcome.figure =
        "\(applied.count) applied whole, \(refused) refused with nothing changed, \(unchanged) with nothing to "
        + "change; \(shared.revisions.withLock { $0.count }) writes beside them"
    }
  }
#endif
