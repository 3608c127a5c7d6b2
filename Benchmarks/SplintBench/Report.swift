/// The benchmark's report: Markdown tables, one per group.
struct Report {
  struct Row {
    let what: String
    let ours: Summary
    let anchorName: String
    let anchor: Summary?
    let target: String
    /// Whether the target is met; nil when there is no target.
    let met: Bool?
    var note: String = ""
  }

  private(set) var text = ""
  /// One line per target: what, the result, whether it is met.
  private(set) var targets: [(what: String, result: String, target: String, met: Bool)] = []

  /// The targets as a Markdown table.
  var targetTable: String {
    var table = "| target | measured | met |\n| --- | --- | --- |\n"
    for target in targets {
      table += "| \(target.what): \(target.target) | \(target.result) | \(target.met ? "yes" : "**no**") |\n"
    }
    return table
  }

  mutating func target(_ what: String, result: String, target: String, met: Bool) {
    targets.append((what, result, target, met))
  }

  mutating func line(_ line: String = "") { text += line + "\n" }

  mutating func table(_ title: String, _ rows: [Row], explanation: String = "") {
    line("## \(title)")
    line()
    if !explanation.isEmpty {
      line(explanation)
      line()
    }
    line("| measured | median | p99 | anchor | anchor median | anchor p99 | ratio | target | met |")
    line("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows {
      if let met = row.met, let anchor = row.anchor {
        target(
          "\(row.what) vs \(row.anchorName)", result: ratio(ours: row.ours.median, anchor: anchor.median),
          target: row.target, met: met)
      }
      let anchor = row.anchor
      let cells = [
        row.what + (row.note.isEmpty ? "" : " (\(row.note))"),
        format(row.ours.median), format(row.ours.p99),
        row.anchorName, anchor.map { format($0.median) } ?? "", anchor.map { format($0.p99) } ?? "",
        anchor.map { ratio(ours: row.ours.median, anchor: $0.median) } ?? "",
        row.target, row.met.map { $0 ? "yes" : "**no**" } ?? "",
      ]
      line("| " + cells.joined(separator: " | ") + " |")
    }
    line()
  }

  mutating func distributionTable(_ title: String, _ rows: [(String, Summary, String, Bool?)], explanation: String) {
    line("## \(title)")
    line()
    line(explanation)
    line()
    line("| measured | samples | p50 | p99 | max | target | met |")
    line("| --- | --- | --- | --- | --- | --- | --- |")
    for (what, summary, targetText, met) in rows {
      if let met {
        target(
          what, result: "p50 \(format(summary.median)), p99 \(format(summary.p99))", target: targetText, met: met)
      }
      let cells = [
        what, String(summary.count), format(summary.median), format(summary.p99), format(summary.max), targetText,
        met.map { $0 ? "yes" : "**no**" } ?? "",
      ]
      line("| " + cells.joined(separator: " | ") + " |")
    }
    line()
  }
}
