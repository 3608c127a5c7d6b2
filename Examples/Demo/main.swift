// The daemon script/demo runs: it reads an API token with Credential and follows two Settings, printing each change
// as it sees it, with how long after the file was written. It never prints the token itself.
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
  store = SettingsStore(fileURL: try SettingsStore.fileURL(forSuite: suite))
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

/// How long ago the settings file was written.
func sinceWrite() -> String {
  guard let written = try? FileManager.default.attributesOfItem(atPath: store.fileURL.path)[.modificationDate] as? Date
  else { return "" }
  return String(format: ", %.2f ms after the write", Date().timeIntervalSince(written) * 1000)
}

say("watching \(store.fileURL.path): interval \(interval.value) s, mode \(mode.value), \(tokenState())")

let stopped = await withTaskGroup(of: Bool.self) { group in
  group.addTask {
    for await seconds in interval.updates(initial: false) {
      say("interval is now \(seconds) s\(sinceWrite()); \(tokenState())")
    }
    return false
  }
  group.addTask {
    for await newMode in mode.updates(initial: false) {
      say("mode is now \(newMode)\(sinceWrite())")
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
