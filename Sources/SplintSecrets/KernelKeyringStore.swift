import Glibc
import Synchronization

#if canImport(FoundationEssentials)
  public import FoundationEssentials
#else
  public import Foundation
#endif

/// A ``CredentialStore`` that keeps secrets in the Linux kernel's key retention service: no daemon, no D-Bus, no
/// files, so it works on servers, over SSH and in CI where no Secret Service runs. Opt in by passing it to your
/// credentials:
///
/// ```swift
/// let store = KernelKeyringStore()  // the user's persistent keyring
/// let token = Credential(service: "api.example.com", account: "alice", store: store)
/// try token.save("s3cr3t")
/// ```
///
/// What to know before you choose it:
///
/// - **Nothing survives a reboot.** The kernel keeps keys in memory only. How long they last before that depends on
///   the ``Keyring``: the persistent keyring (the default) is dropped after
///   `/proc/sys/kernel/keys/persistent_keyring_expiry` seconds (three days unless changed) in which no program asked
///   for it, and every call of this store asks for it; the session keyring goes with the login session; the user
///   keyring stays until reboot (on kernels before 5.3, until the user's last process ends).
/// - **Containers often block it.** Docker's default seccomp profile refuses the `add_key` and `keyctl` system
///   calls; the store then reports ``CredentialError/storeUnavailable(store:reason:)`` with what to change, and
///   ``availability()`` says so without trying to save anything.
/// - **Who can read the secrets.** Every process of the same user can read the keys this store saves in the
///   persistent or the user keyring: the store grants the user the rights the kernel gives by default only to
///   processes that possess the keyring, so that a program started in another session reads what this one saved.
///   Keys in the session keyring keep the kernel's default and are readable only within the session. Root can read
///   them all: it can fetch any user's persistent keyring, and act within any process.
/// - **Secrets stay in kernel memory**, which is never swapped out. Deleting one unlinks its key, and the kernel's
///   garbage collector frees it shortly after, zeroing its payload first (its bytes count against the quota until
///   then). A secret you read is copied into your process, in a `Data` whose bytes are wiped when its last copy
///   goes; that copy is ordinary process memory, which can be swapped out.
/// - **Limits.** A secret is 1 to 32,767 bytes; an empty one cannot be stored. Each user has a quota of keys and
///   bytes (`/proc/sys/kernel/keys/maxkeys` and `maxbytes`: 200 keys and 20,000 bytes by default, more for root).
///
/// Each secret is a key of type `user` whose description is `splint:` followed by the service, a colon and the
/// account, with `%`, `:` and control characters in either written as `%` and two uppercase hexadecimal digits
/// (`splint:api.example.com:alice`). `keyctl print %user:splint:api.example.com:alice` prints the secret saved in a
/// keyring the shell possesses, and a key added with that description by `keyctl padd` is read by this store.
/// Labels and content types are not kept.
public final class KernelKeyringStore: CredentialStore {
  /// Which of the user's keyrings holds the secrets.
  public enum Keyring: Sendable, Hashable, CustomStringConvertible {
    /// The user's persistent keyring: shared by all the user's sessions, and dropped once no program has asked for
    /// it for `/proc/sys/kernel/keys/persistent_keyring_expiry` seconds (three days by default). The store links it
    /// into the process keyring at each call, so that the process possesses it.
    case persistent
    /// The user keyring: shared by all the user's processes, kept until reboot on Linux 5.3 and later.
    case user
    /// The session keyring: shared by the processes of one login session (or of one `keyctl session`), and gone
    /// with it.
    case session

    /// "persistent keyring", "user keyring" or "session keyring".
    public var description: String {
      switch self {
      case .persistent: "persistent keyring"
      case .user: "user keyring"
      case .session: "session keyring"
      }
    }
  }

  /// The keyring this store keeps its secrets in.
  public let keyring: Keyring

  /// The kernel calls the store makes; tests pass calls that fail.
  private let calls: any KeyringCalls
  /// The persistent keyring this store last used, to notice that it expired and was replaced by an empty one.
  private let persistentKeyring = Mutex<KeySerial?>(nil)

  /// A store in `keyring`.
  ///
  /// - Parameter keyring: Where the secrets go: the user's persistent keyring unless you choose another.
  public convenience init(keyring: Keyring = .persistent) {
    self.init(keyring: keyring, calls: KernelKeyring())
  }

  /// A store that makes its kernel calls through `calls`.
  init(keyring: Keyring, calls: any KeyringCalls) {
    self.keyring = keyring
    self.calls = calls
  }

