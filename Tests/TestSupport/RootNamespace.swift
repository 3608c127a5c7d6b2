import Foundation

/// Root in a private mount namespace with a tmpfs at /mnt: where tests play other users, attackers and victims
/// among them, with real processes, without touching the machine's own /etc, /home or /dev.
public enum RootNamespace {
  /// Whether this process is root and may make mount namespaces; the tests that need it are skipped otherwise.
  public static func isAvailable() async -> Bool {
    guard getuid() == 0 else { return false }
    return (try? await Programs.run(["unshare", "--mount", "true"]))?.status == 0
  }

  /// Runs `script` with sh as root in a new mount namespace with an empty tmpfs (mode 0755) at /mnt. Each of
  /// `helpers` (a name: a program's path) is copied to /mnt/NAME first, where every user may run it, and the
  /// script finds it as `$NAME`.
  ///
  /// The script may call `as_user UID GID GROUPS COMMAND...`, which runs a command as that user with those
  /// supplementary groups (comma-separated), and keeps the coverage profile a probe writes as that user.
  public static func run(_ script: String, helpers: [String: String] = [:]) async throws -> ProgramOutput {
    let copies = helpers.keys.sorted().map { name in
      "cp \"$(printenv HELPER_\(name))\" /mnt/\(name) || exit 99\n\(name)=/mnt/\(name)\n"
    }
    let prelude = """
      set -u
      mount -t tmpfs -o mode=0755 tmpfs /mnt && mkdir -m 1777 /mnt/profiles || exit 99
      \(copies.joined())
      profiles=$(dirname "${LLVM_PROFILE_FILE:-/nonexistent/x}")
      as_user() {
        user=$1 group=$2 groups=$3; shift 3
        setpriv --reuid="$user" --regid="$group" --groups="$groups" env LLVM_PROFILE_FILE=/mnt/profiles/%p.profraw "$@"
        status=$?
        [ -d "$profiles" ] && cp /mnt/profiles/*.profraw "$profiles/" 2>/dev/null
        return $status
      }

      """
    var environment = ProcessInfo.processInfo.environment
    for (name, path) in helpers { environment["HELPER_\(name)"] = path }
    return try await Programs.run(
      ["unshare", "--mount", "sh", "-c", prelude + script], environment: environment, seconds: 300)
  }
}
