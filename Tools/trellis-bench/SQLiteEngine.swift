import Foundation

/// The peer: SQLite configured as the workload says (WAL; `synchronous=FULL` for durable steps and `NORMAL` for
/// relaxed ones; prepared statements reused; unique index on `Item.id`, index on `score`; `Folder.parent_id` with
/// `ON DELETE CASCADE`, an index, and `foreign_keys=ON`), fetching into Swift values as an app would.
final class SQLiteEngine: BenchEngine {
    let name = "SQLite"
    let caveat: String? = nil
    let directory: String
    let path: String
    private var session: SQLiteSession?
    private var s: SQLiteSession { session! }

    init(directory: String) throws {
        self.directory = directory
        self.path = (directory as NSString).appendingPathComponent("bench.sqlite")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        session = try SQLiteSession(path: path)
    }

    func setDurability(_ durability: Durability) throws {
        try s.db.execute(durability == .perCommit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
    }

    func insertItems(_ items: ArraySlice<ItemData>) throws {
        try s.begin.run()
        for item in items { try s.insert(item) }
        try s.commit.run()
    }

    func insertGenerated(_ count: Int) throws {
        try s.begin.run()
        var generator = ItemGenerator()
        for _ in 0..<count { try s.insert(generator.next()!) }
        try s.commit.run()
    }

    func fetchAll() throws -> FetchSummary {
        let q = s.fetchAll
        q.reset()
        var sum = FetchSummary()
        while try q.step() {
            let id = q.int64(0)
            let title = q.string(1)
            let score = q.double(2)
            let flag = q.int64(3) != 0
            let created = Date(timeIntervalSince1970: q.double(4))
            sum.count += 1
            sum.idSum &+= id
            sum.titleBytes += title.utf8.count
            sum.scoreSum += score
            sum.flagged += flag ? 1 : 0
            sum.createdSum += created.timeIntervalSince1970
            sum.n1Sum &+= q.int64(5)
            sum.otherSum &+= q.int64(6) &+ q.int64(7) &+ q.int64(8) &+ q.int64(9)
        }
        return sum
    }

    func lookupTitles(_ ids: [Int64]) throws -> LookupSummary {
        let q = s.lookup
        // A statement left on its row keeps its read transaction open, which holds back WAL checkpoints.
        defer { q.reset() }
        var sum = LookupSummary()
        for id in ids {
            q.reset()
            q.bind(1, id)
            if try q.step() {
                sum.found += 1
                sum.titleBytes += q.string(0).utf8.count
            }
        }
        return sum
    }

    func rangeQueries(_ ranges: [ScoreRange]) throws -> RangeSummary { try scanRanges(ranges, s.range) }

    /// A `(score, id)` index for the index-only ranges only, so that every other step runs on the workload's schema.
    private var covering: SQLiteStatement?

    func prepareIndexOnlyRanges() throws {
        try s.db.execute("CREATE INDEX ItemScoreID ON Item(score, id)")
        covering = try s.db.prepare(
            "SELECT id, score FROM Item INDEXED BY ItemScoreID WHERE score >= ? AND score < ? ORDER BY score")
    }

    func finishIndexOnlyRanges() throws {
        covering = nil
        try s.db.execute("DROP INDEX ItemScoreID")
    }

    func rangeQueriesIndexOnly(_ ranges: [ScoreRange]) throws -> RangeSummary { try scanRanges(ranges, covering!) }

    private func scanRanges(_ ranges: [ScoreRange], _ q: SQLiteStatement) throws -> RangeSummary {
        var sum = RangeSummary()
        for range in ranges {
            q.reset()
            q.bind(1, range.lower)
            q.bind(2, range.upper)
            var last = -Double.infinity
            while try q.step() {
                let score = q.double(1)
                sum.rows += 1
                sum.idSum &+= q.int64(0)
                sum.scoreSum += score
                if score < last { sum.outOfOrder += 1 }
                last = score
            }
        }
        return sum
    }

    func incrementScores() throws {
        // The set-based statement is SQLite's best case; an object layer would issue one UPDATE per row.
        try s.begin.run()
        try s.incrementScores.run()
        try s.commit.run()
    }

    func insertEach(_ items: ArraySlice<ItemData>) throws {
        for item in items {
            try s.begin.run()
            try s.insert(item)
            try s.commit.run()
        }
    }

    func itemCount() throws -> Int { Int(try s.db.scalarInt("SELECT count(*) FROM Item")) }

    func buildFolderTree(fanOut: Int, depth: Int) throws {
        let insert = try s.db.prepare("INSERT INTO Folder(id, name, parent_id) VALUES (?, ?, ?)")
        try s.begin.run()
        for folder in FolderTree(fanOut: fanOut, depth: depth) {
            insert.reset()
            insert.bind(1, Int64(folder.id))
            insert.bind(2, folder.name)
            if let parent = folder.parent { insert.bind(3, Int64(parent)) } else { insert.bindNull(3) }
            try insert.step()
        }
        try s.commit.run()
    }

    func deleteRootFolder() throws {
        try s.begin.run()
        try s.deleteFolder.run()
        try s.commit.run()
    }

    func folderCount() throws -> Int { Int(try s.db.scalarInt("SELECT count(*) FROM Folder")) }

    func readerFactory() -> @Sendable () throws -> any ReadProbe {
        let path = self.path
        return { try SQLiteReadProbe(path: path) }
    }

    func open() throws -> Bool {
        session = try SQLiteSession(path: path)
        return true
    }

    func close() throws { session = nil }

    func compact() throws -> Bool {
        try s.db.execute("VACUUM")
        try s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return true
    }

    func bytesOnDisk() -> Int? { DiskUsage.bytes(under: directory) }

    func snapshotTakeNanoseconds(iterations: Int) -> Double? { nil }
}

/// The reader's own connection (W7), opened on the reader's thread.
final class SQLiteReadProbe: ReadProbe {
    private let db: SQLiteConnection
    private let count: SQLiteStatement
    private let lookup: SQLiteStatement

    init(path: String) throws {
        db = try SQLiteConnection(path: path)
        count = try db.prepare("SELECT count(*) FROM Item WHERE flag = 1")
        lookup = try db.prepare("SELECT title FROM Item WHERE id = ?")
    }

    func countFlagged() throws -> Int {
        count.reset()
        defer { count.reset() }
        guard try count.step() else { return 0 }
        return Int(count.int64(0))
    }

    func titleLength(id: Int64) throws -> Int {
        lookup.reset()
        lookup.bind(1, id)
        defer { lookup.reset() }
        guard try lookup.step() else { return -1 }
        return lookup.string(0).utf8.count
    }
}
