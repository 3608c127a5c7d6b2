import Foundation
import Synchronization
import TestSupport
import splintctl

/// A throw-away D-Bus session with its own HOME and XDG directories, in which `SecretsProbe` runs a list of steps.
///
/// Tests that lock, restart, stop or remove the Secret Service use one each, so that nothing they do reaches the
/// keyring the other tests share (or the developer's own).
struct PrivateSession {
  /// What the session starts with.
  enum Setup {
    /// gnome-keyring running, with an unlocked login keyring (the password is ``PrivateSession/password``).
    case unlockedKeyring
    /// A session bus on which gnome-keyring is activatable but has no login keyring.
    case noLoginKeyring
    /// ``noLoginKeyring`` on a virtual X display, where gnome-keyring's prompter (gcr's) shows its prompts: a desktop
    /// whose user logs in automatically, so that no login keyring was made. A person at the display is played by
    /// ``Shell/answerPrompter(typing:twice:)``.
    case noLoginKeyringOnADisplay
    /// A session bus with no Secret Service provider at all.
    case noProvider
    /// A session bus on which the Secret Service is activatable but its program fails to start.
    case brokenProvider
    /// No session bus.
    case noBus
    /// A session bus address whose socket accepts connections but never answers, as a wedged bus daemon.
    case wedgedBus
  }

  static let password = "private-session-password"

  /// How many sessions on a display this process has started.
  private static let displays = Mutex(0)

  /// Shell commands for `sh` steps, acting on this session's gnome-keyring.
  enum Shell {
    /// The process ID of the session's Secret Service provider.
    static let providerPID = """
      dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \
      org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '{print $2}'
      """
    static let lock = "secret-tool lock --collection=login >/dev/null 2>&1; true"
    static let unlock = replacing(
      "echo -n \(password) | gnome-keyring-daemon --replace --unlock --components=secrets")
    static let restartLocked = replacing("gnome-keyring-daemon --replace --components=secrets --daemonize")
    static let freeze = "kill -STOP $(\(providerPID))"
    static let thaw = "kill -CONT $(\(providerPID))"
    static let kill =
      "kill $(\(providerPID)); while dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets | grep -q true; do sleep 0.05; done"

    /// Records the Secret Service calls that carry secrets (CreateItem, SetSecret) into `$XDG_RUNTIME_DIR/bus.log`,
    /// from when this returns until the session ends.
    static let monitorSecretCalls = """
      dbus-monitor --session "interface=org.freedesktop.Secret.Collection,member=CreateItem" \
        "interface=org.freedesktop.Secret.Item,member=SetSecret" >"$XDG_RUNTIME_DIR/bus.log" 2>&1 &
      for _ in $(seq 250); do grep -q NameAcquired "$XDG_RUNTIME_DIR/bus.log" 2>/dev/null && break; sleep 0.02; done
      """

    /// What the stand-in prompter (see ``prompter(_:)``) does when gnome-keyring asks it to show a prompt.
    enum PrompterAction: String {
      /// Kills gnome-keyring, the way a provider crashes while its prompt is up.
      case killProvider = "kill"
      /// Unlocks the login keyring behind the prompt's back (as another program can), then refuses to show the
      /// prompt, so that gnome-keyring dismisses it.
      case unlockThenRefuse = "unlock"
      /// Never answers, as a prompt nobody looks at: this and every later prompt stays up until it is dismissed.
      case hang = "hang"
    }

