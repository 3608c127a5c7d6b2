// The floor for Credential: the same lookups and stores made through libsecret's own synchronous API, as a C
// program would make them. script/bench times Credential against it; script/torture compares memory with it.

import CLibSecret
import Foundation

/// libsecret's password calls, on its default `SecretService`.
public enum LibSecretFloor {
  /// secret_service_lookup_sync for `service` and `username`, as Credential.read() reads; the bytes read.
  public static func lookup(service: String, account: String, cancellable: Bool = false) -> Int {
    withAttributes(service: service, account: account) { table in
      let token = cancellable ? g_cancellable_new() : nil
      defer { if let token { g_object_unref(token) } }
      guard let value = secret_service_lookup_sync(nil, splint_generic_schema(), table, token, nil) else { return 0 }
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      var length = 0
      _ = secret_value_get(value, &length)
      return length
    }
  }

  /// secret_service_store_sync of `secret` as text, into the default collection.
  public static func store(_ secret: String, service: String, account: String) -> Bool {
    withAttributes(service: service, account: account) { table in
      let value = secret_value_new(secret, -1, "text/plain")
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      return secret_service_store_sync(nil, splint_generic_schema(), table, nil, "bench", value, nil, nil) != 0
    }
  }

  private static func withAttributes<T>(service: String, account: String, _ body: (OpaquePointer) -> T) -> T {
    guard let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) else {
      fatalError("out of memory")
    }
    defer { g_hash_table_unref(table) }
    g_hash_table_insert(table, g_strdup("service"), g_strdup(service))
    g_hash_table_insert(table, g_strdup("username"), g_strdup(account))
    return body(table)
  }
}
