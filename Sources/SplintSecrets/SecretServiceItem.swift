#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// An item of the Secret Service as ``SecretServiceStore/items(matching:)`` finds it: what it says about itself,
/// never its secret, which ``SecretServiceStore/secret(of:)`` reads only when asked.
///
/// Items other programs made carry their own attributes: git's libsecret helper writes `protocol`, `server` and
/// `user`; NetworkManager and browsers others. Until its keyring is unlocked, gnome-keyring shows an item it loaded
/// locked with placeholder attributes only.
public struct SecretServiceItem: Sendable, Hashable {
  /// The item's D-Bus object path, which names it while the provider runs.
  public let path: String
  /// What keyring managers show for it.
  public let label: String
  /// Its attributes, as the provider has them now.
  public let attributes: [String: String]
  /// When it was created.
  public let created: Date
  /// When it, or its secret, last changed.
  public let modified: Date
  /// Whether its keyring is locked: reading its secret would ask to unlock it.
  public let isLocked: Bool

  /// The schema it was stored with (its `xdg:schema` attribute), if it names one.
  public var schema: String? { attributes["xdg:schema"] }
}
