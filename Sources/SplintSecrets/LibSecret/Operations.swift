// The Secret Service operations SecretServiceStore is built from, each one or two D-Bus calls of the freedesktop
// Secret Service API (https://specifications.freedesktop.org/secret-service-spec/latest/). Attributes are Swift
// strings the caller has validated (UTF-8, no NUL).

import CLibSecretLoader

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Names of the Secret Service's D-Bus API.
enum SecretServiceAPI {
  static let servicePath = "/org/freedesktop/secrets"
  static let service = "org.freedesktop.Secret.Service"
  static let collection = "org.freedesktop.Secret.Collection"
  static let item = "org.freedesktop.Secret.Item"
  static let prompt = "org.freedesktop.Secret.Prompt"
  static let properties = "org.freedesktop.DBus.Properties"
  /// The object path that stands for "none" (no prompt needed, no collection under an alias).
  static let none = "/"
  /// The schema name Python keyring and keytar write, and we with them, as the `xdg:schema` attribute.
  static let schemaName = "org.freedesktop.Secret.Generic"
  /// The `application` attribute Python keyring's SecretService backend gives the items it makes (its `appid`).
  static let pythonKeyring = "Python keyring library"
}

/// The items a search found, by whether their collection is locked.
struct FoundItems {
  var unlocked: [String]
  var locked: [String]

  var all: [String] { unlocked + locked }
}

extension SecretServiceConnection {
  /// Every item, in every collection, whose attributes include `attributes`. Prompts for nothing.
  func search(_ attributes: [String: String], call: LibSecretCall) throws(CredentialError) -> FoundItems {
    let reply = try callMethod(
      "SearchItems", on: SecretServiceAPI.servicePath, of: SecretServiceAPI.service,
      .tuple(.stringDictionary(attributes)), returning: "(aoao)", call: call)
    return FoundItems(unlocked: reply.child(0).strings, locked: reply.child(1).strings)
  }

  /// The secret of the item at `item`, copied out of libsecret's non-pageable memory into a `Data` that wipes
  /// itself when freed; nil when the provider gave none (the item was locked or deleted since it was found).
  func secret(of item: String, call: LibSecretCall) throws(CredentialError) -> Data? {
    let reply = try callMethod(
      "GetSecrets", on: SecretServiceAPI.servicePath, of: SecretServiceAPI.service,
      .tuple(.objectPaths([item]), .objectPath(sessionPath)), returning: "(a{o(oayays)})", call: call)
    let secrets = reply.child(0)
    guard secrets.count > 0 else { return nil }
    return try decode(secrets.child(0).child(1)).bytes
  }

  /// Asks the Secret Service to unlock `objects` (items or collections), which may show a prompt. Returns those it
  /// unlocked or found unlocked: fewer than asked when the prompt was dismissed or could not be shown.
  func unlock(_ objects: [String], call: LibSecretCall) throws(CredentialError) -> [String] {
    let reply = try callMethod(
      "Unlock", on: SecretServiceAPI.servicePath, of: SecretServiceAPI.service, .tuple(.objectPaths(objects)),
      returning: "(aoo)", call: call)
    let unlocked = reply.child(0).strings
    let prompt = reply.child(1).string
    guard prompt != SecretServiceAPI.none else { return unlocked }
    guard let result = try self.prompt(prompt, call: call), result.is("ao") else { return unlocked }
    return unlocked + result.strings
  }

  /// Creates an item in `collection`, with `attributes` (and the schema name), `label` and `secret`; when
  /// `replacing`, an item there that the provider finds the same is replaced, as libsecret does (gnome-keyring takes
  /// any item whose attributes include these). Returns false when the collection is locked and its unlock prompt was
  /// dismissed.
  func createItem(
    in collection: String, attributes: [String: String], label: String,
    secret: borrowing SecretValueReference, replacing: Bool, call: LibSecretCall
  ) throws(CredentialError) -> Bool {
    var stored = attributes
    stored["xdg:schema"] = SecretServiceAPI.schemaName
    return try create(
      in: collection, attributes: stored, label: label, secret: secret, replacing: replacing, call: call) != nil
  }

