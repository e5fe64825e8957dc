/// W1 insert, W2 fetch-all, W3a lookups, W3b ranges.
extension BenchRun {
    func runInsert(_ t: TrellisEngine, _ s: SQLiteEngine) throws {
        progress("W1 insert \(n) items")
        _ = try both(t, s) { try $0.setDurability(.perCommit) }
        let ms = try timeBoth(t, s) { try $0.insertItems(items[0..<n]) }
        if options.wants("W1") {
            figures.add(
                "W1", "insert_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite, caveat: t.caveat != nil)
        }
        let counts = try both(t, s) { try $0.itemCount() }
        checks.same("W1", "item count", trellis: counts.trellis, sqlite: counts.sqlite)
        checks.expect("W1", counts.trellis == n, "Trellis holds \(counts.trellis) items, expected \(n)")
        if options.wants("W9") {
            figures.add(
                "W9", "bytes_after_w1", "bytes", .lower, trellis: t.bytesOnDisk().map(Double.init),
                sqlite: s.bytesOnDisk().map(Double.init))
        }
    }

    func runFetchAll(_ t: TrellisEngine, _ s: SQLiteEngine) throws {
        progress("W2 fetch all")
        var summaries: (trellis: FetchSummary, sqlite: FetchSummary) = (FetchSummary(), FetchSummary())
        let ms = try timeBoth(t, s) { engine in
            let summary = try engine.fetchAll()
            if engine === t { summaries.trellis = summary } else { summaries.sqlite = summary }
        }
        figures.add("W2", "fetch_all_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite)
        checks.fetches("W2", trellis: summaries.trellis, sqlite: summaries.sqlite, expectedCount: n)
        checks.equal("W2", "Trellis sum of n1", summaries.trellis.n1Sum, expected: expectedN1Sum)
    }

    /// The sum of n1 over items 0 ..< N, straight from the generated data.
    var expectedN1Sum: Int64 { items[0..<n].reduce(0) { $0 &+ $1.n1 } }

    func runLookups(_ t: TrellisEngine, _ s: SQLiteEngine) throws {
        progress("W3a 10,000 lookups by id")
        let ids = StepRandom.lookupIDs(count: 10_000, itemCount: n)
        var summaries: (trellis: LookupSummary, sqlite: LookupSummary) = (LookupSummary(), LookupSummary())
        let ms = try timeBoth(t, s) { engine in
            let summary = try engine.lookupTitles(ids)
            if engine === t { summaries.trellis = summary } else { summaries.sqlite = summary }
        }
        figures.add("W3a", "lookups_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite)
        checks.same("W3a", "found", trellis: summaries.trellis.found, sqlite: summaries.sqlite.found)
        checks.expect("W3a", summaries.trellis.found == ids.count, "found \(summaries.trellis.found) of \(ids.count)")
        let expected = ids.reduce(0) { $0 + items[Int($1) - 1].title.utf8.count }
        checks.same("W3a", "title bytes", trellis: summaries.trellis.titleBytes, sqlite: summaries.sqlite.titleBytes)
        checks.equal("W3a", "Trellis title bytes", summaries.trellis.titleBytes, expected: expected)
    }

    func runRanges(_ t: TrellisEngine, _ s: SQLiteEngine) throws {
        progress("W3b 100 score ranges")
        let ranges = StepRandom.scoreRanges(count: 100)
        var summaries: (trellis: RangeSummary, sqlite: RangeSummary) = (RangeSummary(), RangeSummary())
        let ms = try timeBoth(t, s) { engine in
            let summary = try engine.rangeQueries(ranges)
            if engine === t { summaries.trellis = summary } else { summaries.sqlite = summary }
        }
        figures.add("W3b", "ranges_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite)
        let (a, b) = summaries
        checks.same("W3b", "rows", trellis: a.rows, sqlite: b.rows)
        checks.same("W3b", "sum of id", trellis: a.idSum, sqlite: b.idSum)
        checks.close("W3b", "sum of score", trellis: a.scoreSum, sqlite: b.scoreSum)
        checks.expect("W3b", a.outOfOrder == 0, "Trellis returned \(a.outOfOrder) rows out of score order")
        checks.expect("W3b", b.outOfOrder == 0, "SQLite returned \(b.outOfOrder) rows out of score order")
        let expected = ranges.reduce(0) { total, r in
            total + items[0..<n].lazy.filter { $0.score >= r.lower && $0.score < r.upper }.count
        }
        checks.equal("W3b", "Trellis rows", a.rows, expected: expected)
    }
}
