import Foundation
import TestSupport
import Testing

/// `splintctl sandbox -- COMMAND`: a throw-away Secret Service for one command.
@Suite("splintctl sandbox")
struct SandboxCommandTests {
  @Test func returnsTheCommandsStatus() async throws {
    #expect(try await splintctl("sandbox", "--", "sh", "-c", "exit 7").status == 7)
    #expect(try await splintctl("sandbox", "--", "true").status == 0)
    #expect(try await splintctl("sandbox", "--", "sh", "-c", "kill -TERM $$").status == 128 + SIGTERM)
  }

  @Test("inside: an unlocked keyring of its own, throw-away directories, no display, no password in sight")
  func insideTheSandbox() async throws {
    let script = #"""
      "$0" secret status
      printf %s token | "$0" secret store sandbox-test alice
      "$0" secret read sandbox-test alice; echo
      echo "config=$XDG_CONFIG_HOME data=$XDG_DATA_HOME runtime=$XDG_RUNTIME_DIR tmp=$TMPDIR home=$HOME"
      echo "display=${DISPLAY:-none} password=${SPLINTCTL_SANDBOX_PASSWORD:-none}"
      """#
    var environment = ProcessInfo.processInfo.environment
    environment["DISPLAY"] = ":42"
    let output = try await Programs.run(
      [Programs.helper("splintctl"), "sandbox", "--home", "--", "sh", "-c", script, Programs.helper("splintctl")],
      environment: environment)
    #expect(output.status == 0, "\(output)")
    let lines = output.lines
    #expect(lines.first == "The Secret Service is running and its default keyring is unlocked.")
    #expect(lines.contains("token"))
    #expect(lines.contains("display=none password=none"))
    let paths = try #require(lines.first { $0.hasPrefix("config=") })
    let root = try #require(paths.split(separator: " ").first?.dropFirst("config=".count)).replacingOccurrences(
      of: "/config", with: "")
    #expect(root.contains("splintctl-sandbox."))
    #expect(paths == "config=\(root)/config data=\(root)/data runtime=\(root)/run tmp=\(root)/tmp home=\(root)/home")
    #expect(!FileManager.default.fileExists(atPath: root), "the directories are removed")
    #expect(processes(naming: root).isEmpty, "nothing the sandbox started is still running")
  }

  @Test func withoutTheToolsItSaysWhatToInstall() async throws {
    let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-path-\(UUID())")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: empty) }
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = empty.path
    let output = try await Programs.run(
      [Programs.helper("splintctl"), "sandbox", "--", "true"], environment: environment)
    #expect(output.status == 69)
    #expect(output.stderr.contains("apt-get install dbus-daemon dbus-bin gnome-keyring"))
  }

  @Test func aCommandIsRequired() async throws {
    let output = try await splintctl("sandbox")
    #expect(output.status == 64)
    #expect(output.stderr.contains("Give the command after --"))
  }

  /// The live processes whose environment names `directory` (as everything a sandbox starts does).
  private func processes(naming directory: String) -> [String] {
    let needle = Data(directory.utf8)
    return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { pid in
      Int32(pid) != nil && FileManager.default.contents(atPath: "/proc/\(pid)/environ")?.range(of: needle) != nil
    }
  }
}