  /// Creates an item in `collection` with exactly `attributes`, `label` and `secret`, replacing one there that the
  /// provider finds the same when `replacing`. Returns the new item's path, or nil when the collection is locked and
  /// its unlock prompt was dismissed.
  private func create(
    in collection: String, attributes: [String: String], label: String,
    secret: borrowing SecretValueReference, replacing: Bool, call: LibSecretCall
  ) throws(CredentialError) -> String? {
    let properties = Variant.array(of: "{sv}") {
      $0.append(.entry(.string(SecretServiceAPI.item + ".Label"), .boxed(.string(label))))
      $0.append(.entry(.string(SecretServiceAPI.item + ".Attributes"), .boxed(.stringDictionary(attributes))))
    }
    let reply = try callMethod(
      "CreateItem", on: collection, of: SecretServiceAPI.collection,
      .tuple(properties, try encode(secret), .boolean(replacing)), returning: "(oo)", call: call)
    let prompt = reply.child(1).string
    guard prompt != SecretServiceAPI.none else { return reply.child(0).string }
    guard let result = try self.prompt(prompt, call: call) else { return nil }
    return result.is("o") ? result.string : ""
  }

  /// Gives the unlocked item at `item` the secret `secret` by creating it again in its collection, with its own
  /// attributes (its `xdg:content-type`, if it has one, set to `contentType`) and its own label unless `label` is
  /// given: for a provider that does not keep a SetSecret (see ``keepsItemChanges(call:)``), whose creates replace an item
  /// with equal attributes. Returns the new item's path, or nil when a prompt was dismissed.
  func recreate(
    _ item: String, with secret: borrowing SecretValueReference, contentType: String, label: String?,
    call: LibSecretCall
  ) throws(CredentialError) -> String? {
    var attributes = try attributes(of: item, call: call)
    if attributes["xdg:content-type"] != nil { attributes["xdg:content-type"] = contentType }
    let newLabel: String
    if let label {
      newLabel = label
    } else {
      newLabel = try property("Label", of: item, in: SecretServiceAPI.item, type: "s", call: call).string
    }
    let collection = String(item[..<(item.lastIndex(of: "/") ?? item.endIndex)])
    return try create(
      in: collection, attributes: attributes, label: newLabel, secret: secret, replacing: true, call: call)
  }

  /// Replaces the secret of the item at `item`; its attributes and label stay as they are.
  func setSecret(
    of item: String, to secret: borrowing SecretValueReference, call: LibSecretCall
  )
    throws(CredentialError)
  {
    _ = try callMethod(
      "SetSecret", on: item, of: SecretServiceAPI.item, .tuple(try encode(secret)), returning: "()", call: call)
  }

  /// Replaces the label of the item at `item`.
  func setLabel(of item: String, to label: String, call: LibSecretCall) throws(CredentialError) {
    _ = try callMethod(
      "Set", on: item, of: SecretServiceAPI.properties,
      .tuple(.string(SecretServiceAPI.item), .string("Label"), .boxed(.string(label))), returning: "()", call: call)
  }

  /// Deletes the item at `item`. Returns false when that needed a prompt and it was dismissed.
  func delete(_ item: String, call: LibSecretCall) throws(CredentialError) -> Bool {
    let reply = try callMethod("Delete", on: item, of: SecretServiceAPI.item, .tuple(), returning: "(o)", call: call)
    let prompt = reply.child(0).string
    guard prompt != SecretServiceAPI.none else { return true }
    return try self.prompt(prompt, call: call) != nil
  }

  /// The attributes of the item at `item`, as the provider has them now. Until its keyring is unlocked,
  /// gnome-keyring shows an item it loaded locked with only `gkr:compat:hashed:*` placeholders.
  func attributes(of item: String, call: LibSecretCall) throws(CredentialError) -> [String: String] {
    try property("Attributes", of: item, in: SecretServiceAPI.item, type: "a{ss}", call: call).stringDictionary
  }

  /// What the item at `item` says about itself: label, attributes, times and lock, never its secret. One call
  /// (`GetAll`), as libsecret's own item proxies load their properties.
  func item(at item: String, call: LibSecretCall) throws(CredentialError) -> SecretServiceItem {
    let reply = try callMethod(
      "GetAll", on: item, of: SecretServiceAPI.properties, .tuple(.string(SecretServiceAPI.item)),
      returning: "(a{sv})", call: call)
    let properties = reply.child(0)
    var label: String?
    var attributes: [String: String]?
    var created: UInt64?
    var modified: UInt64?
    var locked: Bool?
    for index in 0..<properties.count {
      let entry = properties.child(index)
      let value = entry.child(1).unboxed
      switch entry.child(0).string {
      case "Label" where value.is("s"): label = value.string
      case "Attributes" where value.is("a{ss}"): attributes = value.stringDictionary
      case "Created" where value.is("t"): created = value.unsigned
      case "Modified" where value.is("t"): modified = value.unsigned
      case "Locked" where value.is("b"): locked = value.boolean
      default: continue  // another property, or one of the wrong type: missing below
      }
    }
    guard let label, let attributes, let created, let modified, let locked else {
      throw .protocolViolation("An item's properties lack Label, Attributes, Created, Modified or Locked.")
    }
    return SecretServiceItem(
      path: item, label: label, attributes: attributes,
      created: Date(timeIntervalSince1970: TimeInterval(created)),
      modified: Date(timeIntervalSince1970: TimeInterval(modified)), isLocked: locked)
  }

