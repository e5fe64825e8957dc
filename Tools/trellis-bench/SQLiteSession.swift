/// One open SQLite database with the workload's schema and every statement the steps reuse, prepared once.
final class SQLiteSession {
    let db: SQLiteConnection
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let insertItem: SQLiteStatement
    let fetchAll: SQLiteStatement
    let lookup: SQLiteStatement
    let range: SQLiteStatement
    let incrementScores: SQLiteStatement
    let deleteFolder: SQLiteStatement

    static let schema = """
        CREATE TABLE IF NOT EXISTS Item(
            id INTEGER NOT NULL, title TEXT NOT NULL, score REAL NOT NULL, flag INTEGER NOT NULL,
            created REAL NOT NULL, n1 INTEGER NOT NULL, n2 INTEGER NOT NULL, n3 INTEGER NOT NULL,
            n4 INTEGER NOT NULL, n5 INTEGER NOT NULL);
        CREATE UNIQUE INDEX IF NOT EXISTS ItemID ON Item(id);
        CREATE INDEX IF NOT EXISTS ItemScore ON Item(score);
        CREATE TABLE IF NOT EXISTS Folder(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL,
            parent_id INTEGER REFERENCES Folder(id) ON DELETE CASCADE);
        CREATE INDEX IF NOT EXISTS FolderParent ON Folder(parent_id);
        """

    init(path: String) throws {
        db = try SQLiteConnection(path: path)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        try db.execute("PRAGMA foreign_keys=ON")
        try db.execute(Self.schema)
        begin = try db.prepare("BEGIN")
        commit = try db.prepare("COMMIT")
        insertItem = try db.prepare(
            "INSERT INTO Item(id, title, score, flag, created, n1, n2, n3, n4, n5) VALUES (?,?,?,?,?,?,?,?,?,?)")
        fetchAll = try db.prepare("SELECT id, title, score, flag, created, n1, n2, n3, n4, n5 FROM Item")
        lookup = try db.prepare("SELECT title FROM Item WHERE id = ?")
        range = try db.prepare("SELECT id, score FROM Item WHERE score >= ? AND score < ? ORDER BY score")
        incrementScores = try db.prepare("UPDATE Item SET score = score + 1")
        deleteFolder = try db.prepare("DELETE FROM Folder WHERE id = 1")
    }

    func insert(_ item: ItemData) throws {
        let q = insertItem
        q.reset()
        q.bind(1, item.id)
        q.bind(2, item.title)
        q.bind(3, item.score)
        q.bind(4, Int64(item.flag ? 1 : 0))
        q.bind(5, item.created)
        q.bind(6, item.n1)
        q.bind(7, item.n2)
        q.bind(8, item.n3)
        q.bind(9, item.n4)
        q.bind(10, item.n5)
        try q.step()
    }
}

/// The W6 tree in breadth-first order: folder 1 is the root; the children of folder k are
/// `(k - 1) * fanOut + 2 ... k * fanOut + 1`.
struct FolderTree: Sequence {
    struct Folder {
        var id: Int
        var parent: Int?
        var name: String
    }

    let fanOut: Int
    let depth: Int

    var count: Int {
        var total = 0
        var level = 1
        for _ in 0...depth {
            total += level
            level *= fanOut
        }
        return total
    }

    func makeIterator() -> AnyIterator<Folder> {
        var id = 0
        let total = count
        let fanOut = self.fanOut
        return AnyIterator {
            id += 1
            guard id <= total else { return nil }
            return Folder(id: id, parent: id == 1 ? nil : (id - 2) / fanOut + 1, name: "folder \(id)")
        }
    }
}
