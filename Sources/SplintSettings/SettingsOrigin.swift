#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// Where a store's value for a key comes from (see ``SettingsStore/origin(ofKey:)``).
public enum SettingsOrigin: Sendable, Hashable {
  /// The user's settings file, which writes change.
  case user(URL)
  /// The fleet: the machine's copy of a cluster's values, which a follower keeps (see
  /// ``SettingsStore/fleetCopyURLs``), and the label that gave the value on this machine (`canary`, `host:web-07`),
  /// or nil for the suite's value for every machine. Below the user's file, unless the fleet enforces the key.
  case fleet(URL, label: String? = nil)
  /// A system file: a read-only default for every user, which an administrator or a distribution package keeps.
  case system(URL)
}