  /// Creates a collection labelled `label` that `alias` points to, as libsecret does when it stores into the
  /// `default` alias and finds no collection there. gnome-keyring answers with a prompt that asks for the new
  /// keyring's password, which this shows and waits for. Returns the new collection's path, or nil when the prompt
  /// was dismissed or could not be shown (headless, gnome-keyring's prompter finds no display).
  func createCollection(label: String, alias: String, call: LibSecretCall) throws(CredentialError) -> String? {
    let properties = Variant.array(of: "{sv}") {
      $0.append(.entry(.string(SecretServiceAPI.collection + ".Label"), .boxed(.string(label))))
    }
    let reply = try callMethod(
      "CreateCollection", on: SecretServiceAPI.servicePath, of: SecretServiceAPI.service,
      .tuple(properties, .string(alias)), returning: "(oo)", call: call)
    let prompt = reply.child(1).string
    let created = prompt == SecretServiceAPI.none ? reply.child(0) : try self.prompt(prompt, call: call)
    guard let created, created.is("o"), created.string != SecretServiceAPI.none else { return nil }
    return created.string
  }

  /// The object path of the collection the `default` alias points to, or nil when it points nowhere.
  func defaultCollection(call: LibSecretCall) throws(CredentialError) -> String? {
    let reply = try callMethod(
      "ReadAlias", on: SecretServiceAPI.servicePath, of: SecretServiceAPI.service, .tuple(.string("default")),
      returning: "(o)", call: call)
    let path = reply.child(0).string
    return path == SecretServiceAPI.none ? nil : path
  }

  /// The collections that are locked and keep their items out of searches, so that a search that finds nothing
  /// proves nothing while one of these exists. gnome-keyring and KWallet list a locked keyring's items in a
  /// search's `locked` list. KeePassXC lists no items at all for a locked database. oo7-daemon lists them in the
  /// collection's `Items` but leaves them out of every search until it is unlocked: a search that names no
  /// attribute, which finds every item the provider shows, finds none of them.
  func lockedCollectionsHidingItems(call: LibSecretCall) throws(CredentialError) -> [String] {
    var hiding: [String] = []
    var searchable: Set<String>?  // what a search finds at all; asked once, and only if a locked collection lists items
    let collections = try property(
      "Collections", of: SecretServiceAPI.servicePath, in: SecretServiceAPI.service, type: "ao", call: call)
    for collection in collections.strings where try isLocked(collection: collection, call: call) {
      let items = try property("Items", of: collection, in: SecretServiceAPI.collection, type: "ao", call: call)
        .strings
      if items.isEmpty {
        hiding.append(collection)
        continue
      }
      if searchable == nil { searchable = Set(try search([:], call: call).all) }
      if let searchable, !items.contains(where: searchable.contains) { hiding.append(collection) }
    }
    return hiding
  }

  /// Whether the collection at `collection` is locked.
  func isLocked(collection: String, call: LibSecretCall) throws(CredentialError) -> Bool {
    try property("Locked", of: collection, in: SecretServiceAPI.collection, type: "b", call: call).boolean
  }

  /// The D-Bus property `name` of `interface` on the object at `path`, which the specification says is of
  /// `type` (a GVariant type string).
  private func property(
    _ name: String, of path: String, in interface: String, type: String, call: LibSecretCall
  ) throws(CredentialError) -> Variant {
    let reply = try callMethod(
      "Get", on: path, of: SecretServiceAPI.properties, .tuple(.string(interface), .string(name)),
      returning: "(v)", call: call)
    let value = reply.child(0).unboxed
    guard value.is(type) else { throw .protocolViolation("\(name) is not \(type).") }
    return value
  }
}
