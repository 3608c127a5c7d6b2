import Foundation

/// `secret-tool` from libsecret-tools, as a user would run it. Secrets go through standard input, never argv.
public enum SecretTool {
  /// Stores `secret` as `secret-tool store --label=LABEL service SERVICE username ACCOUNT` does.
  public static func store(service: String, account: String, secret: String, label: String) async throws {
    let output = try await Programs.run(
      ["secret-tool", "store", "--label=\(label)", "service", service, "username", account], input: Data(secret.utf8))
    guard output.status == 0 else { throw ToolFailure(output) }
  }

  /// The secret `secret-tool lookup` prints, or nil when it finds none.
  public static func lookup(service: String, account: String) async throws -> String? {
    let output = try await Programs.run(["secret-tool", "lookup", "service", service, "username", account])
    return output.status == 0 ? output.stdout : nil
  }

  /// Stores `secret` under exactly `attributes`, as `secret-tool store --label=LABEL NAME VALUE...` does: a third
  /// program's item, when they include names of its own.
  public static func store(attributes: [String: String], secret: String, label: String) async throws {
    let pairs = attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    let output = try await Programs.run(["secret-tool", "store", "--label=\(label)"] + pairs, input: Data(secret.utf8))
    guard output.status == 0 else { throw ToolFailure(output) }
  }

  /// The secret `secret-tool lookup NAME VALUE...` prints for `attributes`, or nil when it finds none.
  public static func lookup(attributes: [String: String]) async throws -> String? {
    let pairs = attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    let output = try await Programs.run(["secret-tool", "lookup"] + pairs)
    return output.status == 0 ? output.stdout : nil
  }

  /// The labels of every item whose `service` attribute is `service`, sorted.
  public static func labels(service: String) async throws -> [String] {
    try await PythonKeyring.items(service: service).map(\.label).sorted()
  }
}

/// Python's `keyring` (its SecretService backend) and `secretstorage`, from Debian's Python.
public enum PythonKeyring {
  /// What `secretstorage` sees of one item.
  public struct Item: Decodable, Equatable {
    /// The item's label.
    public let label: String
    /// The item's attributes.
    public let attributes: [String: String]
  }

  /// `keyring.set_password(service, account, secret)`.
  public static func setPassword(service: String, account: String, secret: String) async throws {
    try await python("kr.set_password(service, account, sys.stdin.read())", service, account, input: secret)
  }

  /// What `keyring.get_password` returns, or nil for None.
  public static func getPassword(service: String, account: String) async throws -> String? {
    let output = try await python(
      "value = kr.get_password(service, account)\nif value is None: sys.exit(3)\nsys.stdout.write(value)",
      service, account, allowing: [3])
    return output.status == 0 ? output.stdout : nil
  }

  /// Every item of the default collection whose `service` attribute is `service`.
  public static func items(service: String) async throws -> [Item] {
    let script = """
      import json, secretstorage
      connection = secretstorage.dbus_init()
      collection = secretstorage.get_default_collection(connection)
      print(json.dumps([{"label": item.get_label(), "attributes": item.get_attributes()}
                        for item in collection.search_items({"service": service})]))
      """
    return try JSONDecoder().decode([Item].self, from: Data(await python(script, service, "").stdout.utf8))
  }

  @discardableResult
  private static func python(
    _ body: String, _ service: String, _ account: String, input: String = "", allowing: Set<Int32> = []
  ) async throws -> ProgramOutput {
    let script = """
      import sys
      from keyring.backends import SecretService
      kr = SecretService.Keyring()
      service, account = sys.argv[1], sys.argv[2]
      \(body)
      """
    let output = try await Programs.run([Programs.python, "-c", script, service, account], input: Data(input.utf8))
    guard output.status == 0 || allowing.contains(output.status) else { throw ToolFailure(output) }
    return output
  }
}

/// gnome-keyring's unlock without a prompt, for scripts that must unlock a test keyring whose password they know:
/// `UnlockWithMasterPassword` on its internal D-Bus interface, the call its own control tools make.
public enum GnomeKeyringUnlock {
  /// Python (jeepney, which Python keyring brings) that defines `unlock_login(bus, owner, password)`: unlocks the
  /// login keyring of the gnome-keyring whose bus name is `owner`, over the jeepney connection `bus`. A wrong
  /// password raises `DBusErrorResponse`.
  public static let python = """
    from jeepney import DBusAddress, new_method_call
    from jeepney.wrappers import unwrap_msg

    def unlock_login(bus, owner, password):
        path = '/org/freedesktop/secrets'
        def call(interface, method, signature, body):
            address = DBusAddress(path, bus_name=owner, interface=interface)
            return unwrap_msg(bus.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20))
        _, session = call('org.freedesktop.Secret.Service', 'OpenSession', 'sv', ('plain', ('s', '')))
        call('org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface', 'UnlockWithMasterPassword', 'o(oayays)',
             (path + '/collection/login', (session, b'', password.encode(), 'text/plain')))

    """
}

/// A keyring tool that exited with a failure.
public struct ToolFailure: Error, CustomStringConvertible {
  let output: ProgramOutput
  init(_ output: ProgramOutput) { self.output = output }
  /// The exit status and what the tool printed on standard error.
  public var description: String { "exit \(output.status): \(output.stderr)" }
}
