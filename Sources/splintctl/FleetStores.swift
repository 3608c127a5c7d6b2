import SplintSecrets

#if SplintFleet
  import SplintFleet
#endif

/// The stores splintctl has from SplintFleet when it is built with the SplintFleet trait: `vault` (OpenBao, HashiCorp
/// Vault), configured from the environment as `bao` is (BAO_ADDR or VAULT_ADDR, ...).
enum FleetStores {
  /// Makes `vault` a name `--store` and SPLINT_CREDENTIAL_STORES take. Reads and sends nothing by itself.
  static func register() {
    #if SplintFleet
      VaultCredentialStore.register()
    #endif
  }

  /// The names of every store `--store` takes.
  static var storeNames: [String] { DefaultCredentialStore.storeNames + RegisteredStores.names }

  /// `store`'s name, and how it logs in when it does: what `secret status` and `secret which` print.
  static func describe(_ store: any CredentialStore) -> String {
    #if SplintFleet
      if let vault = store as? VaultCredentialStore { return "\(vault.name) (login: \(vault.login))" }
    #endif
    return store.name
  }

  /// What `secret status` warns of for `store`: a token variable that hides the AppRole login the vault's
  /// `$CREDENTIALS_DIRECTORY` also gives; nil when there is nothing to say.
  static func warning(_ store: any CredentialStore) -> String? {
    #if SplintFleet
      return (store as? VaultCredentialStore)?.login.warning
    #else
      return nil
    #endif
  }
}
