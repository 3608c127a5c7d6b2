import CLibSecret
import Foundation
import Testing

@testable import SplintSecrets

@Suite struct CredentialErrorTests {
  @Test("every description says what happened and names a remedy")
  func descriptionsNameTheRemedy() {
    let remedies: [(CredentialError, String)] = [
      (.noSessionBus, "dbus-run-session"),
      (.serviceUnavailable, "gnome-keyring-daemon --unlock"),
      (.noDefaultCollection, "New > Password Keyring"),
      (.locked, "--replace --unlock"),
      (.promptDismissed, "answer the prompt"),
      (.timedOut, "SecretServiceStore(timeout:)"),
      (.cancelled, "Read the credential again"),
      (.invalidArgument("The account is empty."), "The account is empty. Nothing was sent"),
      (.notText, "readData()"),
      (.backend(domain: "secret-error", code: 1, message: "Bad reply."), "Bad reply. (secret-error, code 1)"),
    ]
    for (error, remedy) in remedies {
      #expect(error.description.contains(remedy), "\(error)")
    }
    #expect(Set(remedies.map(\.0.description)).count == remedies.count)
  }

  @Test(
    "GLib errors are classified by domain and code",
    arguments: [
      ("secret-error", SECRET_ERROR_IS_LOCKED.rawValue, CredentialError.locked),
      ("g-dbus-error-quark", G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_NO_REPLY.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_SPAWN_EXEC_FAILED.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_SPAWN_NO_MEMORY.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_TIMEOUT.rawValue, .timedOut),
      ("g-dbus-error-quark", G_DBUS_ERROR_TIMED_OUT.rawValue, .timedOut),
      ("g-io-error-quark", G_IO_ERROR_TIMED_OUT.rawValue, .timedOut),
      ("g-io-error-quark", G_IO_ERROR_CANCELLED.rawValue, .cancelled),
      ("g-io-error-quark", G_IO_ERROR_CLOSED.rawValue, .serviceUnavailable),
      ("g-dbus-error-quark", G_DBUS_ERROR_UNKNOWN_METHOD.rawValue, nil),
      ("g-dbus-error-quark", G_DBUS_ERROR_UNIX_PROCESS_ID_UNKNOWN.rawValue, nil),
      ("secret-error", SECRET_ERROR_PROTOCOL.rawValue, nil),
      ("g-io-error-quark", G_IO_ERROR_FAILED.rawValue, nil),
      ("some-other-domain", SECRET_ERROR_IS_LOCKED.rawValue, nil),
    ] as [(String, UInt32, CredentialError?)])
  func classification(domain: String, code: UInt32, expected: CredentialError?) {
    // nil: no situation of ours fits, so the error stays libsecret's own.
    let backend = CredentialError.backend(domain: domain, code: Int(code), message: "m")
    #expect(CredentialError(domain: domain, code: Int(code), message: "m") == expected ?? backend)
  }

  @Test func availabilityDescribesItself() {
    #expect(CredentialAvailability.available.description.contains("running"))
    #expect(CredentialAvailability.unavailable(.locked).description == CredentialError.locked.description)
    #expect(!CredentialAvailability.unavailable(.noSessionBus).isAvailable)
  }

  @Test func theFirstInterruptionOfACallWins() {
    let call = LibSecretCall()
    #expect(call.interruption == nil)
    call.interrupt(.cancelled)
    call.interrupt(.timedOut)
    #expect(call.interruption == .cancelled)
  }
}