    /// Starts a stand-in for gnome-keyring's prompter (`org.gnome.keyring.SystemPrompter`, the process that shows
    /// its unlock prompts), which answers the next prompt gnome-keyring opens with `action` and then exits (but for
    /// ``PrompterAction/hang``). Returns once it owns its bus name. Prompts after that fail as they do headless: the
    /// real prompter finds no display.
    static func prompter(_ action: PrompterAction) -> String {
      let script =
        GnomeKeyringUnlock.python + """
          import os, signal, sys
          from jeepney import HeaderFields, MessageType, new_error
          from jeepney.bus_messages import message_bus
          from jeepney.io.blocking import open_dbus_connection
          from jeepney.wrappers import unwrap_msg

          with open_dbus_connection(bus='SESSION') as bus:
              unwrap_msg(bus.send_and_get_reply(message_bus.RequestName('org.gnome.keyring.SystemPrompter')))
              print('ready', flush=True)
              while True:
                  call = bus.receive()
                  fields = call.header.fields
                  if call.header.message_type == MessageType.method_call and fields.get(HeaderFields.member) == 'BeginPrompting':
                      break
              keyring = fields[HeaderFields.sender]
              if sys.argv[1] == 'hang':
                  while True:
                      bus.receive()
              if sys.argv[1] == 'kill':
                  pid, = unwrap_msg(bus.send_and_get_reply(message_bus.GetConnectionUnixProcessID(keyring)))
                  os.kill(pid, signal.SIGKILL)
              else:
                  unlock_login(bus, keyring, '\(password)')
                  bus.send(new_error(call, 'org.freedesktop.DBus.Error.Failed', 's', ('no prompt shown',)))
          """
      return """
        \(Programs.python) - \(action.rawValue) >"$XDG_RUNTIME_DIR/prompter.log" 2>&1 <<'PY' &
        \(script)
        PY
        for _ in $(seq 250); do grep -q ready "$XDG_RUNTIME_DIR/prompter.log" 2>/dev/null && exit 0; sleep 0.02; done
        cat "$XDG_RUNTIME_DIR/prompter.log" >&2; exit 1
        """
    }

    /// The programs a session on a display needs, besides gnome-keyring: the first one missing, if any.
    static let missingForADisplay = DesktopProvider.missing(DesktopProvider.tools)

    /// An `sh` step that starts a person at the display who, once gnome-keyring's prompter shows its window, types
    /// `password` and presses Return: in both of its fields (`twice`) when it asks for a new keyring's password, in
    /// its one field when it asks to unlock one.
    static func answerPrompter(typing password: String, twice: Bool) -> String {
      let second = twice ? "xdotool key Tab; xdotool type --delay 20 '\(password)'" : ""
      // The prompter's dialog is its one visible window (it has no name); typed into once it has the focus.
      return """
        (window=$(timeout 30 xdotool search --sync --onlyvisible --class prompter | head -n 1)
         xdotool windowfocus --sync "$window"; sleep 0.3
         xdotool type --delay 20 '\(password)'; \(second)
         xdotool key Return) >/dev/null 2>&1 &
        """
    }

    /// Locks the collection the `default` alias points to.
    static let lockDefault = """
      dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \\
        org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/aliases/default >/dev/null
      """

    /// Prints the label of the collection the `default` alias points to, or fails when it points nowhere.
    static let defaultLabel = """
      label=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.secrets \\
        /org/freedesktop/secrets/aliases/default org.freedesktop.DBus.Properties.Get \\
        string:org.freedesktop.Secret.Collection string:Label) || exit 1
      echo "$label" | sed 's/^ *variant *//'
      """

    /// Succeeds when the monitored calls (see ``monitorSecretCalls``) contain the text `needle`.
    static func monitored(_ needle: String) -> String { "grep -qF '\(needle)' \"$XDG_RUNTIME_DIR/bus.log\"" }

    /// Runs `command`, which replaces the provider, and waits until the new one owns the bus name.
    private static func replacing(_ command: String) -> String {
      """
      old=$(\(providerPID)); \(command) >/dev/null 2>&1
      for _ in $(seq 200); do new=$(\(providerPID) 2>/dev/null); [ -n "$new" ] && [ "$new" != "$old" ] && break; sleep 0.05; done
      """
    }
  }

