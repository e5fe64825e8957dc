import Foundation

/// The printed table and the JSON file.
enum Report {
    static func table(_ set: FigureSet, machine: Machine, options: Options, caveat: String?) -> String {
        var rows: [[String]] = [
            ["step", "metric", "unit", "Trellis", "SQLite", "ratio", "target", "", "LMDB", "vs LMDB"]
        ]
        var anyCaveat = false
        for f in set.figures {
            let (target, met) = Targets.verdict(f)
            let verdict = met.map { $0 ? "met" : "MISSED" } ?? ""
            anyCaveat = anyCaveat || f.caveat
            rows.append([
                f.step, f.metric + (f.caveat ? " *" : "") + (f.peer.map { " (peer: \($0))" } ?? ""), f.unit,
                f.trellis.map(format) ?? "—",
                f.sqlite.map(format) ?? "—", f.ratio.map { format($0) + "x" } ?? "—", target,
                verdict + (met != nil && f.caveat ? "*" : ""), f.lmdb.map(format) ?? "—",
                f.lmdbRatio.map { format($0) + "x" } ?? "—",
            ])
        }
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        let rightAligned: Set<Int> = [3, 4, 5, 8, 9]
        var lines: [String] = []
        let runs = options.repeats == 1 ? "1 run" : "median of \(options.repeats) runs"
        lines.append("trellis-bench: scale \(format(options.scale)) (N = \(options.itemCount) items), \(runs)")
        lines.append("machine: \(machine.line)")
        lines.append("Trellis store: \(machine.trellisStorage)")
        if machine.build != "release" { lines.append("warning: a \(machine.build) build; only release figures count") }
        lines.append("")
        for (i, row) in rows.enumerated() {
            let cells = row.enumerated().map { c, text in
                let pad = String(repeating: " ", count: widths[c] - text.count)
                return rightAligned.contains(c) ? pad + text : text + pad
            }
            lines.append(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
            if i == 0 { lines.append(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))) }
        }
        lines.append("")
        lines.append(
            "ratio: SQLite time / Trellis time, or Trellis rate / SQLite rate: above 1 means Trellis is better")
        lines.append("vs LMDB: the same against LMDB (— where a step runs without it)")
        if anyCaveat, let caveat { lines.append("* \(caveat): the Trellis figure does no disk I/O yet") }
        return lines.joined(separator: "\n")
    }

    static func json(_ set: FigureSet, machine: Machine, scale: Double) -> String {
        let machineFields = machine.fields.map { "\(JSONValue.string($0.0).text): \($0.1.text)" }
        var results: [String] = []
        for f in set.figures {
            var fields: [(String, JSONValue)] =
                [
                    ("step", .string(f.step)), ("metric", .string(f.metric)), ("unit", .string(f.unit)),
                    ("trellis", f.trellis.map(JSONValue.number) ?? .null),
                    ("sqlite", f.sqlite.map(JSONValue.number) ?? .null),
                    ("ratio", f.ratio.map(JSONValue.number) ?? .null),
                ]
            fields.append(("lmdb", f.lmdb.map(JSONValue.number) ?? .null))
            fields.append(("lmdb_ratio", f.lmdbRatio.map(JSONValue.number) ?? .null))
            if let peer = f.peer { fields.append(("peer", .string(peer))) }
            results.append("    {" + fields.map { "\"\($0.0)\": \($0.1.text)" }.joined(separator: ", ") + "}")
        }
        return """
            {
              "machine": {\(machineFields.joined(separator: ", "))},
              "scale": \(JSONValue.number(scale).text),
              "results": [
            \(results.joined(separator: ",\n"))
              ]
            }

            """
    }

    /// Three significant digits for small numbers, whole numbers from 1,000 up.
    static func format(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1000 { return String(format: "%.0f", value) }
        if magnitude >= 100 { return String(format: "%.1f", value) }
        if magnitude >= 10 { return String(format: "%.2f", value) }
        if magnitude >= 1 || magnitude == 0 { return String(format: "%.2f", value) }
        return String(format: "%.3g", value)
    }
}

/// Just enough JSON to write the report in a fixed key order.
enum JSONValue {
    case string(String)
    case number(Double)
    case null

    var text: String {
        switch self {
        case .null: return "null"
        case .number(let d):
            guard d.isFinite else { return "null" }
            // Four decimals are more than any figure here can claim; Swift prints the shortest exact form.
            return String(abs(d) < 1e12 ? (d * 10_000).rounded() / 10_000 : d.rounded())
        case .string(let s):
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 {
                        out += String(format: "\\u%04x", scalar.value)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }
    }
}
