import Foundation
import TestSupport
import Testing
import splintctl

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
    #expect(lines.first == "The Secret Service answers, and its default keyring is unlocked.")
    #expect(lines.contains("token"))
    #expect(lines.contains("display=none password=none"))
    let paths = try #require(lines.first { $0.hasPrefix("config=") })
    let root = try #require(paths.split(separator: " ").first?.dropFirst("config=".count)).replacingOccurrences(
      of: "/config", with: "")
    #expect(root.contains("splintctl-sandbox."))
    #expect(paths == "config=\(root)/config data=\(root)/data runtime=\(root)/run tmp=\(root)/tmp home=\(root)/home")
    #expect(!FileManager.default.fileExists(atPath: root), "the directories are removed")
    #expect(Sandbox.processes(naming: root).isEmpty, "nothing the sandbox started is still running")
  }

  @Test("SIGTERM to splintctl reaches the command, and the sandbox is still cleaned up")
  func terminationIsPassedOn() async throws {
    let script = #"trap 'echo "got TERM in $TMPDIR"; exit 3' TERM; echo ready; while :; do sleep 0.05; done"#
    let sandbox = try await Programs.start(
      [Programs.helper("splintctl"), "sandbox", "--", "sh", "-c", script], seconds: nil)
    #expect(await eventually { sandbox.stdoutSoFar.hasPrefix("ready") })
    sandbox.send(SIGTERM)
    let output = await sandbox.wait()
    let root = try #require(output.lines.last?.split(separator: " ").last).replacingOccurrences(of: "/tmp", with: "")
    #expect(output.status == 3, "the command's own status, from its trap")
    #expect(output.lines.last?.hasPrefix("got TERM in ") == true, "\(output)")
    #expect(!FileManager.default.fileExists(atPath: root), "the directories are removed")
    #expect(Sandbox.processes(naming: root).isEmpty, "nothing the sandbox started is still running")
  }

  @Test("a command that cannot run is named, as a shell names it, before anything starts")
  func aMissingCommandIsNamed() async throws {
    let missing = try await splintctl("sandbox", "--", "no-such-command-\(UUID())")
    #expect(missing.status == 127)
    #expect(missing.stderr.hasPrefix("splintctl: no-such-command-"), "\(missing)")
    #expect(
      missing.stderr.hasSuffix(": command not found.\nCheck its name, or give its path (PATH is searched).\n"),
      "\(missing)")
    #expect(!missing.stderr.contains("command.pid"), "the sandbox's own files are not the command")
    let directory = try await splintctl("sandbox", "--", "/")
    #expect(directory.status == 126)
    #expect(
      directory.stderr == "splintctl: /: cannot run it: it is not an executable file.\nMake it executable (chmod +x).\n"
    )
  }

  @Test("the bus's harmless fd-limit warning is not shown; what the command and the keyring print is, in order")
  func busNoiseIsKeptBack() async throws {
    let output = try await splintctl("sandbox", "--", "sh", "-c", "echo one >&2; echo out; echo two >&2")
    #expect(output.status == 0)
    #expect(output.stdout == "out\n")
    #expect(!output.stderr.contains("Failed to set fd limit"), "\(output)")
    #expect(output.stderr.hasPrefix("one\ntwo\n"), "the command's own standard error, first and whole: \(output)")
  }

  @Test(
    "a command that starts the document portal leaves nothing behind: no process, no FUSE mount, no directory",
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/libexec/xdg-document-portal")
        && FileManager.default.fileExists(atPath: "/dev/fuse"),
      "the document portal needs xdg-desktop-portal (apt-get install xdg-desktop-portal) and /dev/fuse"))
  func thePortalsMountIsUndone() async throws {
    let script = """
      gdbus call --session --dest org.freedesktop.portal.Documents --object-path /org/freedesktop/portal/documents \
        --method org.freedesktop.portal.Documents.GetMountPoint >/dev/null || exit 9
      grep -q " $XDG_RUNTIME_DIR/doc " /proc/self/mountinfo || exit 8
      if [ "$1" = stopped ]; then
        pid=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \
          org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.portal.Documents | awk '{print $2}')
        kill -STOP "$pid" || exit 7
      fi
      echo "$XDG_RUNTIME_DIR"
      """
    // Left running, the portal may unmount its file system itself when the bus goes, or be killed first; stopped,
    // it cannot, and its mount outlives it unless the sandbox undoes it.
    for state in ["running", "stopped", "running", "stopped"] {
      let output = try await splintctl("sandbox", "--", "sh", "-c", script, "sh", state)
      #expect(output.status == 0, "the portal mounted its file system in the sandbox: \(output)")
      let runtime = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      let root = runtime.replacingOccurrences(of: "/run", with: "")
      #expect(root.contains("splintctl-sandbox."))
      #expect(Sandbox.processes(naming: root).isEmpty, "nothing the sandbox started is still running (\(state))")
      #expect(Sandbox.mounts(beneath: root).isEmpty, "nothing is mounted beneath \(root) (\(state))")
      #expect(!FileManager.default.fileExists(atPath: root), "the directories are removed (\(state))")
    }
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
}
