import Glibc

#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

extension FleetCopy {
  /// The `"$fleet"` member: where the values come from and how the follower fares. Written by the follower, read by
  /// every store.
  package struct Metadata: Sendable, Hashable {
    /// The engine the values come from: "etcd".
    package var engine: String
    /// The cluster's identity (etcd's cluster ID): a restored or rebuilt cluster has another, and its revisions
    /// start again.
    package var cluster: String
    /// The revision of the cluster the values are as of.
    package var revision: Int64
    /// The addresses the follower reaches the cluster at.
    package var endpoints: [String]
    /// The key prefix the suite's values are under, in the cluster.
    package var prefix: String
    /// Keys the cluster holds under the prefix that are not in the copy, and why (not JSON, too large, reserved).
    package var skipped: [String: String]
    /// How many more keys are left out than `skipped` lists (it lists a bounded number).
    package var skippedMore: Int
    /// Keys whose value in the cluster the follower refused (not JSON, too large), and why, while the copy keeps the
    /// key's last good value.
    package var rejected: [String: String]
    /// The JSON Schema the suite's values are held to (the cluster's `$schema`), as the follower last took it; nil
    /// when the suite has none.
    package var schema: JSONValue?
    /// The follower's host name, process ID and user.
    package var host: String
    package var processID: Int32
    package var user: String
    /// What the follower is doing: following, unreachable (the cluster is lost), stopped (it ended).
    package var state: FleetCopyStatus.State
    /// Since when it has been in that state.
    package var since: Date
    /// Why it is unreachable, in words.
    package var reason: String?
    /// When the copy was last written.
    package var written: Date
    /// The machine the follower reports as, while it reports to the cluster; nil when it does not.
    package var machine: String?
    /// Why the follower cannot report, while it cannot.
    package var reportingFailure: String?
    /// The machine's labels the copy's values are resolved for (its host label among them); nil in a copy written
    /// before followers had labels.
    package var labels: [String]?
    /// The label each key's value comes from, for the keys one of the machine's labels gives a value to.
    package var origins: [String: String]
    /// How many values of the machine's labels the follower held when it wrote the copy (those of a label the
    /// suite's order does not name too): a follower that resumes from the copy reads every key again to have them.
    package var labelValues: Int
    /// The suite's order of labels (its `$labels`), as the follower last took it.
    package var labelOrder: [String]

    package init(
      engine: String, cluster: String, revision: Int64, endpoints: [String], prefix: String,
      skipped: [String: String] = [:], skippedMore: Int = 0, rejected: [String: String] = [:],
      schema: JSONValue? = nil, state: FleetCopyStatus.State, since: Date,
      reason: String? = nil,
      written: Date = Date(), machine: String? = nil, reportingFailure: String? = nil, labels: [String]? = nil,
      origins: [String: String] = [:], labelValues: Int = 0, labelOrder: [String] = []
    ) {
      self.engine = engine
      self.cluster = cluster
      self.revision = revision
      self.endpoints = endpoints
      self.prefix = prefix
      self.skipped = skipped
      self.skippedMore = skippedMore
      self.rejected = rejected
      self.schema = schema
      host = ProcessInfo.processInfo.hostName
      processID = getpid()
      user = Users.name(geteuid())
      self.state = state
      self.since = since
      self.reason = reason
      self.written = written
      self.machine = machine
      self.reportingFailure = reportingFailure
      self.labels = labels
      self.origins = origins
      self.labelValues = labelValues
      self.labelOrder = labelOrder
    }

    /// The member's JSON.
    package var json: JSONValue {
      var object: [JSONKey: JSONValue] = [
        "engine": .string(engine), "cluster": .string(cluster), "revision": .int(Int(revision)),
        "endpoints": .array(endpoints.map(JSONValue.string)), "prefix": .string(prefix),
        "host": .string(host), "pid": .int(Int(processID)), "user": .string(user),
        "state": .string(state.rawValue), "since": .string(since.isoTimestamp),
        "written": .string(written.isoTimestamp),
      ]
      if !skipped.isEmpty {
        object["skipped"] = Self.reasons(skipped)
      }
      if skippedMore > 0 { object["skippedMore"] = .int(skippedMore) }
      if !rejected.isEmpty { object["rejected"] = Self.reasons(rejected) }
      if let schema { object["schema"] = schema }
      if let reason { object["reason"] = .string(reason) }
      if let machine { object["machine"] = .string(machine) }
      if let reportingFailure { object["reportingFailure"] = .string(reportingFailure) }
      if let labels { object["labels"] = .array(labels.map(JSONValue.string)) }
      if !origins.isEmpty { object["origins"] = Self.reasons(origins) }
      if labelValues > 0 { object["labelValues"] = .int(labelValues) }
      if !labelOrder.isEmpty { object["labelOrder"] = .array(labelOrder.map(JSONValue.string)) }
      return .object(object)
    }

    /// The strings of an array (what is not a string is not one).
    private static func strings(_ array: [JSONValue]) -> [String] {
      array.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    /// Keys and why (or what), as an object of strings.
    private static func reasons(_ reasons: [String: String]) -> JSONValue {
      .object(Dictionary(uniqueKeysWithValues: reasons.map { (JSONKey($0), .string($1)) }))
    }

    /// The keys and reasons an object of strings holds (what is not a string is not one); none for what is not an
    /// object.
    private static func reasons(_ json: JSONValue?) -> [String: String] {
      guard case .object(let reasons)? = json else { return [:] }
      return Dictionary(
        reasons.compactMap { key, value in if case .string(let text) = value { (key.text, text) } else { nil } },
        uniquingKeysWith: { first, _ in first })
    }

    /// What a copy's member holds, or nil when it is not a description of a copy (a copy written by hand, or by
    /// something else).
    package init?(_ json: JSONValue?) {
      guard case .object(let object)? = json, case .string(let engine)? = object["engine"],
        case .string(let cluster)? = object["cluster"], case .int(let revision)? = object["revision"],
        case .string(let stateName)? = object["state"], let state = FleetCopyStatus.State(rawValue: stateName),
        case .string(let sinceText)? = object["since"], let since = Date.parseISOTimestamp(sinceText)
      else { return nil }
      self.engine = engine
      self.cluster = cluster
      self.revision = Int64(revision)
      self.state = state
      self.since = since
      if case .array(let endpoints)? = object["endpoints"] {
        self.endpoints = Self.strings(endpoints)
      } else {
        endpoints = []
      }
      if case .string(let prefix)? = object["prefix"] { self.prefix = prefix } else { prefix = "" }
      skipped = Self.reasons(object["skipped"])
      rejected = Self.reasons(object["rejected"])
      schema = object["schema"]
      if case .int(let more)? = object["skippedMore"] { skippedMore = max(more, 0) } else { skippedMore = 0 }
      if case .string(let host)? = object["host"] { self.host = host } else { host = "" }
      if case .int(let processID)? = object["pid"] {
        self.processID = Int32(clamping: processID)
      } else {
        processID = 0
      }
      if case .string(let user)? = object["user"] { self.user = user } else { user = "" }
      if case .string(let reason)? = object["reason"] { self.reason = reason } else { reason = nil }
      if case .string(let machine)? = object["machine"] { self.machine = machine } else { machine = nil }
      if case .string(let text)? = object["reportingFailure"] {
        reportingFailure = text
      } else {
        reportingFailure = nil
      }
      if case .array(let labels)? = object["labels"] { self.labels = Self.strings(labels) } else { labels = nil }
      if case .array(let order)? = object["labelOrder"] { labelOrder = Self.strings(order) } else { labelOrder = [] }
      origins = Self.reasons(object["origins"])
      if case .int(let count)? = object["labelValues"] { labelValues = max(count, 0) } else { labelValues = 0 }
      if case .string(let text)? = object["written"], let written = Date.parseISOTimestamp(text) {
        self.written = written
      } else {
        written = since
      }
    }
  }
}
