import Foundation
import TestSupport
import Testing

/// Arguments that are not UTF-8: refused before they are parsed, since CommandLine.arguments would turn their bad
/// bytes into U+FFFD and make different keys one.
@Suite("splintctl arguments that are not UTF-8")
struct ArgumentBytesTests {
  let scratch = Scratch()
  var file: String { scratch.url("settings.json").path }

  /// `text` as UTF-8 bytes.
  func utf8(_ text: String...) -> [[UInt8]] { text.map { Array($0.utf8) } }

  @Test func aKeyThatIsNotUTF8IsAUsageErrorAndNothingIsWritten() async throws {
    for key: [UInt8] in [[0x63, 0x61, 0x66, 0xE9], [0x63, 0x61, 0x66, 0xE8]] {  // "café", "cafè" in Latin-1
      let output = try await splintctl(bytes: utf8("set", "--file", file) + [key] + utf8("1"))
      #expect(output.status == 64)
      #expect(output.stdout.isEmpty)
      #expect(output.stderr.hasPrefix("splintctl: argument 4 is not valid UTF-8 at byte 4: \"caf\\x"))
      #expect(output.stderr.contains("convert it first, for example with iconv -f LATIN1 -t UTF-8"))
      #expect(output.stderr.split(separator: "\n").count == 2, "what happened, then what to do")
    }
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test func aValueThatIsNotUTF8IsAUsageErrorAndTheOldValueStays() async throws {
    try await splintctl("set", "--file", file, "name", "Alice")
    let value: [UInt8] = Array(#"a\b"#.utf8) + [0x01, 0xFF, 0xFE] + Array("ok".utf8)
    let output = try await splintctl(bytes: utf8("set", "--file", file, "name") + [value])
    #expect(output.status == 64)
    #expect(
      output.errorText.hasPrefix(#"splintctl: argument 5 is not valid UTF-8 at byte 5: "a\\b\x01\xff\xfeok". "#),
      "\(output.stderr)")
    #expect(try await splintctl("get", "--file", file, "name").stdout == "\"Alice\"\n")
  }

  @Test func aLongArgumentIsShownAroundItsFirstBadByte() async throws {
    let value =
      [UInt8](repeating: UInt8(ascii: "a"), count: 100) + [0xFF] + Array(repeating: UInt8(ascii: "b"), count: 100)
    let output = try await splintctl(bytes: utf8("set", "--file", file, "k") + [value])
    #expect(output.status == 64)
    let shown = "...\(String(repeating: "a", count: 32))\\xff\(String(repeating: "b", count: 31))..."
    #expect(output.errorText.hasPrefix("splintctl: argument 5 is not valid UTF-8 at byte 101: \"\(shown)\". "))
  }

  @Test(arguments: [
    ["get", "--file", "FILE", "BAD"], ["delete", "--file", "FILE", "BAD"], ["list", "--file", "BAD"],
    ["get", "--suite", "BAD", "k"], ["watch", "--file", "FILE", "BAD"], ["secret", "read", "BAD", "alice"],
  ])
  func everyCommandRefusesThem(arguments: [String]) async throws {
    let bytes = arguments.map { $0 == "FILE" ? Array(file.utf8) : $0 == "BAD" ? [0x6B, 0xC3] : Array($0.utf8) }
    let output = try await splintctl(bytes: bytes)
    #expect(output.status == 64)
    let position = (arguments.firstIndex(of: "BAD") ?? 0) + 1
    #expect(output.errorText.hasPrefix("splintctl: argument \(position) is not valid UTF-8 at byte 2: \"k\\xc3\". "))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test func aKeyThatIsUTF8BeyondASCIIWorks() async throws {
    for (key, value) in [("café", "1"), ("日本語", "2"), ("ключ", "3"), ("🔑", "4")] {
      #expect(try await splintctl("set", "--file", file, key, value).status == 0)
    }
    #expect(try await splintctl("get", "--file", file, "café").stdout == "1\n")
    #expect(try await splintctl("get", "--file", file, "日本語").stdout == "2\n")
    #expect(try await splintctl("get", "--file", file, "ключ").stdout == "3\n")
    #expect(try await splintctl("get", "--file", file, "🔑").stdout == "4\n")
  }
}
