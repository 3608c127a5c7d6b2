#if SplintFleet
  import Foundation
  import TestSupport
  import Testing

  /// A local user against the machine's system follower: holding locks on whatever of the copy's directory they can
  /// open, and hard-linking the system copy into their own. As root in a private mount namespace on a tmpfs, with user
  /// 1000 as the attacker (Tests/Attacker), against a real etcd on loopback. Skipped where this process is not root or
  /// may not make mount namespaces.
  @Suite(
    .enabled("other users need root and a mount namespace") { await RootNamespace.isAvailable() }, .serialized,
    .startsServers)
  struct HostileNeighbourTests {
    @Test(
      "a user holds a shared lock on every file of the copies it can open, and hard-links the copy: it gains nothing")
    func locksAndLinks() async throws {
      let etcd = try await LocalEtcd.start(size: 1)
      try await etcd.put("/splint/app/k", "1")
      try await etcd.put("/splint/app/$enforced", #"["k"]"#)
      let endpoint = etcd.endpoints[0]
      let output = try await RootNamespace.run(
        """
        export ETCDCTL_API=3
        mkdir -m 0755 /mnt/fleet /mnt/home && mkdir -m 0700 /mnt/home/u /mnt/config && chown 1000:1000 /mnt/home/u
        follow() {
          SPLINT_FLEET_DIRECTORY=/mnt/fleet $splintctl fleet follow --suite app --endpoints \(endpoint) 2>>/mnt/log &
          follower=$!
        }
        value() { SPLINT_FLEET_DIRECTORY=${1:-/mnt/fleet} XDG_CONFIG_HOME=/mnt/config $splintctl get --suite app k 2>&1; }
        wait_for() {
          for i in $(seq 600); do [ "$(value)" = "$1" ] && return 0; sleep 0.05; done
          echo "no $1 in 30 s: $(value)"; cat /mnt/log; return 1
        }
        follow; wait_for 1; kill -TERM $follower; wait $follower; echo "first follower ended $?"
        stat -c 'lock %a %U' /mnt/fleet/app.json.follower
        # User 1000 holds a shared lock on every file of the copies' directory it may open, and on each new one.
        setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker hold-shared /mnt/fleet > /mnt/held 2>&1 & holder=$!
        while ! grep -q holding /mnt/held; do sleep 0.01; done; cat /mnt/held
        follow
        etcdctl --endpoints \(endpoint) put /splint/app/k 2 > /dev/null
        wait_for 2 && echo "followed with the locks held"
        as_user 1000 1000 1000 env SPLINT_FLEET_DIRECTORY=/mnt/fleet $splintctl fleet status --suite app | grep '^state'
        echo "status $?"
        # A hard link to the system copy in the user's own directory (fs.protected_hardlinks=0 lets a user make one).
        mkdir /mnt/home/u/fleet && ln /mnt/fleet/app.json /mnt/home/u/fleet/app.json && chown 1000:1000 /mnt/home/u/fleet
        mkdir /mnt/config/app && printf '{"k": 0}' > /mnt/config/app/settings.json
        for directory in /mnt/fleet /mnt/home/u/fleet; do
          SPLINT_FLEET_DIRECTORY=$directory XDG_CONFIG_HOME=/mnt/config $splintctl get --suite app k --origin | tr '\\n' ' '
          echo
        done
        as_user 1000 1000 1000 env SPLINT_FLEET_DIRECTORY=/mnt/fleet $splintctl fleet status --suite app | grep '^copy'
        etcdctl --endpoints \(endpoint) put /splint/app/k 3 > /dev/null
        wait_for 3 && echo "followed past the link"
        kill $holder; kill -TERM $follower; wait $follower; echo "second follower ended $?"
        """,
        helpers: ["attacker": Programs.helper("Attacker"), "splintctl": Programs.helper("splintctl")])
      #expect(output.lines.contains("first follower ended 0"), "\(output)")
      #expect(output.lines.contains("lock 600 root"), "only the follower's user may open its lock: \(output)")
      let held = output.lines.first { $0.hasPrefix("holding ") }.flatMap { Int($0.dropFirst(8)) }
      #expect((held ?? 0) >= 2, "the directory and the copy at least: \(output)")
      #expect(output.lines.contains("followed with the locks held"), "\(output)")
      #expect(output.lines.contains { $0.hasPrefix("state: following since ") }, "\(output)")
      #expect(output.lines.contains("status 0"), "the user sees the follower: \(output)")
      #expect(output.lines.contains("2 fleet /mnt/fleet/app.json, enforced "), "\(output)")
      #expect(
        output.lines.contains("0 user file /mnt/config/app/settings.json "), "the link enforces nothing: \(output)")
      #expect(output.lines.contains("copy: /mnt/fleet/app.json (a system copy: it may enforce keys)"), "\(output)")
      #expect(output.lines.contains("followed past the link"), "\(output)")
      #expect(output.lines.contains("second follower ended 0"), "\(output)")
      await etcd.stopAll()
    }
  }
#endif
