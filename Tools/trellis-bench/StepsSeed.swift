import Foundation
import Trellis

/// S1: the seed test. 1,000 items in a fresh store: add (one save), update (`score += 1`, one save), read (every
/// attribute), repeating the Core Data measurement published on macOS (4.85 ms add, 5.13 ms update, 6.57 ms read).
extension BenchRun {
    func runSeed() throws {
        progress("S1 seed test: 1,000 items added, updated, read")
        let count = 1000
        let t = try TrellisEngine(directory: directory("s1-trellis"), model: model)
        let s = try SQLiteEngine(directory: directory("s1-sqlite"))
        let l = try LMDBEngine(directory: directory("s1-lmdb"))
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        let add = try timeAll(t, s, l) { try $0.insertItems(items[0..<count]) }
        let update = try timeAll(t, s, l) { try $0.incrementScores() }
        let read = try timedAll(t, s, l) { try $0.fetchAll() }
        let caveat = t.caveat != nil
        figures.add(
            "S1", "add_ms", "ms", .lower, trellis: add.trellis, sqlite: add.sqlite, lmdb: add.lmdb, caveat: caveat)
        figures.add(
            "S1", "update_ms", "ms", .lower, trellis: update.trellis, sqlite: update.sqlite, lmdb: update.lmdb,
            caveat: caveat)
        figures.add("S1", "read_ms", "ms", .lower, trellis: read.trellis.1, sqlite: read.sqlite.1, lmdb: read.lmdb.1)
        checks.fetches("S1", trellis: read.trellis.0, sqlite: read.sqlite.0, expectedCount: count)
        checks.lmdbFetch("S1", read.lmdb.0, sqlite: read.sqlite.0)
        let expected = items[0..<count].reduce(0.0) { $0 + ($1.score + 1) }
        checks.near("S1", "Trellis sum of score", read.trellis.0.scoreSum, expected: expected)
        try t.close()
        try s.close()
        try l.close()
        // The floor: one fdatasync of as many bytes as each of the two durable commits put in the journal.
        var commits: [JournalRecord] = []
        _ = try JournalReader(directory: URL(fileURLWithPath: directory("s1-trellis"))).forEachRecord {
            if !$0.isMigration { commits.append($0) }
        }
        checks.expect(
            "S1", commits.count >= 2, "the journal holds \(commits.count) commits, expected the add and update")
        guard commits.count >= 2 else { return }
        let addBytes = commits[commits.count - 2].frameBytes
        let updateBytes = commits[commits.count - 1].frameBytes
        progress("S1 floor: the add wrote \(addBytes) bytes, the update \(updateBytes)")
        let floorDirectory = directory("s1-floor")
        try FileManager.default.createDirectory(atPath: floorDirectory, withIntermediateDirectories: true)
        figures.add(
            "S1", "add_vs_floor_ms", "ms", .lower, trellis: add.trellis,
            sqlite: Floors.syncMilliseconds(bytes: addBytes, directory: floorDirectory),
            peer: "floor: one fdatasync of the same bytes")
        figures.add(
            "S1", "update_vs_floor_ms", "ms", .lower, trellis: update.trellis,
            sqlite: Floors.syncMilliseconds(bytes: updateBytes, directory: floorDirectory),
            peer: "floor: one fdatasync of the same bytes")
    }
}
