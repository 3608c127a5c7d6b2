// A test helper: another process using a settings file, as a command-line tool or a daemon would.
//
// FILE is a path, or suite:NAME for SettingsStore(suite: NAME), with the system layers of $XDG_CONFIG_DIRS.
//
//   SettingsProbe set FILE KEY JSON              store JSON under KEY
//   SettingsProbe reset FILE KEY                 Setting.reset() of KEY
//   SettingsProbe increment FILE KEY COUNT       COUNT read-modify-write increments, each a batch update
//   SettingsProbe write-keys FILE PREFIX COUNT   store PREFIX-0 … PREFIX-(COUNT-1), one write each
//   SettingsProbe increment-until FILE KEY STOP  batch increments of KEY until the file holds the key STOP (checked in
//                                                the same batch); prints "writing" at the start, and at the end how many
//                                                increments it made
//   SettingsProbe write-loop FILE KEY            increment KEY forever (until killed)
//   SettingsProbe watch FILE KEY UNTIL READY     print KEY's JSON on every change, until it equals UNTIL;
//                                                creates the file READY once watching
//   SettingsProbe changes FILE READY KEY...      keep a Setting on each KEY, read (so watching), and print each change
//                                                of the store as `change KEY KEY...` (sorted), until one holds the
//                                                key "done"; then the Settings' values, `KEY=JSON` (or `KEY=absent`)
//                                                a line. Creates the file READY once watching
//   SettingsProbe migrate FILE LOG [slow|fail]   open FILE with three migrations (1: rename "interval" to "period", 2:
//                                                a number of seconds in "period" becomes a string "<n>s", 3: remove
//                                                "legacy"), each appending `<pid> <version>` to LOG as it runs (1 also
//                                                waits 100 ms, so that other processes queue on the lock); then print
//                                                `version N`, the problem or `problem none`, and `period=JSON`. With
//                                                slow, 2 prints "migrating" and sleeps 60 s (to be killed); with fail,
//                                                2 throws
//   SettingsProbe path SUITE                     print SettingsStore(suite:)'s file
//   SettingsProbe problem FILE                   print the file's problem (`fileError`), or "none"
//   SettingsProbe first-error FILE KEY           what a daemon starting on the file does: a Setting<Int> on KEY, read
//                                                (`value N`), then the store's errors(): print the first error a new
//                                                stream hears, `CODE KEY`, or `none` if none comes within 5 seconds
//   SettingsProbe values FILE                    print the file's problem (or "none"), then its settings as one JSON
//                                                object, as a program reads them
//   SettingsProbe beside FIRST SECOND KEY        open a store on FIRST and read it, then one on SECOND (which may name
//                                                the same file another way); print SECOND's problem (or "none"), its
//                                                settings as one JSON object, and how a write of KEY to it ended
//   SettingsProbe try-writes FILE KEY COUNT      COUNT writes of KEY (0, 1, …), going on after a failed one; prints
//                                                `written N failed M`, then each distinct failure once, `error …`
//   SettingsProbe layers FILE                    print the user's file, then each system file, one a line
//   SettingsProbe fleet-copies SUITE             print where SettingsStore(suite:) looks for the fleet's copies, one a
//                                                line
//   SettingsProbe one-shot FILE KEY              what a command-line tool does (reads, writes, a Setting only
//                                                saved), printing this process's threads, inotify instances and
//                                                epoll instances before and after: `threads 2 inotify 0 epoll 0`
//   SettingsProbe fleet-race SUITE KEY OWN COUNT what a daemon does COUNT times while someone may swap its fleet copy:
//                                                a new SettingsStore(suite:), KEY read, OWN (JSON) written to it; then
//                                                prints `reads N enforced E other F refused R`: the reads whose value
//                                                a copy enforced, the reads of a value other than OWN, the refused
//                                                writes
//
// Every failure is printed as `error <description>` with exit status 1.

import Foundation
import SplintSettings

