import Glibc
import SplintSystemCalls
import Synchronization

#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// What a fleet follower (SplintFleet's) writes a copy with: it takes the copy's follower lock, so that two followers
/// never write one copy, and replaces the copy's whole content at each change, atomically (a reader sees the old or
/// the new copy, never a part), under the copy's settings lock, as every settings write is.
///
/// Writes are not made durable one by one (a busy cluster changes many times a second): ``sync()`` makes the last
/// one durable, and a follower calls it within a second of a change.
package final class FleetCopyWriter: Sendable {
  /// The copy.
  package let url: URL
  private let file: SettingsFile
  /// The follower lock and presence, while this writer holds them.
  private let lock = Mutex<FileIO.FollowerHold?>(nil)
  /// Whether a write has not been made durable yet.
  private let unsynced = Atomic(false)
  /// The mode of the copy and its directory when this writer makes them: readable by every user for a system copy,
  /// by this user alone otherwise; and of its presence, which every user may test for a system copy.
  private let mode: mode_t
  private let directoryMode: mode_t
  private let presenceMode: mode_t

  /// A writer of the copy at `url`; `shared` for a system copy, which every user's programs read.
  package init(url: URL, shared: Bool = FleetCopy.writesSystemCopies) {
    self.url = url
    file = SettingsFile.shared(for: url)
    mode = shared ? 0o644 : 0o600
    directoryMode = shared ? 0o755 : 0o700
    presenceMode = shared ? 0o666 : 0o600
  }

  /// Takes the copy's follower lock, if no other follower holds it, and publishes the follower's presence beside
  /// the copy (what readers test, and when they last saw it): true when this writer holds it now (or held it
  /// already), false while another process does.
  ///
  /// - Throws: ``SettingsError/writeFailed(_:reason:)`` (or ``SettingsError/unsafePath(_:reason:)``) when the lock
  ///   cannot be made or opened.
  package func takeOver() throws(SettingsError) -> Bool {
    try lock.withLock { held throws(SettingsError) -> Bool in
      if held != nil { return true }
      do throws(FileIOError) {
        held = try FileIO.takeFollowerLock(
          ofCopy: file.path, presenceMode: presenceMode, directoryMode: directoryMode)
      } catch {
        throw file.settingsError(error, otherwise: SettingsError.writeFailed(_:reason:remedy:))
      }
      return held != nil
    }
  }

  /// Whether this writer holds the follower lock.
  package var holdsLock: Bool { lock.withLock { $0 != nil } }

  /// Gives the follower lock up (a follower that ends): the next follower may take over at once.
  package func release() {
    lock.withLock { $0 = nil }
  }

  /// Tells readers that the follower is still there: its presence's modification time, which they take for when
  /// it was last seen, moves to now. A follower calls it every few seconds while it holds the lock.
  ///
  /// - Throws: ``SettingsError/writeFailed(_:reason:)`` when the file system refuses.
  package func heartbeat() throws(SettingsError) {
    do throws(FileIOError) {
      try lock.withLock { hold throws(FileIOError) in try hold?.touch() }
    } catch {  // The copy's directory refusing a time change: its follower's own directory, which it writes.
      let failed = SettingsError.writeFailed(_:reason:remedy:)  // coverage:ignore — utimensat failed
      throw file.settingsError(error, otherwise: failed)  // coverage:ignore — utimensat failed
    }
  }

  /// What the copy holds now: its description, its settings and the keys it enforces.
  package var current: (metadata: FleetCopy.Metadata?, values: [String: JSONValue], enforced: [String]) {
    file.refreshUnlessWatched()
    var values: [String: JSONValue] = [:]
    for (key, value) in file.values where !FleetCopy.isReserved(key.text) { values[key.text] = value }
    let enforced = FleetCopy.EnforcedKeys(file.storedValue(JSONKey(FleetCopy.enforcedKey))).keys
    return (FleetCopy.Metadata(file.storedValue(JSONKey(FleetCopy.metadataKey))), values, enforced)
  }

  /// Makes the copy hold exactly `values` (in this order for keys it does not hold yet), `enforced` and `metadata`,
  /// with one atomic write; members already as given stay as they were, and a value given with its text is written
  /// as that text (see ``FleetCopy/parseValue(_:)``). Only while this writer holds the follower lock.
  ///
  /// - Returns: Whether a setting or an enforced key changed (not only the description).
  /// - Throws: ``SettingsError/writeFailed(_:reason:)`` and the other errors of a write; the copy is as it was then.
  @discardableResult
  package func write(
    values: [(key: String, value: JSONValue, text: String?)], enforced: [String], metadata: FleetCopy.Metadata
  ) throws(SettingsError) -> Bool {
    guard holdsLock else {
      throw .writeFailed(url, reason: "this follower does not hold \(url.path)\(FileIO.followerLockSuffix)")
    }
    let changed = try file.write(
      { (document: inout SettingsDocument) throws(SettingsError) -> Bool in
        let before = document
        let kept = Set(values.map { JSONKey($0.key) })
        if document[FleetCopy.metadataKey] == nil, !document.keys.isEmpty {
          // A copy without a description is not one a follower wrote: start it over, described first.
          document = SettingsDocument()
        }
        document[FleetCopy.metadataKey] = metadata.json
        for key in document.keys where !FleetCopy.isReserved(key) && !kept.contains(JSONKey(key)) {
          document[key] = nil
        }
        for (key, value, text) in values where document[key] != value {
          if let text { document.set(value, writtenAs: text, forKey: key) } else { document[key] = value }
        }
        document[FleetCopy.enforcedKey] = enforced.isEmpty ? nil : .array(enforced.sorted().map(JSONValue.string))
        var (old, new) = (before, document)
        (old[FleetCopy.metadataKey], new[FleetCopy.metadataKey]) = (nil, nil)
        return old != new
      }, failed: { $0 }, sync: false, newFileMode: mode)
    unsynced.store(true, ordering: .relaxed)
    return changed
  }

  /// Makes the last write durable: the copy's content, and its name in the directory. Does nothing when there was
  /// no write since the last call.
  ///
  /// - Throws: ``SettingsError/writeFailed(_:reason:)`` when the file system refuses (the copy stays as written, and
  ///   may not survive a power loss).
  package func sync() throws(SettingsError) {
    guard unsynced.exchange(false, ordering: .relaxed) else { return }
    do throws(FileIOError) {
      try FileIO.sync(file.path)
    } catch {
      unsynced.store(true, ordering: .relaxed)
      throw file.settingsError(error, otherwise: SettingsError.writeFailed(_:reason:remedy:))
    }
  }
}
