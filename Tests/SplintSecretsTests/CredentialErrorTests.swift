import CLibSecret
import Foundation
import Testing

@testable import SplintSecrets

@Suite struct CredentialErrorTests {
  @Test("every description says what happened and names a remedy")
  func descriptionsNameTheRemedy() {
    let remedies: [(CredentialError, String)] = [
      (.noSessionBus, "SPLINT_CREDENTIAL_STORES=delivered,kernel-keyring; in CI, run it under `splintctl sandbox`"),
      (.serviceUnavailable, "On a server or in a container, hand the program its secrets: as systemd credentials"),
      (.noDefaultCollection, "New > Password Keyring"),
      (.locked, "--replace --unlock"),
      (.promptDismissed, "answer the prompt"),
      (.timedOut, "SecretServiceStore(timeout:)"),
      (.cancelled, "Read the credential again"),
      (.invalidArgument("The account is empty."), "The account is empty. Nothing was sent"),
      (.notText, "readData()"),
      (.backend(domain: "secret-error", code: 1, message: "Bad reply."), "Bad reply. (secret-error, code 1)"),
      (.readOnly(store: "systemd credentials", remedy: "Edit the unit."), "systemd credentials delivers"),
      (.storeUnavailable(store: "kernel keyring", reason: "Not permitted."), "kernel keyring cannot be used"),
      (.unreadableSecret("/run/secrets/x is a FIFO."), "cannot be read: /run/secrets/x is a FIFO."),
      (
        .noStoreAnswered([.init(store: "a", error: .noSessionBus), .init(store: "b", error: .locked)]),
        "No store answered (a, b). a: No D-Bus session bus"
      ),
      (.invalidConfiguration("Unknown store \"x\"."), "configured wrongly: Unknown store"),
      (.portalRefused("user interaction failed"), "unlock it (log in to the desktop, or Seahorse)"),
    ]
    for (error, remedy) in remedies {
      #expect(error.description.contains(remedy), "\(error)")
      // One line for a log: what happened, then what to do, each once.
      #expect(!error.description.contains("\n"), "\(error)")
      #expect(error.description == [error.summary, error.remedy].compactMap(\.self).joined(separator: " "))
      #expect(error.remedy.map { !error.summary.contains($0) && !$0.contains(error.summary) } ?? true)
    }
    #expect(Set(remedies.map(\.0.description)).count == remedies.count)
    // A store's reason is split where what happened ends and what to do begins.
    let split = CredentialError.storeUnavailable(
      store: "kernel keyring", reason: "the kernel refused add_key (EPERM). Run it with another seccomp profile.")
    #expect(split.summary == "kernel keyring cannot be used: the kernel refused add_key (EPERM).")
    #expect(split.remedy == "Run it with another seccomp profile.")
    #expect(CredentialError.unreadableSecret("no such file, e.g. here. not a remedy").remedy == nil)
  }

  @Test("each error has its own code, named as its static member is")
  func codes() {
    let errors: [(CredentialError, CredentialError.Code, String)] = [
      (.noSessionBus, .noSessionBus, "noSessionBus"),
      (.serviceUnavailable, .serviceUnavailable, "serviceUnavailable"),
      (.noDefaultCollection, .noDefaultCollection, "noDefaultCollection"),
      (.locked, .locked, "locked"),
      (.promptDismissed, .promptDismissed, "promptDismissed"),
      (.timedOut, .timedOut, "timedOut"),
      (.cancelled, .cancelled, "cancelled"),
      (.invalidArgument("The account is empty."), .invalidArgument, "invalidArgument"),
      (.notText, .notText, "notText"),
      (.backend(domain: "d", code: 1, message: "m"), .backend, "backend"),
      (.readOnly(store: "s", remedy: "r"), .readOnly, "readOnly"),
      (.storeUnavailable(store: "s", reason: "r"), .storeUnavailable, "storeUnavailable"),
      (.unreadableSecret("r"), .unreadableSecret, "unreadableSecret"),
      (.noStoreAnswered([]), .noStoreAnswered, "noStoreAnswered"),
      (.invalidConfiguration("r"), .invalidConfiguration, "invalidConfiguration"),
    ]
    for (error, code, name) in errors {
      #expect(error.code == code)
      #expect(code.description == name)
    }
    #expect(Set(errors.map(\.1)).count == errors.count)
    // The code leaves the details out; the error itself keeps them.
    #expect(CredentialError.invalidArgument("a").code == CredentialError.invalidArgument("b").code)
    #expect(CredentialError.invalidArgument("a") != .invalidArgument("b"))
  }

  @Test("users match errors as before: catch .locked when typed, catch CredentialError.locked when not, switch")
  func matching() {
    func typed() throws(CredentialError) { throw .locked }
    func untyped() throws { throw CredentialError.promptDismissed }
    var caught: [String] = []
    do { try typed() } catch .locked { caught.append("typed locked") } catch { caught.append("typed other") }
    do {
      try untyped()
    } catch CredentialError.locked {
      caught.append("untyped locked")
    } catch CredentialError.promptDismissed {
      caught.append("untyped promptDismissed")
    } catch {
      caught.append("untyped other")
    }
    do { throw CocoaError(.fileNoSuchFile) } catch CredentialError.locked { caught.append("wrong") } catch {
      caught.append("not ours")
    }
    for error in [CredentialError.timedOut, .invalidArgument("x")] {
      switch error {
      case .timedOut: caught.append("switch timedOut")
      default: caught.append("switch \(error.code)")
      }
    }
    #expect(
      caught == [
        "typed locked", "untyped promptDismissed", "not ours", "switch timedOut", "switch invalidArgument",
      ])
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
    #expect(CredentialAvailability.available.description == "The store answers: credentials can be read now.")
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