@main
struct SettingsProbe {
  static func main() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    do {
      try await run(arguments)
    } catch {
      print("error \(error)")
      exit(1)
    }
  }

  static func store(_ path: String) -> SettingsStore {
    // SPLINT_PROBE_POLL_MS: the store's poll interval, where inotify does not see every change.
    var options = SettingsStore.Options()
    if let milliseconds = ProcessInfo.processInfo.environment["SPLINT_PROBE_POLL_MS"].flatMap({ Int($0) }) {
      options.pollInterval = .milliseconds(milliseconds)
    }
    if path.hasPrefix("suite:") {
      return SettingsStore(suite: String(path.dropFirst("suite:".count)), options: options)
    }
    return SettingsStore(fileURL: URL(fileURLWithPath: path), options: options)
  }

  static func run(_ arguments: [String]) async throws {
    switch (arguments.first, arguments.count) {
    case ("set", 4):
      try store(arguments[1]).set(JSONValue(parsing: arguments[3]), forKey: arguments[2])
    case ("reset", 3):
      Setting<JSONValue?>(arguments[2], default: nil, store: store(arguments[1])).reset()
    case ("fleet-copies", 2):
      for url in try SettingsStore.fleetCopyURLs(forSuite: arguments[1]) { print(url.path) }
    case ("layers", 2):
      let settings = store(arguments[1])
      for url in [settings.fileURL] + settings.systemFileURLs { print(url.path) }
    case ("increment", 4):
      let settings = store(arguments[1])
      let counter = Setting(arguments[2], default: 0, store: settings)
      for _ in 0..<(Int(arguments[3]) ?? 0) {
        try settings.update { $0[counter] += 1 }
      }
    case ("write-keys", 4):
      let settings = store(arguments[1])
      for index in 0..<(Int(arguments[3]) ?? 0) {
        try settings.set(.int(index), forKey: "\(arguments[2])-\(index)")
      }
    case ("increment-until", 4):
      let settings = store(arguments[1])
      let counter = Setting(arguments[2], default: 0, store: settings)
      print("writing")
      fflush(nil)
      var count = 0
      while try settings.update({ settings in
        guard settings[arguments[3]] == nil else { return false }
        settings[counter] += 1
        return true
      }) {
        count += 1
        // Leaves the lock free a moment between writes, as a program's writes do: back to back, this loop holds
        // the lock all but microseconds at a time, and another process waiting for it (which tries again after
        // growing pauses) may not find it free within its lock timeout on a busy machine; the test is of lost
        // updates, not of that.
        usleep(2000)
      }
      print(count)
    case ("write-loop", 3):
      let settings = store(arguments[1])
      let counter = Setting(arguments[2], default: 0, store: settings)
      print("writing")
      fflush(nil)
      while true {
        try settings.update { $0[counter] += 1 }
      }
    case ("watch", 5), ("follow", 5):
      // follow: as watch, telling the store's errors on standard error as they come (a fallback to polling among
      // them).
      let settings = store(arguments[1])
      let setting = Setting<JSONValue?>(arguments[2], default: nil, store: settings)
      let until = try JSONValue(parsing: arguments[3])
      if arguments[0] == "follow" {
        let errors = settings.errors()
        Task {
          for await error in errors { FileHandle.standardError.write(Data("\(error.code): \(error)\n".utf8)) }
        }
      }
      let updates = setting.updates()
      _ = FileManager.default.createFile(atPath: arguments[4], contents: nil)
      for await value in updates {
        print(value.map(\.description) ?? "absent")
        fflush(nil)
        if value == until { return }
      }
    case ("changes", 4...):
      let settings = store(arguments[1])
      let watched = arguments[3...].map { Setting<JSONValue?>($0, default: nil, store: settings) }
      for setting in watched { _ = setting.value }
      let changes = settings.changes()
      _ = FileManager.default.createFile(atPath: arguments[2], contents: nil)
      for await changed in changes {
        print("change " + changed.sorted().map(\.text).joined(separator: " "))
        fflush(nil)
        if changed.contains("done") { break }
      }
      for setting in watched { print("\(setting.key)=\(setting.value.map(\.description) ?? "absent")") }
    case ("migrate", 3...4):
      let log = arguments[2]
      let mode = arguments.count == 4 ? arguments[3] : "ok"
      let settings = SettingsStore(
        fileURL: URL(fileURLWithPath: arguments[1]),
        migrations: [
          SettingsMigration(version: 1) { settings in
            try append("\(getpid()) 1\n", to: log)
            usleep(100_000)
            if let interval = settings["interval"] {
              settings["period"] = interval
              settings["interval"] = nil
            }
          },
          SettingsMigration(version: 2) { settings in
            try append("\(getpid()) 2\n", to: log)
            if mode == "slow" {
              print("migrating")
              fflush(nil)
              sleep(60)
            }
            if mode == "fail" { throw ProbeFailure("no network to look the new value up") }
            if case .int(let seconds)? = settings["period"] { settings["period"] = .string("\(seconds)s") }
          },
          SettingsMigration(version: 3) { settings in
            try append("\(getpid()) 3\n", to: log)
            settings["legacy"] = nil
          },
        ])
      print("version \(settings.schemaVersion.map(String.init) ?? "invalid")")
      print("problem \(settings.fileError?.description ?? "none")")
      print("period=\(settings.value(forKey: "period")?.description ?? "absent")")
    case ("path", 2):
      print(SettingsStore(suite: arguments[1]).fileURL.path)
    case ("problem", 2):
      print(store(arguments[1]).fileError.map(\.description) ?? "none")
    case ("first-error", 3):
      let settings = store(arguments[1])
      let setting = Setting(arguments[2], default: 0, store: settings)
      print("value \(setting.value)")
      let errors = settings.errors()
      let first = await withTaskGroup(of: SettingsError?.self) { group in
        group.addTask { await errors.first { _ in true } }
        group.addTask {
          try? await Task.sleep(for: .seconds(5))
          return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
      }
      print(first.map { "\($0.code) \($0.key ?? "")" } ?? "none")
    case ("values", 2):
      let settings = store(arguments[1])
      print(settings.fileError.map(\.description) ?? "none")
      print(JSONValue.object(settings.values).description)
    case ("beside", 4):
      let first = store(arguments[1])
      _ = first.values
      let second = store(arguments[2])
      print(second.fileError.map(\.description) ?? "none")
      print(JSONValue.object(second.values).description)
      do {
        try second.set(.string("written"), forKey: arguments[3])
        print("written")
      } catch {
        print("error \(error)")
      }
      _ = first
    case ("try-writes", 4):
      let settings = store(arguments[1])
      var written = 0
      var failures: [String] = []
      for index in 0..<(Int(arguments[3]) ?? 0) {
        do {
          try settings.set(.int(index), forKey: arguments[2])
          written += 1
        } catch {
          failures.append(error.description)
        }
      }
      print("written \(written) failed \(failures.count)")
      for failure in Set(failures).sorted() { print("error \(failure)") }
    case ("fleet-race", 5):
      let own = try JSONValue(parsing: arguments[3])
      var (enforced, other, refused) = (0, 0, 0)
      let count = Int(arguments[4]) ?? 0
      for _ in 0..<count {
        let settings = SettingsStore(suite: arguments[1])
        if settings.enforcedValue(forKey: arguments[2]) != nil { enforced += 1 }
        if settings.value(forKey: arguments[2]) != own { other += 1 }
        do {
          try settings.set(own, forKey: arguments[2])
        } catch {
          refused += 1
        }
      }
      print("reads \(count) enforced \(enforced) other \(other) refused \(refused)")
    case ("one-shot", 3):
      let before = resources()
      let settings = store(arguments[1])
      _ = settings.fileError
      _ = settings.value(forKey: arguments[2])
      try settings.set(.int(1), forKey: arguments[2])
      _ = settings.keys
      _ = settings.values
      try settings.update { $0[arguments[2]] = .int(2) }
      let setting = Setting(arguments[2], default: 0, store: settings)
      try setting.save(3)
      setting.reset()
      try settings.removeValue(forKey: arguments[2])
      print(before)
      print(resources())
    default:
      print("usage: see the comment at the top of Tests/SettingsProbe/main.swift")
      exit(2)
    }
  }

  /// Appends `line` to the file at `path`, with one write(2) in O_APPEND mode (whole, whoever else appends).
  static func append(_ line: String, to path: String) throws {
    let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw ProbeFailure("cannot open \(path)") }
    defer { close(descriptor) }
    let bytes = Array(line.utf8)
    guard write(descriptor, bytes, bytes.count) == bytes.count else { throw ProbeFailure("cannot append to \(path)") }
  }

  /// This process's threads, and its file descriptors that are inotify or epoll instances.
  static func resources() -> String {
    let manager = FileManager.default
    let threads = (try? manager.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    let descriptors = ((try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
      try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
    }
    let inotify = descriptors.count { $0 == "anon_inode:inotify" }
    let epoll = descriptors.count { $0 == "anon_inode:[eventpoll]" }
    return "threads \(threads) inotify \(inotify) epoll \(epoll)"
  }
}

/// A failure of the probe itself, or one a migration is made to throw.
struct ProbeFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
