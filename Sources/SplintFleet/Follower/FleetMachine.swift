#if SplintFleet
  import Crypto
  import Glibc
  import SplintSettings
  import SplintSystemCalls

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// A machine of the fleet as its follower names itself in the cluster: in the reports of what it applied, and in
  /// the key that says it is alive.
  ///
  /// Unless a name is given (`splintctl fleet follow --machine NAME`, in `/etc/splint/fleet.conf` for the service), it is the host
  /// name and eight hex digits derived from `/etc/machine-id` for Splint alone, as systemd's
  /// `sd_id128_get_machine_app_specific` derives them (`systemd-id128 machine-id --app-specific=` prints the same
  /// ID): two machines cloned from one image, which share a host name, differ once each has its own machine ID, and
  /// the machine ID itself is never sent anywhere.
  public struct FleetMachine: Sendable, Hashable, CustomStringConvertible {
    /// The name: 1 to 128 letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.
    public let name: String
    /// What tells this machine from another of the same name: the app-specific ID (32 hex digits) of its machine
    /// ID; empty where the machine has none.
    let identity: String

    /// The name.
    public var description: String { name }

    /// The machine named `name`, whatever this machine's own name is.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a name that is not one (see ``name``).
    public init(name: String) throws(FleetError) {
      guard Self.isName(name) else {
        throw FleetError(
          .invalidConfiguration(
            """
            \(name.shown()) is not a machine name: use 1 to 128 letters, digits, ".", "_" and "-", not starting with \
            "." or "-" (such as web-07).
            """))
      }
      self.name = name
      identity = (try? Self.appSpecificID(machineID: Self.machineID())) ?? ""
    }

    /// This machine, named by its host name and its machine ID.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` when the machine has no machine ID (`/etc/machine-id`
    ///   is missing or empty, as in some containers): name it then.
    public static var current: FleetMachine {
      get throws(FleetError) {
        let identity = try appSpecificID(machineID: machineID())
        return FleetMachine(name: derivedName(hostName: hostName, identity: identity), identity: identity)
      }
    }

    private init(name: String, identity: String) {
      self.name = name
      self.identity = identity
    }

    /// Splint's application ID, which keeps the ID derived from a machine ID to Splint (systemd's app-specific IDs).
    static let applicationID: [UInt8] = [
      0x59, 0x60, 0x03, 0x2c, 0x2b, 0xe5, 0x4a, 0x3d, 0x91, 0x4a, 0x0c, 0x0e, 0x65, 0x09, 0x3e, 0xb9,
    ]

    /// The name a machine called `hostName` with the app-specific ID `identity` gets: the host name's first label,
    /// made a name (any other byte a `-`, at most 63 bytes), a `-`, and the ID's first eight hex digits.
    static func derivedName(hostName: String, identity: String) -> String {
      let label = hostName.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
      var host = String(label.unicodeScalars.prefix(63).map { isNameCharacter($0) && $0 != "." ? Character($0) : "-" })
      while host.hasPrefix("-") || host.hasPrefix("_") { host.removeFirst() }
      return (host.isEmpty ? "machine" : host) + "-" + identity.prefix(8)
    }

    /// The app-specific ID of `machineID` (its 16 bytes): HMAC-SHA256 keyed with the machine ID over Splint's
    /// application ID, its first 16 bytes made a version 4 UUID, in 32 hex digits, as systemd derives it.
    static func appSpecificID(machineID: [UInt8]) -> String {
      var bytes = Array(HMAC<SHA256>.authenticationCode(for: applicationID, using: SymmetricKey(data: machineID)))
        .prefix(16)
      bytes[6] = (bytes[6] & 0x0F) | 0x40
      bytes[8] = (bytes[8] & 0x3F) | 0x80
      let digits = Array("0123456789abcdef".utf8)
      return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    /// The machine ID's 16 bytes, from `/etc/machine-id` (32 hex digits and a newline).
    static func machineID(path: String = "/etc/machine-id") throws(FleetError) -> [UInt8] {
      let text: [UInt8]
      do {
        text = try Descriptor.open(path, O_RDONLY | O_CLOEXEC).read(upTo: 64, path: path)
      } catch {
        throw noMachineID(path, "it cannot be read: \(error)")
      }
      let hex = text.prefix { $0 != 0x0A }
      guard hex.count == 32, text.count <= 33, let bytes = hexBytes(hex) else {
        throw noMachineID(path, "it does not hold a machine ID (32 hex digits)")
      }
      guard bytes.contains(where: { $0 != 0 }) else { throw noMachineID(path, "it holds no machine ID yet") }
      return bytes
    }

    private static func noMachineID(_ path: String, _ reason: String) -> FleetError {
      FleetError(
        .invalidConfiguration(
          "this machine's name cannot be derived from \(path): \(reason). Name the machine (--machine NAME)."))
    }

    /// The bytes that `hex`'s pairs of hex digits write, or nil when it holds anything else.
    private static func hexBytes(_ hex: some Collection<UInt8>) -> [UInt8]? {
      var bytes: [UInt8] = []
      var high: UInt8?
      for digit in hex {
        let value: UInt8
        switch digit {
        case 0x30...0x39: value = digit - 0x30
        case 0x61...0x66: value = digit - 0x61 + 10
        case 0x41...0x46: value = digit - 0x41 + 10
        default: return nil
        }
        if let first = high {
          bytes.append(first << 4 | value)
          high = nil
        } else {
          high = value
        }
      }
      return high == nil ? bytes : nil
    }

    /// Whether `name` is a machine's name (see ``name``).
    static func isName(_ name: String) -> Bool {
      guard let first = name.unicodeScalars.first, first != ".", first != "-", name.utf8.count <= 128 else {
        return false
      }
      return name.unicodeScalars.allSatisfy(isNameCharacter)
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
      switch scalar {
      case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": true
      default: false
      }
    }

    /// The machine's host name, as gethostname(2) gives it (no lookup in DNS).
    static var hostName: String {
      var buffer = [CChar](repeating: 0, count: 256)
      guard gethostname(&buffer, buffer.count - 1) == 0 else {
        return "unknown"  // coverage:ignore — gethostname(2) fails only for a buffer too small
      }
      return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This boot's ID (`/proc/sys/kernel/random/boot_id`): a follower's claim on its name is known stale once the
    /// machine booted again. Empty where it cannot be read.
    static var bootID: String {
      let path = "/proc/sys/kernel/random/boot_id"
      guard let bytes = try? Descriptor.open(path, O_RDONLY | O_CLOEXEC).read(upTo: 64, path: path) else {
        return ""  // coverage:ignore — /proc is mounted wherever a follower runs
      }
      return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }
  }
#endif
