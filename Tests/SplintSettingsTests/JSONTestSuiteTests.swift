import Foundation
import TestSupport
import Testing

@testable import SplintSettings

/// Nicolas Seriot's JSONTestSuite (`Tests/JSONTestSuite`, MIT): 318 texts that a JSON parser must accept (`y_`), must
/// refuse (`n_`), or may do either with (`i_`).
@Suite struct JSONTestSuiteTests {
  let scratch = Scratch()

  /// The corpus, found from the directory the tests run in (the package's, for `swift test` and script/test-distro):
  /// not from `#filePath`, which names the checkout where the bundle was built, and script/test-distro runs it from
  /// the same checkout seen at another path.
  static let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    .appendingPathComponent("Tests/JSONTestSuite/test_parsing")

  /// Every text of the suite, by name.
  static let texts: [(name: String, bytes: [UInt8])] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.sorted().compactMap { name in
      FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map { (name, Array($0)) }
    }
  }()

  /// `y_` texts strict parsing refuses on purpose: an object with a key twice, whose value would be anyone's guess.
  static let refusedOnPurpose: Set = ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"]

  /// The `i_` texts strict parsing accepts: numbers too large or too small for a `Double` to keep exactly, which it
  /// reads rounded (`set` writes them as given), and 500 levels of nesting, within the limit.
  static let implementationDefinedAccepted: Set = [
    "i_number_double_huge_neg_exp.json", "i_number_real_underflow.json", "i_number_too_big_neg_int.json",
    "i_number_too_big_pos_int.json", "i_number_very_big_negative_int.json", "i_structure_500_nested_arrays.json",
  ]

  /// The `n_` texts a settings file may hold: a trailing comma or comments in an object, and no text at all (a file
  /// with no settings). Nothing else that strict JSON refuses.
  static let settingsFileAccepts: Set = [
    "n_object_trailing_comma.json", "n_object_trailing_comment.json", "n_object_trailing_comment_slash_open.json",
    "n_structure_object_with_comment.json", "n_single_space.json", "n_structure_UTF8_BOM_no_data.json",
    "n_structure_no_data.json",
  ]

  @Test("strict parsing: every y_ accepted but duplicate keys, every n_ refused, i_ as before")
  func strictParsing() {
    #expect(Self.texts.count == 318)
    for (name, bytes) in Self.texts {
      let accepted = (try? JSONValue(parsing: Data(bytes))) != nil
      switch name.first {
      case "y": #expect(accepted != Self.refusedOnPurpose.contains(name), "\(name)")
      case "n": #expect(!accepted, "\(name)")
      default: #expect(accepted == Self.implementationDefinedAccepted.contains(name), "\(name)")
      }
    }
  }

  @Test("a settings file: an object, with comments and a trailing comma; what else strict JSON refuses stays refused")
  func settingsFiles() {
    for (name, bytes) in Self.texts {
      let document = try? SettingsDocument(parsing: bytes)
      let imported = try? JSONParser.object(from: bytes)
      let strict = try? JSONValue(parsing: Data(bytes))
      let isObject = if case .object? = strict { true } else { false }
      let expected =
        Self.settingsFileAccepts.contains(name) || isObject || name == "i_structure_UTF-8_BOM_empty_object.json"
      #expect((document != nil) == expected, "\(name)")
      #expect((imported != nil) == (expected && document?.source?.braces != nil), "\(name)")
      if let document, let strict, case .object(let members) = strict {
        #expect(document.values == members, "\(name)")
      }
    }
  }

  @Test("a settings file holding a text every parser must refuse is reported, and never written over")
  func refusedFilesAreNeverWrittenOver() throws {
    for (name, bytes) in Self.texts where name.hasPrefix("n_") && !Self.settingsFileAccepts.contains(name) {
      let store = SettingsStore(fileURL: scratch.url(name))
      try Data(bytes).write(to: store.fileURL)
      #expect(store.fileError?.code == .corruptFile, "\(name)")
      #expect(throws: SettingsError.self, "\(name)") { try store.set(1, forKey: "k") }
      #expect(FileManager.default.contents(atPath: store.fileURL.path) == Data(bytes), "\(name)")
    }
  }
}
