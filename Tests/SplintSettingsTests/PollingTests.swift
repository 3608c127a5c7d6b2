import Foundation
import SplintSystemCalls
import TestSupport
import Testing

@testable import SplintSettings

/// Where inotify does not see every change (a FUSE or network file system, or no inotify instance left), a file is
/// followed by polling as well, at the store's interval, and the store says so, once.
@Suite struct PollingTests {
  @Test(
    "the file systems inotify does not see every change on are known by their statfs magic, FUSE by its mount",
    arguments: [
      (0x6969, "NFS"), (0x517B, "SMB/CIFS"), (0xFF53_4D42, "SMB/CIFS"), (0xFE53_4D42, "SMB/CIFS"), (0x0102_1997, "9p"),
      (0x5346_414F, "AFS"), (0x6B41_4653, "AFS"), (0x00C3_6400, "Ceph"), (0x0BD0_0BD0, "Lustre"), (0x4750_4653, "GPFS"),
      (0x0116_1970, "GFS2"), (0x7461_636F, "OCFS2"), (0x7375_7245, "Coda"), (0x1366_1366, "OrangeFS"),
      (0x1983_0326, "BeeGFS"), (0x786F_4256, "a VirtualBox shared folder (vboxsf)"),
    ])
  func networkFileSystems(magic: Int, name: String) throws {
    let found = try #require(UnwatchableFileSystem.kind(magic: magic, directory: "/"))
    #expect(found.name == name && !found.isFUSE)
    #expect(found.description == "it is on \(name), where inotify does not see changes made on other machines")
  }

