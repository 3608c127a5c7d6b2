import Synchronization

/// Stores that another library of this package adds to the names a chain is made of (SplintFleet's `vault`, which
/// SplintSecrets cannot import): each made the first time a chain names it, and kept for the process.
package enum RegisteredStores {
  /// A name's maker, and the store it made.
  private struct Entry {
    let make: @Sendable () throws(CredentialError) -> any CredentialStore
    var made: (any CredentialStore)?
  }

  /// The names registered, and how many registrations there were (parsed chains are kept per registration).
  private static let entries = Mutex<(generation: Int, names: [String: Entry])>((0, [:]))

  /// Makes `name` a store chains may name: `make` is called the first time one does, and a store it returns is kept;
  /// what it throws is thrown by that chain, and `make` is called again next time. Registering a name again
  /// replaces it.
  package static func register(
    _ name: String, _ make: @escaping @Sendable () throws(CredentialError) -> any CredentialStore
  ) {
    entries.withLock {
      $0.generation += 1
      $0.names[name] = Entry(make: make)
    }
  }

  /// Grows at every registration.
  package static var generation: Int { entries.withLock { $0.generation } }

  /// The names registered, sorted.
  package static var names: [String] { entries.withLock { $0.names.keys.sorted() } }

  /// The store registered as `name`, made now when it was not yet, or nil when no store is registered so.
  package static func store(named name: String) throws(CredentialError) -> (any CredentialStore)? {
    let entry = entries.withLock { $0.names[name] }
    guard let entry else { return nil }
    if let made = entry.made { return made }
    let store = try entry.make()
    return entries.withLock { entries in
      if let made = entries.names[name]?.made { return made }
      entries.names[name]?.made = store
      return store
    }
  }

  /// Whether this build of the package has the SplintFleet trait, which brings the `vault` store.
  package static let builtWithFleet: Bool = {
    #if SplintFleet
      true
    #else
      false
    #endif
  }()

  /// Why `name` is no store, for a chain's configuration error: for `vault`, what this program lacks.
  package static func unknown(_ name: String, builtWithFleet: Bool = builtWithFleet, known: [String]) -> String {
    guard name == "vault" else {
      return "\"\(name)\" is not a credential store. Use one of \(known.joined(separator: ", "))."
    }
    return builtWithFleet
      ? """
      "vault" is the OpenBao and HashiCorp Vault store of SplintFleet, which this program has not turned on: it \
      must call VaultCredentialStore.register() once at start-up.
      """
      : """
      "vault" is the OpenBao and HashiCorp Vault store of SplintFleet, and this program was built without \
      SplintFleet: build it with the package's SplintFleet trait (.package(..., traits: ["SplintFleet"])) and call \
      VaultCredentialStore.register() once at start-up.
      """
  }
}
