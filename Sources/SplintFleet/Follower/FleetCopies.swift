#if SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A follower's copies, one per suite, and what it knows of each: the values it took from the cluster, as of
  /// which revision, and the follower's state, which every copy records. Each change reaches a copy in one write.
  ///
  /// Everything a copy holds is bounded, whatever the cluster holds: its values by the options' sizes, the keys it
  /// leaves out by ``maximumListedSkips`` (each name cut), key names by ``maximumKeyBytes``; and all of it counts
  /// in the copy's size.
  actor FleetCopies {
    /// The longest key a copy takes, in bytes: a setting's key is a name, not a document.
    static let maximumKeyBytes = 1024
    /// The most keys left out that a copy lists, and that a whole read logs; the rest are counted.
    static let maximumListedSkips = 100

    /// One suite's copy as the follower holds it.
    struct Copy {
      let suite: String
      let writer: FleetCopyWriter
      /// The cluster's key prefix of the suite's settings.
      let prefix: [UInt8]
      /// The cluster and revision the values are as of; nil before the first read.
      var at: FleetRevision?
      /// Each setting's value, its text when the value would write it otherwise, and its size in the cluster.
      var values: [String: (value: JSONValue, text: String?, size: Int)] = [:]
      /// The keys the fleet enforces.
      var enforced: [String] = []
      /// The schema the suite's values are held to (its `$schema`), if it has one.
      var schema: FleetSchema?
      /// Keys left out, and why, as shown (escaped, cut): at most ``maximumListedSkips``.
      var skipped: [String: String] = [:]
      /// How many more keys were left out than `skipped` lists.
      var skippedMore = 0
      /// Keys whose value in the cluster the follower refused, and why, while the copy keeps their last good value.
      var rejected: [String: String] = [:]
      /// While a whole read makes the copy anew: the values, enforced keys, schema and order of labels the copy held
      /// before it (of the same cluster), each the last good one of its key, kept for a key whose value the read
      /// refuses.
      var lastGood: LastGood = .init()
      /// The values the machine's labels give the suite's keys, by label and key, as the cluster holds them (those of
      /// a label the order does not name too, which apply once it does); no other label's.
      var labelled: [String: [String: Raw]] = [:]
      /// The suite's order of labels (`$labels`).
      var order: [String] = []
      /// The suite's value for every machine of each key a label of the machine gives a value to (none: the suite
      /// holds none), as the cluster holds it: what the key takes again once no label gives it one.
      var suiteWide: [String: Raw] = [:]
      /// The label each key's value comes from, for the keys whose value a label gives.
      var origins: [String: String] = [:]
      /// Why the copy must be read whole again before it is watched (a follower resumed from a copy that holds
      /// values of labels it does not keep on disk, or made for other labels), or nil.
      var readAgain: String?
      /// Whether the copy on disk lags behind (a write failed, or there are changes to write).
      var unwritten = false
      /// The revision of the last write of the copy on disk (0: none yet), and why the last write failed, if it did.
      var written: (at: FleetRevision?, failure: String?) = (nil, nil)
      /// The revision as of which the suite's keys last changed in the copy (a whole read's, or a change's): what
      /// the follower reports it holds. Not moved on by progress, or by other suites' changes: a report is written
      /// once a change, not at every revision the cluster moves on to (which the reports themselves move).
      var changed: FleetRevision?
      /// How many keys of the suite the cluster holds as of ``changed`` (those left out too), while the range's keys
      /// are known (``FleetCopies/rangeKeys``).
      var keyCount = 0

      init(suite: String, writer: FleetCopyWriter, prefix: [UInt8]) {
        self.suite = suite
        self.writer = writer
        self.prefix = prefix
      }

      /// The bytes the copy's settings take, as the cluster holds them, with its enforced keys and the keys it
      /// lists as left out.
      var size: Int {
        let valuesSize: Int = values.reduce(0) { $0 + $1.key.utf8.count + $1.value.size }
        let enforcedSize: Int = enforced.reduce(0) { $0 + $1.utf8.count + 3 }
        let skippedSize: Int = skipped.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        let rejectedSize: Int = rejected.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        let labelledSize: Int = labelled.values.reduce(0) { sum, values in
          values.reduce(sum) { $0 + $1.key.utf8.count + $1.value.size }
        }
        let suiteWideSize: Int = suiteWide.reduce(0) { $0 + $1.key.utf8.count + $1.value.size }
        return valuesSize + enforcedSize + skippedSize + rejectedSize + (schema?.size ?? 0) + labelledSize
          + suiteWideSize
      }
    }

    /// What a copy held before a whole read.
    struct LastGood {
      var values: [String: (value: JSONValue, text: String?, size: Int)] = [:]
      var enforced: [String] = []
      var schema: FleetSchema?
      var order: [String] = []
    }

    /// A value as the cluster holds it, kept for when it applies: its bytes, or only its size when it is larger
    /// than a value may be.
    enum Raw {
      case bytes([UInt8])
      case tooLarge(Int)

      var size: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .tooLarge: 0
        }
      }
    }

    private var copies: [Copy]
    /// The copies as a whole read is making them, until it ends (``finishReading()``).
    private var reading: [Copy]?
    /// How many keys the whole read under way has left out, for its log.
    private var skippedInRead = 0
    private let engine: String
    private let endpoints: [String]
    private let options: FleetFollower.Options
    private let report: @Sendable (FleetFollower.Event) -> Void
    /// The machine's labels (its host label among them).
    private let labels: Set<String>
    /// What every copy records of the follower.
    private var state: FleetCopyStatus.State = .following
    private var since = Date()
    private var reason: String?
    /// The machine the follower reports as, and why it cannot report, as every copy records them.
    private var reporting: (machine: String?, failure: String?) = (nil, nil)
    /// Whether a sync of the copies is due (within ``FleetFollower/Options/syncDelay``).
    private var syncScheduled = false
    /// Every key of the watched range (the followed suites' and any other's between them) as of ``heldRevision``,
    /// whose count per suite tells a quiet suite (see ``Held/keys``). Nil while unknown (a follower that resumed from
    /// copies on disk, until it read the keys again), and past ``maximumTrackedKeys`` keys (no settings suite has
    /// that many).
    private var rangeKeys: Set<[UInt8]>?
    /// The most keys of the watched range the follower keeps (about 10 MB at most).
    static let maximumTrackedKeys = 100_000
    /// The range's keys as the read under way (whole, or of the keys alone) finds them.
    private var readingKeys: Set<[UInt8]>?

    init(
      copies: [Copy], engine: String, endpoints: [String], options: FleetFollower.Options, labels: Set<String> = [],
      report: @escaping @Sendable (FleetFollower.Event) -> Void
    ) {
      self.copies = copies
      self.labels = labels
      self.engine = engine
      self.endpoints = endpoints
      self.options = options
      self.report = report
    }

    /// Takes up what the copies on disk hold (from a follower before this one): their values and revisions, so that
    /// a follower that restarts resumes where the last one stopped, without reading everything again; and what the
    /// last follower recorded of the cluster (lost since when). Then writes this follower into them (its process,
    /// host and user), so that no copy names a follower that is gone.
    func load() {
      var recorded: FleetCopy.Metadata?
      for index in copies.indices {
        let current = copies[index].writer.current
        guard let metadata = current.metadata, metadata.engine == engine else { continue }
        recorded = recorded ?? metadata
        // A revision a cluster cannot be at (a copy written by hand) is no place to resume from.
        if (0..<Int64.max).contains(metadata.revision) {
          copies[index].at = FleetRevision(cluster: metadata.cluster, revision: metadata.revision)
        }
        copies[index].skipped = metadata.skipped
        copies[index].skippedMore = metadata.skippedMore
        copies[index].enforced = current.enforced
        for (key, value) in current.values {
          let text = value.description
          copies[index].values[key] = (value, nil, text.utf8.count)
        }
        // A schema this version cannot check (a copy written by another) is none: the next whole read takes it again.
        copies[index].schema = metadata.schema.flatMap { schema in
          try? FleetSchema(schema, size: schema.description.utf8.count, suite: copies[index].suite)
        }
        copies[index].order = metadata.labelOrder
        copies[index].origins = metadata.origins.filter { current.values[$0.key] != nil }
        copies[index].rejected = metadata.rejected.filter { key, _ in
          current.values[key] != nil || (key == FleetCopy.enforcedKey && !current.enforced.isEmpty)
            || (key == FleetCopy.schemaKey && copies[index].schema != nil)
            || (key == FleetCopy.labelsKey && !copies[index].order.isEmpty)
        }
        // The values of the machine's labels are not on disk (the copy holds each key's value in effect alone).
        if metadata.labels ?? [] != labels.sorted() {
          copies[index].readAgain =
            "this machine's labels changed (it carries \(labels.sorted().joined(separator: ", ")))"
        } else if metadata.labelValues > 0 {
          copies[index].readAgain = "the copy of \(copies[index].suite) holds values of this machine's labels"
        }
        copies[index].unwritten = copies[index].at != nil
        copies[index].written.at = copies[index].at
        copies[index].changed = copies[index].at
      }
      rangeKeys = nil
      // A follower started over a copy that records a lost cluster keeps since when.
      if let recorded, recorded.state == .unreachable {
        (state, since, reason) = (.unreachable, recorded.since, recorded.reason)  // coverage:ignore — not tested
      }  // coverage:ignore — the end of the block above
      writeUnwritten()
    }

    /// Why the copies must be read again whole before the cluster, as it is `now`, is watched, or nil when they
    /// need not: one has never been read (the first read, on a new machine), or is of another cluster (a restored
    /// or rebuilt one), or of a later revision than the cluster's (a cluster restored from an older snapshot).
    func fullReadReason(_ now: FleetRevision) -> String? {
      for copy in copies {
        guard let at = copy.at else { return "this machine has no copy of \(copy.suite) yet (a first read)" }
        if at.cluster != now.cluster {
          return
            "the copy of \(copy.suite) is of another cluster (\(at.cluster), not \(now.cluster)): restored or rebuilt"
        }
        if at.revision > now.revision {
          let copied = "the copy of \(copy.suite) is as of revision \(at.revision)"  // coverage:ignore — not tested
          let cluster = "later than the cluster's \(now.revision)"  // coverage:ignore — not tested
          return "\(copied), \(cluster): it was restored from an older snapshot"  // coverage:ignore — not tested
        }
        if let reason = copy.readAgain { return reason }
      }
      return nil
    }

    /// The revision every copy is up to date with: a watch resumes after it.
    var heldRevision: Int64 { copies.map { $0.at?.revision ?? 0 }.min() ?? 0 }

    /// Starts a whole read of the cluster as of `at`: its parts are taken (``take(_:)``) into copies made anew, which
    /// replace the copies once the read ends (``finishReading()``); keys deleted meanwhile disappear then. A value
    /// the read refuses keeps the key's last good value, unless the cluster is another one (its values owe nothing
    /// to the old one's).
    func startReading(at: FleetRevision) {
      reading = copies.map { copy in
        var fresh = Copy(suite: copy.suite, writer: copy.writer, prefix: copy.prefix)
        fresh.at = at
        if copy.at?.cluster == at.cluster {
          fresh.lastGood = LastGood(
            values: copy.values, enforced: copy.enforced, schema: copy.schema, order: copy.order)
        }
        return fresh
      }
      skippedInRead = 0
      readingKeys = []
    }

    /// The range's keys, as a read of them alone finds them (``takeKeys(_:)``) for a follower that resumed from its
    /// copies: their revision, or nil when they are known.
    var keysUnknown: Int64? { rangeKeys == nil ? heldRevision : nil }

    /// Starts a read of the range's keys alone, as of ``heldRevision``.
    func startReadingKeys() {
      readingKeys = []
    }

    /// One part of a read of the range's keys.
    func takeKeys(_ pairs: [FleetPair]) {
      for pair in pairs { readKey(pair.key) }
    }

    /// Ends a read of the range's keys alone: they are known from now on (unless the read failed).
    func finishReadingKeys(keeping: Bool = true) {
      if keeping, let read = readingKeys { know(read) }
      readingKeys = nil
    }

    /// Adds `key` to the keys the read under way found, unless there are more than ``maximumTrackedKeys``.
    private func readKey(_ key: [UInt8]) {
      readingKeys?.insert(key)
      if (readingKeys?.count ?? 0) > Self.maximumTrackedKeys { readingKeys = nil }
    }

    /// Takes `keys` as the range's, and counts each copy's.
    private func know(_ keys: Set<[UInt8]>) {
      rangeKeys = keys
      for index in copies.indices {
        copies[index].keyCount = keys.count(where: { $0.starts(with: copies[index].prefix) })
      }
    }

    /// Records that `key` of the range was put (`present`) or deleted, and counts it in its suite's copy, unless
    /// the keys are unknown, or would be more than ``maximumTrackedKeys`` (then unknown until the next whole read).
    private func track(_ key: [UInt8], present: Bool) {
      guard rangeKeys != nil else { return }
      let counted = present ? rangeKeys?.insert(key).inserted == true : rangeKeys?.remove(key) != nil
      if counted, let index = copies.firstIndex(where: { key.starts(with: $0.prefix) }) {
        copies[index].keyCount += present ? 1 : -1
      }
      if (rangeKeys?.count ?? 0) > Self.maximumTrackedKeys { rangeKeys = nil }
    }

    /// One part of a whole read.
    func take(_ pairs: [FleetPair]) {
      guard var reading else { return }
      for pair in pairs {
        readKey(pair.key)
        guard let index = reading.firstIndex(where: { pair.key.starts(with: $0.prefix) }) else { continue }
        guard let value = pair.value else {
          let key = String(decoding: pair.key.dropFirst(reading[index].prefix.count), as: UTF8.self)
          let error = FleetError(.valueTooLarge(key: key.shown(), size: nil, limit: options.maximumValueSize))
          skip(key, error, in: &reading[index])
          continue
        }
        // Checked against the suite's schema once the read is whole (``checkSchema(_:)``): it may come later.
        take(
          FleetEvent(key: pair.key, value: value, revision: pair.revision), into: &reading[index],
          checkingSchema: false)
      }
      self.reading = reading
    }

    /// Ends a whole read: its copies replace the copies, each written once; or, when it failed (`keeping` false),
    /// are dropped, and the copies stay as they were.
    func finishReading(keeping: Bool = true) {
      guard var read = reading else { return }
      let keys = readingKeys
      readingKeys = nil
      guard keeping else {
        reading = nil
        return
      }
      // While the read is still under way: what the schema refuses is told as a whole read's.
      for index in read.indices { checkSchema(&read[index]) }
      reading = nil
      if skippedInRead > Self.maximumListedSkips {
        report(.skippedMore(count: skippedInRead - Self.maximumListedSkips))
      }
      for index in copies.indices {
        var copy = read[index]
        copy.lastGood = LastGood()
        let before = (copies[index].values.mapValues(\.value), copies[index].enforced)
        copy.unwritten = true
        copy.changed = copy.at
        copies[index] = copy
        if before.0 != copy.values.mapValues(\.value) || before.1 != copy.enforced, let at = copy.at {
          report(.changed(suite: copy.suite, revision: at.revision))
        }
      }
      if let keys { know(keys) } else { rangeKeys = nil }
      writeUnwritten()
    }

    /// Applies a watch's changes, each to the copy of its suite, once: a change at a revision a copy has already is
    /// not applied again. Each copy that changed is written once, with all of them. A change of a suite's schema is
    /// taken first, and the values after it are checked against it; the values held before it are checked by a whole
    /// read, whose reason this returns (nil when no schema changed), as it does when a label's value came over a
    /// value the copy refused (the copy does not hold that value, which the key takes again without the label).
    func apply(_ events: [FleetEvent], at: FleetRevision) -> String? {
      var schemasChanged: [String] = []
      var readAgain: String?
      for event in events where event.revision > heldRevision {
        track(event.key, present: event.value != nil)
      }
      for index in copies.indices {
        var copy = copies[index]
        let held = copy.at?.revision ?? 0
        let schemaKey = copy.prefix + Array(FleetCopy.schemaKey.utf8)
        let suiteEvents = events.filter { $0.revision > held && $0.key.starts(with: copy.prefix) }
        let schema = copy.schema?.json
        for event in suiteEvents.filter({ $0.key == schemaKey }) + suiteEvents.filter({ $0.key != schemaKey }) {
          take(event, into: &copy)
        }
        if copy.schema?.json != schema { schemasChanged.append(copy.suite) }
        readAgain = readAgain ?? copy.readAgain
        let changed = !suiteEvents.isEmpty
        copy.at = FleetRevision(cluster: at.cluster, revision: max(held, at.revision))
        if changed {
          copy.unwritten = true
          copy.changed = copy.at
          report(.changed(suite: copy.suite, revision: at.revision))
        }
        copies[index] = copy
      }
      writeUnwritten()
      guard !schemasChanged.isEmpty else { return readAgain }
      let suites = schemasChanged.joined(separator: ", ")
      return "the schema of \(suites) changed: every value is checked against it again"
    }

    /// Takes the cluster's revision from a progress notification: nothing changed up to it.
    func progress(_ at: FleetRevision) {
      for index in copies.indices where (copies[index].at?.revision ?? 0) < at.revision {
        copies[index].at = at
      }
    }

    /// One key's change, into its suite's copy: a label's value (``takeLabelled(_:_:into:_:)``), the
    /// order of labels, or a key's value for every machine, which goes into the copy unless one of the machine's
    /// labels gives the key a value.
    private func take(_ event: FleetEvent, into copy: inout Copy, checkingSchema: Bool = true) {
      let name = event.key.dropFirst(copy.prefix.count)
      if name.starts(with: FleetCopy.labelValuePrefix.utf8) {
        return takeLabelled(name.dropFirst(FleetCopy.labelValuePrefix.utf8.count), event, into: &copy, checkingSchema)
      }
      if name.elementsEqual(FleetCopy.labelsKey.utf8) { return takeOrder(event, into: &copy, checkingSchema) }
      if let key = String(validating: name, as: UTF8.self), copy.labelled.values.contains(where: { $0[key] != nil }) {
        copy.suiteWide[key] = event.value.map { raw($0) }
        return resolve(key, at: event.revision, into: &copy, checkingSchema)
      }
      takeValue(event, into: &copy, checkingSchema: checkingSchema)
    }

    /// A value as the copy keeps it until it applies: only its size, past the size a value may be.
    private func raw(_ value: [UInt8]) -> Raw {
      value.count <= options.maximumValueSize ? .bytes(value) : .tooLarge(value.count)
    }

    /// A change of a label's value (`rest` is what follows `$for/`: `<label>/<key>`): kept when the machine carries
    /// the label (another label's leaves no trace), then the key's value in effect is resolved again.
    private func takeLabelled(
      _ rest: ArraySlice<UInt8>, _ event: FleetEvent, into copy: inout Copy, _ checkingSchema: Bool
    ) {
      guard let slash = rest.firstIndex(of: UInt8(ascii: "/")),
        let label = String(validating: rest[..<slash], as: UTF8.self), labels.contains(label)
      else { return }
      let shown = String(decoding: event.key.dropFirst(copy.prefix.count), as: UTF8.self)
      guard let key = String(validating: rest[(slash + 1)...], as: UTF8.self), !key.isEmpty,
        !FleetCopy.isReserved(key)
      else { return skip(shown, FleetError(.reservedKey(shown.shown())), in: &copy) }
      let labelled = copy.labelled.values.contains { $0[key] != nil }
      if !labelled, let held = copy.values[key] {
        // The key's value for every machine, kept for when no label gives one; one the copy refused is not held.
        if copy.rejected[key] != nil {
          copy.readAgain = "a label's value of \(key.shown()) came over a value the copy refused"
        }
        copy.suiteWide[key] = .bytes(Array((held.text ?? held.value.description).utf8))
      }
      if let value = event.value {
        let held = copy.labelled[label]?[key].map { key.utf8.count + $0.size } ?? 0
        let size = copy.size - held + key.utf8.count + value.count
        guard size <= options.maximumCopySize else {
          return refuse(
            key, FleetError(.copyTooLarge(suite: copy.suite, size: size, limit: options.maximumCopySize)), in: &copy)
        }
        copy.labelled[label, default: [:]][key] = raw(value)
      } else {
        copy.labelled[label]?[key] = nil
        if copy.labelled[label]?.isEmpty == true { copy.labelled[label] = nil }
      }
      resolve(key, at: event.revision, into: &copy, checkingSchema)
      if !copy.labelled.values.contains(where: { $0[key] != nil }) { copy.suiteWide[key] = nil }
    }

    /// A change of the suite's order of labels: every key a label of the machine gives a value to is resolved again.
    /// An order that is not one is refused, and the last good one kept.
    private func takeOrder(_ event: FleetEvent, into copy: inout Copy, _ checkingSchema: Bool) {
      copy.rejected[FleetCopy.labelsKey] = nil
      if let value = event.value {
        do {
          copy.order = try FleetLabels.order(value)
        } catch {
          return refuse(FleetCopy.labelsKey, error, in: &copy)
        }
      } else {
        copy.order = []
      }
      let keys = Set(copy.labelled.values.flatMap(\.keys))
      for key in keys.sorted() { resolve(key, at: event.revision, into: &copy, checkingSchema) }
    }

    /// Takes `key`'s value in effect on this machine into the copy: the value of the first of the machine's labels
    /// in the suite's order that gives one (its host label first), else the suite's value for every machine.
    private func resolve(_ key: String, at revision: Int64, into copy: inout Copy, _ checkingSchema: Bool) {
      let order = FleetLabels.resolving(copy.order, carried: labels)
      let label = order.first { copy.labelled[$0]?[key] != nil }
      let raw = label.flatMap { copy.labelled[$0]?[key] } ?? copy.suiteWide[key]
      let name = copy.prefix + Array(key.utf8)
      let origin = copy.origins[key]
      switch raw {
      case .bytes(let bytes)?:
        takeValue(FleetEvent(key: name, value: bytes, revision: revision), into: &copy, checkingSchema: checkingSchema)
      case .tooLarge(let size)?:
        refuse(
          key, FleetError(.valueTooLarge(key: key.shown(), size: size, limit: options.maximumValueSize)), in: &copy)
      case nil:
        takeValue(FleetEvent(key: name, value: nil, revision: revision), into: &copy, checkingSchema: checkingSchema)
      }
      // A refused value keeps the last good one, and where it came from.
      copy.origins[key] = copy.rejected[key] == nil ? (copy.values[key] == nil ? nil : label) : origin
    }

    /// One key's value for the copy: a setting (if it is JSON, not reserved, and fits), or what the fleet enforces.
    /// A value the follower cannot take does not replace the key's last good value (``refuse(_:_:in:)``).
    private func takeValue(_ event: FleetEvent, into copy: inout Copy, checkingSchema: Bool = true) {
      let name = event.key.dropFirst(copy.prefix.count)
      guard let key = String(validating: name, as: UTF8.self), !key.isEmpty else {
        let shown = String(decoding: name, as: UTF8.self)
        skip(shown, FleetError(.invalidConfiguration("the key is not UTF-8 text, as settings keys are.")), in: &copy)
        return
      }
      guard name.count <= Self.maximumKeyBytes else {
        return skip(
          key, FleetError(.keyTooLong(key: key.shown(), size: name.count, limit: Self.maximumKeyBytes)), in: &copy)
      }
      copy.skipped[key] = nil
      copy.rejected[key] = nil
      guard let value = event.value else {
        copy.values[key] = nil
        if key == FleetCopy.enforcedKey { copy.enforced = [] }
        if key == FleetCopy.schemaKey { copy.schema = nil }
        return
      }
      guard value.count <= options.maximumValueSize else {
        return refuse(
          key, FleetError(.valueTooLarge(key: key.shown(), size: value.count, limit: options.maximumValueSize)),
          in: &copy)
      }
      if key == FleetCopy.enforcedKey {
        // The keys it lists are enforced; what is not a key is left out, and told. One that lists no key at all,
        // only what is not one (or is not a list), is refused whole.
        let enforced = FleetCopy.EnforcedKeys(value)
        if let problem = enforced.problem {
          let error = FleetError(.notJSON(key: key, reason: problem))
          guard !enforced.keys.isEmpty else { return refuse(key, error, in: &copy) }
          skip(key, error, in: &copy)
        }
        copy.enforced = enforced.keys
        return
      }
      if key == FleetCopy.schemaKey {
        do {
          copy.schema = try FleetSchema(value, suite: copy.suite)
        } catch {
          refuse(key, error, in: &copy)
        }
        return
      }
      guard !FleetCopy.isReserved(key) else { return skip(key, FleetError(.reservedKey(key.shown())), in: &copy) }
      let parsed: (value: JSONValue, text: String?)
      do {
        parsed = try FleetCopy.parseValue(value)
      } catch {
        return refuse(
          key, FleetError(.notJSON(key: key.shown(), reason: FleetError.jsonReason(error))), in: &copy)
      }
      if checkingSchema, let schema = copy.schema {
        let violations = schema.violations(of: parsed.value, forKey: key)
        guard violations.isEmpty else {
          return refuse(
            key, FleetError(.schemaViolation(suite: copy.suite, violations: violations, existing: false)), in: &copy)
        }
      }
      let held = copy.values[key].map { key.utf8.count + $0.size } ?? 0
      let size = copy.size - held + key.utf8.count + value.count
      guard size <= options.maximumCopySize else {
        return refuse(
          key, FleetError(.copyTooLarge(suite: copy.suite, size: size, limit: options.maximumCopySize)), in: &copy)
      }
      copy.values[key] = (parsed.value, parsed.text, value.count)
    }

    /// Refuses a value of `key` the follower cannot take: the copy keeps the key's last good value (the one it holds,
    /// or held before the whole read under way), and records why it refused the new one; a key never good on the
    /// machine (or whose last good value no longer fits the copy) is left out (``skip(_:_:in:)``).
    private func refuse(_ key: String, _ error: FleetError, in copy: inout Copy) {
      let hasGood: Bool
      switch key {
      case FleetCopy.enforcedKey:
        if copy.enforced.isEmpty { copy.enforced = copy.lastGood.enforced }
        hasGood = !copy.enforced.isEmpty
      case FleetCopy.schemaKey:
        copy.schema = copy.schema ?? copy.lastGood.schema
        hasGood = copy.schema != nil
      case FleetCopy.labelsKey:
        if copy.order.isEmpty { copy.order = copy.lastGood.order }
        hasGood = !copy.order.isEmpty
      default:
        if copy.values[key] == nil, let good = copy.lastGood.values[key],
          copy.size + key.utf8.count + good.size <= options.maximumCopySize
        {
          copy.values[key] = good
        }
        hasGood = copy.values[key] != nil
      }
      guard hasGood else { return skip(key, error, in: &copy) }
      copy.rejected[key] = error.skipReason
      if tellsInRead() { report(.rejected(suite: copy.suite, key: key, error)) }
    }

    /// Checks each value a whole read took against the suite's schema, once the read is whole: a value the schema
    /// refuses keeps the key's last good value (even one the schema, changed since, refuses too: a machine keeps
    /// what it applied), or is left out when the key had none.
    private func checkSchema(_ copy: inout Copy) {
      guard let schema = copy.schema else { return }
      for (key, held) in copy.values.sorted(by: { $0.key < $1.key }) where copy.rejected[key] == nil {
        let violations = schema.violations(of: held.value, forKey: key)
        guard !violations.isEmpty else { continue }
        copy.values[key] = nil
        refuse(key, FleetError(.schemaViolation(suite: copy.suite, violations: violations, existing: false)), in: &copy)
      }
    }

    /// Leaves `key` out of the copy, recording why (at most ``maximumListedSkips`` keys are listed, each name as
    /// shown: escaped, and cut to a line's length), and tells it (in a whole read, the first of them only).
    private func skip(_ key: String, _ error: FleetError, in copy: inout Copy) {
      copy.values[key] = nil
      let shown = key.shown(limit: 100)
      if copy.skipped[shown] != nil || copy.skipped.count < Self.maximumListedSkips {
        copy.skipped[shown] = error.skipReason
      } else {
        copy.skippedMore += 1
      }
      if tellsInRead() { report(.skipped(suite: copy.suite, key: shown, error)) }
    }

    /// Whether a key left out or refused is told one by one: always, but in a whole read only the first
    /// ``maximumListedSkips`` (the rest are counted, and told as one).
    private func tellsInRead() -> Bool {
      guard reading != nil else { return true }
      skippedInRead += 1
      return skippedInRead <= Self.maximumListedSkips
    }

    /// Records what the follower does now in every copy (one write each, only when it changes); a state it was in
    /// already keeps its time.
    func record(_ state: FleetCopyStatus.State, reason: String? = nil, since: Date = Date()) {
      guard state != self.state || reason != self.reason else { return }
      if state != self.state { self.since = since }
      self.state = state
      self.reason = reason
      for index in copies.indices where copies[index].at != nil { copies[index].unwritten = true }
      writeUnwritten()
    }

    /// What the follower does, as every copy records it, and since when.
    var status: (state: FleetCopyStatus.State, since: Date) { (state, since) }

    /// Records in every copy whether the follower reports, as `machine`, or why it cannot (`failure`).
    func recordReporting(machine: String?, failure: String?) {
      guard machine != reporting.machine || failure != reporting.failure else { return }
      reporting = (machine, failure)
      for index in copies.indices where copies[index].at != nil { copies[index].unwritten = true }
      writeUnwritten()
    }

    /// How many times the follower has started a watch: a loss told after one started would be stale.
    private(set) var connections = 0

    /// Records that a watch runs: the follower follows.
    func connected() {
      connections += 1
      record(.following)
    }

    /// Records that the cluster is lost, since `since`, unless a watch has started since the follower counted
    /// `connections`; whether it recorded it.
    func recordUnreachable(unlessConnectedSince connections: Int, reason: String, since: Date) -> Bool {
      guard connections == self.connections else { return false }
      record(.unreachable, reason: reason, since: since)
      return true
    }

    /// Writes every copy that lags behind, and makes it durable within ``FleetFollower/Options/syncDelay``.
    func writeUnwritten() {
      for index in copies.indices where copies[index].unwritten {
        let copy = copies[index]
        guard let at = copy.at else { continue }
        let metadata = FleetCopy.Metadata(
          engine: engine, cluster: at.cluster, revision: at.revision, endpoints: endpoints,
          prefix: String(decoding: copy.prefix, as: UTF8.self), skipped: copy.skipped, skippedMore: copy.skippedMore,
          rejected: copy.rejected, schema: copy.schema?.json, state: state, since: since, reason: reason,
          machine: reporting.machine, reportingFailure: reporting.failure, labels: labels.sorted(),
          origins: copy.origins, labelValues: copy.labelled.values.reduce(0) { $0 + $1.count },
          labelOrder: copy.order)
        let values = copy.values.sorted { $0.key < $1.key }.map {
          (key: $0.key, value: $0.value.value, text: $0.value.text)
        }
        do {
          try copy.writer.write(values: values, enforced: copy.enforced, metadata: metadata)
          copies[index].unwritten = false
          copies[index].written = (at, nil)
        } catch {
          let failure = FleetError(.copyFailed(error))
          copies[index].written.failure = failure.description
          report(.copyFailed(suite: copy.suite, failure))
        }
      }
      scheduleSync()
      observer?()
    }

    /// What each copy holds, as the follower reports it to the cluster.
    struct Held: Sendable, Hashable {
      let suite: String
      /// The cluster, and the revision as of which the copy on disk holds the suite's keys (the suite may have been
      /// quiet since: see `keys`); nil before the first read is written.
      let at: FleetRevision?
      /// How many keys the suite had in the cluster as of `at` (the ones left out too); nil while the follower does
      /// not know its range's keys (resumed from its copies, until it read them).
      let keys: Int?
      let skipped: [String: String]
      let skippedMore: Int
      /// Keys whose value the follower refused, keeping their last good value, and why.
      let rejected: [String: String]
      /// Why the copy could not be written, when its last write failed.
      let failure: String?
      /// The machine's labels, sorted.
      let labels: [String]
    }

    /// What each copy holds now.
    var held: [Held] {
      copies.map { copy in
        Held(
          suite: copy.suite, at: copy.unwritten ? copy.written.at : copy.changed,
          keys: copy.unwritten || rangeKeys == nil ? nil : copy.keyCount,
          skipped: copy.skipped, skippedMore: copy.skippedMore, rejected: copy.rejected,
          failure: copy.written.failure, labels: labels.sorted())
      }
    }

    /// Called after anything ``held`` answers may have changed: set by the follower's reporter.
    private var observer: (@Sendable () -> Void)?

    /// Calls `observer` after anything ``held`` answers may have changed.
    func observe(_ observer: @escaping @Sendable () -> Void) {
      self.observer = observer
    }

    /// Makes the copies durable within the sync delay: one fsync of each for however many writes came meanwhile.
    private func scheduleSync() {
      guard !syncScheduled else { return }
      syncScheduled = true
      let delay = options.syncDelay
      Task {
        try? await Task.sleep(for: delay)
        self.sync()
      }
    }

    /// Makes every copy's last write durable now; writes again any copy whose write failed.
    func sync() {
      syncScheduled = false
      if copies.contains(where: \.unwritten) { writeUnwritten() }
      for copy in copies {
        do {
          try copy.writer.sync()
        } catch {
          report(.copyFailed(suite: copy.suite, FleetError(.copyFailed(error))))
        }
      }
    }

    /// Tells readers that the follower is there (see `FleetCopyWriter.heartbeat()`).
    func heartbeat() {
      for copy in copies {
        do {
          try copy.writer.heartbeat()
        } catch {
          report(.copyFailed(suite: copy.suite, FleetError(.copyFailed(error))))  // coverage:ignore — utimensat failed
        }
      }
    }

    /// Records that the follower stopped, makes the copies durable, and gives their locks up.
    func stop(reason: String?) {
      record(.stopped, reason: reason)
      sync()
      for copy in copies { copy.writer.release() }
    }
  }
#endif
