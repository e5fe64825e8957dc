import Foundation
import Trellis

/// H1: reading the history of N one-object commits (100,000 at scale 1: N/2 inserts, then N/2 updates of one
/// attribute), against SQLite reading the history table an app keeps beside its data, filled by triggers with old and
/// new values (as GRDB users build it). Both stores take the same commits with relaxed durability (untimed); the
/// figure is one full read of the history, every value of every change touched. Trellis also reports rebuilding the
/// version at the middle of the history (`snapshot(asOf:)`: the last checkpoint, none here, plus the records).
extension BenchRun {
    func runHistory() throws {
        let commits = max(2, n)
        progress("H1 history of \(commits) one-object commits")
        let scores = (0..<commits).map { Int64(($0 * 7919) % 100_003) }
        var trellisMs: Double?
        var sqliteMs: Double?
        var asOfMs: Double?
        for name in nextTrellisFirst() ? ["Trellis", "SQLite"] : ["SQLite", "Trellis"] {
            let dir = directory("h1-\(name.lowercased())")
            if name == "Trellis" {
                (trellisMs, asOfMs) = try historyTrellis(dir, scores)
            } else {
                sqliteMs = try historySQLite(dir, scores)
            }
            try? FileManager.default.removeItem(atPath: dir)
        }
        figures.add("H1", "history_read_ms", "ms", .lower, trellis: trellisMs, sqlite: sqliteMs)
        figures.add("H1", "as_of_middle_ms", "ms", .lower, trellis: asOfMs, sqlite: nil)
    }

    /// What both engines' history adds up to: the changes, and the sums of the new and old scores.
    private static func expected(_ scores: [Int64]) -> (changes: Int, new: Int64, old: Int64) {
        let half = scores.count / 2
        var new: Int64 = 0
        var old: Int64 = 0
        for (i, s) in scores.enumerated() {
            new &+= s
            if i >= half { old &+= scores[i - half] }
        }
        return (scores.count, new, old)
    }

    private func historyTrellis(_ dir: String, _ scores: [Int64]) throws -> (Double, Double) {
        let schema = try Schema([
            EntityDescription(
                "Item",
                attributes: [AttributeDescription("title", .string), AttributeDescription("score", .int)])
        ])
        let store = try Store(
            directory: URL(fileURLWithPath: dir), schema: schema,
            options: StoreOptions(durability: .none, compaction: .manual))
        let half = scores.count / 2
        var ids: [ObjectID] = []
        for i in 0..<half {
            ids.append(
                try store.write { tx in
                    try tx.insert("Item", ["title": .string("item \(i)"), "score": .int(scores[i])])
                }
            )
        }
        for i in half..<scores.count {
            try store.write { tx in try tx.set(ids[i - half], "score", .int(scores[i])) }
        }
        try store.flush()
        sync()
        var changes = 0
        var new: Int64 = 0
        var old: Int64 = 0
        let (_, ms) = try Measure.milliseconds {
            try store.forEachHistoryEntry { entry in
                for change in entry.changes {
                    changes += 1
                    if case .int(let v)? = change.newValue("score") { new &+= v }
                    if case .int(let v)? = change.oldValue("score") { old &+= v }
                    _ = change.newValue("title")
                }
                _ = (entry.time, entry.author)
            }
        }
        let want = Self.expected(scores)
        checks.expect(
            "H1", changes == want.changes && new == want.new && old == want.old,
            "Trellis's history holds \(changes) changes (sums \(new), \(old)); expected \(want)")
        let middle = UInt64(scores.count / 2)
        let (version, asOf) = try Measure.milliseconds { try store.snapshot(asOf: middle) }
        checks.expect("H1", try version.count("Item") == half, "the middle version holds \(half) items")
        try store.close()
        return (ms, asOf)
    }

    private func historySQLite(_ dir: String, _ scores: [Int64]) throws -> Double {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let db = try SQLiteConnection(path: dir + "/h1.sqlite")
        try db.execute(
            """
            PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;
            CREATE TABLE item (id INTEGER PRIMARY KEY, title TEXT NOT NULL, score INTEGER NOT NULL);
            CREATE TABLE history (seq INTEGER PRIMARY KEY, time REAL NOT NULL, author TEXT, op TEXT NOT NULL,
                item INTEGER NOT NULL, old_title TEXT, new_title TEXT, old_score INTEGER, new_score INTEGER);
            CREATE TRIGGER item_insert AFTER INSERT ON item BEGIN
                INSERT INTO history (time, op, item, new_title, new_score)
                VALUES (julianday('now'), 'insert', NEW.id, NEW.title, NEW.score); END;
            CREATE TRIGGER item_update AFTER UPDATE ON item BEGIN
                INSERT INTO history (time, op, item, old_title, new_title, old_score, new_score)
                VALUES (julianday('now'), 'update', NEW.id, OLD.title, NEW.title, OLD.score, NEW.score); END;
            CREATE TRIGGER item_delete AFTER DELETE ON item BEGIN
                INSERT INTO history (time, op, item, old_title, old_score)
                VALUES (julianday('now'), 'delete', OLD.id, OLD.title, OLD.score); END;
            """)
        let half = scores.count / 2
        let insert = try db.prepare("INSERT INTO item (id, title, score) VALUES (?, ?, ?)")
        let update = try db.prepare("UPDATE item SET score = ? WHERE id = ?")
        for (i, score) in scores.enumerated() {
            // One transaction a commit, as the Trellis side commits.
            try db.execute("BEGIN")
            if i < half {
                insert.reset()
                insert.bind(1, Int64(i + 1))
                insert.bind(2, "item \(i)")
                insert.bind(3, score)
                try insert.run()
            } else {
                update.reset()
                update.bind(1, score)
                update.bind(2, Int64(i - half + 1))
                try update.run()
            }
            try db.execute("COMMIT")
        }
        sync()
        let read = try db.prepare(
            "SELECT seq, time, author, op, item, old_title, new_title, old_score, new_score FROM history ORDER BY seq")
        var changes = 0
        var new: Int64 = 0
        var old: Int64 = 0
        let (_, ms) = try Measure.milliseconds {
            while try read.step() {
                changes += 1
                _ = (read.int64(0), read.double(1), read.string(2), read.string(3), read.int64(4))
                _ = (read.string(5), read.string(6))
                new &+= read.int64(8)
                old &+= read.int64(7)
            }
        }
        let want = Self.expected(scores)
        checks.expect(
            "H1", changes == want.changes && new == want.new && old == want.old,
            "SQLite's history table holds \(changes) changes (sums \(new), \(old)); expected \(want)")
        return ms
    }
}
