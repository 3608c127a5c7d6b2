import Foundation
import TestSupport
import Testing

/// A user who controls the directory a root process takes its fleet copies from (`SPLINT_FLEET_DIRECTORY`,
/// `XDG_STATE_HOME` or `HOME` kept by `sudo -E`, a volume, a unit's `Environment=`) must not make root take their copy
/// for a system copy: not by swapping it with a link to a root-owned file while root reads. As root in a private mount
/// namespace on a tmpfs, with user 1000 as the attacker (Tests/Attacker), as the file-safety suite does. Skipped where
/// this process is not root or may not make mount namespaces.
@Suite(.enabled("other users need root and a mount namespace") { await RootNamespace.isAvailable() }, .serialized)
struct FleetPrivilegeTests {
  /// A copy's description, as a follower writes it.
  static let description =
    #""$fleet": {"engine": "etcd", "cluster": "1", "revision": 1, "state": "following", "since": "2026-01-01T00:00:00Z"}"#

  @Test("a user swaps a copy that enforces k with a link to root's system copy under a root reader: zero wins")
  func swappedCopyUnderARootReader() async throws {
    let output = try await RootNamespace.run(
      """
      mkdir -m 0755 /mnt/system
      printf '{\(Self.description), "k": "fleet"}' > /mnt/system/app.json && chmod 0644 /mnt/system/app.json
      mkdir -m 0700 /mnt/root && mkdir -p /mnt/root/config/app && printf '{"k": "own"}' > /mnt/root/config/app/settings.json
      for fleet in /mnt/home/u/fleet /mnt/home/u/.local/state/splint-fleet; do
        mkdir -p $fleet
        printf '{\(Self.description), "$enforced": ["k"], "k": "theirs"}' > $fleet/app.json
        ln -s /mnt/system/app.json $fleet/link
      done
      chown -hR 1000:1000 /mnt/home/u
      race() {  # DIRECTORY, then the environment that leads root there
        directory=$1; shift
        nice -n 19 setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker exchange $directory/app.json \\
          $directory/link > /mnt/swap 2>&1 & swapper=$!
        while ! grep -q swapping /mnt/swap; do sleep 0.01; done
        env "$@" XDG_CONFIG_HOME=/mnt/root/config $probe fleet-race app k '"own"' 1500
        for i in $(seq 40); do env "$@" XDG_CONFIG_HOME=/mnt/root/config $splintctl get --suite app k --origin; done \\
          | sort | uniq -c | sed 's/^ *//'
        kill $swapper; wait $swapper 2>/dev/null; cat /mnt/swap
      }
      race /mnt/home/u/fleet SPLINT_FLEET_DIRECTORY=/mnt/home/u/fleet
      race /mnt/home/u/.local/state/splint-fleet -u SPLINT_FLEET_DIRECTORY -u XDG_STATE_HOME HOME=/mnt/home/u
      cat /mnt/root/config/app/settings.json; echo
      """,
      helpers: [
        "probe": Programs.helper("SettingsProbe"), "attacker": Programs.helper("Attacker"),
        "splintctl": Programs.helper("splintctl"),
      ])
    let races = output.lines.filter { $0.hasPrefix("reads ") }
    #expect(
      races == ["reads 1500 enforced 0 other 0 refused 0", "reads 1500 enforced 0 other 0 refused 0"], "\(output)")
    // splintctl get --origin, 40 times each: always root's own value, from root's own file.
    let origins = output.lines.filter { $0.first?.isNumber == true && !$0.hasPrefix("reads") }
    #expect(
      origins == ["40 \"own\"", "40 user file /mnt/root/config/app/settings.json"]
        + ["40 \"own\"", "40 user file /mnt/root/config/app/settings.json"], "\(output)")
    let swaps = output.lines.filter { $0.hasPrefix("swapped ") }.compactMap { Int($0.dropFirst(8)) }
    #expect(swaps.count == 2 && swaps.allSatisfy { $0 > 1000 }, "the attacker swapped all along: \(output)")
    #expect(output.lines.last == #"{"k": "own"}"#, "\(output)")
  }
}
