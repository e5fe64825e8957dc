/// W1 insert, W2 fetch-all, W3a lookups, W3b ranges.
extension BenchRun {
    func runInsert(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W1 insert \(n) items")
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        let ms = try timeAll(t, s, l) { try $0.insertItems(items[0..<n]) }
        if options.wants("W1") {
            figures.add(
                "W1", "insert_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite, lmdb: ms.lmdb,
                caveat: t.caveat != nil)
        }
        let counts = try all(t, s, l) { try $0.itemCount() }
        checks.same("W1", "item count", trellis: counts.trellis, sqlite: counts.sqlite)
        checks.lmdb("W1", "item count", counts.lmdb, sqlite: counts.sqlite)
        checks.expect("W1", counts.trellis == n, "Trellis holds \(counts.trellis) items, expected \(n)")
        if options.wants("W9") {
            figures.add(
                "W9", "bytes_after_w1", "bytes", .lower, trellis: t.bytesOnDisk().map(Double.init),
                sqlite: s.bytesOnDisk().map(Double.init), lmdb: l.bytesOnDisk().map(Double.init))
        }
    }

    func runFetchAll(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W2 fetch all")
        let r = try timedAll(t, s, l) { try $0.fetchAll() }
        figures.add("W2", "fetch_all_ms", "ms", .lower, trellis: r.trellis.1, sqlite: r.sqlite.1, lmdb: r.lmdb.1)
        checks.fetches("W2", trellis: r.trellis.0, sqlite: r.sqlite.0, expectedCount: n)
        checks.lmdbFetch("W2", r.lmdb.0, sqlite: r.sqlite.0)
        checks.equal("W2", "Trellis sum of n1", r.trellis.0.n1Sum, expected: expectedN1Sum)
        // The floor: the same reads from plain Swift arrays, built outside the timing.
        let columns = Floors.Columns(items[0..<n])
        let floor = Measure.milliseconds { columns.fetchAll() }
        figures.add(
            "W2", "fetch_all_vs_floor_ms", "ms", .lower, trellis: r.trellis.1, sqlite: floor.1,
            peer: "floor: plain Swift arrays")
        checks.equal("W2", "floor row count", floor.0.count, expected: r.trellis.0.count)
        checks.equal("W2", "floor sum of id", floor.0.idSum, expected: r.trellis.0.idSum)
        checks.equal("W2", "floor title bytes", floor.0.titleBytes, expected: r.trellis.0.titleBytes)
        checks.equal("W2", "floor sum of n1", floor.0.n1Sum, expected: r.trellis.0.n1Sum)
        checks.equal("W2", "floor sum of n2 to n5", floor.0.otherSum, expected: r.trellis.0.otherSum)
    }

    /// The sum of n1 over items 0 ..< N, straight from the generated data.
    var expectedN1Sum: Int64 { items[0..<n].reduce(0) { $0 &+ $1.n1 } }

    func runLookups(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W3a 10,000 lookups by id")
        let ids = StepRandom.lookupIDs(count: 10_000, itemCount: n)
        let r = try timedAll(t, s, l) { try $0.lookupTitles(ids) }
        figures.add("W3a", "lookups_ms", "ms", .lower, trellis: r.trellis.1, sqlite: r.sqlite.1, lmdb: r.lmdb.1)
        let (a, b, c) = (r.trellis.0, r.sqlite.0, r.lmdb.0)
        checks.same("W3a", "found", trellis: a.found, sqlite: b.found)
        checks.lmdb("W3a", "found", c.found, sqlite: b.found)
        checks.expect("W3a", a.found == ids.count, "found \(a.found) of \(ids.count)")
        let expected = ids.reduce(0) { $0 + items[Int($1) - 1].title.utf8.count }
        checks.same("W3a", "title bytes", trellis: a.titleBytes, sqlite: b.titleBytes)
        checks.lmdb("W3a", "title bytes", c.titleBytes, sqlite: b.titleBytes)
        checks.equal("W3a", "Trellis title bytes", a.titleBytes, expected: expected)
    }

    func runRanges(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W3b 100 score ranges")
        let ranges = StepRandom.scoreRanges(count: 100)
        let r = try timedAll(t, s, l) { try $0.rangeQueries(ranges) }
        figures.add("W3b", "ranges_ms", "ms", .lower, trellis: r.trellis.1, sqlite: r.sqlite.1, lmdb: r.lmdb.1)
        let (a, b, c) = (r.trellis.0, r.sqlite.0, r.lmdb.0)
        checks.same("W3b", "rows", trellis: a.rows, sqlite: b.rows)
        checks.same("W3b", "sum of id", trellis: a.idSum, sqlite: b.idSum)
        checks.close("W3b", "sum of score", trellis: a.scoreSum, sqlite: b.scoreSum)
        checks.lmdb("W3b", "rows", c.rows, sqlite: b.rows)
        checks.lmdb("W3b", "sum of id", c.idSum, sqlite: b.idSum)
        checks.lmdbClose("W3b", "sum of score", c.scoreSum, sqlite: b.scoreSum)
        checks.expect("W3b", a.outOfOrder == 0, "Trellis returned \(a.outOfOrder) rows out of score order")
        checks.expect("W3b", b.outOfOrder == 0, "SQLite returned \(b.outOfOrder) rows out of score order")
        checks.expect("W3b", c.outOfOrder == 0, "LMDB returned \(c.outOfOrder) rows out of score order")
        let expected = ranges.reduce(0) { total, r in
            total + items[0..<n].lazy.filter { $0.score >= r.lower && $0.score < r.upper }.count
        }
        checks.equal("W3b", "Trellis rows", a.rows, expected: expected)

        // The same ranges from an index holding score and id, reading no rows: SQLite gets a (score, id) index for
        // this row only (made and dropped untimed), Trellis reads its (score, id) index's entries, and LMDB's score
        // index holds the id already.
        progress("W3b 100 score ranges, index only")
        try s.prepareIndexOnlyRanges()
        let q: (trellis: (RangeSummary, Double), sqlite: (RangeSummary, Double), lmdb: (RangeSummary, Double))
        do {
            q = try timedAll(t, s, l) { try $0.rangeQueriesIndexOnly(ranges) }
        } catch {
            try? s.finishIndexOnlyRanges()
            throw error
        }
        try s.finishIndexOnlyRanges()
        figures.add(
            "W3b", "ranges_index_only_ms", "ms", .lower, trellis: q.trellis.1, sqlite: q.sqlite.1, lmdb: q.lmdb.1,
            peer: "SQLite with a (score, id) index")
        let (x, y, z) = (q.trellis.0, q.sqlite.0, q.lmdb.0)
        checks.same("W3b", "index-only rows", trellis: x.rows, sqlite: b.rows)
        checks.same("W3b", "index-only sum of id", trellis: x.idSum, sqlite: b.idSum)
        checks.close("W3b", "index-only sum of score", trellis: x.scoreSum, sqlite: b.scoreSum)
        checks.same("W3b", "index-only rows (SQLite)", trellis: y.rows, sqlite: b.rows)
        checks.same("W3b", "index-only sum of id (SQLite)", trellis: y.idSum, sqlite: b.idSum)
        checks.lmdb("W3b", "index-only rows", z.rows, sqlite: b.rows)
        checks.expect("W3b", x.outOfOrder == 0, "Trellis returned \(x.outOfOrder) index entries out of score order")
        checks.expect("W3b", y.outOfOrder == 0, "SQLite returned \(y.outOfOrder) index rows out of score order")
    }
}
