extension FleetCopy {
  /// A fleet's value, as a cluster holds it: one JSON value (strict JSON: no comments, no trailing commas), and its
  /// text when the value would not write it back the same (a number with more digits than a `Double` keeps); or
  /// why it is not JSON.
  ///
  /// - Throws: ``SettingsError/invalidJSON(reason:)``, with the line and column where it goes wrong.
  package static func parseValue(_ bytes: [UInt8]) throws(SettingsError) -> (value: JSONValue, text: String?) {
    let parsed: (value: JSONValue, exact: Bool)
    do throws(JSONSyntaxError) {
      parsed = try JSONParser.valueAndExactness(from: bytes)
    } catch {
      throw .invalidJSON(reason: error.description)
    }
    guard !parsed.exact else { return (parsed.value, nil) }
    let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    let trimmed = bytes.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
    return (parsed.value, String(decoding: trimmed, as: UTF8.self))
  }
}