  /// "kernel keyring".
  public var name: String { "kernel keyring" }

  /// The secret saved for `credential`, or nil when there is none.
  ///
  /// A key that expired or was revoked counts as absent. A keyring that is gone does not: when the persistent
  /// keyring this store used has expired since its last call (and with it every secret in it), the first read or
  /// listing after that reports it, and later ones find the new, empty keyring.
  ///
  /// - Throws: ``CredentialError/storeUnavailable(store:reason:)`` when the kernel refuses the calls (a seccomp
  ///   filter, as in Docker), ``CredentialError/unreadableSecret(_:)`` when the key does not let this process read
  ///   it or its keyring is gone, ``CredentialError/invalidArgument(_:)`` when the service and account are too long
  ///   for a key's description.
  public func readSecret(for credential: Credential) throws(CredentialError) -> Data? {
    let description = try Self.description(of: credential)
    return try perform(reading: true) { keyring, calls throws(KeyringFailure) -> Data? in
      guard let key = try Self.key(described: description, in: keyring, calls) else { return nil }
      do throws(KeyringFailure) {
        return try calls.read(key)
      } catch  where error.isGone {
        return nil  // deleted, revoked or expired since the keyring was listed
      }
    }
  }

  /// Saves the secret as the payload of the credential's key, replacing the payload of the key already there.
  ///
  /// - Throws: ``CredentialError/invalidArgument(_:)`` for an empty secret or one over 32,767 bytes, and
  ///   ``CredentialError/storeUnavailable(store:reason:)`` when the kernel refuses the calls or the user's key quota
  ///   is used up.
  public func saveSecret(
    _ secret: Data, contentType: SecretContentType, for credential: Credential
  ) throws(CredentialError) {
    let description = try Self.description(of: credential)
    guard (1...Self.largestSecret).contains(secret.count) else {
      throw .invalidArgument(
        """
        The kernel keyring holds secrets of 1 to 32,767 bytes, and this one has \(secret.count). \
        Store it elsewhere, or delete the credential instead of saving an empty secret.
        """)
    }
    let permissions: UInt32? = keyring == .session ? nil : Self.sharedPermissions
    try perform(reading: false) { keyring, calls throws(KeyringFailure) in
      let key = try calls.add(description, payload: secret, to: keyring)
      if let permissions { try calls.setPermissions(permissions, of: key) }
    }
  }

  /// Removes the credential's key from the keyring. Succeeds when there is none. (A link to the key that another
  /// program made in another keyring stays.)
  public func deleteSecret(for credential: Credential) throws(CredentialError) {
    let description = try Self.description(of: credential)
    try perform(reading: false) { keyring, calls throws(KeyringFailure) in
      guard let key = try Self.key(described: description, in: keyring, calls) else { return }
      do throws(KeyringFailure) {
        try calls.unlink(key, from: keyring)
      } catch  where error.isGone {
        // Removed by another process since the keyring was listed.
      }
    }
  }

  /// The accounts that have a key under `service` in the keyring, sorted.
  public func accounts(service: String) throws(CredentialError) -> [String] {
    try perform(reading: true) { keyring, calls throws(KeyringFailure) in
      var accounts = Set<String>()
      for key in try calls.keys(in: keyring) {
        guard let described = try? calls.describe(key), described.type == "user",
          let name = Self.credentialName(described.description), name.service == service
        else { continue }
        accounts.insert(name.account)
      }
      return accounts.sorted()
    }
  }

  /// Reaches the keyring and lists it, which saves nothing: available, or why not.
  ///
  /// For the persistent keyring this links it into the process keyring (creating it when the user has none) and
  /// restarts its expiry timer, as every call of this store does.
  public func availability() -> CredentialAvailability {
    do throws(CredentialError) {
      try perform(reading: false, noticing: false) { keyring, calls throws(KeyringFailure) in
        _ = try calls.keys(in: keyring)
      }
      return .available
    } catch {
      return .unavailable(error)
    }
  }

  // MARK: - Keys

  /// The largest payload a key of type `user` holds.
  static let largestSecret = 32_767

  /// The longest description the kernel accepts, in bytes.
  static let longestDescription = 4_095

  /// All rights for processes that possess the key and for every other process of the same user.
  static let sharedPermissions: UInt32 = 0x3f3f_0000

