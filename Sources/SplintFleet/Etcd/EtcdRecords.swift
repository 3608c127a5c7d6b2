#if SplintFleet
  import SplintSettings
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    public import FoundationEssentials
  #else
    public import Foundation
  #endif

  #if canImport(Glibc)
    import Glibc
  #endif

  extension EtcdCluster {
    /// How a write records its change: a key of its own beside the suite (`/splint.history/<suite>/<sequence>`,
    /// see ``FleetLayout``), put in the change's own transaction, holding each key's old and new value and its
    /// ``Author``. Records are plain keys, so they outlive etcd's compaction; each suite keeps a bounded number.
    ///
    /// The writer's etcd role needs to read and write the history prefix as well as the suite's
    /// (`etcdctl role grant-permission ROLE readwrite --prefix=true /splint.history/`).
    public struct Recording: Sendable, Hashable {
      /// What made the change, as the record names it: by default the program's name and arguments.
      public var command: String
      /// How many records each suite keeps: when a change is recorded, the oldest past it are removed in the same
      /// transaction. 1,000 unless set; nil for no bound by count.
      public var limit: Int?
      /// How old a record may grow: when a change is recorded, the oldest records older than it are removed in the
      /// same transaction (up to 16 at a time). Nil (no bound by age) unless set.
      public var maximumAge: Duration?

      /// Records that name `command`, and keep at most `limit` records per suite, none older than `maximumAge`.
      public init(command: String = Recording.programCommand, limit: Int? = 1000, maximumAge: Duration? = nil) {
        self.command = command
        self.limit = limit
        self.maximumAge = maximumAge
      }

      /// This program's name and arguments, as a shell reads them back.
      public static var programCommand: String {
        let arguments = CommandLine.arguments
        let name = arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "a program"
        return ([name] + arguments.dropFirst().map(Self.quoted)).joined(separator: " ")
      }

      /// `text` as one word a shell reads back: as it is when it holds nothing the shell acts on, else in single
      /// quotes.
      package static func quoted(_ text: String) -> String {
        let plain =
          !text.isEmpty
          && text.unicodeScalars.allSatisfy {
            $0.isASCII
              && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.,:/=@%+".unicodeScalars.contains($0))
          }
        return plain ? text : "'" + text.replacing("'", with: #"'\''"#) + "'"
      }
    }

    /// Who made a recorded change, where, when and with what.
    public struct Author: Sendable, Hashable {
      /// The name of the user who made it, on the machine it was made from (`root (sudo by alice)` under sudo).
      public let user: String
      /// The machine it was made from: its host name.
      public let host: String
      /// The etcd user it was made as; nil when the cluster has no authentication on.
      public let etcdUser: String?
      /// What made it: `splintctl fleet set --suite ...`, or a program's name and arguments.
      public let command: String
      /// When it was made, by the clock of the machine it was made from.
      public let time: Date

      /// An author, as a record names it.
      package init(user: String, host: String, etcdUser: String?, command: String, time: Date) {
        self.user = user
        self.host = host
        self.etcdUser = etcdUser
        self.command = command
        self.time = time
      }

      /// This process, now, writing as `etcdUser` with `command`.
      static func current(etcdUser: String?, command: String) -> Author {
        Author(user: currentUser, host: FleetMachine.hostName, etcdUser: etcdUser, command: command, time: Date())
      }

      /// The name of the process's real user, and who ran sudo when it is root through sudo.
      private static var currentUser: String {
        let user = getuid()
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let name =
          getpwuid_r(user, &entry, &buffer, buffer.count, &found) == 0 && found != nil
          ? entry.pw_name.map { String(cString: $0) } ?? "user \(user)" : "user \(user)"
        guard user == 0, let sudo = SystemCall.environment("SUDO_USER"), !sudo.isEmpty else { return name }
        return "\(name) (sudo by \(sudo))"
      }
    }

    /// One key of a change: its text before and after (nil: the suite did not hold it), as the cluster holds it
    /// (JSON text, unless written around splintctl).
    public struct KeyChange: Sendable, Hashable {
      /// The key within the suite (`interval`, `$enforced`).
      public let key: String
      /// Its text before; nil when the suite did not hold it.
      public let oldValue: String?
      /// Its text after; nil when the suite no longer holds it.
      public let newValue: String?

      /// A key's change from `oldValue` to `newValue`.
      package init(key: String, oldValue: String?, newValue: String?) {
        self.key = key
        self.oldValue = oldValue
        self.newValue = newValue
      }
    }

    /// A key's text as the cluster holds it, and the revision it was last put at.
    struct Stored: Sendable, Hashable {
      let text: String
      let modRevision: Int64
    }

    /// What a change was made on: the keys read (nil: every key of the suite), their state, and the revision they
    /// were read at.
    struct Reading: Sendable, Hashable {
      let keys: [String]?
      let revision: Int64
      let values: [String: Stored]
    }

    // MARK: - Changing a suite, recorded

    /// Changes `suite` in one transaction, recorded: reads `keys` (every key of the suite for nil), the suite's schema
    /// and its newest and oldest records, asks `change` what the keys become (a text, or nil to remove the key; nil
    /// for no change at all), checks each value against the schema (``checkSchema(_:on:suite:)``), and writes that,
    /// the record and the removal of records past the bound in one transaction that compares each key read (the
    /// schema too), so that a change made meanwhile is never overwritten unseen. Read and written again (a few
    /// times) when another change came between. With `comparingPuts`, the transaction compares only that no key of
    /// the suite was put since (and the keys changed): for a change that a deletion meanwhile cannot make wrong.
    ///
    /// - Returns: The write (``Write/changed`` false, at the revision read, when `change` asked for none) and the
    ///   keys as they were read.
    func commit(
      suite: String, reading keys: [String]?, what: String? = nil, comparingPuts: Bool = false,
      change: ([String: Stored]) throws(FleetError) -> [String: String?]?
    ) async throws(FleetError) -> (Write, [String: Stored]) {
      let gateway = try EtcdGateway(cluster: self)
      let read = keys.map { $0.contains(FleetCopy.schemaKey) ? $0 : $0 + [FleetCopy.schemaKey] }
      var attempt = 0
      while true {
        attempt += 1
        let (reading, sequence) = try await self.read(keys: read, suite: suite, gateway: gateway)
        guard let changes = try change(reading.values) else {
          return (Write(revision: reading.revision, changed: false, previousValue: nil), reading.values)
        }
        try checkSchema(changes, on: reading.values, suite: suite)
        let compared =
          comparingPuts
          ? Reading(keys: nil, revision: reading.revision, values: reading.values.filter { changes[$0.key] != nil })
          : reading
        if let revision = try await write(
          changes, on: compared, suite: suite, sequence: sequence, gateway: gateway, what: what ?? "Changing \(suite)")
        {
          return (Write(revision: revision, changed: true, previousValue: nil), reading.values)
        }
        let conflict = FleetError(.conflict(key: changes.keys.sorted().joined(separator: ", ")))
        guard attempt < 8 else { throw conflict }  // coverage:ignore — writers came between 8 times in a row
        // Another writer came between: read again, after a pause that keeps two writers from meeting again.
        try? await Task.sleep(for: .milliseconds(Int.random(in: 5...20) * attempt))
      }
    }  // coverage:ignore — the end of an endless loop, left only by a return or a throw

    /// Where the next record goes, and which old records go: read with the keys a change reads.
    struct Sequence: Sendable {
      /// The number of the next record.
      let next: Int64
      /// The key before which every record is removed with the change (nil: none).
      let pruneBefore: [UInt8]?
    }

    /// Reads `keys` of `suite` (every key for nil) in one transaction, with the records that say where the next
    /// goes and which old ones the bound removes (when changes are recorded).
    func read(
      keys: [String]?, suite: String, gateway: EtcdGateway
    ) async throws(FleetError) -> (Reading, Sequence?) {
      let prefix = try prefix(ofSuite: suite)
      var ranges = keyRanges(keys, prefix: prefix, besides: 2)
      let records = try recording.map { recording throws(FleetError) in
        let (start, end) = try recordRange(suite: suite)
        ranges.append(
          EtcdRangeRequest(key: EtcdBytes(start), rangeEnd: EtcdBytes(end), limit: 1, keysOnly: true, descending: true))
        let aged = recording.maximumAge != nil
        ranges.append(
          EtcdRangeRequest(key: EtcdBytes(start), rangeEnd: EtcdBytes(end), limit: aged ? 16 : 1, keysOnly: !aged))
        return (recording, start)
      }
      let (revision, results) = try await read(ranges, gateway: gateway)
      let values = Self.stored(Array(results.prefix(results.count - (records == nil ? 0 : 2)).joined()), prefix: prefix)
      let reading = Reading(keys: keys, revision: revision, values: keys.map { values.only($0) } ?? values)
      guard let (recording, start) = records else { return (reading, nil) }
      let newest = results[results.count - 2].first
      let last = try newest.map { pair throws(FleetError) in try Self.sequence(of: pair, prefix: start) } ?? 0
      let next = last + 1
      let oldest = results[results.count - 1]
      var boundary: Int64?
      if let limit = recording.limit.map({ Int64(max($0, 1)) }), next - limit >= 1 {
        boundary = next - limit + 1
      }
      if let age = recording.maximumAge, let latest = oldest.last {
        let cutoff = Date().addingTimeInterval(-Self.seconds(age))
        // The oldest records, up to the first young enough: every one before it goes.
        let young = oldest.first { (ChangeRecord(json: $0.value?.bytes ?? [])?.author.time ?? .distantPast) >= cutoff }
        let stop =
          if let young { try Self.sequence(of: young, prefix: start) } else {
            try Self.sequence(of: latest, prefix: start) + 1
          }
        boundary = max(boundary ?? 0, stop)
      }
      if let first = oldest.first, let bound = boundary, (try Self.sequence(of: first, prefix: start)) >= bound {
        boundary = nil  // the records past the bounds are gone already
      }
      let pruneBefore = try boundary.map { bound throws(FleetError) in
        try layout.recordKey(suite: suite, sequence: bound)
      }
      return (reading, Sequence(next: next, pruneBefore: pruneBefore))
    }

    /// The reads of `keys` of the suite under `prefix` (every key for nil) in a transaction that also holds `besides`
    /// other operations: a read of each key, or of the whole suite when there are more than such a transaction
    /// takes.
    func keyRanges(_ keys: [String]?, prefix: [UInt8], besides: Int) -> [EtcdRangeRequest] {
      guard let keys, keys.count + besides <= maximumTransactionOperations else {
        return [EtcdRangeRequest(key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)))]
      }
      return keys.map { EtcdRangeRequest(key: EtcdBytes(prefix + Array($0.utf8))) }
    }

    /// The number a record's key holds.
    ///
    /// - Throws: ``FleetError/Code/invalidResponse`` for a key under the records' prefix that is not a record's.
    private static func sequence(of pair: EtcdKeyValue, prefix: [UInt8]) throws(FleetError) -> Int64 {
      guard let number = FleetLayout.sequence(ofKey: pair.key.bytes, prefix: prefix) else {
        let key = String(decoding: pair.key.bytes, as: UTF8.self)
        throw FleetError(
          .invalidConfiguration(
            "\(JSONValue.string(key)) is not a record of a change, but is where they are kept: remove it (etcdctl del)."
          ))
      }
      return number
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> TimeInterval {
      Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The range of `suite`'s records: the keys under its history prefix that start with a digit.
    func recordRange(suite: String) throws(FleetError) -> (start: [UInt8], end: [UInt8]) {
      let prefix = Array(try layout.historyPrefix(ofSuite: suite).utf8)
      return (prefix, prefix + [UInt8(ascii: ":")])
    }

    /// Reads `ranges` in one transaction: each as of the same revision, which is returned with them.
    func read(
      _ ranges: [EtcdRangeRequest], gateway: EtcdGateway
    ) async throws(FleetError) -> (revision: Int64, results: [[EtcdKeyValue]]) {
      let request = EtcdTransactionRequest(compare: [], success: ranges.map { .init(requestRange: $0) })
      let (response, endpoint) = try await gateway.call("/v3/kv/txn", request, as: EtcdTransactionResponse.self)
      let answers = response.responses ?? []
      let (server, notEtcd) = (gateway.endpoints[endpoint], "its answer to a transaction of reads is not etcd's")
      guard answers.count == ranges.count, let revision = response.header.revision?.value else {
        throw FleetError(.invalidResponse(server: server, reason: notEtcd))  // coverage:ignore — a peer not etcd
      }
      return (revision, answers.map { $0.responseRange?.kvs ?? [] })
    }

    /// Writes `changes` of `suite` in one transaction that holds only if the keys read are as `reading` found them
    /// (each key's modification revision; for a reading of the whole suite, also that no key was put since), with
    /// the record of the change as number `sequence.next` and the removal of records past the bound.
    ///
    /// - Returns: The revision it was written at; nil when a key changed since it was read (nothing was written).
    /// - Throws: ``FleetError/Code/transactionTooLarge`` (`what` names the change) before anything is sent, and the
    ///   cluster's errors.
    func write(
      _ changes: [String: String?], on reading: Reading, suite: String, sequence: Sequence?, gateway: EtcdGateway,
      what: String
    ) async throws(FleetError) -> Int64? {
      let prefix = try prefix(ofSuite: suite)
      var compares: [EtcdTransactionRequest.Compare] = []
      if let keys = reading.keys {
        for key in keys.sorted() {
          compares.append(
            .init(key: EtcdBytes(prefix + Array(key.utf8)), modRevision: reading.values[key]?.modRevision ?? 0))
        }
      } else {
        // A key made since shows in the range's revisions, a key removed since in its own comparison.
        compares.append(
          .init(
            key: EtcdBytes(prefix), rangeEnd: EtcdBytes(EtcdGateway.rangeEnd(ofPrefix: prefix)),
            modifiedBefore: reading.revision + 1))
        for (key, stored) in reading.values.sorted(by: { $0.key < $1.key }) {
          compares.append(.init(key: EtcdBytes(prefix + Array(key.utf8)), modRevision: stored.modRevision))
        }
      }
      var operations: [EtcdTransactionRequest.Operation] = []
      for (key, text) in changes.sorted(by: { $0.key < $1.key }) {
        let name = EtcdBytes(prefix + Array(key.utf8))
        if let text {
          operations.append(.init(requestPut: EtcdPutRequest(key: name, value: EtcdBytes(text))))
        } else {
          operations.append(.init(requestDeleteRange: EtcdDeleteRequest(key: name)))
        }
      }
      if let recording, let sequence {
        let key = try layout.recordKey(suite: suite, sequence: sequence.next)
        let record = ChangeRecord(
          author: .current(etcdUser: user, command: recording.command),
          changes: changes.sorted(by: { $0.key < $1.key }).map { key, text in
            KeyChange(key: key, oldValue: reading.values[key]?.text, newValue: text)
          })
        compares.append(.init(key: EtcdBytes(key), modRevision: 0))
        operations.append(.init(requestPut: EtcdPutRequest(key: EtcdBytes(key), value: EtcdBytes(record.json))))
        if let before = sequence.pruneBefore {
          let (start, _) = try recordRange(suite: suite)
          operations.append(
            .init(requestDeleteRange: EtcdDeleteRequest(key: EtcdBytes(start), rangeEnd: EtcdBytes(before))))
        }
      }
      let request = EtcdTransactionRequest(compare: compares, success: operations)
      let size = Self.estimatedSize(of: request)
      let limits = FleetError.TransactionLimits(operations: maximumTransactionOperations, bytes: maximumRequestSize)
      let tooLarge = FleetError(
        .transactionTooLarge(
          what: what, compares: compares.count, operations: operations.count, bytes: size, limits: limits))
      guard compares.count <= limits.operations, operations.count <= limits.operations, size <= limits.bytes else {
        throw tooLarge
      }
      let response: EtcdTransactionResponse
      do {
        response = try await gateway.call("/v3/kv/txn", request, as: EtcdTransactionResponse.self).response
      } catch {
        // The cluster's own limits are lower than those given: the same refusal, with its numbers.
        guard case .rejected(_, let message) = error.situation,
          message.contains("too many operations") || message.contains("request is too large")
        else { throw error }
        throw tooLarge
      }
      guard response.succeeded == true else { return nil }
      return response.header.revision?.value ?? 0
    }

    /// About how many bytes `request` takes as etcd's Raft request (its protocol buffer, which `--max-request-bytes`
    /// bounds): its keys and values, and a few bytes for each field.
    /// (A sum a term at a time: as one expression, Swift 6.2's type checker gave up on it.)
    static func estimatedSize(of request: EtcdTransactionRequest) -> Int {
      var size = 64
      for compare in request.compare {
        size += compare.key.bytes.count + (compare.rangeEnd?.bytes.count ?? 0) + 24
      }
      for operation in request.success {
        if let put = operation.requestPut { size += put.key.bytes.count + put.value.bytes.count + 16 }
        if let delete = operation.requestDeleteRange {
          size += delete.key.bytes.count + (delete.rangeEnd?.bytes.count ?? 0) + 16
        }
      }
      return size
    }
  }

  extension Dictionary where Key == String {
    /// The entries of `keys` alone.
    func only(_ keys: [String]) -> Self {
      let wanted = Set(keys)
      return filter { wanted.contains($0.key) }
    }
  }

  /// A record of one change of a suite, as its key under the records' prefix holds it: JSON, so that `etcdctl get`
  /// shows it as it is.
  ///
  /// ```json
  /// {"changes":[{"key":"interval","new":"60","old":"30"}],"command":"splintctl fleet set --suite app interval 60",
  ///  "etcdUser":"alice","host":"ops1","time":"2026-11-28T10:15:02.250Z","user":"alice","version":1}
  /// ```
  ///
  /// Values are the texts the cluster held (`null` for a key it did not hold), as JSON strings, since a value put
  /// around splintctl need not be JSON.
  struct ChangeRecord: Sendable, Hashable {
    let author: EtcdCluster.Author
    let changes: [EtcdCluster.KeyChange]

    init(author: EtcdCluster.Author, changes: [EtcdCluster.KeyChange]) {
      self.author = author
      self.changes = changes
    }

    /// The record `bytes` hold; nil for bytes that are not one.
    init?(json bytes: [UInt8]) {
      guard case .object(let object)? = try? JSONValue(parsing: Data(bytes)),
        case .string(let user)? = object["user"], case .string(let host)? = object["host"],
        case .string(let command)? = object["command"], case .string(let timeText)? = object["time"],
        let time = Date.parseISOTimestamp(timeText), case .array(let items)? = object["changes"]
      else { return nil }
      var etcdUser: String?
      if case .string(let name)? = object["etcdUser"] { etcdUser = name }
      var changes: [EtcdCluster.KeyChange] = []
      for item in items {
        guard case .object(let change) = item, case .string(let key)? = change["key"],
          let old = Self.text(change["old"]), let new = Self.text(change["new"])
        else { return nil }
        changes.append(.init(key: key, oldValue: old, newValue: new))
      }
      author = EtcdCluster.Author(user: user, host: host, etcdUser: etcdUser, command: command, time: time)
      self.changes = changes
    }

    /// A value's text in a record: a string, or nil for `null` (the outer nil: neither, not a record).
    private static func text(_ value: JSONValue?) -> String?? {
      switch value {
      case .string(let text)?: .some(text)
      case .null?: .some(nil)
      default: nil
      }
    }

    /// The record as JSON text.
    var json: String {
      var object: [JSONKey: JSONValue] = [
        "version": 1, "user": .string(author.user), "host": .string(author.host),
        "command": .string(author.command), "time": .string(author.time.isoTimestamp),
        "changes": .array(
          changes.map { change in
            .object([
              "key": .string(change.key), "old": change.oldValue.map(JSONValue.string) ?? .null,
              "new": change.newValue.map(JSONValue.string) ?? .null,
            ])
          }),
      ]
      if let etcdUser = author.etcdUser { object["etcdUser"] = .string(etcdUser) }
      return JSONValue.object(object).description
    }
  }
#endif
