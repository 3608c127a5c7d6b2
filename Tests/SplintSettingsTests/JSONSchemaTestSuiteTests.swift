import Foundation
import Testing

@testable import SplintSettings

/// JSON Schema's official test suite, draft 2020-12 (`Tests/JSONSchemaTestSuite`, MIT; its README says which
/// commit): every group of every file is compiled, and every case of a group that compiles must give the suite's
/// answer. A group whose schema has a keyword `JSONSchema` does not check is refused when compiled, whatever its
/// cases expect. `Tests/JSONSchemaTestSuite/left-out.txt` lists every group refused and every case that does not give
/// the suite's answer, with why: the test fails when it is not exactly what happens, so that the list cannot rot.
@Suite struct JSONSchemaTestSuiteTests {
  /// The suite, found from the directory the tests run in (see JSONTestSuiteTests).
  static let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    .appendingPathComponent("Tests/JSONSchemaTestSuite")

  struct Group {
    let file: String
    let description: String
    let schema: JSONValue
    let cases: [(description: String, data: JSONValue, valid: Bool)]
  }

  /// Every group of every file, files in name order (`optional/...` after the others).
  static func groups() throws -> [Group] {
    let root = directory.appendingPathComponent("draft2020-12")
    let names = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".json") }.sorted()
    let optional = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("optional").path)
      .filter { $0.hasSuffix(".json") }.sorted().map { "optional/" + $0 }
    var groups: [Group] = []
    for name in names + optional {
      let text = try Data(contentsOf: root.appendingPathComponent(name))
      guard case .array(let entries) = try JSONValue(parsing: text) else { throw Unexpected(name) }
      for entry in entries {
        guard case .object(let group) = entry, case .string(let description)? = group["description"],
          let schema = group["schema"], case .array(let tests)? = group["tests"]
        else { throw Unexpected(name) }
        var cases: [(String, JSONValue, Bool)] = []
        for test in tests {
          guard case .object(let test) = test, case .string(let description)? = test["description"],
            let data = test["data"], case .bool(let valid)? = test["valid"]
          else { throw Unexpected(name) }
          cases.append((description, data, valid))
        }
        groups.append(Group(file: name, description: description, schema: schema, cases: cases))
      }
    }
    return groups
  }

  struct Unexpected: Error {
    let file: String
    init(_ file: String) { self.file = file }
  }

  /// The lines of left-out.txt that are not comments or blank.
  static func leftOut() throws -> [String] {
    try String(contentsOf: directory.appendingPathComponent("left-out.txt"), encoding: .utf8)
      .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
  }

  @Test("every case of a group whose schema compiles gives the suite's answer; the rest is left-out.txt exactly")
  func officialSuite() throws {
    let groups = try Self.groups()
    #expect(Set(groups.map(\.file)).count == 59, "46 files and 13 optional ones")
    var happened: [String] = []
    var (passed, compiled, refusedCases) = (0, 0, 0)
    for group in groups {
      let schema: JSONSchema
      do {
        schema = try JSONSchema(group.schema)
      } catch {
        happened.append("\(group.file)\t\(group.description)\trefused: \(Self.summary(of: error))")
        refusedCases += group.cases.count
        continue
      }
      compiled += 1
      for test in group.cases {
        if schema.isValid(test.data) == test.valid {
          passed += 1
        } else {
          happened.append("\(group.file)\t\(group.description)\tcase \"\(test.description)\" differs")
        }
      }
    }
    let listed = try Self.leftOut()
    #expect(Set(listed).count == listed.count, "a line twice in left-out.txt")
    let unlisted = happened.filter { !listed.contains($0) }
    let stale = listed.filter { !happened.contains($0) }
    #expect(unlisted.isEmpty, "happened, but not in left-out.txt:\n\(unlisted.joined(separator: "\n"))")
    #expect(stale.isEmpty, "in left-out.txt, but did not happen:\n\(stale.joined(separator: "\n"))")
    print(
      """
      JSONSchemaTestSuiteTests: \(passed) cases of \(compiled) groups pass; \(groups.count - compiled) groups \
      (\(refusedCases) cases) refused; \(happened.count - (groups.count - compiled)) cases differ.
      """)
    #expect(passed == 481 && compiled == 140, "the suite's cases run: \(passed) of \(compiled) groups")
  }

  /// What left-out.txt says of a refusal: its kind, keyword and where.
  static func summary(of error: JSONSchemaError) -> String {
    let kind =
      switch error.kind {
      case .unsupportedKeyword: "keyword not supported"
      case .requiredAtTopLevel: "required at the top level"
      case .unknownKeyword: "no keyword of draft 2020-12"
      case .invalidValue: "invalid value"
      case .notASchema: "not a schema"
      case .remoteReference: "$ref to another document or an anchor"
      case .unresolvedReference: "$ref to no schema"
      case .referenceLoop: "$ref loop"
      case .pattern(let kind): "pattern \(kind)"
      }
    return "\(kind)\(error.keyword.map { " \($0)" } ?? "") at \(error.location)"
  }
}
