/// W8 reopen (before and after compaction) and W9 bytes on disk after compaction.
extension BenchRun {
    func runReopenAndCompaction(_ t: TrellisEngine, _ s: SQLiteEngine) throws {
        let expected = try both(t, s) { try $0.itemCount() }
        if options.wants("W8") {
            progress("W8 close, reopen and fetch all")
            let before = try reopenAndFetch(t, s, expected: expected.sqlite, label: "before compaction")
            figures.add(
                "W8", "reopen_ms", "ms", .lower, trellis: before.trellis, sqlite: before.sqlite, caveat: t.caveat != nil
            )
        }
        progress("W9 compaction (SQLite: VACUUM)")
        var compacted: (trellis: Bool, sqlite: Bool) = (false, false)
        let ms = try timeBoth(t, s) { engine in
            let done = try engine.compact()
            if engine === t { compacted.trellis = done } else { compacted.sqlite = done }
        }
        if options.wants("W9") {
            figures.add(
                "W9", "compact_ms", "ms", .lower, trellis: compacted.trellis ? ms.trellis : nil, sqlite: ms.sqlite,
                caveat: t.caveat != nil)
            figures.add(
                "W9", "bytes_compacted", "bytes", .lower, trellis: t.bytesOnDisk().map(Double.init),
                sqlite: s.bytesOnDisk().map(Double.init))
        }
        if options.wants("W8") {
            let after = try reopenAndFetch(t, s, expected: expected.sqlite, label: "after compaction")
            figures.add(
                "W8", "reopen_compacted_ms", "ms", .lower, trellis: after.trellis, sqlite: after.sqlite,
                caveat: t.caveat != nil)
            let rate = { (ms: Double?) in ms.map { Double(expected.sqlite) / ($0 / 1000) } }
            figures.add(
                "W8", "reopen_objects_per_s", "objects/s", .higher, trellis: rate(after.trellis),
                sqlite: rate(after.sqlite), caveat: t.caveat != nil)
        }
    }

    /// Closes (untimed), then reopens and fetches every item: the time to the first complete result, nil for an
    /// engine that cannot reopen.
    private func reopenAndFetch(
        _ t: TrellisEngine, _ s: SQLiteEngine, expected: Int, label: String
    ) throws -> (
        trellis: Double?, sqlite: Double?
    ) {
        var summaries: (trellis: FetchSummary?, sqlite: FetchSummary?) = (nil, nil)
        let ms = try both(t, s) { engine -> Double? in
            try engine.close()
            let start = Measure.now()
            guard try engine.open() else { return nil }
            let summary = try engine.fetchAll()
            let elapsed = Double(Measure.now() - start) / 1e6
            if engine === t { summaries.trellis = summary } else { summaries.sqlite = summary }
            return elapsed
        }
        if let a = summaries.trellis, let b = summaries.sqlite {
            checks.fetches("W8 \(label)", trellis: a, sqlite: b, expectedCount: expected)
        }
        checks.expect("W8", summaries.sqlite?.count == expected, "SQLite reopened with \(summaries.sqlite?.count ?? 0)")
        return ms
    }
}
