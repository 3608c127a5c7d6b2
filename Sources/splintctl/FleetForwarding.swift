// The `fleet` command of a build without the SplintFleet trait, and the forwarding of the fleet's commands (and of
// `secret` with the vault store) to the build that has it, `splintctl-fleet`. The build with the trait has the
// commands themselves (FleetCommands.swift).

/// What `splintctl fleet` says of itself in its help, the same in either build.
let fleetAbstract = "Settings for a fleet: follow an etcd cluster into this machine's copy, and change its values."

#if !SplintFleet
  import ArgumentParser
  import SplintSecrets

  #if canImport(Glibc)
    import Glibc
  #endif

  /// In a build without the SplintFleet trait, `fleet` stands for the build that has it (see ``FleetForwarding``).
  let fleetCommands: [any ParsableCommand.Type] = [FleetCommand.self]

  struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "fleet",
      abstract: fleetAbstract,
      discussion: "`splintctl fleet --help` lists the commands (they run the build of splintctl that has them).")

    func run() throws { FleetForwarding.forward(["fleet"]) }
  }

  /// The installed `splintctl` is built without the SplintFleet trait, so that the commands shell scripts run most
  /// (`get`, `secret read`) start without the fleet's HTTP client and TLS (SwiftNIO, BoringSSL), whose size alone made
  /// every start a third slower; the build with the trait is installed beside it, as
  /// `PREFIX/lib/splintctl/splintctl-fleet`. `splintctl fleet ...`, and `splintctl secret ...` when the stores named
  /// include `vault` (in `SPLINT_CREDENTIAL_STORES` or `--store`), run that build in this process's place, with the
  /// same arguments, as git runs `git-<command>`.
  enum FleetForwarding {
    /// Runs the build with the trait in this process's place when `arguments` need it; returns when they do not.
    static func forwardIfNeeded(_ arguments: [String]) {
      if needsFleet(arguments) { forward(arguments) }
    }

    /// Whether `arguments` (after the program's name) name a command only the build with the trait has.
    static func needsFleet(_ arguments: [String]) -> Bool {
      switch arguments.first {
      case "fleet": return true
      case "help": return arguments.dropFirst().first == "fleet"
      case "secret":
        if DefaultCredentialStore.namesInEnvironment?.contains("vault") == true { return true }
        return zip(arguments, arguments.dropFirst()).contains { $0 == "--store" && $1 == "vault" }
          || arguments.contains("--store=vault")
      default: return false
      }
    }

    /// The build with the trait, as installed beside this one: `../lib/splintctl/splintctl-fleet` from the directory
    /// of this program (found through /proc/self/exe, not a name anyone could have put on PATH).
    static var fleetBuild: String {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
      let program = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
      let bin = program.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
      return bin + "/../lib/splintctl/splintctl-fleet"
    }

    /// Runs the build with the trait with `arguments`, in this process's place; fails, saying why, when it is not
    /// installed.
    static func forward(_ arguments: [String]) -> Never {
      let path = fleetBuild
      let argv = ([path] + arguments).map { strdup($0) } + [nil]
      execv(path, argv)
      let reason = String(cString: strerror(errno))
      Splintctl.exit(
        withError: failure(
          "This splintctl has no fleet commands, and the build that has them is not at \(path) (\(reason)).",
          remedy: """
            Install splintctl with script/install or its .deb, which bring that build; or build splintctl with the \
            SplintFleet trait (swift build --traits SplintFleet).
            """, ExitStatus.usage))
    }
  }
#endif
