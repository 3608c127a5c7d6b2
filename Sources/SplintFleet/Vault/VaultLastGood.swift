#if SplintFleet
  import Glibc
  import SplintSecrets
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// The last secret read of each credential, with when, kept only when the configuration asks for it
  /// (``VaultConfiguration/lastGoodValue``), and handed back while the server cannot be asked.
  final class VaultLastGood: Sendable {
    private let policy: VaultConfiguration.LastGoodValue?
    private let kept = Mutex<[Credential.Key: (secret: Data, read: ContinuousClock.Instant)]>([:])

    /// A cache that keeps secrets as `policy` says; nil keeps none.
    init(_ policy: VaultConfiguration.LastGoodValue?) {
      self.policy = policy
    }

    /// Keeps `secret` (nil: none) as `credential`'s last good value, when the configuration asks for it.
    func remember(_ secret: Data?, of credential: Credential) {
      guard policy != nil else { return }
      kept.withLock { $0[credential.key] = secret.map { ($0, ContinuousClock.now) } }
    }

    /// Drops `credential`'s last good value: it was saved or deleted here.
    func forget(_ credential: Credential) {
      remember(nil, of: credential)
    }

    /// The last good value of `credential`, told to the policy's report, when `error` says the server cannot be
    /// asked (sealed, unreachable) and the value is young enough; nil otherwise.
    func value(of credential: Credential, after error: CredentialError) -> Data? {
      guard let policy, [.sealed, .unreachable].contains(error.code),
        let kept = kept.withLock({ $0[credential.key] })
      else { return nil }
      let age = ContinuousClock.now - kept.read
      guard age <= policy.maximumAge else { return nil }
      (policy.report ?? Self.toStandardError)(credential, age, error)
      return kept.secret
    }

    /// The report when the configuration names none: a line on standard error.
    private static func toStandardError(_ credential: Credential, _ age: Duration, _ error: CredentialError) {
      let line = "splint: \(credential): the value read \(age) ago is used, because \(error)\n"
      _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
    }
  }
#endif
