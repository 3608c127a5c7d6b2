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
        throw failure(error)
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
          "nothing to store: standard input was empty.",
          remedy: "Pipe the secret in: printf %s \"$TOKEN\" | splintctl secret store ..., or store an empty secret "
            + "with --allow-empty.",
          ExitStatus.usage)
      }
      do {
        if binary {
          try credential.save(secret)
        } else {
          guard let text = String(validating: secret, as: UTF8.self) else {
            throw failure("standard input is not UTF-8 text.", remedy: "Store it with --binary.", ExitStatus.usage)
          }
          try credential.save(text)
        }
      } catch let error as CredentialError {
        throw failure(error, from: credential.store)
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
      try Self.print(
        Credential(service: identity.service, account: identity.account, store: try choice.store()), binary: binary)
    }

    /// What `secret read` does once its arguments are known; also what ``FastPath`` runs.
    static func print(_ credential: Credential, binary: Bool) throws {
      do {
        guard let secret = try credential.readData() else {
          // Where a store of delivered secrets is set up, the file it looked for: a misnamed delivery is likely.
          let store = credential.store
          let stores =
            (store as? DefaultCredentialStore).flatMap { try? $0.chain().stores }
            ?? (store as? ChainedCredentialStore)?.stores ?? [store]
          let notes = stores.compactMap { ($0 as? DeliveredCredentialStore)?.absence(of: credential)?.description }
          throw failure(
            "no secret is stored for account \(credential.account) of service \(credential.service).",
            remedy: notes.isEmpty ? nil : notes.joined(separator: " "), ExitStatus.absent)
        }
        if !binary, String(validating: secret, as: UTF8.self) == nil {
          throw failure(
            "the stored secret is not UTF-8 text.", remedy: "Print its bytes with --binary.", ExitStatus.failure)
        }
        Output.bytes(secret)
        if Output.stdoutIsTerminal, !binary { Output.line("") }
      } catch let error as CredentialError {
        throw failure(error, from: credential.store)
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
        throw failure(error, from: store)
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
        throw failure(error, from: store)
      }
    }
  }

  struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Say whether secrets can be read here, store by store in the chain's order, and what to do if not.",
      discussion: """
        Writes nothing and shows no prompt. Given a service and an account, it also says which file each store of \
        delivered secrets reads that secret from, whether the file is there, and which files there have names close \
        to it; without them, it lists the files there that no secret is read from unless a program names them. \
        Exits 0 when a store is available, 69 when none is, 64 when SPLINT_CREDENTIAL_STORES names an unknown store.
        """)

    @Argument(help: "A secret's service, to say where each store of delivered secrets looks for it.")
    var service: String?

    @Argument(help: "The secret's account (with SERVICE).")
    var account: String?

    func validate() throws {
      guard (service == nil) == (account == nil) else {
        throw ValidationError("Give a service and an account, or neither: splintctl secret status SERVICE ACCOUNT")
      }
    }

    func run() throws {
      let chain: ChainedCredentialStore
      do {
        chain = try DefaultCredentialStore.shared.chain()
      } catch {
        throw failure(error)
      }
      let stores = chain.stores.map { ($0, $0.availability()) }
      // The first store that answers, unless a store before it stops every read (a vault that cannot answer).
      let decisive = stores.first { _, availability in
        guard case .unavailable(let error) = availability else { return true }
        return error.isServerFailure
      }
      let answering = decisive.flatMap { $0.1.isAvailable ? $0.0 : nil }
      Output.line(Self.headline(answering: answering))
      Output.line("Stores, in the order they are asked:")
      // Each store's problem is told once, on its line, with what to do on the lines below it.
      for (store, availability) in stores {
        switch availability {
        case .available:
          // A directory of delivered secrets that others may change: said, as ssh's StrictModes would refuse it.
          let warning = (store as? DeliveredCredentialStore)?.directoryWarning.map { ". Warning: \($0)." } ?? ""
          let files = (store as? DeliveredCredentialStore).map(files) ?? ""
          Output.line("- \(FleetStores.describe(store)): available\(warning)\(files)")
        case .unavailable(let error):
          Output.line("- \(FleetStores.describe(store)): unavailable. \(error.summary)")
          for line in error.remedy.map(Output.sentences) ?? [] { Output.line("  \(line)") }
        }
        if let warning = FleetStores.warning(store) { Output.line("  Warning: \(warning)") }
      }
      if answering == nil {
        if let note = vaultNote(for: nil) { Output.line(note) }
        throw ExitStatus.unavailable
      }
    }

    /// What the delivered store holds: for the secret named, whether its file is there (or which file it looks for,
    /// and the close names there); else the files no secret is read from unless a program names them.
    private func files(_ store: DeliveredCredentialStore) -> String {
      if let service, let account {
        let credential = Credential(service: service, account: account, store: store)
        if let absence = store.absence(of: credential) { return ". \(absence)" }
        return ". It holds \(store.file(for: credential)), the file of account \(account) of service \(service)."
      }
      let others = store.filesNamedByNoCredential
      guard !others.isEmpty else { return "" }
      let shown = others.prefix(5).joined(separator: ", ") + (others.count > 5 ? " and \(others.count - 5) more" : "")
      return """
        . It holds files no secret is read from unless a program names them (the file of account A of service S \
        is S__A: `splintctl secret status S A` says which): \(shown).
        """
    }

    /// The first line: the store that answers first, by name, or that none does.
    static func headline(answering: (any CredentialStore)?) -> String {
      switch answering {
      case nil: "No store answers here: secrets cannot be read or saved now. Each store says why below."
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
        throw failure(error, from: DefaultCredentialStore.shared)
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
        let store = SecretServiceStore.shared
        var items = try store.items(matching: attributes)
        guard !items.isEmpty else { throw failure("no item matches.", ExitStatus.absent) }
        if secret, items.contains(where: \.isLocked) {
          // Unlocked first (which may ask), so that each item is printed as it is then: unlocked, and with the label
          // and attributes gnome-keyring shows only placeholders for while its keyring is locked.
          for item in items where item.isLocked { _ = try store.secret(of: item) }
          items = try store.items(matching: attributes)
        }
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
            let value = try store.secret(of: item)
            Output.line("secret = \(value.map { String(decoding: $0, as: UTF8.self) } ?? "")")
          }
        }
      } catch let error as CredentialError {
        throw failure(error)
      }
    }
  }
}
