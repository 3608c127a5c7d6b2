import ArgumentParser
import SplintSettings

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

struct SchemaCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "schema",
    abstract: "Write a JSON Schema beside the settings file, and point the file's \"$schema\" at it, for editors.",
    discussion: """
      Editors that read JSON Schema, VS Code among them, then check the settings file as it is edited and \
      complete its keys and values. The schema goes beside the settings file (settings.schema.json for \
      settings.json), whose path is printed, and the file's "$schema" member is set to "./settings.schema.json". \
      Only that member of the settings file changes: its comments and layout stay. "$schema" is not a setting: \
      list, export, import and reset leave it alone, and set refuses it.

      --from FILE (or - for standard input) gives the schema, which replaces the one there. A program makes a \
      starting one from its declared keys with SettingsSchema(keys:), each key's type and default; the rules the \
      types do not say (a range, a pattern) are added to it by hand. Without --from, the schema beside the file \
      is kept; where there is none, a starting one is written from the kinds of values the file holds now.

      The schema must be JSON Schema draft 2020-12 with the keywords Splint checks, so that the same schema can \
      hold a fleet's values: type, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, \
      multipleOf, minLength, maxLength, pattern, items, prefixItems, minItems, maxItems, properties, \
      additionalProperties, and $defs with $ref within the schema; annotations such as title, description, \
      default and examples, VS Code's own (markdownDescription, ...) and members named x-... are allowed. A \
      schema with another keyword (oneOf, if, format, required, ...) is refused, with the keyword and where it is \
      (exit status 64), and nothing is written: a rule left unchecked would let through what it forbids.

      Each value of the settings file that the schema refuses is told on standard error, with its key, the rule \
      and the value; the schema is written all the same.
      """)

  @OptionGroup var options: StoreOptions

  @Option(
    help: ArgumentHelp(
      "The schema to write: a JSON Schema file, or - for standard input.", valueName: "schema-file"),
    completion: .file(extensions: ["json"]))
  var from: String?

  func run() throws {
    let store = try options.storeForChange()
    let (bytes, writing, source) = try schemaText(for: store)
    let json: JSONValue
    do {
      json = try JSONValue(parsing: Data(bytes))
    } catch {
      let reason = if case .invalidJSON(let reason) = error.situation { reason } else { error.summary }
      throw failure("the schema in \(source) is not JSON: \(reason).", remedy: "Nothing was written.", ExitStatus.usage)
    }
    let schema: JSONSchema
    do {
      schema = try JSONSchema(json)
    } catch {
      throw failure("the schema in \(source) is refused: \(error)", remedy: "Nothing was written.", ExitStatus.usage)
    }
    let before: JSONValue?
    do {
      before = try store.installSchema(writing ? bytes : nil)
    } catch {
      throw failure(error)
    }
    let reference = JSONValue.string(store.schemaReference)
    if let before, before != reference {
      Output.problem(
        "splintctl: note: \"$schema\" in \(store.fileURL.path) was \(before), and is \(reference) now.", remedy: nil)
    }
    for violation in schema.validate(.object(store.values)) {
      Output.problem("splintctl: warning: \(store.fileURL.path): \(violation)", remedy: nil)
    }
    Output.line(store.schemaFileURL.path)
  }

  /// The schema's text, whether to write it, and where it comes from (for messages).
  private func schemaText(for store: SettingsStore) throws -> (bytes: [UInt8], write: Bool, source: String) {
    if let from {
      guard from != "-" else { return (Array(Output.readAll()), true, "standard input") }
      do throws(Output.ReadError) {
        return (Array(try Output.readAll(path: from)), true, from)
      } catch {
        throw failure("cannot read \(from): \(error.reason).", remedy: "Nothing was written.", ExitStatus.usage)
      }
    }
    do {
      if let existing = try store.readSchemaFile() { return (existing, false, store.schemaFileURL.path) }
    } catch {
      throw failure(error)
    }
    return (Array(SettingsSchema(values: store.values).jsonText.utf8), true, "the starting schema")
  }
}
