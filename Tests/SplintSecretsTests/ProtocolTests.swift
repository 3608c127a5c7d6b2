import Foundation
import TestSupport
import Testing

/// What `Credential` sends over D-Bus, read with `dbus-monitor` in a private session.
@Suite("What goes over the bus")
struct ProtocolTests {
  typealias Shell = PrivateSession.Shell

  @Test("text is sent as text/plain and bytes as application/octet-stream, for new items and for updates")
  func contentTypes() async throws {
    // "01ff" is the secret 0x01 0xFF; dbus-monitor would print its bytes as "01 ff" if they crossed in the clear.
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Shell.monitorSecretCalls,
        "save-hex", "svc", "binary", "01ff",
        "sh", "sleep 0.3; grep -c 'method call' \"$XDG_RUNTIME_DIR/bus.log\" | grep -qx 1",
        "sh", Shell.monitored("string \"application/octet-stream\""),
        "save", "svc", "text", "plain words",
        "save-hex", "svc", "text", "02",  // an update: SetSecret on the existing item
        "sh", "sleep 0.3; grep -c 'method call' \"$XDG_RUNTIME_DIR/bus.log\" | grep -qx 3",
        "sh", Shell.monitored("member=SetSecret"),
        "sh", Shell.monitored("string \"text/plain\""),
      ])
    #expect(
      output.lines == ["ok sh 0", "ok", "ok sh 0", "ok sh 0", "ok", "ok", "ok sh 0", "ok sh 0", "ok sh 0"],
      "\(output.stderr)")
  }

  @Test("secrets cross the bus encrypted: the monitor never sees them")
  func secretsAreEncryptedOnTheBus() async throws {
    let secret = "visible-if-sent-in-the-clear"
    // dbus-monitor prints a printable byte array as a string, any other as hex, 16 bytes a line.
    let hexBytes = secret.utf8.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
    let output = try await PrivateSession.probe(
      .unlockedKeyring,
      [
        "sh", Shell.monitorSecretCalls,
        "save", "svc", "alice", secret,
        "save", "svc", "alice", secret,
        "sh", "sleep 0.3; grep -c 'method call' \"$XDG_RUNTIME_DIR/bus.log\" | grep -qx 2",
        "sh", "! \(Shell.monitored(secret)) && ! \(Shell.monitored(hexBytes))",
      ])
    #expect(output.lines == ["ok sh 0", "ok", "ok", "ok sh 0", "ok sh 0"], "\(output.stderr)")
  }
}
