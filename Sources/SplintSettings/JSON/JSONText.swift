#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// JSON to write that may hold secrets: values, strings given as their UTF-8 bytes (never made a `String`, which no
/// one could wipe), and JSON text copied as it is, in objects. Written by the writer of ``JSONValue``, into storage
/// reserved once for the most it can take (``rendered()``), so that no growth leaves a copy of a secret behind: for
/// request bodies that carry a secret (SplintFleet's vault store).
package indirect enum JSONText: Sendable {
  /// A value, written as ``JSONValue`` writes it (compact).
  case value(JSONValue)
  /// A string, given as its UTF-8 bytes.
  case string(Data)
  /// JSON text, copied as it is (a value read from an answer, to write back unchanged).
  case verbatim(ArraySlice<UInt8>)
  /// An object: its members, in this order.
  case object([(key: String, value: JSONText)])

  /// The text, compact, in a buffer reserved once: the caller wipes it when it holds a secret.
  package func rendered() -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(maximumSize)
    write(to: &output)
    return output
  }

  /// The most bytes the text can take: a string's every byte may take six (`\u00XX`).
  private var maximumSize: Int {
    switch self {
    case .value(let value):
      var text: [UInt8] = []
      value.write(to: &text, format: .compact)
      return text.count
    case .string(let utf8): return utf8.count * 6 + 2
    case .verbatim(let text): return text.count
    case .object(let members):
      return members.reduce(2) { $0 + $1.key.utf8.count * 6 + 4 + $1.value.maximumSize }
    }
  }

  private func write(to output: inout [UInt8]) {
    switch self {
    case .value(let value): value.write(to: &output, format: .compact)
    case .string(let utf8): JSONValue.writeString(utf8: utf8, to: &output)
    case .verbatim(let text): output.append(contentsOf: text)
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, member) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        JSONValue.writeString(member.key, to: &output)
        output.append(UInt8(ascii: ":"))
        member.value.write(to: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }
}
