import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// Files that belong to someone else: root writing a user's file keeps it the user's, and a user never replaces a
/// file they may not write, or could not keep the owner of. Other users need root: these run only as root, in a
/// private mount namespace on a tmpfs at /mnt (never the machine's own), and are skipped otherwise.
@Suite(.enabled("files of other users need root and a mount namespace") { await RootNamespace.isAvailable() })
struct OwnershipTests {
  /// Runs `script` as root in a private mount namespace (see `RootNamespace`), with SettingsProbe at `$probe`.
  func asRoot(_ script: String) async throws -> ProgramOutput {
    try await RootNamespace.run(script, helpers: ["probe": Programs.helper("SettingsProbe")])
  }

  @Test("root writing a user's file keeps its owner, group and mode, and the lock is the user's too")
  func rootKeepsTheOwner() async throws {
    let output = try await asRoot(
      """
      mkdir -m 0700 /mnt/home && chown 1000:1000 /mnt/home && cd /mnt/home
      printf '{"a": 1}' > settings.json && chown 1000:1000 settings.json && chmod 0640 settings.json
      $probe set /mnt/home/settings.json b 2
      stat -c '%n %u:%g %a' settings.json settings.json.lock
      # A lock left by root before (root-only): root gives it to the file's owner.
      chown 0:0 settings.json.lock
      $probe set /mnt/home/settings.json b 3
      stat -c '%n %u:%g %a' settings.json.lock
      # And the user can still write their file.
      as_user 1000 1000 1000 $probe set /mnt/home/settings.json b 4
      tr -d ' \\n' < settings.json; echo
      """)
    #expect(
      output.lines == [
        "settings.json 1000:1000 640", "settings.json.lock 1000:1000 600", "settings.json.lock 1000:1000 600",
        #"{"a":1,"b":4}"#,
      ], "\(output)")
  }

  @Test("a user writing their file in a group they share keeps the group")
  func aSharedGroupIsKept() async throws {
    let output = try await asRoot(
      """
      mkdir -m 0777 /mnt/team && cd /mnt/team
      printf '{"a": 1}' > settings.json && chown 1000:2000 settings.json && chmod 0660 settings.json
      as_user 1000 1000 2000 $probe set /mnt/team/settings.json a 2
      echo "status $?"
      stat -c '%n %u:%g %a' settings.json settings.json.lock
      """)
    #expect(
      output.lines == ["status 0", "settings.json 1000:2000 660", "settings.json.lock 1000:2000 600"], "\(output)")
  }

  @Test("a user who may write the file but not its directory is told that the directory is read-only")
  func aReadOnlyDirectoryIsNamedAsSuch() async throws {
    let output = try await asRoot(
      """
      mkdir -m 0755 /mnt/home && cd /mnt/home
      printf '{"a": 1}' > settings.json && chown 1000:1000 settings.json && chmod 0600 settings.json
      as_user 1000 1000 1000 $probe set /mnt/home/settings.json a 2
      echo "status $?"; cat settings.json; echo; ls -A
      """)
    #expect(
      output.lines.first
        == "error Could not write the settings file /mnt/home/settings.json: its directory /mnt/home does not let this "
        + "user make files in it (Permission denied). The file and the values in memory are as they were. Give this "
        + "user write access to /mnt/home (its owner and mode), or keep the settings in a directory it may write.",
      "\(output)")
    #expect(Array(output.lines.dropFirst()) == ["status 1", #"{"a": 1}"#, "settings.json"])
  }

  @Test("a user who may write the directory but not the file does not replace it")
  func aFileOneMayNotWriteIsRefused() async throws {
    let output = try await asRoot(
      """
      mkdir -m 0777 /mnt/shared && cd /mnt/shared
      printf '{"a": 1}' > settings.json && chown 1001:1001 settings.json && chmod 0644 settings.json
      as_user 1000 1000 1000 $probe set /mnt/shared/settings.json a 2
      echo "status $?"
      stat -c '%u:%g %a' settings.json; cat settings.json; echo; ls -A
      """)
    let path = "/mnt/shared/settings.json"
    #expect(
      output.lines.first
        == "error Could not write the settings file \(path): this user may not write it (Permission denied). The file "
        + "and the values in memory are as they were. Check the owner and mode of \(path) (a settings file belongs to "
        + "its user, mode 0600).", "\(output)")
    #expect(Array(output.lines.dropFirst()) == ["status 1", "1001:1001 644", #"{"a": 1}"#, "settings.json"])
  }

  @Test("a user who may write the file (through its group) but not keep its owner is refused")
  func aFileWhoseOwnerCannotBeKeptIsRefused() async throws {
    let output = try await asRoot(
      """
      mkdir -m 0777 /mnt/group && cd /mnt/group
      printf '{"a": 1}' > settings.json && chown 1001:1000 settings.json && chmod 0664 settings.json
      as_user 1000 1000 1000 $probe set /mnt/group/settings.json a 2
      echo "status $?"
      stat -c '%u:%g %a' settings.json; cat settings.json; echo; ls -A
      """)
    let path = "/mnt/group/settings.json"
    #expect(
      output.lines.first
        == "error Could not write the settings file \(path): \(path) belongs to user 1001 and group 1000: a write "
        + "by user 1000 would give it to user 1000. Write it as its owner, or as root, which keeps the owner. "
        + "The file and the values in memory are as they were.", "\(output)")
    #expect(Array(output.lines.dropFirst()) == ["status 1", "1001:1000 664", #"{"a": 1}"#, "settings.json"])
  }
}
