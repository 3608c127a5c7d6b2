import Foundation
import TestSupport

/// Runs the built `splintctl` with `arguments`, `input` on standard input.
@discardableResult
func splintctl(
  _ arguments: String..., input: String = "", environment: [String: String]? = nil
) async throws -> ProgramOutput {
  try await Programs.run([Programs.helper("splintctl")] + arguments, input: Data(input.utf8), environment: environment)
}

/// Runs the built `splintctl` with `arguments`, `input` as bytes on standard input.
@discardableResult
func splintctl(_ arguments: [String], bytes: Data) async throws -> ProgramOutput {
  try await Programs.run([Programs.helper("splintctl")] + arguments, input: bytes)
}

/// Runs the built `splintctl` with `arguments` given as bytes, which need not be UTF-8.
@discardableResult
func splintctl(bytes arguments: [[UInt8]]) async throws -> ProgramOutput {
  try await Programs.run(bytes: [Array(Programs.helper("splintctl").utf8)] + arguments)
}

extension ProgramOutput {
  /// Standard error with its lines joined by spaces: a message as it reads, whatever lines splintctl broke it into
  /// (the first line of an error is at most 160 characters; what to do follows, a sentence a line).
  var errorText: String { stderr.split(separator: "\n").joined(separator: " ") }
}
