import Foundation
import TestSupport
import splintctl

/// Runs a Secret Service provider that needs a desktop (KeePassXC, KWallet) headless: on a virtual X display of a
/// fixed size (xvfb-run), in a private D-Bus session with no activatable services (so that gnome-keyring cannot
/// take `org.freedesktop.secrets` first), with throw-away HOME and XDG directories. A person at that display is
/// played by xdotool.
enum DesktopProvider {
  /// The programs every such provider needs besides its own.
  static let tools = ["xvfb-run", "xdotool", "xwininfo", "dbus-run-session", "dbus-send"]

  /// The first of `tools` that is not on PATH, if any.
  static func missing(_ tools: [String]) -> String? {
    tools.first { tool in
      !(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
      }
    }
  }

  /// The exit status of a start script whose provider did not come up.
  static let notStarted: Int32 = 77

  /// Bash: a function `shown PATTERN` that waits up to ten seconds for a window whose line in `xwininfo -root -tree`
  /// contains PATTERN, and a function `owned` that waits as long for `org.freedesktop.secrets` to have an owner.
  static let functions = """
    shown() { for _ in $(seq 200); do xwininfo -root -tree | grep -qF "$1" && return 0; sleep 0.05; done; return 1; }
    owned() {
      for _ in $(seq 200); do
        dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \\
          string:org.freedesktop.secrets 2>/dev/null | grep -q true && return 0
        sleep 0.05
      done; return 1
    }
    """

  /// Bash that runs the probe command line ("$@") on SecretServiceStore without a display (so that a collection
  /// that stays locked reads as `locked`), with the display the person plays at in `PERSON_DISPLAY`, and exits
  /// with its status once `pid` (the provider) is killed: killed, as it may ask about unsaved changes on SIGTERM.
  static func runProbe(killing pid: String) -> String {
    """
    PERSON_DISPLAY=$DISPLAY env -u DISPLAY SPLINT_PROBE_STORE=secret-service "$@"
    status=$?
    kill -KILL \(pid); wait \(pid)
    exit $status
    """
  }

  /// An `sh` step that starts a person in the background, who waits until `condition` (bash, run with the person's
  /// display; ``functions`` are defined) succeeds, and then runs `actions`, xdotool commands each on its own line:
  /// keys chained after `type` in one xdotool call, or typed into a window a chained search found, do not reach a
  /// Qt dialog.
  static func person(after condition: String, _ actions: String) -> String {
    """
    \(functions)
    (export DISPLAY=$PERSON_DISPLAY
     \(condition) && sleep 0.5 && {
    \(actions)
    }) >/dev/null 2>&1 &
    """
  }

  /// What one start of a provider gave: its probe's output, or why the provider did not come up.
  enum Attempt {
    case ran(ProgramOutput)
    case notStarted(String)
  }

  /// Starts a provider afresh with `attempt` until it comes up, at most three times, and returns its probe's output;
  /// nil, with a message naming `provider`, when no start brought it up (it cannot start here). A provider on a
  /// virtual display now and then fails to come up for reasons of its own, where the same start a moment later
  /// works: on Debian 13, wmdocker (KeePassXC's tray) aborted once in a few full runs.
  static func started(_ provider: String, _ attempt: () async throws -> Attempt) async throws -> ProgramOutput? {
    var reasons: [String] = []
    for _ in 0..<3 {
      switch try await attempt() {
      case .ran(let output): return output
      case .notStarted(let why): reasons.append(why)
      }
    }
    print("\(provider): skipped, it did not start its Secret Service here: \(reasons.joined(separator: "\n"))")
    return nil
  }

  /// Runs `start` (bash; `$0` is `argument`, and "$@" the probe's command line followed by `steps`) on a virtual
  /// display in a private session, in `sandbox`, and returns the output, or why the provider did not come up when
  /// `start` exits with ``notStarted``.
  static func run(in sandbox: Sandbox, start: String, argument: String, _ steps: [String]) async throws -> Attempt {
    let root = URL(fileURLWithPath: sandbox.root)
    let services = root.appendingPathComponent("services")
    try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
    let bus = root.appendingPathComponent("bus.conf")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:tmpdir=/tmp</listen>
      <servicedir>\(services.path)</servicedir>
      <auth>EXTERNAL</auth>
      <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
        <allow own="*"/></policy>
    </busconfig>
    """.write(to: bus, atomically: true, encoding: .utf8)
    let output = try await Programs.run(
      [
        "xvfb-run", "-a", "-s", "-screen 0 1024x768x24", "dbus-run-session", "--config-file=\(bus.path)", "--",
        "bash", "-c", functions + "\n" + start, argument, Programs.helper("SecretsProbe"),
      ] + steps,
      environment: sandbox.environment)
    // xvfb-run stops Xvfb without waiting for it: give it the time to remove its lock file in /tmp before the
    // sandbox ends whatever is left.
    for _ in 0..<100 where !Sandbox.processes(naming: sandbox.root).isEmpty {
      try await Task.sleep(for: .milliseconds(20))
    }
    return output.status == notStarted ? .notStarted(output.stderr) : .ran(output)
  }
}
