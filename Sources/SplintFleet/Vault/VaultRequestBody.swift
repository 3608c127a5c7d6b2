#if SplintFleet
  import SplintSettings

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// The JSON bodies of the requests that carry a secret (a new version of a secret, a login), written by the JSON
  /// writer of settings (`JSONText`), in storage reserved once: the caller wipes what it returns once it is sent.
  enum VaultRequestBody {
    /// A new version of a KV version 2 secret, `{"options":{"cas":N},"data":{...}}`: the fields kept as the server
    /// wrote them (`kept`, read from `current`), then the secret in `field` as text, or in base64 in
    /// `<field>_base64` when it is not UTF-8 (none, when `secret` is nil).
    static func version(
      _ secret: Data?, field: String, keeping kept: [VaultJSON.Member], from current: [UInt8], cas: Int
    ) -> [UInt8] {
      var data = kept.map { (key: $0.name, value: JSONText.verbatim($0.value.raw(in: current))) }
      if let secret {
        if isUTF8(secret) {
          data.append((field, .string(secret)))
        } else {
          let encoded = SecretBuffer.wiping(capacity: (secret.count + 2) / 3 * 4) { Base64.encode(secret, into: &$0) }
          data.append((field + "_base64", .string(encoded)))
        }
      }
      return JSONText.object([("options", .object([("cas", .value(.int(cas)))])), ("data", .object(data))]).rendered()
    }

    /// An AppRole login, `{"role_id":...,"secret_id":...}`.
    static func appRoleLogin(roleID: Data, secretID: Data) -> [UInt8] {
      JSONText.object([("role_id", .string(roleID)), ("secret_id", .string(secretID))]).rendered()
    }

    /// A JWT (or Kubernetes) login, `{"role":...,"jwt":...}`.
    static func jwtLogin(role: String, jwt: Data) -> [UInt8] {
      JSONText.object([("role", .value(.string(role))), ("jwt", .string(jwt))]).rendered()
    }

    /// Whether `data` is UTF-8 text, without making a `String` of it (which no one could wipe).
    private static func isUTF8(_ data: Data) -> Bool {
      var decoder = UTF8()
      var bytes = data.makeIterator()
      var next = decoder.decode(&bytes)
      while case .scalarValue = next { next = decoder.decode(&bytes) }
      if case .emptyInput = next { return true }
      return false
    }
  }
#endif
