// The daemon script/demo runs: it reads an API token with Credential and follows two Settings, printing each change
// as it sees it, with how long after the file was written, and where the value comes from: the user's file, or the
// fleet's copy when a follower (`splintctl fleet follow --suite SUITE`) keeps one on this machine. It never prints
// the token itself.
//
//   SplintDemo [SUITE]      (default suite: splint-demo)
//
// It exits 0 when the `mode` setting becomes "stop", and 1 if that has not happened within 50 seconds.

import Foundation
import SplintSecrets
import SplintSettings

enum Mode: String, SettingValue {
  case fast, thorough, stop
}

/// Prints a line at once. A reader that goes away (`SplintDemo | head -1`) is no reason to stop, or to crash: the
/// write fails (SIGPIPE is ignored below), and the daemon goes on. FileHandle's `write(_:)` would trap there.
func say(_ text: String) {
  print("daemon: \(text)")
  fflush(nil)  // every output stream: standard output is one
}

signal(SIGPIPE, SIG_IGN)

let suite = CommandLine.arguments.dropFirst().first ?? "splint-demo"
let store: SettingsStore
do {
  // As SettingsStore(suite:) reads it, with the fleet's copy below the user's file, but a suite name that is not one
  // is an error to print rather than a trap.
  store = SettingsStore(
    fileURL: try SettingsStore.fileURL(forSuite: suite), systemFiles: try SettingsStore.systemFileURLs(forSuite: suite),
    fleetCopies: try SettingsStore.fleetCopyURLs(forSuite: suite))
} catch {
  say("\(error)")
  exit(64)
}
let interval = Setting("interval", default: 30, store: store)
let mode = Setting("mode", default: Mode.fast, store: store)
let token = Credential(service: suite, account: "api")

/// The token's state, without the token.
func tokenState() -> String {
  do {
    guard let value = try token.read() else { return "no API token yet" }
    return "API token present (\(value.count) characters)"
  } catch {
    return "API token unavailable: \(error.summary)"
  }
}

/// Where `key`'s value comes from, when not from the default: ` (the fleet's, from PATH)`.
func origin(_ key: String) -> String {
  switch store.origin(ofKey: key) {
  case .fleet(let copy, let label)?: " (the fleet's\(label.map { " for \($0)" } ?? ""), from \(copy.path))"
  case .system(let file)?: " (a system default, from \(file.path))"
  case .user?, nil: ""
  }
}

/// How long ago the file that holds `key`'s value (the user's, or the fleet's copy) was written.
func sinceWrite(_ key: String) -> String {
  let file =
    switch store.origin(ofKey: key) {
    case .fleet(let url, _)?, .system(let url)?, .user(let url)?: url
    case nil: store.fileURL
    }
  guard let written = try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
  else { return "" }
  return String(format: ", %.2f ms after the write", Date().timeIntervalSince(written) * 1000)
}

// Asked for before the daemon says it watches: a change made as soon as it says so is heard.
let intervals = interval.updates(initial: false)
let modes = mode.updates(initial: false)
say(
  "watching \(store.fileURL.path): interval \(interval.value) s\(origin("interval")), mode \(mode.value)"
    + "\(origin("mode")), \(tokenState())")

let stopped = await withTaskGroup(of: Bool.self) { group in
  group.addTask {
    for await seconds in intervals {
      say("interval is now \(seconds) s\(origin("interval"))\(sinceWrite("interval")); \(tokenState())")
    }
    return false
  }
  group.addTask {
    for await newMode in modes {
      say("mode is now \(newMode)\(origin("mode"))\(sinceWrite("mode"))")
      if newMode == .stop { return true }
    }
    return false
  }
  group.addTask {
    try? await Task.sleep(for: .seconds(50))
    return false
  }
  let first = await group.next() ?? false
  group.cancelAll()
  return first
}
say(stopped ? "stopping, as asked" : "no stop within 50 seconds; giving up")
exit(stopped ? 0 : 1)
