// The Linux key retention service, wrapped: the only file in SplintSecrets that calls `add_key(2)` or `keyctl(2)`
// (through CKeyring, whose functions return `-errno` on failure). One helper retries EINTR and turns a failure into
// a `KeyringFailure`; `KernelKeyringStore` decides what each failure means for a credential.

import CKeyring
import Glibc

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A key's or keyring's serial number, as the kernel's `key_serial_t`.
typealias KeySerial = Int32

/// The IDs that stand for the calling process's own keyrings.
enum SpecialKeyring {
  /// `KEY_SPEC_PROCESS_KEYRING`.
  static let process = KeySerial(KEY_SPEC_PROCESS_KEYRING)
  /// `KEY_SPEC_SESSION_KEYRING`.
  static let session = KeySerial(KEY_SPEC_SESSION_KEYRING)
  /// `KEY_SPEC_USER_KEYRING`.
  static let user = KeySerial(KEY_SPEC_USER_KEYRING)
}

/// A key retention system call that failed: which one, on which key or keyring, and its `errno`.
struct KeyringFailure: Error, Hashable {
  /// The calls ``KernelKeyring`` makes.
  enum Call: Hashable, CaseIterable {
    case getKeyringID, getPersistent, link, unlink, list, describe, read, add, setPermissions

    /// The call as its manual page names it.
    var name: String {
      switch self {
      case .getKeyringID: "keyctl(KEYCTL_GET_KEYRING_ID)"
      case .getPersistent: "keyctl(KEYCTL_GET_PERSISTENT)"
      case .link: "keyctl(KEYCTL_LINK)"
      case .unlink: "keyctl(KEYCTL_UNLINK)"
      case .list, .read: "keyctl(KEYCTL_READ)"
      case .describe: "keyctl(KEYCTL_DESCRIBE)"
      case .add: "add_key"
      case .setPermissions: "keyctl(KEYCTL_SETPERM)"
      }
    }
  }

  /// The call that failed.
  let call: Call
  /// The key or keyring it was about.
  let subject: KeySerial
  /// Why, as the kernel said.
  let errno: Int32

  /// The key or keyring is gone: unlinked, revoked or expired.
  var isGone: Bool { [ENOKEY, EKEYREVOKED, EKEYEXPIRED].contains(errno) }
}

/// What `KEYCTL_DESCRIBE` tells of a key: its type and its description.
struct KeyDescription: Hashable {
  let type: String
  let description: String

  init(type: String, description: String) {
    self.type = type
    self.description = description
  }

  /// Parses `type;uid;gid;perm;description`, the format `KEYCTL_DESCRIBE` writes (the description may hold `;`).
  init(described: String) {
    let fields = described.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
    type = String(fields[0])
    description = fields.count == 5 ? String(fields[4]) : ""
  }
}

/// The kernel calls ``KernelKeyringStore`` makes, one method per call. ``KernelKeyring`` makes them; tests put
/// calls in its place that fail as a container, a full quota or a race would make them fail.
protocol KeyringCalls: Sendable {
  /// The ID of the special keyring `special` (`KEY_SPEC_*`), which is created if it does not exist yet.
  func keyringID(_ special: KeySerial) throws(KeyringFailure) -> KeySerial
  /// The caller's persistent keyring, once linked into `keyring`, which then possesses it.
  func persistentKeyring(linkingInto keyring: KeySerial) throws(KeyringFailure) -> KeySerial
  /// Links `key` into `keyring`.
  func link(_ key: KeySerial, into keyring: KeySerial) throws(KeyringFailure)
  /// Removes `key` from `keyring`.
  func unlink(_ key: KeySerial, from keyring: KeySerial) throws(KeyringFailure)
  /// The keys linked in `keyring`.
  func keys(in keyring: KeySerial) throws(KeyringFailure) -> [KeySerial]
  /// The type and description of `key`.
  func describe(_ key: KeySerial) throws(KeyringFailure) -> KeyDescription
  /// The payload of `key`, in a `Data` that wipes its bytes when its last copy goes.
  func read(_ key: KeySerial) throws(KeyringFailure) -> Data
  /// Adds a key of type `user` with `description` and `payload` to `keyring`, or updates the payload of the one
  /// already there, and returns its ID.
  func add(_ description: String, payload: Data, to keyring: KeySerial) throws(KeyringFailure) -> KeySerial
  /// Sets the permission mask of `key`.
  func setPermissions(_ permissions: UInt32, of key: KeySerial) throws(KeyringFailure)
}

