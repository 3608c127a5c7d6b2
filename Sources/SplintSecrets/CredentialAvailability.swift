/// Whether credentials can be read and saved right now, as ``Credential/availability(store:)`` finds out without
/// writing anything or showing a prompt.
///
/// ```swift
/// if case .unavailable(let reason) = Credential.availability() {
///   print(reason)  // what is missing and how to fix it
/// }
/// ```
public enum CredentialAvailability: Sendable, Hashable, CustomStringConvertible {
  /// The store is reachable and its default collection is unlocked.
  case available
  /// Something stands in the way: the error a call would raise now, such as ``CredentialError/noSessionBus``,
  /// ``CredentialError/serviceUnavailable``, ``CredentialError/noDefaultCollection`` or ``CredentialError/locked``.
  /// On a desktop a locked collection is still usable: the next call shows an unlock prompt.
  case unavailable(CredentialError)

  /// True for ``available``.
  public var isAvailable: Bool { self == .available }

  /// The situation in a sentence, with the remedy when something is missing. (``available`` does not name the store;
  /// `splintctl secret status` names the one that answers.)
  public var description: String {
    switch self {
    case .available: "The store answers: credentials can be read now."
    case .unavailable(let reason): reason.description
    }
  }
}
