import Foundation

/// X1: what a one-object commit costs in a large store against a small one (1,000,000 and 10,000 items at scale 1),
/// with relaxed durability so the figure is the commit's own work, not the disk's; plus the time to take a snapshot.
///
/// The stores hold the workload's first items (ids 1 … size); the commits insert later items with the ids that follow.
extension BenchRun {
    func runScaling() throws {
        let small = max(100, n / 10)
        let large = 10 * n
        let warmup = 20
        let measured = 200
        progress("X1 one-item commits into \(small) and \(large) items")
        let stream = ItemGenerator.items(large + warmup + measured)
        var medians: [String: [Int: Double]] = ["Trellis": [:], "SQLite": [:], "LMDB": [:]]
        var snapshotNanos: [String: Double] = [:]
        for size in [small, large] {
            let loaded = stream[0..<size]
            var commits = Array(stream[large..<(large + warmup + measured)])
            for i in commits.indices { commits[i].id = Int64(size + 1 + i) }
            let label = "x1-\(size)"
            var names = nextTrellisFirst() ? ["Trellis", "SQLite"] : ["SQLite", "Trellis"]
            names.insert("LMDB", at: lmdbPlace)
            for name in names {
                let dir = directory("\(label)-\(name.lowercased())")
                let engine: any BenchEngine
                switch name {
                case "Trellis": engine = try TrellisEngine(directory: dir, model: model)
                case "SQLite": engine = try SQLiteEngine(directory: dir)
                default: engine = try LMDBEngine(directory: dir)
                }
                try engine.setDurability(.relaxed)
                try engine.insertItems(loaded)
                var micros: [Double] = []
                for item in commits {
                    let (_, ms) = try Measure.milliseconds { try engine.insertEach([item][...]) }
                    micros.append(ms * 1000)
                }
                medians[name]![size] = Measure.median(Array(micros.dropFirst(warmup)))
                let count = try engine.itemCount()
                checks.expect(
                    "X1", count == size + commits.count, "\(name) holds \(count) items, not \(size + commits.count)")
                if size == large, name != "SQLite" {
                    snapshotNanos[name] = engine.snapshotTakeNanoseconds(iterations: 1_000_000)
                }
                try engine.close()
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        let (t, s, l) = (medians["Trellis"]!, medians["SQLite"]!, medians["LMDB"]!)
        let caveat = !TrellisStorage.isPersistent
        figures.add(
            "X1", "commit_small_us", "µs", .lower, trellis: t[small], sqlite: s[small], lmdb: l[small], caveat: caveat)
        figures.add(
            "X1", "commit_large_us", "µs", .lower, trellis: t[large], sqlite: s[large], lmdb: l[large], caveat: caveat)
        let growth = { (m: [Int: Double]) -> Double? in
            guard let a = m[small], let b = m[large], a > 0 else { return nil }
            return b / a
        }
        figures.add(
            "X1", "large_over_small", "x", .lower, trellis: growth(t), sqlite: growth(s), lmdb: growth(l),
            caveat: caveat)
        figures.add(
            "X1", "snapshot_take_ns", "ns", .lower, trellis: snapshotNanos["Trellis"], sqlite: nil,
            lmdb: snapshotNanos["LMDB"])
    }
}