/// The key retention service's calls, as the kernel answers them.
struct KernelKeyring: KeyringCalls {
  func keyringID(_ special: KeySerial) throws(KeyringFailure) -> KeySerial {
    KeySerial(truncatingIfNeeded: try Self.call(.getKeyringID, special) { splint_keyctl_get_keyring_id(special, 1) })
  }

  func persistentKeyring(linkingInto keyring: KeySerial) throws(KeyringFailure) -> KeySerial {
    KeySerial(truncatingIfNeeded: try Self.call(.getPersistent, keyring) { splint_keyctl_get_persistent(keyring) })
  }

  func link(_ key: KeySerial, into keyring: KeySerial) throws(KeyringFailure) {
    _ = try Self.call(.link, keyring) { splint_keyctl_link(key, keyring) }
  }

  func unlink(_ key: KeySerial, from keyring: KeySerial) throws(KeyringFailure) {
    _ = try Self.call(.unlink, key) { splint_keyctl_unlink(key, keyring) }
  }

  func keys(in keyring: KeySerial) throws(KeyringFailure) -> [KeySerial] {
    try Self.sized(.list, keyring) {
      splint_keyctl_read(keyring, $0.baseAddress, $0.count)
    } result: {
      Array($0.bindMemory(to: KeySerial.self))
    }
  }

  func describe(_ key: KeySerial) throws(KeyringFailure) -> KeyDescription {
    try Self.sized(.describe, key) {
      splint_keyctl_describe(key, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count)
    } result: {
      // Not UTF-8: not a description this store wrote, and never equal to one.
      KeyDescription(described: String(validating: $0.prefix { $0 != 0 }, as: UTF8.self) ?? "")
    }
  }

  func read(_ key: KeySerial) throws(KeyringFailure) -> Data {
    try Self.sized(.read, key) {
      splint_keyctl_read(key, $0.baseAddress, $0.count)
    } result: {
      Data.wiping($0)
    }
  }

  func add(_ description: String, payload: Data, to keyring: KeySerial) throws(KeyringFailure) -> KeySerial {
    let key = try Self.call(.add, keyring) {
      payload.withUnsafeBytes { splint_add_key("user", description, $0.baseAddress, $0.count, keyring) }
    }
    return KeySerial(truncatingIfNeeded: key)
  }

  func setPermissions(_ permissions: UInt32, of key: KeySerial) throws(KeyringFailure) {
    _ = try Self.call(.setPermissions, key) { splint_keyctl_setperm(key, permissions) }
  }

  /// Makes a call that copies out what it answers when that fits in the buffer it is given, and returns the length
  /// of the whole answer: first with no buffer, then with one of the length the call answered, until the answer
  /// fits (a key can grow in between). `result` makes a value of the answer. Every buffer is wiped before it is
  /// freed, since it may hold a secret.
  private static func sized<T>(
    _ call: KeyringFailure.Call, _ subject: KeySerial, _ fill: (UnsafeMutableRawBufferPointer) -> Int,
    result: (UnsafeRawBufferPointer) -> T
  ) throws(KeyringFailure) -> T {
    var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    defer { wipe(buffer) }
    var length = try Self.call(call, subject) { fill(buffer) }
    while length > buffer.count {
      wipe(buffer)
      buffer = .allocate(byteCount: length, alignment: MemoryLayout<KeySerial>.alignment)
      length = try Self.call(call, subject) { fill(buffer) }
    }
    return result(UnsafeRawBufferPointer(rebasing: buffer[..<length]))
  }

  /// Zeroes `buffer` and frees it.
  private static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
    // explicit_bzero: a store the optimizer may not drop because the memory is freed right after.
    if let start = buffer.baseAddress { explicit_bzero(start, buffer.count) }
    buffer.deallocate()
  }

  /// Makes the call, again while a signal interrupts it, and returns its result or throws its `errno`.
  private static func call(
    _ call: KeyringFailure.Call, _ subject: KeySerial, _ body: () -> Int
  ) throws(KeyringFailure) -> Int {
    var result = body()
    while result == -Int(EINTR) { result = body() }
    guard result >= 0 else { throw KeyringFailure(call: call, subject: subject, errno: Int32(-result)) }
    return result
  }
}
