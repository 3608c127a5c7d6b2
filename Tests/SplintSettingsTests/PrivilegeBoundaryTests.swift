import Foundation
import TestSupport
import Testing

/// An unprivileged user who controls the directory of a settings file that root (or another user) reads or writes
/// must not be able to steer it into files that are not theirs: overwrite, create, disclose or take them. Each test
/// is one class of the attack, made with real processes as root in a private mount namespace on a tmpfs (never the
/// machine's own files), with user 1000 ("u") as the attacker and root, or user 1001, as the victim; the attacker
/// program is Tests/Attacker. Skipped where this process is not root or may not make mount namespaces. One test at
/// a time: each starts a burst of processes, and the other suites' timing-sensitive tests run beside them.
@Suite(.enabled("other users need root and a mount namespace") { await RootNamespace.isAvailable() }, .serialized)
struct PrivilegeBoundaryTests {
  /// Runs `script` as root in a private mount namespace (see `RootNamespace`), with `$probe` (SettingsProbe),
  /// `$attacker` and `$splintctl`, after making root's private files and the user's home:
  /// - /mnt/root (root, 0700) holds victim.json (root, 0600), `{"secret": "root-only"}`;
  /// - /mnt/home/u (user 1000, 0700) holds .config/app (user 1000), with no settings file yet.
  func attack(_ script: String) async throws -> ProgramOutput {
    let setUp = """
      mkdir -m 0700 /mnt/root && printf '{"secret": "root-only"}' > /mnt/root/victim.json
      chmod 0600 /mnt/root/victim.json
      mkdir -p /mnt/home/u/.config/app && chown -R 1000:1000 /mnt/home/u && chmod 0700 /mnt/home/u
      app=/mnt/home/u/.config/app
      # What root's files are now: owner, mode and content of each, and nothing else there.
      root_files() { for f in /mnt/root/* /mnt/root/.[!.]*; do [ -e "$f" ] && stat -c '%n %u:%g %a %s' "$f"; done; \
        cat /mnt/root/victim.json; echo; }

      """
    return try await RootNamespace.run(
      setUp + script,
      helpers: [
        "probe": Programs.helper("SettingsProbe"), "attacker": Programs.helper("Attacker"),
        "splintctl": Programs.helper("splintctl"),
      ])
  }

  /// root's files as `root_files` prints them when nothing has touched them.
  let untouched = ["/mnt/root/victim.json 0:0 600 23", #"{"secret": "root-only"}"#]

  @Test("a link to root's file: root neither writes it, nor prints it with list or get")
  func linkToARootFile() async throws {
    let output = try await attack(
      """
      ln -s /mnt/root/victim.json $app/settings.json && chown -h 1000:1000 $app/settings.json
      $probe set $app/settings.json theme '"$(id >/mnt/root/pwned)"'; echo "status $?"
      $splintctl list --file $app/settings.json 2>&1; echo "status $?"
      $splintctl get --file $app/settings.json secret 2>&1; echo "status $?"
      root_files
      """)
    let path = "/mnt/home/u/.config/app/settings.json"
    #expect(output.lines.first?.hasPrefix("error The settings file \(path) is not used: ") == true, "\(output)")
    #expect(output.lines.first?.contains("/mnt/root/victim.json") == true, "names where the link leads")
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 1", "status 70", "status 70"], "\(output)")
    #expect(output.stdout.components(separatedBy: "root-only").count == 2, "only root_files shows it: \(output)")
    #expect(Array(output.lines.suffix(2)) == untouched, "\(output)")
  }

  @Test("root follows the user's own links in the user's tree, absolute and relative, and keeps the files theirs")
  func theUsersOwnLinksAreFollowed() async throws {
    let output = try await attack(
      """
      mkdir /mnt/home/u/dotfiles && printf '{"a": 1}' > /mnt/home/u/dotfiles/app.json
      chown -R 1000:1000 /mnt/home/u/dotfiles
      ln -s /mnt/home/u/dotfiles/app.json $app/settings.json && chown -h 1000:1000 $app/settings.json
      $probe set $app/settings.json b 2; echo "status $?"
      ln -s ../../dotfiles/app.json $app/relative.json && chown -h 1000:1000 $app/relative.json
      $probe set $app/relative.json c 3; echo "status $?"
      stat -c '%n %u:%g' /mnt/home/u/dotfiles/app.json /mnt/home/u/dotfiles/app.json.lock
      tr -d ' \n' < /mnt/home/u/dotfiles/app.json; echo
      [ -L $app/settings.json ] && [ -L $app/relative.json ] && echo "still links"
      """)
    #expect(
      output.lines == [
        "status 0", "status 0", "/mnt/home/u/dotfiles/app.json 1000:1000",
        "/mnt/home/u/dotfiles/app.json.lock 1000:1000", #"{"a":1,"b":2,"c":3}"#, "still links",
      ], "\(output)")
  }

