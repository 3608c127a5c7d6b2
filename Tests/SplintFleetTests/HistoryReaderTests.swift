#if SplintFleet
  import Foundation
  import Testing

  @testable import SplintFleet

  /// How a watch of a suite's history is read, line by line: each change with the value before it, until the keys
  /// are as they were at the revision asked for; etcd's compaction; and what etcd does not send, refused.
  @Suite struct HistoryReaderTests {
    let server = "http://127.0.0.1:1"
    let header = #""header":{"cluster_id":"1","revision":"9"}"#

    /// A watch line of `events`.
    func line(_ events: [String]) -> [UInt8] {
      Array(#"{"result":{\#(header),"events":[\#(events.joined(separator: ","))]}}"#.utf8)
    }

    /// An event of the key `n` of the suite `app` at `revision`: put to `value`, or deleted (nil), from `before`.
    func event(_ revision: Int, _ value: String?, before: String?) -> String {
      func pair(_ text: String, _ revision: Int) -> String {
        let key = Data("/splint/app/n".utf8).base64EncodedString()
        return #"{"key":"\#(key)","value":"\#(Data(text.utf8).base64EncodedString())","mod_revision":"\#(revision)"}"#
      }
      let type = value == nil ? #""type":"DELETE","# : ""
      let kv = value.map { pair($0, revision) } ?? pair("", revision)
      let previous = before.map { #","prev_kv":\#(pair($0, revision - 1))"# } ?? ""
      return #"{\#(type)"kv":\#(kv)\#(previous)}"#
    }

    func reader(target: [String: Int64], upTo: Int64 = 5) -> HistoryReader {
      HistoryReader(prefix: Array("/splint/app/".utf8), upTo: upTo, target: target, current: [:])
    }

    @Test("changes are read, with the values before, until the keys are as they were at the revision asked for")
    func changes() throws {
      var reading = reader(target: ["n": 3])
      #expect(try !reading.take([], server: server, user: nil))
      #expect(try !reading.take(line([event(2, "1", before: nil)]), server: server, user: nil))
      #expect(try reading.take(line([event(3, "2", before: "1")]), server: server, user: nil))
      #expect(reading.changes[2] == [.init(key: "n", oldValue: nil, newValue: "1")])
      #expect(reading.changes[3] == [.init(key: "n", oldValue: "1", newValue: "2")])

      // A key removed by then: its deletion ends the reading; changes after the revision are passed over.
      var removed = reader(target: [:])
      let events = [event(2, "1", before: nil), event(4, nil, before: "1"), event(6, "7", before: nil)]
      #expect(try removed.take(line(events), server: server, user: nil))
      #expect(removed.changes[4] == [.init(key: "n", oldValue: "1", newValue: nil)])
      #expect(removed.changes[6] == nil)

      // Compacted: the revision etcd's history starts at.
      var compacted = reader(target: ["n": 3])
      let cancelled = #"{"result":{\#(header),"canceled":true,"compact_revision":"4"}}"#
      #expect(try compacted.take(Array(cancelled.utf8), server: server, user: nil))
      #expect(compacted.compactedAt == 4)
    }

    @Test("what etcd does not send is refused, and a failure it sends is the error it stands for")
    func refusals() {
      let lines: [(String, FleetError.Code, String)] = [
        ("not json", .invalidResponse, "not etcd's"),
        (#"{"other":1}"#, .invalidResponse, "holds no result"),
        (#"{"error":{"message":"etcdserver: no leader","code":14}}"#, .noLeader, "no leader"),
        (#"{"result":{\#(header),"canceled":true,"cancel_reason":"gone"}}"#, .rejected, "gone"),
        (#"{"result":{\#(header),"canceled":true}}"#, .rejected, "it cancelled the watch"),
      ]
      for (text, code, words) in lines {
        var reading = reader(target: ["n": 3])
        let error = #expect(throws: FleetError.self) { try reading.take(Array(text.utf8), server: server, user: nil) }
        #expect(error?.code == code, "\(text): \(String(describing: error))")
        #expect(error?.description.contains(words) == true, "\(text): \(String(describing: error))")
      }
      // A change past the revision asked for, with the keys not yet as they were then: etcd left one out.
      var skipped = reader(target: ["n": 3])
      let error = #expect(throws: FleetError.self) {
        try skipped.take(line([event(7, "1", before: nil)]), server: server, user: nil)
      }
      #expect(error?.description.contains("left out changes") == true, "\(String(describing: error))")
    }

    @Test("a watch's failure is told as the gateway tells it, and a compaction is told from other refusals")
    func watchFailures() {
      let failure = FleetError(.noLeader(server: server))
      #expect(EtcdCluster.watchFailure(failure, timeout: .seconds(1)) == failure)
      let transport = FleetTransportError(.timedOut, server: server, reason: "slow")
      #expect(EtcdCluster.watchFailure(transport, timeout: .seconds(2)).code == .timedOut)
      #expect(EtcdCluster.watchFailure(CancellationError(), timeout: .seconds(1)).code == .cancelled)
      // Only etcd's refusal of a read past its compaction is one.
      let compacted = "etcdserver: mvcc: required revision has been compacted"
      #expect(FleetError(.rejected(server: server, message: compacted)).isCompaction)
      #expect(!FleetError(.rejected(server: server, message: "too many operations in txn request")).isCompaction)
      #expect(!FleetError(.noLeader(server: server)).isCompaction)
    }
  }
#endif
