import Foundation

/// The command line, parsed by hand: `trellis-bench [--scale S] [--only STEPS] [--repeat K] [--json FILE]`.
///
/// A usage mistake prints the usage text and exits with 64 (EX_USAGE); `--help` prints it and exits with 0.
struct Options {
    /// Every step id the bench knows, in the order it runs them.
    static let allSteps = [
        "W1", "W2", "W3a", "W3b", "W4", "W7", "W5a", "W5b", "W6", "W8", "W9", "W10", "S1", "S2", "X1", "M1", "L1", "F1",
        "H1", "R1",
    ]

    var scale = 1.0
    var only: Set<String> = Set(Options.allSteps)
    var repeats = 1
    var jsonPath: String?

    /// N, the workload's size: 100,000 items at scale 1.
    var itemCount: Int { max(100, Int((100_000 * scale).rounded())) }

    func wants(_ step: String) -> Bool { only.contains(step) }
    func wantsAny(_ steps: String...) -> Bool { steps.contains { only.contains($0) } }

    static let usage = """
        usage: trellis-bench [--scale S] [--only STEPS] [--repeat K] [--json FILE]

        Runs the standard workload (../shared/benchmark-workload.md) against Trellis and SQLite in one process,
        alternating engines step by step, and prints one table: step, metric, Trellis, SQLite, ratio (above 1 means
        Trellis is better); the core steps, W10, S1 and X1 also run LMDB (columns LMDB and vs LMDB).

          --scale S      multiply the workload's size (N = 100,000 items at 1); W5's commit count, W6's tree
                         depth, X1's store sizes and R1's bootstrapped store follow it, W3's 10,000 lookups and
                         100 ranges do not (nor R1's 10,000 paced commits, fewer only below scale 1)
          --only STEPS   comma-separated step ids to report: W1 W2 W3a W3b W4 W5a W5b W6 W7 W8 W9 W10 S1 S2 X1 M1 L1 F1 H1
                         R1 (W3 and W5 stand for both halves); setup the chosen steps need still runs, untimed;
                         R1 starts its own /usr/sbin/nats-server -js and is skipped without it
          --repeat K     run everything K times and report medians
          --json FILE    also write the figures as JSON
          --help         print this text

        Exit status: 0 when every check passed, 1 when the engines disagreed or a step failed, 64 on a usage error.
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw UsageError("\(flag) needs a value") }
            return v
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--scale":
                let text = try value(flag)
                guard let s = Double(text), s > 0, s <= 100 else {
                    throw UsageError("--scale takes a number in (0, 100], not '\(text)'")
                }
                options.scale = s
            case "--only":
                options.only = try parseSteps(try value(flag))
            case "--repeat":
                let text = try value(flag)
                guard let k = Int(text), k >= 1, k <= 99 else {
                    throw UsageError("--repeat takes a count from 1 to 99, not '\(text)'")
                }
                options.repeats = k
            case "--json":
                options.jsonPath = try value(flag)
            case "--help", "-h":
                throw UsageError(nil)
            default:
                throw UsageError("unknown argument '\(flag)'")
            }
        }
        return options
    }

    private static func parseSteps(_ list: String) throws(UsageError) -> Set<String> {
        var steps = Set<String>()
        for raw in list.split(separator: ",") {
            let name = raw.trimmingCharacters(in: .whitespaces).uppercased()
            switch name {
            case "W3": steps.formUnion(["W3a", "W3b"])
            case "W5": steps.formUnion(["W5a", "W5b"])
            default:
                guard let step = allSteps.first(where: { $0.uppercased() == name }) else {
                    throw UsageError("unknown step '\(raw)'; known: \(allSteps.joined(separator: ", "))")
                }
                steps.insert(step)
            }
        }
        guard !steps.isEmpty else { throw UsageError("--only names no steps") }
        return steps
    }
}

/// A mistake on the command line; a nil message means `--help`.
struct UsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