  @Test("one root process with root's own store open: a user's link to that file gets no share of it")
  func aUsersLinkSharesNothingWithRootsOwnStore() async throws {
    let output = try await attack(
      """
      ln -s /mnt/root/victim.json $app/settings.json && chown -h 1000:1000 $app/settings.json
      $probe beside /mnt/root/victim.json $app/settings.json secret | sed 's/used: .*/used: /'
      root_files
      """)
    #expect(
      Array(output.lines.prefix(3)) == [
        "The settings file \(Self.app)/settings.json is not used: ", "{}",
        "error The settings file \(Self.app)/settings.json is not used: ",
      ], "\(output)")
    #expect(Array(output.lines.suffix(2)) == untouched, "\(output)")
  }

  @Test("a link to a name that does not exist in root's tree: root creates nothing there, file or directory")
  func linkToANewRootName() async throws {
    let output = try await attack(
      """
      ln -s /mnt/root/cron.d/job $app/settings.json && chown -h 1000:1000 $app/settings.json
      $probe set $app/settings.json key '"value"'; echo "status $?"
      ln -sf /mnt/root/new.json $app/settings.json && chown -h 1000:1000 $app/settings.json
      $probe set $app/settings.json key '"value"'; echo "status $?"
      root_files
      """)
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 1", "status 1"], "\(output)")
    #expect(output.lines.filter { $0.hasPrefix("error ") }.count == 2, "\(output)")
    #expect(Array(output.lines.suffix(2)) == untouched, "no cron.d, no new.json: \(output)")
  }

  @Test("a directory on the path made a link into root's tree, absolute or relative: refused")
  func directoryLinkIntoRootsTree() async throws {
    let output = try await attack(
      """
      rmdir $app && ln -s /mnt/root $app && chown -h 1000:1000 $app
      $probe set $app/victim.json secret '"mine"'; echo "status $?"
      rm $app && ln -s ../../../root $app && chown -h 1000:1000 $app
      $probe set $app/victim.json secret '"mine"'; echo "status $?"
      $splintctl list --file $app/victim.json 2>&1; echo "status $?"
      root_files
      """)
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 1", "status 1", "status 70"], "\(output)")
    #expect(Array(output.lines.suffix(2)) == untouched, "\(output)")
    #expect(output.stdout.components(separatedBy: "root-only").count == 2, "list printed nothing of it: \(output)")
  }

  @Test("directories swapped under thousands of root writes: no root file touched, no stray file, all the user's")
  func swappedDirectoriesUnderRootWrites() async throws {
    let output = try await attack(
      """
      printf '{"secret": "root-only"}' > /mnt/root/settings.json && chmod 0600 /mnt/root/settings.json
      cd /mnt/home/u
      mkdir a b && printf '{"n": 0}' > a/settings.json && chmod 0666 a/settings.json
      ln -s /mnt/root/settings.json b/settings.json    # b holds a link to root's file
      ln -s /mnt/root c                                 # c is a link to root's directory
      chown -hR 1000:1000 /mnt/home/u
      # All three at the lowest priority: the tests run side by side on few cores, and three tight loops would
      # starve the others (script/torture runs the same attack alone, at full speed).
      nice -n 19 setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker exchange a b > /mnt/swap1 2>&1 & first=$!
      nice -n 19 setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker exchange b c > /mnt/swap2 2>&1 & second=$!
      sleep 0.2
      nice -n 19 $probe try-writes /mnt/home/u/a/settings.json n 3000 | head -1
      kill $first $second; wait $first $second 2>/dev/null
      cat /mnt/swap1 /mnt/swap2
      echo "not the user's: $(find /mnt/home/u ! -user 1000 | wc -l)"
      echo "temporary files: $(find /mnt/home/u /mnt/root -name '.*.tmp' | wc -l)"
      stat -c '%n %u:%g %a' /mnt/root/settings.json; cat /mnt/root/settings.json; echo
      root_files
      """)
    let counts = output.lines.first { $0.hasPrefix("written ") }?.split(separator: " ")
    #expect(counts.map { Int($0[1])! + Int($0[3])! } == 3000, "\(output)")
    #expect(output.lines.filter { $0 == "swapping" }.count == 2, "both attackers ran: \(output)")
    #expect(output.lines.contains("not the user's: 0"), "\(output)")
    #expect(output.lines.contains("temporary files: 0"), "\(output)")
    #expect(output.lines.contains("/mnt/root/settings.json 0:0 600"), "\(output)")
    #expect(output.lines.filter { $0 == #"{"secret": "root-only"}"# }.count == 2, "\(output)")
    #expect(Array(output.lines.suffix(3)) == ["/mnt/root/settings.json 0:0 600 23"] + untouched, "\(output)")
  }

  @Test("a lock file hard-linked to root's file, or of a third user: refused; root's file is not given away")
  func lockFilesThatAreNotTheFiles() async throws {
    let output = try await attack(
      """
      printf '{"a": 1}' > $app/settings.json && chown 1000:1000 $app/settings.json
      # The hard link root's old copy of a corrupt file made (or a user makes, where fs.protected_hardlinks is 0).
      ln /mnt/root/victim.json $app/settings.json.lock
      $probe set $app/settings.json b 2; echo "status $?"
      rm $app/settings.json.lock && touch $app/settings.json.lock && chown 1001:1001 $app/settings.json.lock
      $probe set $app/settings.json b 2; echo "status $?"
      stat -c '%n %u:%g' $app/settings.json.lock; cat $app/settings.json; echo
      root_files
      """)
    let lock = "/mnt/home/u/.config/app/settings.json.lock"
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 1", "status 1"], "\(output)")
    let errors = output.lines.filter { $0.hasPrefix("error ") }
    #expect(errors.count == 2, "\(output)")
    #expect(errors.first?.contains("\(lock) has 2 links") == true, "\(output)")
    #expect(errors.last?.contains("\(lock) belongs to user 1001") == true, "\(output)")
    #expect(output.lines.contains("\(lock) 1001:1001"), "\(output)")
    #expect(output.lines.contains(#"{"a": 1}"#), "\(output)")
    #expect(Array(output.lines.suffix(2)) == ["/mnt/root/victim.json 0:0 600 23", #"{"secret": "root-only"}"#])
  }

  @Test("root's file hard-linked into a directory anyone may write: neither printed nor written")
  func hardLinksWhereOthersMayWrite() async throws {
    let output = try await attack(
      """
      mkdir -m 0777 /mnt/shared
      # The link a user could make where fs.protected_hardlinks is 0 (made by root here, where it is 1).
      ln /mnt/root/victim.json /mnt/shared/settings.json
      $splintctl list --file /mnt/shared/settings.json 2>&1; echo "status $?"
      $probe set /mnt/shared/settings.json secret '"mine"'; echo "status $?"
      root_files
      """)
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 70", "status 1"], "\(output)")
    #expect(
      output.lines.joined(separator: " ").contains(
        "/mnt/shared/settings.json has 2 links, in /mnt/shared, which users other than its owner may write (mode 0777)"),
      "\(output)")
    #expect((output.lines.first?.count ?? 0) <= 160, "splintctl's first line: \(output)")
    #expect(output.stdout.components(separatedBy: "root-only").count == 2, "only root_files shows it: \(output)")
    #expect(Array(output.lines.suffix(2)) == ["/mnt/root/victim.json 0:0 600 23", #"{"secret": "root-only"}"#])
  }

  @Test("a user holding the lock: root's write gives up after its deadline with an error that names the lock")
  func aHeldLockIsWaitedForOnlySoLong() async throws {
    let output = try await attack(
      """
      printf '{"a": 1}' > $app/settings.json && chown 1000:1000 $app/settings.json
      setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker hold-lock $app/settings.json.lock > /mnt/held & holder=$!
      while ! grep -q holding /mnt/held; do sleep 0.05; done
      start=$(date +%s)
      timeout 30 $probe set $app/settings.json b 2; echo "status $?"
      echo "waited $(( $(date +%s) - start ))"
      kill $holder; wait $holder 2>/dev/null
      cat $app/settings.json; echo
      """)
    #expect(output.lines.contains("status 1"), "neither hangs nor writes: \(output)")
    let error = output.lines.first { $0.hasPrefix("error ") } ?? ""
    #expect(
      error.contains("another process has held its lock, /mnt/home/u/.config/app/settings.json.lock"), "\(output)")
    let waited = output.lines.first { $0.hasPrefix("waited ") }.flatMap { Int($0.dropFirst(7)) }
    #expect(waited.map { (4...8).contains($0) } == true, "about the default 5 s: \(output)")
    #expect(output.lines.last == #"{"a": 1}"#)
  }

  @Test("a sparse file of 1 TiB, or 1.5 GiB, in the user's tree: refused before anything is allocated")
  func sparseHugeFiles() async throws {
    let output = try await attack(
      """
      truncate -s 1T $app/settings.json && chown 1000:1000 $app/settings.json
      $probe problem $app/settings.json; echo "status $?"
      $probe set $app/settings.json a 1; echo "status $?"
      stat -c '%s' $app/settings.json
      truncate -s 1536M $app/settings.json
      /usr/bin/time -f 'peak %M KiB' $probe problem $app/settings.json 2>&1; echo "status $?"
      """)
    let path = "/mnt/home/u/.config/app/settings.json"
    #expect(
      output.lines.first?.hasPrefix("The settings file \(path) holds 1099511627776 bytes, more than") == true,
      "\(output)")
    #expect(output.lines.filter { $0.hasPrefix("status") } == ["status 0", "status 1", "status 0"], "\(output)")
    #expect(output.lines.contains("1099511627776"), "the file is as it was")
    #expect(output.stdout.contains("holds 1610612736 bytes, more than"), "\(output)")
    let peak = output.lines.first { $0.hasPrefix("peak ") }.flatMap { Int($0.split(separator: " ")[1]) }
    #expect(peak.map { $0 < 200_000 } == true, "no 1.5 GB read into memory: \(output)")
  }

  @Test("a directory that may not be searched: list fails and says why, rather than printing {}")
  func anUnsearchableDirectoryIsAnError() async throws {
    let output = try await attack(
      """
      printf '{"a": 1}' > $app/settings.json && chown 1000:1000 $app/settings.json
      as_user 1001 1001 1001 $splintctl list --file $app/settings.json; echo "status $?"
      as_user 1001 1001 1001 $probe values $app/settings.json; echo "status $?"
      """)
    #expect(output.lines.first == "status 70", "\(output)")
    #expect(output.stderr.contains("cannot be read"), "\(output)")
    #expect(output.stderr.contains("Permission denied"), "\(output)")
    #expect(output.lines.dropFirst().first?.contains("cannot be read") == true, "\(output)")
  }

  @Test("two users in a sticky directory: another user's link or directory there is never used")
  func anotherUsersNamesInAStickyDirectory() async throws {
    let output = try await attack(
      """
      mkdir -m 1777 /mnt/tmp
      printf 'PATH=/usr/bin\\n' > /mnt/home/u/.profile && chown 1000:1000 /mnt/home/u/.profile
      as_user 1001 1001 1001 ln -s /mnt/home/u/.profile /mnt/tmp/settings.json
      as_user 1000 1000 1000 $probe set /mnt/tmp/settings.json theme '"dark"'; echo "status $?"
      cat /mnt/home/u/.profile
      as_user 1001 1001 1001 sh -c 'mkdir -m 0755 /mnt/tmp/app && printf "{\\"theme\\": \\"evil\\"}" > /mnt/tmp/app/settings.json'
      as_user 1000 1000 1000 $probe values /mnt/tmp/app/settings.json; echo "status $?"
      as_user 1000 1000 1000 $probe set /mnt/tmp/mine.json theme '"light"'; echo "status $?"
      stat -c '%n %u:%g %a' /mnt/tmp/mine.json
      """)
    #expect(output.lines.first?.hasPrefix("error The settings file /mnt/tmp/settings.json is not used: ") == true)
    #expect(output.lines.first?.contains("sticky") == true, "\(output)")
    #expect(output.lines.dropFirst().prefix(2) == ["status 1", "PATH=/usr/bin"], "\(output)")
    #expect(!output.stdout.contains("evil"), "\(output)")
    #expect(
      output.stdout.contains(
        "The settings file /mnt/tmp/app/settings.json is not used: /mnt/tmp/app belongs to user 1001"),
      "\(output)")
    #expect(Array(output.lines.suffix(2)) == ["status 0", "/mnt/tmp/mine.json 1000:1000 600"], "\(output)")
  }

  @Test("root's first write in a user's tree: the directories, the file and the lock are the user's")
  func whatRootMakesInAUsersTreeIsTheirs() async throws {
    let output = try await attack(
      """
      rm -r /mnt/home/u/.config
      env -u XDG_CONFIG_HOME HOME=/mnt/home/u $probe set suite:app a 1; echo "status $?"
      cd /mnt/home/u && stat -c '%n %u:%g %a' .config .config/app .config/app/settings.json .config/app/settings.json.lock
      as_user 1000 1000 1000 env -u XDG_CONFIG_HOME HOME=/mnt/home/u $probe set suite:app a 2; echo "status $?"
      """)
    #expect(
      output.lines == [
        "status 0", ".config 1000:1000 700", ".config/app 1000:1000 700", ".config/app/settings.json 1000:1000 600",
        ".config/app/settings.json.lock 1000:1000 600", "status 0",
      ], "\(output)")
  }

  @Test("reads and watches create nothing: not where a user's link points, not a missing directory")
  func readsAndWatchesCreateNothing() async throws {
    let output = try await attack(
      """
      ln -s /mnt/root/made-by-link/settings.json $app/settings.json && chown -h 1000:1000 $app/settings.json
      timeout 2 $probe watch $app/settings.json key '"never"' /mnt/ready; echo "status $?"
      $probe set $app/settings.json key 1 | sed 's/used: .*/used: /'
      timeout 2 $probe watch /mnt/home/u/.config/other/settings.json key '"never"' /mnt/ready; echo "status $?"
      ls -A /mnt/root /mnt/home/u/.config
      """)
    #expect(
      Array(output.lines.suffix(5)) == ["/mnt/home/u/.config:", "app", "", "/mnt/root:", "victim.json"], "\(output)")
    #expect(output.lines.filter { $0 == "status 124" }.count == 2, "each watch ran until stopped: \(output)")
    #expect(output.lines.contains("error The settings file \(Self.app)/settings.json is not used: "), "\(output)")
  }

  /// The user's settings directory, as `$app` names it in the scripts.
  static let app = "/mnt/home/u/.config/app"
}
