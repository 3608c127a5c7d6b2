import Foundation
import TestSupport
import Testing

@testable import SplintSettings

@Suite struct SettingsStoreTests {
  let scratch = Scratch()

  @Test func rawJSONAccessByKey() throws {
    let store = scratch.store()
    try store.set(.object(["a": .array([.int(1)])]), forKey: "nested")
    try store.set(.string("x"), forKey: "name")
    #expect(store.keys == ["nested", "name"])
    #expect(store.values == ["nested": .object(["a": .array([.int(1)])]), "name": .string("x")])
    #expect(store.value(forKey: "name") == .string("x"))
    try store.removeValue(forKey: "nested")
    #expect(store.keys == ["name"])
    #expect(throws: SettingsError.unencodableValue(key: "bad", reason: "JSON has no NaN or infinity")) {
      try store.set(.array([.double(.nan)]), forKey: "bad")
    }
    #expect(store.keys == ["name"])
  }

  @Test func aBatchUpdateIsOneWriteAndOneChange() async throws {
    let store = scratch.store()
    let count = Setting("count", default: 0, store: store)
    let changes = store.changes()
    let result = try store.update { settings in
      settings[count] += 2
      settings["label"] = .string("batch")
      #expect(settings.keys == ["count", "label"])
      return settings[count]
    }
    #expect(result == 2)
    #expect(store.writeCount == 1)
    #expect(count.value == 2)
    #expect(await take(1, from: changes) == [["count", "label"]])
  }

  @Test func aBatchThatThrowsOrHoldsAnUnstorableValueWritesNothing() async throws {
    struct Abandoned: Error {}
    let store = scratch.store()
    let ratio = Setting("ratio", default: 1.0, store: store)
    #expect(throws: Abandoned.self) {
      try store.update { settings in
        settings["kept"] = .bool(true)
        throw Abandoned()
      }
    }
    #expect(
      throws: SettingsError.unencodableValue(
        key: "ratio", reason: "nan is not a finite number, and JSON has no NaN or infinity")
    ) {
      try store.update { settings in
        settings[ratio] = .nan
        settings["raw"] = .double(.infinity)
        settings["kept"] = .bool(true)
      }
    }
    #expect(store.writeCount == 0)
    #expect(store.keys == [])
  }

  @Test func anUpdateThatChangesNothingWritesNothing() throws {
    let store = scratch.store()
    try store.set(.int(1), forKey: "a")
    let untouched = try store.update { settings in settings["a"] }
    #expect(untouched == .int(1))
    #expect(store.writeCount == 1)
  }

  @Test func aSettingReadInsideABatchIsWhatTheSettingWouldRead() throws {
    let store = scratch.store()
    try store.set(.string("not a number"), forKey: "count")
    let count = Setting("count", default: 5, store: store)
    try store.set(.int(7), forKey: "other")
    #expect(try store.update { $0[Setting("other", default: 5, store: store)] } == 7)
    // A value that does not decode is not the default in disguise: the update throws, as it would over a write.
    #expect(throws: SettingsError.self) { try store.update { $0[count] } }
  }

  @Test func aStoreThatSkipsFsyncStillReplacesTheFileWhole() throws {
    let store = SettingsStore(fileURL: scratch.url("fast.json"), syncsToDisk: false)
    #expect(!store.file.syncsToDisk)
    try store.set(.int(1), forKey: "a")
    try store.set(.int(2), forKey: "a")
    #expect(store.text == "{\n  \"a\": 2\n}\n")
    #expect(scratch.store().file.syncsToDisk)
  }

  @Test func keysThisProcessDoesNotKnowAreKeptExactly() throws {
    let original = "{\n  \"theirs\" : { \"b\":1,\"a\" :[ 1.50, \"\\u00e9\" ] },\n  \"mine\": 1\n}\n"
    try original.write(to: scratch.url("settings.json"), atomically: true, encoding: .utf8)
    let store = scratch.store()
    Setting("mine", default: 0, store: store).value = 2
    #expect(store.text == original.replacing("\"mine\": 1", with: "\"mine\": 2"))
  }

  @Test func filesAre0600InDirectoriesOf0700AndTheLockFileStays() throws {
    let store = SettingsStore(fileURL: scratch.url("new", "deeper", "settings.json"))
    try store.set(.int(1), forKey: "a")
    let manager = FileManager.default
    func mode(_ url: URL) throws -> Int {
      try (manager.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? -1
    }
    #expect(try mode(scratch.url("new")) == 0o700)
    #expect(try mode(scratch.url("new", "deeper")) == 0o700)
    #expect(try mode(store.fileURL) == 0o600)
    #expect(try mode(scratch.url("new", "deeper", "settings.json.lock")) == 0o600)
    #expect(
      try manager.contentsOfDirectory(atPath: scratch.url("new", "deeper").path).sorted() == [
        "settings.json", "settings.json.lock",
      ])
    // A file someone made readable keeps its mode across writes.
    try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.fileURL.path)
    try store.set(.int(2), forKey: "a")
    #expect(try mode(store.fileURL) == 0o644)
  }

  @Test func suitesLiveInTheXDGConfigurationDirectory() async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = scratch.directory.path
    #expect(
      try await probe("path", "com.example.sync", environment: environment).lines == [
        scratch.url("com.example.sync", "settings.json").path
      ])
    environment["XDG_CONFIG_HOME"] = "relative/config"  // not absolute: ignored, as the XDG specification says
    environment["HOME"] = scratch.directory.path
    #expect(
      try await probe("path", "com.example.sync", environment: environment).lines == [
        scratch.url(".config", "com.example.sync", "settings.json").path
      ])
    environment["XDG_CONFIG_HOME"] = nil
    environment["HOME"] = ""  // falls back to the password database
    let entry = try #require(getpwuid(getuid()))
    let home = String(cString: try #require(entry.pointee.pw_dir))
    #expect(
      try await probe("path", "com.example.sync", environment: environment).lines == [
        "\(home)/.config/com.example.sync/settings.json"
      ])
  }

  @Test(arguments: ["", "a/b", ".", "..", "nul\0", " ", "\t", "two\nlines", "bell\u{7}"])
  func suiteNamesMustBeDirectoryNames(suite: String) {
    #expect(throws: SettingsError.invalidSuiteName(suite)) { try SettingsStore.fileURL(forSuite: suite) }
  }

  @Test func anInvalidSuiteNameStopsTheProgramSayingWhatToUse() async throws {
    let output = try await probe("path", "../elsewhere")
    #expect(output.status >= 128, "the program traps")
    #expect(output.stderr.contains("\"../elsewhere\" cannot name a settings suite. Use a plain directory name"))
  }

  @Test func aSuiteFileIsFoundWithoutMakingAStore() throws {
    let url = try SettingsStore.fileURL(forSuite: "com.example.sync")
    #expect(url.path.hasSuffix("/com.example.sync/settings.json"))
  }

  @Test func aBrokenFileIsKnownFromTheStart() throws {
    try "not json".write(to: scratch.url("settings.json"), atomically: true, encoding: .utf8)
    let store = scratch.store()
    let broken = SettingsError.corruptFile(store.fileURL, reason: "line 1, column 1: expected null")
    #expect(store.fileError == broken)
    #expect(throws: broken) { try store.set(.int(1), forKey: "a") }
    try store.resetAll()
    try store.set(.int(1), forKey: "a")
    #expect(store.fileError == nil)
    #expect(scratch.store("fresh.json").fileError == nil)
  }

  @Test func theStandardStoreIsNamedAfterTheExecutable() {
    #expect(
      SettingsStore.standard.fileURL.deletingLastPathComponent().lastPathComponent
        == ProcessInfo.processInfo.processName)
    #expect(SettingsStore.standard.fileURL.lastPathComponent == "settings.json")
  }

  @Test func storesOnTheSameFileShareOneSnapshot() throws {
    try FileManager.default.createDirectory(at: scratch.url("real"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: scratch.url("alias"), withDestinationURL: scratch.url("real"))
    let viaAlias = SettingsStore(fileURL: scratch.url("alias", "settings.json"))
    let viaDots = SettingsStore(fileURL: scratch.url("real", "..", "real", "settings.json"))
    #expect(viaAlias.file === viaDots.file)
    try viaAlias.set(.int(1), forKey: "a")
    #expect(viaDots.value(forKey: "a") == .int(1))
  }

  @Test func aFileNobodyUsesIsReleased() {
    weak var file: SettingsFile?
    do {
      let store = scratch.store()
      file = store.file
      _ = Setting("a", default: 0, store: store)
    }
    #expect(file == nil)
    #expect(scratch.store().value(forKey: "a") == nil)
  }
}