  @Test("local file systems are not polled: ext4, tmpfs, xfs, btrfs, overlayfs, and a path that cannot be looked at")
  func localFileSystems() {
    for magic in [0xEF53, 0x0102_1994, 0x5846_5342, 0x9123_683E, 0x794C_7630] {
      #expect(UnwatchableFileSystem.kind(magic: magic, directory: "/") == nil, "\(magic)")
    }
    #expect(UnwatchableFileSystem.of(FileManager.default.temporaryDirectory.path + "/no/such/dir/file") == nil)
    #expect(UnwatchableFileSystem.of("/proc/self/no-such-file/below") == nil, "procfs is local")
    #expect(UnwatchableFileSystem.of("/" + String(repeating: "a", count: 300)) == nil, "a name too long to look at")
    #expect(UnwatchableFileSystem.mountType(of: "/no/such/directory") == nil)
    // FUSE's magic is told apart by the mount table's type; a local disk's FUSE driver (ntfs-3g: fuseblk) is not
    // polled, since every change to it goes through this mount.
    #expect(UnwatchableFileSystem.kind(magic: 0x6573_5546, directory: "/no/such/directory")?.name == "FUSE")
    #expect(UnwatchableFileSystem.fuse("fuseblk") == nil)
    for (type, name) in [("fuse.sshfs", "FUSE (sshfs)"), ("virtiofs", "FUSE (virtiofs)"), ("fuse", "FUSE")] {
      let found = UnwatchableFileSystem.fuse(type)
      #expect(found?.name == name && found?.isFUSE == true, "\(type)")
      #expect(
        found?.description
          == "it is on \(name), where inotify does not see changes made beneath the mount (or on another machine)")
    }
  }

  /// Runs `script` as root in a private mount namespace with `$probe` (SettingsProbe) and `$splintctl`; nil, with
  /// a message, where namespaces cannot be made.
  func inNamespace(_ script: String) async throws -> ProgramOutput? {
    guard await RootNamespace.isAvailable() else {
      print("skipped: other users and mounts need root and a mount namespace")
      return nil
    }
    return try await RootNamespace.run(
      script, helpers: ["probe": Programs.helper("SettingsProbe"), "splintctl": Programs.helper("splintctl")])
  }

  /// Shell: `arrived START VALUE [FILE]` waits up to 10 s for the line VALUE in FILE (/mnt/out) and prints the
  /// milliseconds since START (nanoseconds, from `now`), or "never".
  static let timing = """
    now() { date +%s%N; }
    arrived() {
      for _ in $(seq 1000); do
        grep -qx "$2" "${3:-/mnt/out}" && { echo $(( ($(now) - $1) / 1000000 )); return 0; }; sleep 0.01
      done; echo never
    }

    """

  @Test("on a FUSE mount (bindfs), a change made beneath it arrives by polling, and one made through it by inotify")
  func fuseMount() async throws {
    guard FileManager.default.fileExists(atPath: "/dev/fuse") else {
      print("skipped: /dev/fuse is not available here, so no FUSE mount")
      return
    }
    // Two followers of the file through the mount: one polls every 2 s, the other only every 10 minutes, so what
    // reaches the second while the test runs came by inotify. The change beneath has not reached it when the first
    // has it by polling (nothing is written through the mount between); it may come with the next change through
    // the mount, whose own writes (the lock, then the rename) each make it read the file.
    let script =
      Self.timing
        + """
        command -v bindfs >/dev/null || { echo "bindfs is not installed"; exit 0; }
        mkdir /mnt/src /mnt/view && bindfs /mnt/src /mnt/view || exit 98
        SPLINT_PROBE_POLL_MS=2000 "$probe" follow /mnt/view/settings.json k 3 /mnt/ready >/mnt/out 2>/mnt/err &
        SPLINT_PROBE_POLL_MS=600000 "$probe" follow /mnt/view/settings.json k 3 /mnt/ready2 >/mnt/slow 2>/dev/null &
        for _ in $(seq 500); do [ -e /mnt/ready ] && [ -e /mnt/ready2 ] && break; sleep 0.01; done
        sleep 2.5  # past the first poll, which looks once whatever it finds
        start=$(now); "$probe" set /mnt/view/settings.json k 1
        echo "through $(arrived $start 1) $(arrived $start 1 /mnt/slow)"
        start=$(now); "$probe" set /mnt/src/settings.json k 2; echo "beneath $(arrived $start 2)"
        echo "slow then $(tr '\\n' ' ' </mnt/slow)end"
        start=$(now); "$probe" set /mnt/view/settings.json k 3
        echo "through $(arrived $start 3) $(arrived $start 3 /mnt/slow)"
        wait
        cat /mnt/out
        echo "slow $(tr '\\n' ' ' </mnt/slow)end"
        echo "told $(grep -c '^watchedByPolling' /mnt/err)"
        grep '^watchedByPolling' /mnt/err
        "$splintctl" path --file /mnt/view/settings.json 2>&1 >/dev/null
        fusermount -u /mnt/view
        """
    guard let output = try await inNamespace(script) else { return }
    if output.stdout.contains("bindfs is not installed") {
      print("skipped: bindfs is not installed (apt-get install bindfs; script/bootstrap does)")
      return
    }
    #expect(output.status == 0, "\(output)")
    let arrivals = output.lines.compactMap { line -> (String, [Int])? in
      let parts = line.split(separator: " ")
      guard parts.count >= 2, ["through", "beneath"].contains(parts[0]) else { return nil }
      return (String(parts[0]), parts.dropFirst().compactMap { Int($0) })
    }
    #expect(arrivals.map(\.0) == ["through", "beneath", "through"], "\(output)")
    // Through the mount, inotify sees a change: it reaches both followers, the one that polls only every 10 minutes
    // too; beneath it, only a poll does (within the interval and FUSE's attribute cache): the 2 s follower has it
    // while the other does not.
    #expect(arrivals.allSatisfy { $0.0 == "beneath" ? $0.1.count == 1 : $0.1.count == 2 }, "each arrived: \(output)")
    #expect(output.lines.contains("slow then absent 1 end"), "inotify only: \(output)")
    #expect(
      output.lines.contains("slow absent 1 3 end") || output.lines.contains("slow absent 1 2 3 end"), "\(output)")
    #expect(output.lines.contains("told 1"), "told once: \(output)")
    #expect(
      output.stdout.contains(
        "watchedByPolling: Changes other programs make to the settings file /mnt/view/settings.json are found by "
          + "looking at it every 2 seconds, so they may take that long to arrive: it is on FUSE, where inotify does "
          + "not see changes made beneath the mount"), "\(output)")
    #expect(output.stdout.contains("splintctl: note: changes other programs make to this file are found by polling"))
  }

  @Test("a user with no inotify instance left (another process of theirs holds them all): changes arrive by polling")
  func noInotifyInstanceLeft() async throws {
    // A user ID of this test's own, whose every inotify instance (fs.inotify.max_user_instances) a holder takes.
    let user = String(300_000 + Int(getpid()) % 100_000)
    let script =
      Self.timing
        + """
        limit=$(cat /proc/sys/fs/inotify/max_user_instances)
        ulimit -n $((limit + 64)) 2>/dev/null || ulimit -n 65536
        mkdir -m 0700 /mnt/w && chown \(user):\(user) /mnt/w
        as_user \(user) \(user) \(user) \(Programs.python) -c '
        import ctypes, os, sys, time
        libc = ctypes.CDLL(None, use_errno=True)
        held = []
        while libc.inotify_init1(0o2000000) >= 0:
            held.append(1)
        print("held", len(held), "errno", ctypes.get_errno(), flush=True)
        open("/mnt/w/held", "w").close()
        time.sleep(60)
        ' >/mnt/held.out 2>&1 &
        holder=$!
        for _ in $(seq 1000); do [ -e /mnt/w/held ] && break; sleep 0.01; done
        cat /mnt/held.out
        SPLINT_PROBE_POLL_MS=300 as_user \(user) \(user) \(user) "$probe" follow /mnt/w/settings.json k 2 /mnt/w/ready \
          >/mnt/out 2>/mnt/err &
        follower=$!
        for _ in $(seq 500); do [ -e /mnt/w/ready ] && break; sleep 0.01; done
        start=$(now); as_user \(user) \(user) \(user) "$probe" set /mnt/w/settings.json k 1; echo "first $(arrived $start 1)"
        start=$(now); as_user \(user) \(user) \(user) "$probe" set /mnt/w/settings.json k 2; echo "second $(arrived $start 2)"
        wait $follower
        kill $holder
        echo "told $(grep -c '^watchedByPolling' /mnt/err)"
        grep '^watchedByPolling' /mnt/err
        """
    guard let output = try await inNamespace(script) else { return }
    #expect(output.status == 0, "\(output)")
    #expect(output.lines.first?.hasPrefix("held ") == true && output.lines.first?.hasSuffix(" errno 24") == true)
    let arrivals = output.lines.filter { $0.hasPrefix("first ") || $0.hasPrefix("second ") }
    #expect(arrivals.count == 2 && !arrivals.contains { $0.hasSuffix("never") }, "\(output)")
    #expect(output.lines.contains("told 1"), "told once: \(output)")
    #expect(
      output.stdout.contains(
        "are found by looking at it every 0.3 seconds, so they may take that long to arrive: this process has no "
          + "inotify instance: its user's limit (fs.inotify.max_user_instances = "), "\(output)")
    #expect(output.stdout.contains(") is used up. Raise the limit"), "\(output)")
  }
}