  /// Runs `SecretsProbe` with `steps` in a new session set up as `setup`, and returns its output lines.
  ///
  /// - Parameter display: The `DISPLAY` the probe sees; none by default, as in CI.
  /// - Parameter environment: More variables for the probe (SPLINT_CREDENTIAL_STORES, CREDENTIALS_DIRECTORY).
  static func probe(
    _ setup: Setup, display: String? = nil, environment extra: [String: String] = [:], _ steps: [String]
  ) async throws -> ProgramOutput {
    // The directories, the environment and the end are those of `splintctl sandbox`.
    let sandbox = try Sandbox(home: true)
    defer { sandbox.end() }
    let directory = URL(fileURLWithPath: sandbox.root)
    var environment = sandbox.environment
    // The probe's own environment: the session's, plus the display under test.
    let variables = (display.map { ["DISPLAY": $0] } ?? [:]).merging(extra) { $1 }
    let probe =
      ["env"] + variables.sorted { $0.key < $1.key }.map { "\($0)=\($1)" } + [Programs.helper("SecretsProbe")] + steps
    switch setup {
    case .unlockedKeyring:
      let start = "echo -n \(password) | gnome-keyring-daemon --unlock --components=secrets >/dev/null"
      return try await Programs.run(
        ["dbus-run-session", "--", "bash", "-c", "\(start) && exec \"$@\"", "session"] + probe,
        environment: environment)
    case .noLoginKeyring:
      return try await Programs.run(["dbus-run-session", "--"] + probe, environment: environment)
    case .noLoginKeyringOnADisplay:
      // No accessibility bus for the prompter (GTK's), whose registry would write to the probe's output.
      environment["NO_AT_BRIDGE"] = "1"
      // A display number of its own, above those `xvfb-run -a` picks (99 up), which two runs starting together may
      // both pick: KeePassXC's and KWallet's suites, beside these, run their tray on such a display.
      let display =
        200 + Int(getpid() % 100) * 10
        + Self.displays.withLock { count in
          count += 1
          return count % 10
        }
      let output = try await Programs.run(
        ["xvfb-run", "-n", "\(display)", "-s", "-screen 0 1024x768x24", "dbus-run-session", "--"] + probe,
        environment: environment)
      // xvfb-run stops Xvfb without waiting for it: give it the time to remove its lock file in /tmp.
      for _ in 0..<100 where !Sandbox.processes(naming: sandbox.root).isEmpty {
        try await Task.sleep(for: .milliseconds(20))
      }
      return output
    case .noProvider, .brokenProvider:
      let services = directory.appendingPathComponent("services")
      try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
      if case .brokenProvider = setup {
        let service = "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/bin/false\n"
        try service.write(
          to: services.appendingPathComponent("org.freedesktop.secrets.service"), atomically: true, encoding: .utf8)
      }
      let configuration = directory.appendingPathComponent("bus.conf")
      try bus(serviceDirectory: services.path).write(to: configuration, atomically: true, encoding: .utf8)
      return try await Programs.run(
        ["dbus-run-session", "--config-file=\(configuration.path)", "--"] + probe, environment: environment)
    case .noBus:
      environment["XDG_RUNTIME_DIR"] = "/nonexistent"
      return try await Programs.run(probe, environment: environment)
    case .wedgedBus:
      let socket = directory.appendingPathComponent("wedged-bus").path
      environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(socket)"
      let listen =
        "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(600)"
      let start = "\(Programs.python) -c '\(listen)' \(socket) & while [ ! -S \(socket) ]; do sleep 0.02; done"
      return try await Programs.run(
        ["bash", "-c", "\(start); exec \"$@\"", "session"] + probe, environment: environment)
    }
  }

  /// A session bus configuration whose only activatable services are those in `serviceDirectory`.
  private static func bus(serviceDirectory: String) -> String {
    """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:tmpdir=/tmp</listen>
      <servicedir>\(serviceDirectory)</servicedir>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """
  }
}
