/// A row of a table of distributions: latencies seen by another process.
struct Distribution {
  let what: String
  let summary: Summary
  var target = ""
  /// Whether the target is met; nil when there is no target.
  var met: Bool?
  /// The distribution the target compares with, for the targets table.
  var versus: Summary?
}

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
    /// The median a target without an anchor must stay under, for the targets table to show the gap.
    var limit: Double?
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
          "\(row.what) vs \(row.anchorName)",
          result: "\(format(row.ours.median)) vs \(format(anchor.median)): "
            + ratio(ours: row.ours.median, anchor: anchor.median),
          target: row.target, met: met)
      } else if let met = row.met {
        let gap = row.limit.map { limit in
          ": " + format(abs(row.ours.median - limit)) + (row.ours.median < limit ? " under" : " over")
        }
        target(row.what, result: "median \(format(row.ours.median))" + (gap ?? ""), target: row.target, met: met)
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

  mutating func distributionTable(_ title: String, _ rows: [Distribution], explanation: String) {
    line("## \(title)")
    line()
    line(explanation)
    line()
    line("| measured | samples | p50 | p99 | max | target | met |")
    line("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows {
      let summary = row.summary
      if let met = row.met {
        let result =
          if let versus = row.versus {
            "p50 \(format(summary.median)) vs \(format(versus.median)): "
              + ratio(ours: summary.median, anchor: versus.median)
          } else {
            "p50 \(format(summary.median)), p99 \(format(summary.p99))"
          }
        target(row.what, result: result, target: row.target, met: met)
      }
      let cells = [
        row.what, String(summary.count), format(summary.median), format(summary.p99), format(summary.max), row.target,
        row.met.map { $0 ? "yes" : "**no**" } ?? "",
      ]
      line("| " + cells.joined(separator: " | ") + " |")
    }
    line()
  }
}