  /// The description of the key that holds `credential`'s secret.
  ///
  /// - Throws: ``CredentialError/invalidArgument(_:)`` when it is longer than the kernel accepts.
  static func description(of credential: Credential) throws(CredentialError) -> String {
    let description = "splint:" + escape(credential.service) + ":" + escape(credential.account)
    guard description.utf8.count <= longestDescription else {
      throw .invalidArgument(
        """
        The service name and account are too long for the kernel keyring: a key's description holds at most \
        4,095 bytes, and this one would have \(description.utf8.count). Use shorter names.
        """)
    }
    return description
  }

  /// The service and account a description written by ``description(of:)`` names, or nil for any other.
  static func credentialName(_ description: String) -> (service: String, account: String)? {
    guard description.hasPrefix("splint:") else { return nil }
    let fields = description.dropFirst("splint:".count).split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count == 2, let service = unescape(fields[0]), let account = unescape(fields[1]),
      "splint:" + escape(service) + ":" + escape(account) == description
    else { return nil }
    return (service, account)
  }

  /// `text` with `%`, `:` and the control characters written as `%XX`.
  private static func escape(_ text: String) -> String {
    var bytes: [UInt8] = []
    for byte in text.utf8 {
      if byte == UInt8(ascii: "%") || byte == UInt8(ascii: ":") || byte < 0x20 || byte == 0x7f {
        let hex = Array("0123456789ABCDEF".utf8)
        bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `field` with every `%XX` turned back into its byte, or nil when that is not UTF-8 or a `%` has no two
  /// hexadecimal digits after it.
  private static func unescape(_ field: Substring) -> String? {
    var bytes: [UInt8] = []
    var rest = field.utf8[...]
    while let byte = rest.popFirst() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else {
        return nil
      }
      bytes.append(value)
      rest = rest.dropFirst(2)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// The key of type `user` described as `description` among those linked in `keyring`, or nil. A key the kernel
  /// will not describe (gone, or not ours to see) is not it.
  private static func key(
    described description: String, in keyring: KeySerial, _ calls: any KeyringCalls
  ) throws(KeyringFailure) -> KeySerial? {
    let wanted = KeyDescription(type: "user", description: description)
    return try calls.keys(in: keyring).first { (try? calls.describe($0)) == wanted }
  }

  // MARK: - Reaching the keyring

  /// Reaches the keyring, runs `body` on it, and turns a failed call into the error users see.
  ///
  /// - Parameters:
  ///   - reading: Whether the call reads (a read or a listing), which must never mistake a keyring that is gone
  ///     for an absent secret.
  ///   - noticing: Whether to take note of the persistent keyring's ID, to notice later that it was replaced.
  private func perform<T>(
    reading: Bool, noticing: Bool = true,
    _ body: (KeySerial, any KeyringCalls) throws(KeyringFailure) -> T
  ) throws(CredentialError) -> T {
    let reached: (keyring: KeySerial, replaced: Bool)
    do {
      reached = try reach(noticing: noticing)
    } catch {
      throw Self.error(error, in: keyring, reading: reading)
    }
    // The persistent keyring this store used is gone (it expired, or was invalidated), and another took its place.
    if reached.replaced && reading { throw .unreadableSecret(Self.keyringGone(keyring, because: ENOKEY)) }
    do {
      return try body(reached.keyring, calls)
    } catch {
      throw Self.error(error, in: keyring, reading: reading)
    }
  }

  /// The keyring's ID, once this process possesses it, and whether it is another persistent keyring than the one
  /// this store used last (the last one expired, and the secrets in it with it).
  private func reach(noticing: Bool) throws(KeyringFailure) -> (keyring: KeySerial, replaced: Bool) {
    switch keyring {
    case .session:
      return (try calls.keyringID(SpecialKeyring.session), false)
    case .user:
      // Linked into the process keyring, so that this process possesses the keys in it: the kernel lets a
      // process that possesses a key set its permissions, and ours are set at each save.
      let user = try calls.keyringID(SpecialKeyring.user)
      try calls.link(user, into: SpecialKeyring.process)
      return (user, false)
    case .persistent:
      // Linked into the process keyring (not the session's, which other programs share), which also restarts the
      // persistent keyring's expiry timer.
      let persistent = try calls.persistentKeyring(linkingInto: SpecialKeyring.process)
      guard noticing else { return (persistent, false) }
      let last = persistentKeyring.withLock { last in
        defer { last = persistent }
        return last
      }
      return (persistent, last.map { $0 != persistent } ?? false)
    }
  }
}
