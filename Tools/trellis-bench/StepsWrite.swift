/// W4 update, W5 small commits, W6 cascade delete.
extension BenchRun {
    func runUpdate(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W4 score += 1 on \(n) items")
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        let ms = try timeAll(t, s, l) { try $0.incrementScores() }
        if options.wants("W4") {
            figures.add(
                "W4", "update_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite, lmdb: ms.lmdb,
                caveat: t.caveat != nil)
        }
        let sums = try all(t, s, l) { try $0.fetchAll() }
        checks.close(
            "W4", "sum of score after the update", trellis: sums.trellis.scoreSum, sqlite: sums.sqlite.scoreSum)
        checks.lmdbClose("W4", "sum of score after the update", sums.lmdb.scoreSum, sqlite: sums.sqlite.scoreSum)
        let expected = items[0..<n].reduce(0.0) { $0 + ($1.score + 1) }
        checks.near(
            "W4", "Trellis sum of score", sums.trellis.scoreSum, expected: expected,
            tolerance: 1e-6)
        if options.wants("W9") {
            figures.add(
                "W9", "bytes_after_w4", "bytes", .lower, trellis: t.bytesOnDisk().map(Double.init),
                sqlite: s.bytesOnDisk().map(Double.init), lmdb: l.bytesOnDisk().map(Double.init))
        }
    }

    func runSmallCommits(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        let k = smallCommits
        let before = try all(t, s, l) { try $0.itemCount() }
        for (step, durability, offset) in [("W5a", Durability.perCommit, 0), ("W5b", .relaxed, k)] {
            guard options.wants(step) else { continue }
            progress("\(step) \(k) one-item commits, \(durability == .perCommit ? "durable" : "relaxed")")
            _ = try all(t, s, l) { try $0.setDurability(durability) }
            let batch = items[(n + offset)..<(n + offset + k)]
            let ms = try timeAll(t, s, l) { try $0.insertEach(batch) }
            figures.add(
                step, "commits_per_s", "commits/s", .higher, trellis: Double(k) / (ms.trellis / 1000),
                sqlite: Double(k) / (ms.sqlite / 1000), lmdb: Double(k) / (ms.lmdb / 1000), caveat: t.caveat != nil)
        }
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        let after = try all(t, s, l) { try $0.itemCount() }
        checks.same("W5", "item count", trellis: after.trellis, sqlite: after.sqlite)
        checks.lmdb("W5", "item count", after.lmdb, sqlite: after.sqlite)
        let added = (options.wants("W5a") ? k : 0) + (options.wants("W5b") ? k : 0)
        checks.expect("W5", after.trellis == before.trellis + added, "Trellis holds \(after.trellis) items")
    }

    func runCascadeDelete(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        let tree = FolderTree(fanOut: 10, depth: folderDepth)
        progress("W6 build a folder tree of \(tree.count), then delete its root")
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        _ = try all(t, s, l) { try $0.buildFolderTree(fanOut: 10, depth: folderDepth) }
        let built = try all(t, s, l) { try $0.folderCount() }
        checks.same("W6", "folders built", trellis: built.trellis, sqlite: built.sqlite)
        checks.lmdb("W6", "folders built", built.lmdb, sqlite: built.sqlite)
        checks.expect("W6", built.trellis == tree.count, "Trellis built \(built.trellis) folders, not \(tree.count)")
        let ms = try timeAll(t, s, l) { try $0.deleteRootFolder() }
        figures.add(
            "W6", "cascade_delete_ms", "ms", .lower, trellis: ms.trellis, sqlite: ms.sqlite, lmdb: ms.lmdb,
            caveat: t.caveat != nil)
        let left = try all(t, s, l) { try $0.folderCount() }
        checks.same("W6", "folders left", trellis: left.trellis, sqlite: left.sqlite)
        checks.lmdb("W6", "folders left", left.lmdb, sqlite: left.sqlite)
        let links = try l.childEntries()
        checks.expect("W6", links == 0, "LMDB left \(links) entries in its children index")
        checks.expect("W6", left.trellis == 0, "Trellis left \(left.trellis) folders")
    }
}
