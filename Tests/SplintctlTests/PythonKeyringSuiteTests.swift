import Foundation
import TestSupport
import Testing

/// Python keyring's own backend tests (`keyring.testing.backend.BackendBasicTests`, shipped in Debian's
/// python3-keyring), run against a small keyring backend that calls `splintctl`: a peer's test of our command line.
@Suite("Python keyring's backend tests, through splintctl", TestKeyring.required)
struct PythonKeyringSuiteTests {
  let scratch = Scratch()

  /// A keyring backend whose calls are splintctl's commands. Secrets go through standard input, byte for byte.
  static let backend = #"""
    import os, subprocess
    from keyring.backend import KeyringBackend
    from keyring import errors
    from keyring.testing.backend import BackendBasicTests

    SPLINTCTL = os.environ["SPLINTCTL"]

    def splintctl(*arguments, input=b""):
        return subprocess.run([SPLINTCTL, "secret", *arguments], input=input, capture_output=True)

    class SplintctlKeyring(KeyringBackend):
        priority = 1

        def get_password(self, service, username):
            result = splintctl("read", "--", service, username)
            if result.returncode == 1:
                return None
            if result.returncode != 0:
                raise errors.KeyringError(result.stderr.decode())
            return result.stdout.decode()

        def set_password(self, service, username, password):
            result = splintctl("store", "--binary", "--allow-empty", "--", service, username, input=password.encode())
            if result.returncode != 0:
                raise errors.PasswordSetError(result.stderr.decode())

        def delete_password(self, service, username):
            if self.get_password(service, username) is None:
                raise errors.PasswordDeleteError("no such password")
            result = splintctl("delete", "--", service, username)
            if result.returncode != 0:
                raise errors.PasswordDeleteError(result.stderr.decode())

    class TestSplintctl(BackendBasicTests):
        def init_keyring(self):
            return SplintctlKeyring()
    """#

  @Test("every one of them passes, however many the installed keyring has (12 in keyring 23, 15 in 25)")
  func allPass() async throws {
    let file = scratch.url("test_splintctl.py")
    try Self.backend.write(to: file, atomically: true, encoding: .utf8)
    var environment = ProcessInfo.processInfo.environment
    environment["SPLINTCTL"] = Programs.helper("splintctl")
    let pytest = [Programs.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", file.path]
    // How many there are, as pytest collects them, then that each of them passes: none failed, errored or skipped.
    let collected = try await Programs.run(pytest + ["--collect-only"], environment: environment)
    let count = try #require(
      collected.stdout.firstMatch(of: /(\d+) tests? collected/).flatMap { Int($0.1) }, "\(collected.stdout)")
    #expect(count >= 12, "BackendBasicTests has had 12 tests since keyring 23")
    let output = try await Programs.run(pytest, environment: environment, seconds: 300)
    #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
    #expect(output.stdout.contains("\n\(count) passed in "), "\(output.stdout)")
  }

  @Test("--allow-empty stores an empty secret; without it, empty input is refused")
  func allowEmpty() async throws {
    let service = TestKeyring.uniqueService()
    let refused = try await splintctl("secret", "store", service, "alice", input: "")
    #expect(refused.status == 64 && refused.stderr.contains("--allow-empty"))
    #expect(try await splintctl("secret", "store", "--allow-empty", service, "alice", input: "").status == 0)
    let read = try await splintctl("secret", "read", service, "alice")
    #expect(read.status == 0 && read.stdout.isEmpty)
    #expect(try await PythonKeyring.getPassword(service: service, account: "alice") == "")
    try await splintctl("secret", "delete", service, "alice")
  }
}
