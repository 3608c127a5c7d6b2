import Foundation
import SplintSettings
import TestSupport

/// Root's writers and a root reader on a settings file in a user's directory, while the user swaps their directories
/// with renameat2(RENAME_EXCHANGE), two attackers at once, so that the path leads now to their own file, now to a
/// link to root's file, now to a link to root's directory: as root, with user 1000 as the attacker, in a private
/// mount namespace on a tmpfs. A *win* for the attacker (counted as data lost) is any change to root's file or
/// directory, anything of root's left in the user's tree, a stray temporary file, or a read that shows root's secret.
func attackerBesideRootWriters(quick: Bool) async -> Outcome {
  await scenario("an attacker swapping directories beside 4 root writers and a root reader: no win") { outcome in
    guard await RootNamespace.isAvailable() else {
      outcome.figure = "skipped: needs root and permission to make mount namespaces"
      return
    }
    let writes = quick ? 500 : 5000
    let output = try await RootNamespace.run(
      """
      mkdir -m 0700 /mnt/root && printf '{"secret": "root-only"}' > /mnt/root/settings.json
      chmod 0600 /mnt/root/settings.json && before=$(stat -c '%u:%g %a %s %Y' /mnt/root/settings.json)
      mkdir -p /mnt/home/u && cd /mnt/home/u && mkdir a b && printf '{"n": 0}' > a/settings.json
      ln -s /mnt/root/settings.json b/settings.json && ln -s /mnt/root c
      chown -hR 1000:1000 /mnt/home/u && chmod 0700 /mnt/home/u
      setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker exchange a b > /mnt/swaps-1 & first=$!
      setpriv --reuid=1000 --regid=1000 --groups=1000 $attacker exchange b c > /mnt/swaps-2 & second=$!
      sleep 0.2
      pids=""
      for writer in 1 2 3 4; do
        $torture try-writes /mnt/home/u/a/settings.json \(writes) > /mnt/writer-$writer & pids="$pids $!"
      done
      $torture read-loop /mnt/home/u/a/settings.json \(writes) > /mnt/reader & pids="$pids $!"
      wait $pids
      kill $first $second && wait $first $second
      cat /mnt/writer-* /mnt/reader /mnt/swaps-*
      echo "root's file before: $before"
      echo "root's file after: $(stat -c '%u:%g %a %s %Y' /mnt/root/settings.json)"
      echo "root's content: $(cat /mnt/root/settings.json)"
      echo "root's directory: $(ls -A /mnt/root | tr '\\n' ' ')"
      echo "not the user's: $(find /mnt/home/u ! -user 1000 | wc -l)"
      echo "temporary files: $(find /mnt -name '.*.tmp' | wc -l)"
      """, helpers: ["attacker": Programs.helper("Attacker"), "torture": tortureBinary])
    let lines = output.lines
    func numbers(_ prefix: String) -> [[Int]] {
      lines.filter { $0.hasPrefix(prefix) }.map { $0.split(separator: " ").compactMap { Int($0) } }
    }
    let writers = numbers("written ")
    let reads = numbers("reads ")
    let swaps = numbers("swapped ").compactMap(\.first).reduce(0, +)
    outcome.operations = writers.reduce(0) { $0 + $1.reduce(0, +) } + (reads.first?.first ?? 0) + swaps
    if writers.count != 4 || reads.count != 1 || writers.contains(where: { $0.reduce(0, +) != writes }) {
      outcome.fail("the writers or the reader did not finish: \(output.stdout)\(output.stderr)")
    }
    let status = ["before", "after"].map { when in
      let prefix = "root's file \(when): "
      return lines.first { $0.hasPrefix(prefix) }?.dropFirst(prefix.count)
    }
    if status[0] == nil || status[0] != status[1] { outcome.lose("root's file changed: \(status)") }
    if !lines.contains(#"root's content: {"secret": "root-only"}"#) { outcome.lose("root's file was rewritten") }
    if !lines.contains("root's directory: settings.json ") { outcome.lose("something was made in root's directory") }
    if !lines.contains("not the user's: 0") { outcome.lose("root left something of its own in the user's tree") }
    if !lines.contains("temporary files: 0") { outcome.lose("temporary files were left behind") }
    let disclosed = reads.first.map { $0.count == 3 ? $0[1] : -1 } ?? -1
    if disclosed != 0 { outcome.lose("reads showed root's secret: \(lines.filter { $0.hasPrefix("reads ") })") }
    let written = writers.map { $0.first ?? 0 }.reduce(0, +)
    outcome.figure =
      "\(4 * writes) root writes (\(written) into the user's file, the rest refused), \(writes) reads, \(swaps) swaps"
  }
}

/// Child mode: `count` writes of a counter to the file at `path`, going on after a refused one; prints
/// `written N refused M`.
func tryWrites(_ path: String, count: Int) -> Never {
  let settings = store(path)
  var written = 0
  for index in 0..<count {
    if (try? settings.set(.int(index), forKey: "n")) != nil { written += 1 }
  }
  print("written \(written) refused \(count - written)")
  exit(0)
}

/// Child mode: `count` one-shot reads of the file at `path`, each by a new store, as `splintctl get` reads it;
/// prints `reads N disclosed D refused R`, where a disclosed read is one that shows anything of root's file.
func readLoop(_ path: String, count: Int) -> Never {
  var disclosed = 0
  var refused = 0
  for _ in 0..<count {
    let settings = store(path)
    if settings.fileError != nil { refused += 1 }
    if settings.values["secret"] != nil { disclosed += 1 }
  }
  print("reads \(count) disclosed \(disclosed) refused \(refused)")
  exit(0)
}
