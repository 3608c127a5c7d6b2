import Foundation

/// What one scenario did: how much it did, what went wrong, and how long it took.
struct Outcome {
  let scenario: String
  var operations = 0
  var failures = 0
  var dataLost = 0
  var seconds = 0.0
  /// What went wrong, in words, for the log.
  var problems: [String] = []
  /// A figure worth reporting, such as a throughput.
  var figure = ""

  init(_ scenario: String) { self.scenario = scenario }

  mutating func fail(_ problem: String) {
    failures += 1
    problems.append(problem)
  }

  mutating func lose(_ problem: String, count: Int = 1) {
    dataLost += count
    problems.append(problem)
  }
}

/// Runs `body` as the scenario `name`, timing it; an error thrown counts as a failure.
func scenario(_ name: String, _ body: (inout Outcome) async throws -> Void) async -> Outcome {
  var outcome = Outcome(name)
  log("==> \(name)")
  let start = Date()
  do {
    try await body(&outcome)
  } catch {
    outcome.fail("stopped: \(error)")
  }
  outcome.seconds = Date().timeIntervalSince(start)
  for problem in outcome.problems.prefix(10) { log("    \(problem)") }
  log(
    String(
      format: "    %d operations, %d failures, %d lost, %.1f s %@", outcome.operations, outcome.failures,
      outcome.dataLost, outcome.seconds, outcome.figure))
  return outcome
}

/// Progress on standard error; the table goes to standard output.
func log(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The summary table, in Markdown.
func table(_ outcomes: [Outcome]) -> String {
  var text = "| scenario | operations | failures | data lost | time | notes |\n| --- | --- | --- | --- | --- | --- |\n"
  for outcome in outcomes {
    let time = String(format: "%.1f s", outcome.seconds)
    text +=
      "| \(outcome.scenario) | \(outcome.operations) | \(outcome.failures) | \(outcome.dataLost) | \(time) | \(outcome.figure) |\n"
  }
  let totals = outcomes.reduce(into: (0, 0, 0, 0.0)) {
    $0 = ($0.0 + $1.operations, $0.1 + $1.failures, $0.2 + $1.dataLost, $0.3 + $1.seconds)
  }
  text += "| **all** | \(totals.0) | \(totals.1) | \(totals.2) | \(String(format: "%.1f s", totals.3)) | |\n"
  return text
}

/// Monotonic seconds.
func seconds(since start: DispatchTime) -> Double {
  Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}
