/// W8 reopen (before and after compaction) and W9 bytes on disk after compaction.
extension BenchRun {
    func runReopenAndCompaction(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        let expected = try all(t, s, l) { try $0.itemCount() }
        if options.wants("W8") {
            progress("W8 copy as a kill leaves the store, close, reopen and fetch all")
            let killed = try t.copyAsIfKilled()
            let before = try reopenAndFetch(t, s, l, expected: expected.sqlite, label: "before compaction")
            figures.add(
                "W8", "reopen_ms", "ms", .lower, trellis: before.trellis, sqlite: before.sqlite, lmdb: before.lmdb,
                caveat: t.caveat != nil)
            // Trellis alone: the open a killed process's next launch pays (checkpoint plus the journal the automatic
            // policy left), beside the clean reopen above.
            let (summary, ms) = try t.openCopyAndFetchAll(killed)
            checks.expect(
                "W8", summary.count == expected.sqlite,
                "the copy left as by a kill opened with \(summary.count) items, not \(expected.sqlite)")
            figures.add(
                "W8", "reopen_after_kill_ms", "ms", .lower, trellis: ms, sqlite: nil, caveat: t.caveat != nil)
        }
        progress("W9 compaction (SQLite: VACUUM, LMDB: mdb_env_copy2 with MDB_CP_COMPACT)")
        let r = try timedAll(t, s, l) { try $0.compact() }
        if options.wants("W9") {
            figures.add(
                "W9", "compact_ms", "ms", .lower, trellis: r.trellis.0 ? r.trellis.1 : nil, sqlite: r.sqlite.1,
                lmdb: r.lmdb.0 ? r.lmdb.1 : nil, caveat: t.caveat != nil)
            figures.add(
                "W9", "bytes_compacted", "bytes", .lower, trellis: t.bytesOnDisk().map(Double.init),
                sqlite: s.bytesOnDisk().map(Double.init), lmdb: l.bytesOnDisk().map(Double.init))
        }
        if options.wants("W8") {
            let after = try reopenAndFetch(t, s, l, expected: expected.sqlite, label: "after compaction")
            figures.add(
                "W8", "reopen_compacted_ms", "ms", .lower, trellis: after.trellis, sqlite: after.sqlite,
                lmdb: after.lmdb, caveat: t.caveat != nil)
            let rate = { (ms: Double?) in ms.map { Double(expected.sqlite) / ($0 / 1000) } }
            figures.add(
                "W8", "reopen_objects_per_s", "objects/s", .higher, trellis: rate(after.trellis),
                sqlite: rate(after.sqlite), lmdb: rate(after.lmdb), caveat: t.caveat != nil)
        }
    }

    /// Closes (untimed), then reopens and fetches every item: the time to the first complete result, nil for an
    /// engine that cannot reopen.
    private func reopenAndFetch(
        _ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine, expected: Int, label: String
    ) throws -> (
        trellis: Double?, sqlite: Double?, lmdb: Double?
    ) {
        let r = try all(t, s, l) { engine -> (FetchSummary?, Double?) in
            try engine.close()
            let start = Measure.now()
            guard try engine.open() else { return (nil, nil) }
            let summary = try engine.fetchAll()
            return (summary, Double(Measure.now() - start) / 1e6)
        }
        if let a = r.trellis.0, let b = r.sqlite.0 {
            checks.fetches("W8 \(label)", trellis: a, sqlite: b, expectedCount: expected)
        }
        if let c = r.lmdb.0, let b = r.sqlite.0 { checks.lmdbFetch("W8 \(label)", c, sqlite: b) }
        checks.expect("W8", r.sqlite.0?.count == expected, "SQLite reopened with \(r.sqlite.0?.count ?? 0)")
        checks.expect("W8", r.lmdb.0?.count == expected, "LMDB reopened with \(r.lmdb.0?.count ?? 0)")
        return (r.trellis.1, r.sqlite.1, r.lmdb.1)
    }
}
