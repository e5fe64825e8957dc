/// S1: the seed test. 1,000 items in a fresh store: add (one save), update (`score += 1`, one save), read (every
/// attribute), repeating the Core Data measurement published on macOS (4.85 ms add, 5.13 ms update, 6.57 ms read).
extension BenchRun {
    func runSeed() throws {
        progress("S1 seed test: 1,000 items added, updated, read")
        let count = 1000
        let t = try TrellisEngine(directory: directory("s1-trellis"), model: model)
        let s = try SQLiteEngine(directory: directory("s1-sqlite"))
        _ = try both(t, s) { try $0.setDurability(.perCommit) }
        let add = try timeBoth(t, s) { try $0.insertItems(items[0..<count]) }
        let update = try timeBoth(t, s) { try $0.incrementScores() }
        var summaries: (trellis: FetchSummary, sqlite: FetchSummary) = (FetchSummary(), FetchSummary())
        let read = try timeBoth(t, s) { engine in
            let summary = try engine.fetchAll()
            if engine === t { summaries.trellis = summary } else { summaries.sqlite = summary }
        }
        let caveat = t.caveat != nil
        figures.add("S1", "add_ms", "ms", .lower, trellis: add.trellis, sqlite: add.sqlite, caveat: caveat)
        figures.add("S1", "update_ms", "ms", .lower, trellis: update.trellis, sqlite: update.sqlite, caveat: caveat)
        figures.add("S1", "read_ms", "ms", .lower, trellis: read.trellis, sqlite: read.sqlite)
        checks.fetches("S1", trellis: summaries.trellis, sqlite: summaries.sqlite, expectedCount: count)
        let expected = items[0..<count].reduce(0.0) { $0 + ($1.score + 1) }
        checks.near("S1", "Trellis sum of score", summaries.trellis.scoreSum, expected: expected)
        try t.close()
        try s.close()
    }
}
