import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// Symlinks re-pointed under a running process, as `ln -sf`, `ln -sfn` and dotfile managers (GNU stow) do: the
/// swap is seen, later changes to the new target are seen, and writes go there, with no restart.
@Suite struct RepointedLinkTests {
  let scratch = Scratch()

  /// Writes `{"theme": "<theme>"}` to `path`, making its directory first.
  func save(theme: String, to path: String) throws {
    let url = scratch.url(path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try #"{"theme": "\#(theme)"}"#.write(to: url, atomically: true, encoding: .utf8)
  }

  /// Runs a shell command in the scratch directory.
  func shell(_ command: String) async throws {
    let output = try await Programs.run(["sh", "-c", "cd \"$0\" && \(command)", scratch.directory.path])
    #expect(output.status == 0, "\(command): \(output.stderr)")
  }

  @Test("ln -sf to a file in another directory: the swap and later changes there are seen; writes go there")
  func fileLinkRepointed() async throws {
    try save(theme: "a", to: "first/settings.json")
    try save(theme: "b", to: "second/settings.json")
    try await shell("mkdir config && ln -s ../first/settings.json config/settings.json")
    let theme = Setting("theme", default: "", store: SettingsStore(fileURL: scratch.url("config", "settings.json")))
    let updates = theme.updates(initial: false)
    #expect(theme.value == "a")

    try await shell("ln -sf ../second/settings.json config/settings.json")
    #expect(await collect(updates) { $0 == "b" } == ["b"])
    try await probe("set", scratch.url("second", "settings.json").path, "theme", #""c""#)
    #expect(await collect(updates) { $0 == "c" } == ["c"])
    theme.value = "d"
    #expect(try String(contentsOf: scratch.url("second", "settings.json"), encoding: .utf8).contains(#""d""#))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: scratch.url("config", "settings.json").path)
        == "../second/settings.json")
  }

  @Test("a file replaced by a link into another directory (GNU stow): later changes there are seen")
  func fileBecomesALink() async throws {
    try save(theme: "a", to: "config/settings.json")
    try save(theme: "b", to: "dotfiles/app/settings.json")
    let theme = Setting("theme", default: "", store: SettingsStore(fileURL: scratch.url("config", "settings.json")))
    let updates = theme.updates(initial: false)

    try await shell("rm config/settings.json && ln -s ../dotfiles/app/settings.json config/settings.json")
    #expect(await collect(updates) { $0 == "b" } == ["b"])
    try await probe("set", scratch.url("dotfiles", "app", "settings.json").path, "theme", #""c""#)
    #expect(await collect(updates) { $0 == "c" } == ["c"])
  }

  @Test("the settings directory's own link re-pointed (ln -sfn): the swap and later changes are seen")
  func directoryLinkRepointed() async throws {
    try save(theme: "a", to: "first/settings.json")
    try save(theme: "b", to: "second/settings.json")
    try await shell("mkdir config && ln -s ../first config/app")
    let store = SettingsStore(fileURL: scratch.url("config", "app", "settings.json"))
    let theme = Setting("theme", default: "", store: store)
    let updates = theme.updates(initial: false)
    #expect(theme.value == "a")

    try await shell("ln -sfn ../second config/app")
    #expect(await collect(updates) { $0 == "b" } == ["b"])
    try await probe("set", scratch.url("second", "settings.json").path, "theme", #""c""#)
    #expect(await collect(updates) { $0 == "c" } == ["c"])
    theme.value = "d"
    #expect(try String(contentsOf: scratch.url("second", "settings.json"), encoding: .utf8).contains(#""d""#))
  }

  @Test("every name along a path: each link on the way, the links they lead through, and where it ends")
  func namesAlong() async throws {
    try await shell(
      "mkdir -p real/dir && ln -s real/dir linked && ln -s linked twice && ln -s ../file real/dir/settings.json")
    let root = scratch.directory.path
    #expect(
      FileIO.namesAlong(root + "/twice/./settings.json") == [
        root + "/twice", root + "/linked", root + "/real/dir/settings.json", root + "/real/file",
      ])
    #expect(FileIO.namesAlong(root + "/real/dir/../dir/x") == [root + "/real/dir/x"])
    #expect(FileIO.namesAlong("/") == ["/"])
  }
}
