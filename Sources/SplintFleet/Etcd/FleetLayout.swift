#if SplintFleet
  import SplintSettings

  /// Where a fleet's keys are in etcd: each suite's settings under the prefix, and the fleet's own keys (the records
  /// of changes) beside it, where no follower watches and no suite's name reaches.
  ///
  /// With the prefix `/splint/`:
  ///
  /// | keys | what they hold |
  /// | --- | --- |
  /// | `/splint/<suite>/<key>` | a setting's JSON text |
  /// | `/splint/<suite>/$enforced` | the keys the fleet enforces |
  /// | `/splint/<suite>/$schema` | the JSON Schema the suite's values are held to |
  /// | `/splint/<suite>/$labels` | the suite's labels, in the order their values win |
  /// | `/splint/<suite>/$for/<label>/<key>` | a setting's JSON text on the machines that carry the label |
  /// | `/splint.history/<suite>/<sequence>` | a record of one change: its keys' old and new values, and who made it |
  /// | `/splint.machines/<machine>/alive` | that the machine's follower is alive: on a lease it keeps alive |
  /// | `/splint.machines/<machine>/reports/<suite>` | what the machine's copy of the suite holds (``FleetReport``) |
  ///
  /// A follower watches one key range, from its first suite's prefix to past its last, and any key under the prefix
  /// could be a suite's: the fleet's own keys therefore live outside the prefix, in a sibling named by the prefix
  /// without its last `/`, a dot and the area's name. `.` sorts before `/`, so `/splint.history/` sorts before every
  /// key under `/splint/`: outside every follower's range, and no suite, whose keys all start with `/splint/`, can
  /// name it.
  public struct FleetLayout: Sendable, Hashable {
    /// What every key of a suite's settings starts with: `/splint/` unless set.
    public let prefix: String

    /// The layout under `prefix`, which should end with `/` (the fleet's own keys need it).
    public init(prefix: String = "/splint/") {
      self.prefix = prefix
    }

    /// The key prefix of `suite`'s settings: `<prefix><suite>/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a suite that is not a plain name (as
    ///   `SettingsStore(suite:)` takes).
    public func settingsPrefix(ofSuite suite: String) throws(FleetError) -> String {
      do {
        _ = try SettingsStore.fileURL(forSuite: suite)
      } catch {
        throw FleetError(.invalidConfiguration(error.description))
      }
      return prefix + suite + "/"
    }

    /// The prefix of the fleet's records of changes: `/splint.history/` for the prefix `/splint/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` when the prefix does not end with `/`: its sibling could
    ///   then be a suite's (the suite `.history` of the prefix `/splint` holds `/splint.history/...`).
    public var historyPrefix: String {
      get throws(FleetError) { try areaPrefix("history") }
    }

    /// The prefix of `suite`'s records of changes: `/splint.history/<suite>/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a suite that is not a name, or a prefix that does not
    ///   end with `/`.
    public func historyPrefix(ofSuite suite: String) throws(FleetError) -> String {
      _ = try settingsPrefix(ofSuite: suite)
      return try historyPrefix + suite + "/"
    }

    /// The prefix of the fleet's own keys of the area `name` (`history`, `reports`): the prefix without its last
    /// `/`, a dot, `name` and `/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` when the prefix does not end with `/`.
    package func areaPrefix(_ name: String) throws(FleetError) -> String {
      guard prefix.hasSuffix("/") else {
        throw FleetError(
          .invalidConfiguration(
            """
            the prefix \(prefix) does not end with "/", so the fleet's own keys (\(prefix).\(name)/) could be a \
            suite's: use a prefix that ends with "/", such as /splint/.
            """))
      }
      return String(prefix.dropLast()) + "." + name + "/"
    }

    /// The prefix of the keys the fleet keeps of its machines: `/splint.machines/` for the prefix `/splint/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` when the prefix does not end with `/`.
    public var machinesPrefix: String {
      get throws(FleetError) { try areaPrefix("machines") }
    }

    /// The prefix of `machine`'s keys (its presence and its reports), which a role may confine its writes to:
    /// `/splint.machines/<machine>/`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` when the prefix does not end with `/`.
    public func machinePrefix(of machine: FleetMachine) throws(FleetError) -> String {
      try machinesPrefix + machine.name + "/"
    }

    /// The key that says `machine`'s follower is alive: `/splint.machines/<machine>/alive`.
    func presenceKey(of machine: FleetMachine) throws(FleetError) -> String {
      try machinePrefix(of: machine) + "alive"
    }

    /// The key of `machine`'s report of `suite`: `/splint.machines/<machine>/reports/<suite>`.
    ///
    /// - Throws: ``FleetError/Code/invalidConfiguration`` for a suite that is not a name, or a prefix that does not
    ///   end with `/`.
    func reportKey(of machine: FleetMachine, suite: String) throws(FleetError) -> String {
      _ = try settingsPrefix(ofSuite: suite)
      return try machinePrefix(of: machine) + "reports/" + suite
    }

    /// The key of `suite`'s record number `sequence`: its history prefix and the number in 20 digits, so that keys
    /// sort as their numbers do.
    func recordKey(suite: String, sequence: Int64) throws(FleetError) -> [UInt8] {
      try Array(historyPrefix(ofSuite: suite).utf8) + Self.digits(sequence)
    }

    /// `number` in 20 decimal digits, zero-padded.
    static func digits(_ number: Int64) -> [UInt8] {
      let text = String(number)
      return Array((String(repeating: "0", count: max(0, 20 - text.count)) + text).utf8)
    }

    /// The sequence number a record's key holds after `prefix`, or nil when the key is not a record's.
    static func sequence(ofKey key: [UInt8], prefix: [UInt8]) -> Int64? {
      let rest = key.dropFirst(prefix.count)
      guard key.starts(with: prefix), rest.count == 20, rest.allSatisfy({ (0x30...0x39).contains($0) }) else {
        return nil
      }
      return Int64(String(decoding: rest, as: UTF8.self))
    }
  }
#endif