@Suite struct SettingsErrorTests {
  @Test("every description says what happened and what to do")
  func descriptionsNameTheRemedy() {
    let file = URL(fileURLWithPath: "/home/u/.config/app/settings.json")
    let remedies: [(SettingsError, String)] = [
      (
        .corruptFile(file, reason: "line 1, column 2: oops"),
        "(SettingsStore.resetAll()), which keeps the bad file beside it as settings.json.corrupt-<time>"
      ),
      (.unreadableFile(file, reason: "Permission denied"), "Check the file's owner and permissions"),
      (
        .undecodableValue(key: "k", expected: "Int", reason: "found a string"),
        "Correct it in the file, or assign a new value"
      ),
      (.unencodableValue(key: "k", reason: "nan"), "cannot be stored as JSON (nan). Nothing was written."),
      (
        .writeFailed(file, reason: "the disk is full"),
        "/home/u/.config/app/settings.json: the disk is full. The file and the values"
      ),
      (.invalidJSON(reason: "line 1, column 1: x"), "The text is not valid JSON: line 1, column 1: x."),
      (.invalidSuiteName("a/b"), "Use a plain directory name such as com.example.app"),
      (.invalidSuiteName("a\nb"), #""a\nb" cannot name a settings suite."#),
      (
        .writeFailed(file, reason: "the disk is full", remedy: "Free some space."),
        "The file and the values in memory are as they were. Free some space."
      ),
    ]
    for (error, remedy) in remedies {
      #expect(error.description.contains(remedy), "\(error)")
      // One line for a log: what happened, then what to do.
      #expect(!error.description.contains("\n"), "\(error)")
      #expect(error.description == [error.summary, error.remedy].compactMap(\.self).joined(separator: " "))
    }
    #expect(SettingsError.invalidJSON(reason: "r").remedy == nil)
  }

  @Test("each error has its own code, and names the file or the key it is about")
  func codesAndSubjects() {
    let file = URL(fileURLWithPath: "/home/u/.config/app/settings.json")
    let errors: [(SettingsError, SettingsError.Code, URL?, String?)] = [
      (.corruptFile(file, reason: "r"), .corruptFile, file, nil),
      (.unreadableFile(file, reason: "r"), .unreadableFile, file, nil),
      (.undecodableValue(key: "k", expected: "Int", reason: "r"), .undecodableValue, nil, "k"),
      (.unencodableValue(key: "k", reason: "r"), .unencodableValue, nil, "k"),
      (.writeFailed(file, reason: "r"), .writeFailed, file, nil),
      (.notARegularFile(file, kind: "a FIFO"), .notARegularFile, file, nil),
      (.invalidJSON(reason: "r"), .invalidJSON, nil, nil),
      (.invalidSuiteName("a/b"), .invalidSuiteName, nil, nil),
    ]
    for (error, code, url, key) in errors {
      #expect(error.code == code)
      #expect(error.url == url && error.key == key, "\(code)")
    }
    #expect(
      errors.map(\.1.description) == [
        "corruptFile", "unreadableFile", "undecodableValue", "unencodableValue", "writeFailed", "notARegularFile",
        "invalidJSON", "invalidSuiteName",
      ])
    #expect(SettingsError.writeFailed(file, reason: "a") != .writeFailed(file, reason: "b"))
  }
}
