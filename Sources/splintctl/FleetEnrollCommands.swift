#if SplintFleet
  import ArgumentParser
  import SplintFleet

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  struct FleetEnrollCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "enroll",
      abstract: "Make a machine an etcd user and role of its own, so that its follower reports for it alone.",
      discussion: """
        Makes the user splint-machine-NAME with a new password, of a role of the same name that may read the \
        fleet's settings (the prefix) and read and write the machine's own keys (/splint.machines/NAME/), and \
        nothing else: a report its follower writes for another machine is refused. Run it as etcd's root \
        (--user root). Prints the password on standard output, alone (with a newline only on a terminal, as \
        systemd-creds does), for the machine's follower to read as the systemd credential \
        etcd__splint-machine-NAME; what to do with it on standard error. A machine enrolled already is refused \
        (exit status 70): its password is not changed under its follower.
        """)

    @Option(help: "The machine's name, as its follower reports it (`fleet follow` prints it; --machine there).")
    var machine: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [])
      var password = Self.newPassword()
      defer { password.resetBytes(in: 0..<password.count) }
      let machine = try await endpoints.reporting { () throws(FleetError) in
        let machine = try FleetMachine(name: self.machine)
        try await cluster.enroll(machine, password: password)
        return machine
      }
      Output.bytes(password)
      if Output.stdoutIsTerminal { Output.line("") }
      let user = machine.etcdUser
      Output.error(
        """
        Enrolled \(machine.name) as the etcd user \(user). On the machine, keep the password as the systemd \
        credential etcd__\(user), for instance:
          splintctl fleet enroll --machine \(machine.name) ... | ssh HOST 'systemd-creds encrypt --name=etcd__\(user) - \
        /etc/credstore.encrypted/etcd__\(user)'
        and follow with --machine \(machine.name) --user \(user) (in /etc/splint/fleet.conf), the credential loaded \
        with LoadCredentialEncrypted=etcd__\(user) (systemctl edit splint-fleet).
        """)
    }

    /// A new password: 32 characters of the 64 of base64url (192 random bits), made in place as bytes (never a
    /// `String`, nor a copy left unwiped), for the caller to wipe.
    static func newPassword() -> Data {
      let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      var generator = SystemRandomNumberGenerator()
      var password = Data(count: 32)
      password.withUnsafeMutableBytes { bytes in
        for index in bytes.indices { bytes[index] = alphabet.utf8Start[Int((generator.next() as UInt8) & 63)] }
      }
      return password
    }
  }

  struct FleetForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "forget",
      abstract: "Remove a decommissioned machine: its reports, its etcd user and its role.",
      discussion: """
        `fleet rollout` no longer lists the machine. Refused while the machine's follower is alive (exit status 70): \
        stop it first (systemctl disable --now splint-fleet on it); one that died is gone once its lease expires. \
        Run it as etcd's root (--user root). Exit status 1 when the cluster held nothing of the machine (a name \
        misspelt, or forgotten already).
        """)

    @Option(help: "The machine's name, as `fleet rollout` lists it.")
    var machine: String

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
      let (cluster, endpoints) = try self.cluster.cluster(suites: [])
      let (machine, forgotten) = try await endpoints.reporting { () throws(FleetError) in
        let machine = try FleetMachine(name: self.machine)
        return (machine, try await cluster.forget(machine))
      }
      guard !forgotten.isEmpty else {
        throw failure(
          "The cluster holds nothing of the machine \(machine.name): no reports, no user \(machine.etcdUser).",
          remedy: "Check the name: `splintctl fleet rollout --suite SUITE` lists the machines.", ExitStatus.absent)
      }
      var removed: [String] = []
      if forgotten.keys > 0 { removed.append(forgotten.keys == 1 ? "1 key" : "\(forgotten.keys) keys") }
      if forgotten.user { removed.append("the user \(machine.etcdUser)") }
      if forgotten.role { removed.append("the role \(machine.etcdUser)") }
      Output.line("Forgot \(machine.name): removed \(removed.joined(separator: ", ")).")
    }
  }
#endif
