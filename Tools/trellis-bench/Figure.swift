import Foundation

/// One measured figure of one step for both engines: a row of the table and an entry of the JSON `results`.
struct Figure {
    enum Better {
        /// Times, sizes: the ratio is SQLite / Trellis.
        case lower
        /// Throughputs: the ratio is Trellis / SQLite.
        case higher
    }

    var step: String
    var metric: String
    var unit: String
    var better: Better
    var trellis: Double?
    var sqlite: Double?
    /// The third engine's figure; nil for steps measured without it.
    var lmdb: Double?
    /// The Trellis figure does not yet measure what the workload asks (see `TrellisStorage.caveat`).
    var caveat = false
    /// What the second column measures when it is not SQLite (L1 compares with what an app writes by hand).
    var peer: String?

    /// Above 1 means Trellis is better; nil when either side is missing or zero.
    var ratio: Double? {
        guard let t = trellis, let s = sqlite, t > 0, s > 0 else { return nil }
        return better == .lower ? s / t : t / s
    }

    /// Trellis against LMDB, oriented as `ratio`: above 1 means Trellis is better.
    var lmdbRatio: Double? {
        guard let t = trellis, let l = lmdb, t > 0, l > 0 else { return nil }
        return better == .lower ? l / t : t / l
    }

    var key: String { "\(step)/\(metric)" }
}

/// The figures of one run, in the order the steps produced them.
struct FigureSet {
    private(set) var figures: [Figure] = []

    mutating func add(
        _ step: String, _ metric: String, _ unit: String, _ better: Figure.Better, trellis: Double?, sqlite: Double?,
        lmdb: Double? = nil, caveat: Bool = false, peer: String? = nil
    ) {
        figures.append(
            Figure(
                step: step, metric: metric, unit: unit, better: better, trellis: trellis, sqlite: sqlite, lmdb: lmdb,
                caveat: caveat, peer: peer))
    }

    /// Per figure, the median over runs of each engine's value (runs that lack a value are skipped).
    static func medians(_ runs: [FigureSet]) -> FigureSet {
        guard let first = runs.first else { return FigureSet() }
        var out = FigureSet()
        for template in first.figures {
            let same = runs.compactMap { run in run.figures.first { $0.key == template.key } }
            var figure = template
            figure.trellis = Measure.median(same.compactMap(\.trellis))
            figure.sqlite = Measure.median(same.compactMap(\.sqlite))
            figure.lmdb = Measure.median(same.compactMap(\.lmdb))
            out.figures.append(figure)
        }
        return out
    }
}

/// The performance targets, checked against a run's figures.
enum Targets {
    enum Rule {
        /// The ratio (Trellis better above 1) must reach this.
        case ratioAtLeast(Double)
        /// Trellis's own figure must stay at or below this.
        case trellisAtMost(Double)
    }

    static let rules: [String: Rule] = [
        "W1/insert_ms": .ratioAtLeast(4), "W2/fetch_all_ms": .ratioAtLeast(10), "W3a/lookups_ms": .ratioAtLeast(20),
        "W3b/ranges_ms": .ratioAtLeast(20), "W4/update_ms": .ratioAtLeast(4), "W5a/commits_per_s": .ratioAtLeast(1.2),
        "W5b/commits_per_s": .ratioAtLeast(5), "W6/cascade_delete_ms": .ratioAtLeast(5),
        "W7/lookup_p99_us": .trellisAtMost(10), "W7/count_p50_us": .ratioAtLeast(10),
        "W8/reopen_ms": .ratioAtLeast(1), "W8/reopen_compacted_ms": .ratioAtLeast(1),
        "W9/bytes_compacted": .ratioAtLeast(2),
        "W10/peak_bytes_per_object": .trellisAtMost(200), "S1/add_ms": .ratioAtLeast(5),
        "S1/update_ms": .ratioAtLeast(5), "S1/read_ms": .ratioAtLeast(5), "X1/large_over_small": .trellisAtMost(2),
        "M1/migrate_reopen_fetch_ms": .ratioAtLeast(1),
        "L1/delivery_p50_us": .ratioAtLeast(20), "S2/update_ms": .ratioAtLeast(1), "S2/query_ms": .ratioAtLeast(1),
        "S2/update_vs_blob_ms": .ratioAtLeast(5), "S2/query_vs_blob_ms": .ratioAtLeast(5),
        "L1/delivery_p99_us": .trellisAtMost(1_000),
        // Issue 21's floors: Trellis within 1.5x of what the step costs with no engine.
        "W2/fetch_all_vs_floor_ms": .ratioAtLeast(1 / 1.5), "S1/add_vs_floor_ms": .ratioAtLeast(1 / 1.5),
        "S1/update_vs_floor_ms": .ratioAtLeast(1 / 1.5),
    ]

    /// The target as text, and whether the figure meets it (nil: no target, or nothing to judge).
    static func verdict(_ figure: Figure) -> (target: String, met: Bool?) {
        guard let rule = rules[figure.key] else { return ("", nil) }
        switch rule {
        case .ratioAtLeast(let r):
            return ("≥ \(short(r))x", figure.ratio.map { $0 >= r })
        case .trellisAtMost(let v):
            return ("≤ \(short(v)) \(figure.unit)", figure.trellis.map { $0 <= v })
        }
    }

    private static func short(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.3g", value)
    }
}
