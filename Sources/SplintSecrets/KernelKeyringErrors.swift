import Glibc

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// What a failed key retention call means for a credential, and what to do about it.

extension KernelKeyringStore {
  /// The error users see for `failure`, a call on `keyring` that failed.
  ///
  /// - Parameter reading: Whether the call was part of a read or a listing. Those report a keyring that is gone as
  ///   ``CredentialError/unreadableSecret(_:)``, which a chain of stores does not pass over for a copy elsewhere;
  ///   saves and deletions report it as ``CredentialError/storeUnavailable(store:reason:)``.
  static func error(_ failure: KeyringFailure, in keyring: Keyring, reading: Bool) -> CredentialError {
    let call = failure.call.name
    let unavailable = { (reason: String) in CredentialError.storeUnavailable(store: "kernel keyring", reason: reason) }
    switch failure.errno {
    case EPERM, ENOSYS:
      return unavailable(
        """
        the kernel refused \(call) (\(failure.errno == EPERM ? "EPERM" : "ENOSYS")). A seccomp filter blocks the \
        key management system calls, as Docker's default profile does, or the kernel was built without keys \
        (CONFIG_KEYS). Run the container with a seccomp profile that allows add_key and keyctl \
        (`docker run --security-opt seccomp=PROFILE.json`), or use another store.
        """)
    case EOPNOTSUPP:
      return unavailable(
        """
        this kernel keeps no persistent keyrings (it was built without CONFIG_PERSISTENT_KEYRINGS; \(call) \
        answered EOPNOTSUPP). Use `KernelKeyringStore(keyring: .user)` or `.session`, or another store.
        """)
    case EDQUOT:
      return unavailable(quotaExceeded(call))
    case EACCES where failure.call == .read:
      return .unreadableSecret(
        """
        the key for this credential (ID \(failure.subject)) in the \(keyring) does not let this process read it \
        (EACCES): another program saved it, or changed its permissions. Its owner can give it back its \
        permissions with `keyctl setperm \(failure.subject) 0x3f3f0000`, or remove it with \
        `keyctl unlink \(failure.subject)` so that it can be saved again.
        """)
    case EACCES where failure.call == .add || failure.call == .setPermissions:
      return unavailable(
        """
        the kernel did not let this process store the key (\(call): EACCES). A key for this credential saved by \
        another program may not let this process change it (`keyctl show` lists the keys, and `keyctl unlink ID` \
        removes one), or a security module such as SELinux denies key management (its audit log says so). Remove \
        that key and save again, or use another store.
        """)
    case EACCES:
      return unavailable(
        """
        the \(keyring) does not let this process use it (\(call): EACCES), as when a security module such as \
        SELinux denies key management (its audit log says so). Use another store.
        """)
    case ENOKEY, EKEYREVOKED, EKEYEXPIRED:
      let reason = keyringGone(keyring, because: failure.errno)
      return reading ? .unreadableSecret(reason) : unavailable(reason)
    default:
      let reason = "\(call) failed: \(String(cString: strerror(failure.errno))) (errno \(failure.errno))."
      return reading ? .unreadableSecret(reason) : unavailable(reason)
    }
  }

  /// Why the secrets of `keyring` are gone, which `errno` (ENOKEY, EKEYREVOKED or EKEYEXPIRED) says, and what to do.
  static func keyringGone(_ keyring: Keyring, because errno: Int32) -> String {
    let what =
      switch errno {
      case EKEYREVOKED: "was revoked"
      case EKEYEXPIRED: "expired"
      default: "no longer exists"
      }
    let remedy =
      switch keyring {
      case .persistent:
        """
        The persistent keyring is dropped once no program has asked for it for \
        \(setting("persistent_keyring_expiry")) seconds (/proc/sys/kernel/keys/persistent_keyring_expiry). \
        Save the secrets again: they go into a new persistent keyring.
        """
      case .session:
        "Start a new session keyring (log in again, or `keyctl new_session`), then save the secrets again."
      case .user:
        "Save the secrets again: they go into a new user keyring."
      }
    return "the \(keyring) that held the secrets \(what), and every secret in it is gone. \(remedy)"
  }

  /// The user's key quota is used up: the limits, read from `/proc/sys/kernel/keys`, and what to do.
  private static func quotaExceeded(_ call: String) -> String {
    """
    the user's key quota is used up (\(call): EDQUOT). The kernel allows each user \(setting("maxkeys")) keys \
    and \(setting("maxbytes")) bytes of them in all, and root \(setting("root_maxkeys")) keys and \
    \(setting("root_maxbytes")) bytes (/proc/sys/kernel/keys/maxkeys, maxbytes, root_maxkeys and root_maxbytes; \
    /proc/key-users shows what each user holds). Delete secrets you no longer need, or raise the limits as root: \
    `sysctl -w kernel.keys.maxkeys=2000 kernel.keys.maxbytes=2000000`.
    """
  }

  /// The value of `/proc/sys/kernel/keys/NAME`, or "the configured number of" when it cannot be read.
  private static func setting(_ name: String) -> String {
    let text = try? String(contentsOfFile: "/proc/sys/kernel/keys/" + name, encoding: .utf8)
    return text?.trimming(\.isWhitespaceOrNewline) ?? "the configured number of"
  }
}
