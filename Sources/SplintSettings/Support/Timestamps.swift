#if canImport(FoundationEssentials)
  package import FoundationEssentials
#else
  package import Foundation
#endif

/// How the module and its users write a time as text: the one ISO 8601 form for what machines read (a copy's
/// `"$fleet"` member, a change's record, the name a bad file is kept under, `--json` output), and the form a
/// sentence shows.
extension Date {
  /// The time in UTC, to the millisecond, in ISO 8601: "2026-11-22T10:15:00.123Z".
  package var isoTimestamp: String { formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }

  /// The time `text` names as ``isoTimestamp`` writes it, or without its fraction ("2026-11-22T10:15:00Z"); nil
  /// when it names none.
  package static func parseISOTimestamp(_ text: String) -> Date? {
    (try? ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? ISO8601FormatStyle().parse(text))
  }

  /// The time in UTC, to the second, as a log line would show it: "2026-11-26 08:15:02 UTC".
  package var timestampText: String {
    let text = formatted(
      .iso8601.year().month().day().dateSeparator(.dash).dateTimeSeparator(.space)
        .time(includingFractionalSeconds: false).timeSeparator(.colon))
    return (text.hasSuffix("Z") ? String(text.dropLast()) : text) + " UTC"
  }
}
