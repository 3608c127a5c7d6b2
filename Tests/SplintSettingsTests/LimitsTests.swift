import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// A store's limits (`SettingsStore.Options`): how large a file it reads, and how long a write waits for another
/// process's lock. Whoever controls a settings file cannot make a program read without end or wait forever.
@Suite struct LimitsTests {
  let scratch = Scratch()

  @Test("a file larger than the store's maximumFileSize is reported, never read, and left as it is")
  func aFileLargerThanTheLimit() async throws {
    let url = scratch.url("settings.json")
    try Data(#"{"a": 12345}"#.utf8).write(to: url)
    let store = SettingsStore(fileURL: url, options: .init(maximumFileSize: 10))
    let expected = SettingsError.fileTooLarge(url, size: 12, limit: 10)
    #expect(store.fileError == expected)
    #expect(store.values == [:])
    #expect(throws: expected) { try store.set(.int(1), forKey: "b") }
    #expect(try String(contentsOf: url, encoding: .utf8) == #"{"a": 12345}"#)
    #expect(expected.description.contains("holds 12 bytes, more than the 10 a settings file may have here"))
    // Another store on the same file with a larger limit raises it for both: the file keeps the largest.
    let larger = SettingsStore(fileURL: url, options: .init(maximumFileSize: 100))
    #expect(larger.value(forKey: "a") == .int(12345))
    #expect(store.fileError == nil)
  }

  @Test("a file whose size the kernel does not tell is held to the limit as it is read")
  func aFileThatGrowsPastTheLimitWhileRead() {
    // procfs reports a size of 0 for its files.
    let store = SettingsStore(fileURL: URL(fileURLWithPath: "/proc/self/status"), options: .init(maximumFileSize: 10))
    #expect(store.fileError?.code == .fileTooLarge)
    #expect(store.fileError?.description.contains("holds 11 bytes, more than the 10") == true, "read no further")
  }

  @Test(
    "a lock another process holds: the write gives up after the store's lockTimeout, names the lock, writes nothing")
  func aHeldLockEndsTheWait() async throws {
    let url = scratch.url("settings.json")
    let store = SettingsStore(fileURL: url, options: .init(lockTimeout: .milliseconds(300)))
    try store.set(.int(1), forKey: "a")
    let lock = url.path + ".lock"
    // Without timeout(1) in between, so that the signal reaches the holder itself.
    let holder = try await Programs.start([Programs.helper("Attacker"), "hold-lock", lock], seconds: nil)
    #expect(await eventually { holder.stdoutSoFar == "holding\n" })
    let start = ContinuousClock.now
    let expected = SettingsError.lockTimeout(url, lockFile: URL(fileURLWithPath: lock), waited: .milliseconds(300))
    #expect(throws: expected) { try store.set(.int(2), forKey: "a") }
    #expect(ContinuousClock.now - start >= .milliseconds(300))
    #expect(expected.description.contains("another process has held its lock, \(lock), for 0.3 seconds"))
    #expect(SettingsError.lockTimeout(url, lockFile: url, waited: .seconds(5)).description.contains("for 5 seconds"))
    holder.send(SIGKILL)
    await holder.wait()
    #expect(store.value(forKey: "a") == .int(1))
    try store.set(.int(3), forKey: "a")  // free again
    #expect(store.value(forKey: "a") == .int(3))
  }
}
