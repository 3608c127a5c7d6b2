#if SplintFleet
  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  // What etcd's JSON gateway (grpc-gateway, `/v3/...` on the client port) sends and takes. It writes 64-bit
  // integers as strings, leaves out fields that hold their zero value (a PUT event has no "type", a first
  // revision's watch no "events"), carries keys and values as base64, and reports failures as
  // `{"error": ..., "code": <gRPC code>}`; a watch is one JSON object a line, each `{"result": ...}` or
  // `{"error": ...}`.

  /// A 64-bit integer as the gateway writes it: a string, or (from some versions) a number. Unsigned ones (cluster
  /// and member IDs) are kept by their bits.
  struct EtcdInteger: Decodable, Sendable, Hashable {
    let value: Int64

    /// The value as a revision, or nil when it cannot be one: etcd's revisions start at 1 (0 where none is given),
    /// and one at `Int64.max` would leave no revision after it to watch from.
    var revision: Int64? { (0..<Int64.max).contains(value) ? value : nil }

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let text = try? container.decode(String.self) {
        guard let value = Int64(text) ?? UInt64(text).map(Int64.init(bitPattern:)) else {
          throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a number"))
        }
        self.value = value
      } else if let value = try? container.decode(Int64.self) {
        self.value = value
      } else {
        value = Int64(bitPattern: try container.decode(UInt64.self))
      }
    }
  }

  /// Bytes as the gateway carries them: base64 text.
  struct EtcdBytes: Codable, Sendable, Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(_ text: String) { bytes = Array(text.utf8) }

    init(from decoder: any Decoder) throws {
      let text = try decoder.singleValueContainer().decode(String.self)
      guard let data = Data(base64Encoded: text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64"))
      }
      bytes = Array(data)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode(Data(bytes).base64EncodedString())
    }
  }

  /// Every response's header: which cluster and member answered, and the revision the answer is as of.
  struct EtcdHeader: Decodable, Sendable {
    let clusterID: EtcdInteger?
    let memberID: EtcdInteger?
    let revision: EtcdInteger?

    enum CodingKeys: String, CodingKey {
      case clusterID = "cluster_id"
      case memberID = "member_id"
      case revision
    }

    /// The cluster's identity as text (etcd's cluster ID is an unsigned 64-bit number; the gateway writes it so).
    var cluster: String { clusterID.map { String(UInt64(bitPattern: $0.value)) } ?? "" }
  }

  /// A key and its value, as a range or a watch event gives them.
  struct EtcdKeyValue: Decodable, Sendable {
    let key: EtcdBytes
    let value: EtcdBytes?
    let modRevision: EtcdInteger?
    let createRevision: EtcdInteger?

    enum CodingKeys: String, CodingKey {
      case key, value
      case modRevision = "mod_revision"
      case createRevision = "create_revision"
    }
  }

  /// `POST /v3/kv/range`'s request: the keys `key`..<`rangeEnd` (or `key` alone), as they are now or were at
  /// `revision`, sorted by key (descending with `descending`).
  struct EtcdRangeRequest: Encodable, Sendable {
    let key: EtcdBytes
    var rangeEnd: EtcdBytes?
    var limit: Int64?
    /// The revision to read at (a paged read's pages are all of one), as the gateway takes int64s: text.
    var revision: String?
    var keysOnly: Bool?
    var countOnly: Bool?
    var sortOrder: String?
    var sortTarget: String?

    init(
      key: EtcdBytes, rangeEnd: EtcdBytes? = nil, limit: Int64? = nil, keysOnly: Bool? = nil, countOnly: Bool? = nil,
      revision: Int64? = nil, descending: Bool = false
    ) {
      self.key = key
      self.rangeEnd = rangeEnd
      self.limit = limit
      self.keysOnly = keysOnly
      self.countOnly = countOnly
      self.revision = revision.map(String.init)
      if descending { (sortOrder, sortTarget) = ("DESCEND", "KEY") }
    }

    enum CodingKeys: String, CodingKey {
      case key, limit, revision
      case rangeEnd = "range_end"
      case keysOnly = "keys_only"
      case countOnly = "count_only"
      case sortOrder = "sort_order"
      case sortTarget = "sort_target"
    }
  }

  /// `POST /v3/kv/range`'s response.
  struct EtcdRangeResponse: Decodable, Sendable {
    let header: EtcdHeader
    let kvs: [EtcdKeyValue]?
    let more: Bool?
    /// How many keys the range holds (whatever the limit).
    var count: EtcdInteger? = nil
  }

  /// `POST /v3/kv/put`'s request; with `prevKV`, the answer carries the key's value before the put.
  struct EtcdPutRequest: Encodable, Sendable {
    let key: EtcdBytes
    let value: EtcdBytes
    var prevKV: Bool?
    /// The lease the key is tied to (deleted with it), as the gateway takes int64s: text.
    var lease: String? = nil

    enum CodingKeys: String, CodingKey {
      case key, value, lease
      case prevKV = "prev_kv"
    }
  }

  /// `POST /v3/kv/put`'s response: the revision of the put, and (when asked for) the key before it.
  struct EtcdPutResponse: Decodable, Sendable {
    let header: EtcdHeader
    let prevKV: EtcdKeyValue?

    enum CodingKeys: String, CodingKey {
      case header
      case prevKV = "prev_kv"
    }
  }

  /// `POST /v3/kv/deleterange`'s request; with `prevKV`, the answer carries the keys it deleted.
  struct EtcdDeleteRequest: Encodable, Sendable {
    let key: EtcdBytes
    var rangeEnd: EtcdBytes?
    var prevKV: Bool?

    init(key: EtcdBytes, rangeEnd: EtcdBytes? = nil, prevKV: Bool? = nil) {
      self.key = key
      self.rangeEnd = rangeEnd
      self.prevKV = prevKV
    }

    enum CodingKeys: String, CodingKey {
      case key
      case rangeEnd = "range_end"
      case prevKV = "prev_kv"
    }
  }

  /// `POST /v3/kv/deleterange`'s response.
  struct EtcdDeleteResponse: Decodable, Sendable {
    let header: EtcdHeader
    let deleted: EtcdInteger?
    let prevKVs: [EtcdKeyValue]?

    enum CodingKeys: String, CodingKey {
      case header, deleted
      case prevKVs = "prev_kvs"
    }
  }

  /// `POST /v3/kv/txn`'s request, as the admin commands use it: compare keys' modification revisions, then read,
  /// put or delete keys.
  struct EtcdTransactionRequest: Encodable, Sendable {
    /// A comparison of `key`'s modification revision (0 for a key that does not exist) with `modRevision`: equal to
    /// it, or, for every key of `key`..<`rangeEnd`, below it.
    struct Compare: Encodable, Sendable {
      let key: EtcdBytes
      let rangeEnd: EtcdBytes?
      let target: String
      let result: String
      let modRevision: String

      /// `key`'s modification revision is `modRevision` (0: the key does not exist).
      init(key: EtcdBytes, modRevision: Int64) {
        (self.key, rangeEnd, target, result, self.modRevision) = (key, nil, "MOD", "EQUAL", String(modRevision))
      }

      /// No key of `key`..<`rangeEnd` was put at `revision` or after.
      init(key: EtcdBytes, rangeEnd: EtcdBytes, modifiedBefore revision: Int64) {
        (self.key, self.rangeEnd, target, result, modRevision) = (key, rangeEnd, "MOD", "LESS", String(revision))
      }

      enum CodingKeys: String, CodingKey {
        case key, target, result
        case rangeEnd = "range_end"
        case modRevision = "mod_revision"
      }
    }

    struct Operation: Encodable, Sendable {
      var requestPut: EtcdPutRequest?
      var requestDeleteRange: EtcdDeleteRequest?
      var requestRange: EtcdRangeRequest?

      init(
        requestPut: EtcdPutRequest? = nil, requestDeleteRange: EtcdDeleteRequest? = nil,
        requestRange: EtcdRangeRequest? = nil
      ) {
        self.requestPut = requestPut
        self.requestDeleteRange = requestDeleteRange
        self.requestRange = requestRange
      }

      enum CodingKeys: String, CodingKey {
        case requestPut = "request_put"
        case requestDeleteRange = "request_delete_range"
        case requestRange = "request_range"
      }
    }

    let compare: [Compare]
    let success: [Operation]
    /// What is done when a comparison does not hold.
    var failure: [Operation]? = nil
  }

  /// `POST /v3/kv/txn`'s response: whether the comparisons held, and each operation's answer.
  struct EtcdTransactionResponse: Decodable, Sendable {
    /// One operation's answer: a range's keys, or how many keys a delete removed (a put's answer is not read).
    struct Answer: Decodable, Sendable {
      struct Range: Decodable, Sendable {
        let kvs: [EtcdKeyValue]?
      }

      struct Delete: Decodable, Sendable {
        let deleted: EtcdInteger?
      }

      let responseRange: Range?
      var responseDeleteRange: Delete? = nil

      enum CodingKeys: String, CodingKey {
        case responseRange = "response_range"
        case responseDeleteRange = "response_delete_range"
      }
    }

    let header: EtcdHeader
    let succeeded: Bool?
    let responses: [Answer]?
  }

  /// `POST /v3/auth/authenticate`'s response.
  struct EtcdAuthenticateResponse: Decodable, Sendable {
    let token: String
  }

  /// `POST /v3/watch`'s request: watch a range from a revision, with progress notifications, and with each event's
  /// key as it was before (`prevKV`) when asked.
  struct EtcdWatchRequest: Encodable, Sendable {
    struct Create: Encodable, Sendable {
      let key: EtcdBytes
      let rangeEnd: EtcdBytes
      let startRevision: String
      let progressNotify: Bool
      let prevKV: Bool?

      init(key: EtcdBytes, rangeEnd: EtcdBytes, startRevision: String, prevKV: Bool = false) {
        (self.key, self.rangeEnd, self.startRevision, progressNotify) = (key, rangeEnd, startRevision, true)
        self.prevKV = prevKV ? true : nil
      }

      enum CodingKeys: String, CodingKey {
        case key
        case rangeEnd = "range_end"
        case startRevision = "start_revision"
        case progressNotify = "progress_notify"
        case prevKV = "prev_kv"
      }
    }

    let createRequest: Create

    enum CodingKeys: String, CodingKey {
      case createRequest = "create_request"
    }
  }

  /// One line of a watch: a result, or the stream's error.
  struct EtcdWatchLine: Decodable, Sendable {
    struct Result: Decodable, Sendable {
      let header: EtcdHeader?
      let created: Bool?
      let canceled: Bool?
      let compactRevision: EtcdInteger?
      let cancelReason: String?
      let events: [Event]?

      enum CodingKeys: String, CodingKey {
        case header, created, canceled, events
        case compactRevision = "compact_revision"
        case cancelReason = "cancel_reason"
      }
    }

    struct Event: Decodable, Sendable {
      /// "PUT" (left out, as its zero value) or "DELETE".
      let type: String?
      let kv: EtcdKeyValue
      /// The key before the event, when the watch asked for it and the key existed.
      let prevKV: EtcdKeyValue?

      var isDeletion: Bool { type == "DELETE" }

      enum CodingKeys: String, CodingKey {
        case type, kv
        case prevKV = "prev_kv"
      }
    }

    let result: Result?
    let error: EtcdFailure?
  }

  /// A failure the gateway reports: its message and gRPC status code.
  struct EtcdFailure: Decodable, Sendable, Error {
    let message: String
    let code: Int

    enum CodingKeys: String, CodingKey {
      case message, error, code, grpcCode = "grpc_code", httpCode = "http_code"
    }

    init(message: String, code: Int) {
      self.message = message
      self.code = code
    }

    /// Whether the token the request carried is older than the cluster's users and roles, so that a new one must be
    /// asked for: a JWT token (`--auth-token jwt`) holds the auth store's revision it was made at, and every change
    /// of a user or role since makes it stale (a simple token is looked up as it is used, but meets the same between
    /// a request's arrival and its apply).
    var isStaleToken: Bool { Self.isStaleToken(message) }

    /// Whether `text` (an error's message, or a watch's cancel reason) says the token was stale or unknown.
    static func isStaleToken(_ text: String) -> Bool {
      text.contains("revision of auth store is old") || text.contains("invalid auth token")
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      message =
        (try? container.decode(String.self, forKey: .message)) ?? (try? container.decode(String.self, forKey: .error))
        ?? "no message"
      code =
        (try? container.decode(Int.self, forKey: .code)) ?? (try? container.decode(Int.self, forKey: .grpcCode)) ?? 2
    }

    /// gRPC's codes that etcd answers with.
    static let canceled = 1
    static let unknown = 2
    static let invalidArgument = 3
    static let deadlineExceeded = 4
    static let permissionDenied = 7
    static let resourceExhausted = 8
    static let failedPrecondition = 9
    static let aborted = 10
    static let outOfRange = 11
    static let unimplemented = 12
    static let `internal` = 13
    static let unavailable = 14
    static let dataLoss = 15
    static let unauthenticated = 16
  }
#endif
