import ArgumentParser
import SplintSecrets

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

struct SecretCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "secret",
    abstract: "Store, read, delete and list secrets: delivered ones, the Secret Service's, the kernel keyring's.",
    discussion: """
      By default the stores are asked in the order SPLINT_CREDENTIAL_STORES names them, or else: systemd \
      credentials ($CREDENTIALS_DIRECTORY), container secrets (/run/secrets), then the Secret Service \
      (gnome-keyring, KeePassXC, KWallet); --store picks one. `splintctl secret status` shows the chain. In the \
      Secret Service, items carry the attributes `service` and `username`, as secret-tool, Python keyring and \
      go-keyring write them, so `splintctl secret read S U` reads what `secret-tool store service S username U` \
      stored, and the reverse.
      """,
    subcommands: [Store.self, Read.self, Delete.self, List.self, Status.self, Which.self, Search.self]
  )

  struct Identity: ParsableArguments {
    @Argument(help: "The service the secret belongs to (its `service` attribute).")
    var service: String

    @Argument(help: "Whose secret it is (its `username` attribute).")
    var account: String
  }

  struct StoreChoice: ParsableArguments {
    @Option(
      name: .customLong("store"),
      help: ArgumentHelp(
        "Use this store only: \(FleetStores.storeNames.joined(separator: ", ")).", valueName: "name"),
      completion: .list(FleetStores.storeNames))
    var name: String?

    /// The store named, or the default chain.
    func store() throws -> any CredentialStore {
      guard let name else { return DefaultCredentialStore.shared }
      do {
        let chain = try DefaultCredentialStore.chain(named: [name])
        return chain.stores.count == 1 ? chain.stores[0] : chain
      } catch {
        throw failure(error.description, error.status)
      }
    }
  }

  struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "store",
      abstract: "Store a secret read from standard input (never from the command line, so it never shows in ps).",
      discussion: """
        On a terminal, the secret is asked for without echo. From a pipe, everything up to the end is read, and \
        one trailing newline (as `echo` adds) is dropped unless --binary is given. An existing secret is replaced.
        """)

    @OptionGroup var identity: Identity

    @Option(
      help: "The label keyring managers such as Seahorse show (default: Password for '<account>' on '<service>').")
    var label: String?

    @Flag(help: "Store standard input byte for byte, as application/octet-stream.")
    var binary = false

    @Flag(help: "Store an empty secret when standard input is empty, rather than refuse (as a script may mean to).")
    var allowEmpty = false

    @OptionGroup var choice: StoreChoice

    func run() throws {
      let credential = Credential(
        service: identity.service, account: identity.account, label: label, store: try choice.store())
      var secret =
        Output.stdinIsTerminal
        ? Output.readHiddenLine(prompt: "Secret for \(identity.account) on \(identity.service): ") : Output.readAll()
      if !binary, secret.last == UInt8(ascii: "\n") {
        secret.removeLast()
        if secret.last == UInt8(ascii: "\r") { secret.removeLast() }
      }
      guard !secret.isEmpty || allowEmpty else {
        throw failure(
          "nothing to store: standard input was empty. Pipe the secret in: printf %s \"$TOKEN\" | splintctl secret "
            + "store ..., or store an empty secret with --allow-empty.",
          ExitStatus.usage)
      }
      do {
        if binary {
          try credential.save(secret)
        } else {
          guard let text = String(validating: secret, as: UTF8.self) else {
            throw failure("standard input is not UTF-8 text; store it with --binary.", ExitStatus.usage)
          }
          try credential.save(text)
        }
      } catch let error as CredentialError {
        throw failure(error.description, error.status)
      }
    }
  }

  struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "read",
      abstract: "Print a secret. Exits with status 1, printing nothing, when there is none.",
      discussion: "The secret is printed as stored, with a newline added only when the output is a terminal.")

    @OptionGroup var identity: Identity

    @Flag(help: "Print the secret's bytes exactly, even when they are not text.")
    var binary = false

    @OptionGroup var choice: StoreChoice

    func run() throws {
      let credential = Credential(service: identity.service, account: identity.account, store: try choice.store())
      do {
        guard let secret = try credential.readData() else {
          throw failure(
            "no secret is stored for account \(identity.account) of service \(identity.service).", ExitStatus.absent)
        }
        if !binary, String(validating: secret, as: UTF8.self) == nil {
          throw failure("the stored secret is not UTF-8 text; print its bytes with --binary.", ExitStatus.failure)
        }
        Output.bytes(secret)
        if Output.stdoutIsTerminal, !binary { Output.line("") }
      } catch let error as CredentialError {
        throw failure(error.description, error.status)
      }
    }
  }

  struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Delete a secret (every item that names it). Deleting a secret that is not there succeeds.")

    @OptionGroup var identity: Identity

    @OptionGroup var choice: StoreChoice

    func run() throws {
      let store = try choice.store()
      do {
        try Credential(service: identity.service, account: identity.account, store: store).delete()
      } catch {
        throw failure(error.description, error.status)
      }
    }
  }

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list", abstract: "Print the accounts that have a secret for a service.")

    @Argument(help: "The service whose accounts to list.")
    var service: String

    @OptionGroup var choice: StoreChoice

    func run() throws {
      let store = try choice.store()
      do {
        for account in try Credential.accounts(service: service, store: store) { Output.line(account) }
      } catch {
        throw failure(error.description, error.status)
      }
    }
  }

  struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Say whether secrets can be read here, store by store in the chain's order, and what to do if not.",
      discussion: """
        Writes nothing and shows no prompt. Exits 0 when a store is available, 69 when none is, 64 when \
        SPLINT_CREDENTIAL_STORES names an unknown store.
        """)

    func run() throws {
      let chain: ChainedCredentialStore
      do {
        chain = try DefaultCredentialStore.shared.chain()
      } catch {
        throw failure(error.description, error.status)
      }
      let availability = chain.availability()
      let stores = chain.stores.map { ($0, $0.availability()) }
      // A store before the one that answers may stop every read (a vault that cannot be reached): then none answers.
      let answering = availability.isAvailable ? stores.first { $0.1.isAvailable }?.0 : nil
      Output.line(Self.headline(answering: answering, availability))
      Output.line("Stores, in the order they are asked:")
      for (store, availability) in stores {
        switch availability {
        case .available:
          // A directory of delivered secrets that others may change: said, as ssh's StrictModes would refuse it.
          let warning = (store as? DeliveredCredentialStore)?.directoryWarning.map { ". Warning: \($0)." } ?? ""
          Output.line("- \(FleetStores.describe(store)): available\(warning)")
        case .unavailable(let reason): Output.line("- \(FleetStores.describe(store)): unavailable. \(reason)")
        }
      }
      if !availability.isAvailable { throw ExitStatus.unavailable }
    }

    /// The first line: the store that answers first, by name, or why none does.
    static func headline(answering: (any CredentialStore)?, _ availability: CredentialAvailability) -> String {
      switch answering {
      case nil: availability.description
      case is SecretPortalStore: "Flatpak sandbox: secrets kept through the Secret portal."
      case is SecretServiceStore: "The Secret Service answers, and its default keyring is unlocked."
      case let store?: "Secrets are read from \(store.name) first: it answers."
      }
    }
  }

  struct Which: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "which",
      abstract: "Say which store answers for a secret, without printing the secret.",
      discussion: "Exits with status 1 when no store has it.")

    @OptionGroup var identity: Identity

    func run() throws {
      do {
        let chain = try DefaultCredentialStore.shared.chain()
        let credential = Credential(service: identity.service, account: identity.account, store: chain)
        guard let store = try chain.answeringStore(for: credential) else {
          throw failure(
            "no store has a secret for account \(identity.account) of service \(identity.service).",
            ExitStatus.absent)
        }
        Output.line(FleetStores.describe(store))
      } catch let error as CredentialError {
        throw failure(error.description, error.status)
      }
    }
  }

  struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "search",
      abstract: "List the Secret Service's items whose attributes match, whatever program stored them.",
      discussion: """
        As `secret-tool search` finds them: items of git's credential helper (attributes protocol, server, user), \
        NetworkManager, browsers. Each item's label, times, lock, schema and attributes are printed; its secret only \
        with --secret. Exits with status 1 when no item matches.
        """)

    @Argument(help: ArgumentHelp("Attribute names and values, in pairs: all must match.", valueName: "attribute value"))
    var pairs: [String] = []

    @Flag(help: "Print each item's secret too (unlocking its keyring, which may ask).")
    var secret = false

    func validate() throws {
      guard !pairs.isEmpty, pairs.count.isMultiple(of: 2) else {
        throw ValidationError("Give attributes and values in pairs: splintctl secret search server example.com")
      }
    }

    func run() throws {
      let attributes = Dictionary(
        stride(from: 0, to: pairs.count, by: 2).map { (pairs[$0], pairs[$0 + 1]) }, uniquingKeysWith: { $1 })
      do {
        let items = try SecretServiceStore.shared.items(matching: attributes)
        guard !items.isEmpty else { throw failure("no item matches.", ExitStatus.absent) }
        for (index, item) in items.enumerated() {
          if index > 0 { Output.line("") }
          Output.line("[\(item.path)]")
          Output.line("label = \(item.label)")
          Output.line("created = \(item.created.formatted(.iso8601))")
          Output.line("modified = \(item.modified.formatted(.iso8601))")
          Output.line("locked = \(item.isLocked ? "yes" : "no")")
          if let schema = item.schema { Output.line("schema = \(schema)") }
          for (name, value) in item.attributes.sorted(by: { $0.key < $1.key }) where name != "xdg:schema" {
            Output.line("attribute.\(name) = \(value)")
          }
          if secret {
            let value = try SecretServiceStore.shared.secret(of: item)
            Output.line("secret = \(value.map { String(decoding: $0, as: UTF8.self) } ?? "")")
          }
        }
      } catch let error as CredentialError {
        throw failure(error.description, error.status)
      }
    }
  }
}
