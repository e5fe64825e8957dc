import Foundation
import Trellis

/// M1: a lightweight schema migration of a store of N items (100,000 at scale 1), as an app's next version makes it:
/// add an attribute with a default, rename one, add an index; close; reopen and fetch every item.
///
/// Setup (untimed), each engine in a fresh directory: insert items 0 ..< N in one transaction; Trellis then compacts,
/// so the migration starts from a checkpoint as a store at rest would. Both close.
///
/// Timed: Trellis opens the store with the second schema (`Store(directory:schema:options:)` migrates), closes it,
/// reopens it and fetches every item. SQLite opens the database, runs `ALTER TABLE … ADD COLUMN … DEFAULT`,
/// `ALTER TABLE … RENAME COLUMN` and `CREATE INDEX` in one transaction (`synchronous=FULL`), closes it, reopens it
/// and fetches every row.
extension BenchRun {
    func runMigration() throws {
        progress("M1 migrate \(n) items (add an attribute, rename one, add an index), reopen, fetch all")
        let v2 = try MigratedModel(from: model)
        let trellisDirectory = directory("m1-trellis")
        let sqliteDirectory = directory("m1-sqlite")
        var results: [String: MigrationResult] = [:]
        for name in nextTrellisFirst() ? ["Trellis", "SQLite"] : ["SQLite", "Trellis"] {
            if name == "Trellis" {
                try seedTrellis(trellisDirectory)
                results[name] = try MigrationTrellis.run(directory: trellisDirectory, model: v2)
            } else {
                try seedSQLite(sqliteDirectory)
                results[name] = try MigrationSQLite.run(directory: sqliteDirectory)
            }
        }
        let (t, s) = (results["Trellis"]!, results["SQLite"]!)
        figures.add("M1", "migrate_ms", "ms", .lower, trellis: t.migrateMilliseconds, sqlite: s.migrateMilliseconds)
        figures.add(
            "M1", "reopen_fetch_ms", "ms", .lower, trellis: t.totalMilliseconds - t.migrateMilliseconds,
            sqlite: s.totalMilliseconds - s.migrateMilliseconds)
        figures.add(
            "M1", "migrate_reopen_fetch_ms", "ms", .lower, trellis: t.totalMilliseconds, sqlite: s.totalMilliseconds)

        checks.fetches("M1", trellis: t.fetch, sqlite: s.fetch, expectedCount: n)
        checks.equal("M1", "Trellis sum of \(MigratedModel.renamed) (was n1)", t.fetch.n1Sum, expected: expectedN1Sum)
        let defaults = Int64(n) * MigratedModel.addedDefault
        checks.same("M1", "sum of \(MigratedModel.added)", trellis: t.addedSum, sqlite: s.addedSum)
        checks.equal("M1", "Trellis sum of \(MigratedModel.added)", t.addedSum, expected: defaults)
        checks.same("M1", "items in the new index", trellis: t.indexed, sqlite: s.indexed)
        checks.equal("M1", "Trellis items in the new index", t.indexed, expected: n)
        let range = MigratedModel.createdRange
        let inRange = items[0..<n].lazy.filter { $0.created >= range.lower && $0.created < range.upper }.count
        checks.same("M1", "index range count", trellis: t.indexedInRange, sqlite: s.indexedInRange)
        checks.equal("M1", "Trellis index range count", t.indexedInRange, expected: inRange)
        checks.expect("M1", t.indexOrdered, "Trellis's new index returned items out of created order")
        checks.expect("M1", s.indexOrdered, "SQLite's new index returned rows out of created order")
        try? FileManager.default.removeItem(atPath: trellisDirectory)
        try? FileManager.default.removeItem(atPath: sqliteDirectory)
    }

    /// N items with the workload's schema, compacted so the store opens from a checkpoint, then closed.
    private func seedTrellis(_ directory: String) throws {
        let engine = try TrellisEngine(directory: directory, model: model)
        try engine.insertItems(items[0..<n])
        _ = try engine.compact()
        try engine.close()
    }

    /// N items with the workload's schema, then closed (the last connection's close checkpoints the WAL).
    private func seedSQLite(_ directory: String) throws {
        let engine = try SQLiteEngine(directory: directory)
        try engine.insertItems(items[0..<n])
        try engine.close()
    }
}

/// What one engine's M1 measured and saw.
struct MigrationResult {
    /// Open with the new schema (migrating) and close.
    var migrateMilliseconds: Double
    /// The above, then reopen and fetch every item.
    var totalMilliseconds: Double
    /// The fetch after the reopen; `n1Sum` is the sum of the renamed attribute.
    var fetch: FetchSummary
    /// The sum of the added attribute over every item.
    var addedSum: Int64
    /// Items through the new index (untimed, after the fetch).
    var indexed: Int
    /// Items through the new index with `created` in `MigratedModel.createdRange`.
    var indexedInRange: Int
    /// Whether the new index returned items in `created` order.
    var indexOrdered: Bool
}

/// The workload's schema after M1: `Item` gains `priority: Int64 = 5`, `n1` becomes `amount`, and `created` gets an
/// index. Derived from the bench's first schema by copying its entities, with every key resolved once.
struct MigratedModel {
    static let renamed = "amount"
    static let original = "n1"
    static let added = "priority"
    static let addedDefault: Int64 = 5
    static let indexed = "created"
    /// The first half of the workload's `created` domain, [2020-01-01, 2022-07-02): about half the items.
    static let createdRange = (lower: 1_577_836_800.0, upper: 1_577_836_800.0 + 78_840_000)

    let schema: Schema
    let item: EntityKey
    let id: AttributeKey
    let title: AttributeKey
    let score: AttributeKey
    let flag: AttributeKey
    let created: AttributeKey
    let amount: AttributeKey
    let n2: AttributeKey
    let n3: AttributeKey
    let n4: AttributeKey
    let n5: AttributeKey
    let priority: AttributeKey
    let createdIndex: IndexKey

    init(from v1: TrellisModel) throws {
        var entities = v1.schema.entities
        guard let e = entities.firstIndex(where: { $0.name == "Item" }) else {
            throw BenchFailure("M1: the workload's schema has no Item")
        }
        var item = entities[e]
        guard let a = item.attributes.firstIndex(where: { $0.name == Self.original }) else {
            throw BenchFailure("M1: Item has no \(Self.original)")
        }
        let old = item.attributes[a]
        item.attributes[a] = AttributeDescription(
            Self.renamed, old.type, optional: old.isOptional, default: old.defaultValue, originalName: old.name)
        item.attributes.append(AttributeDescription(Self.added, .int64, default: .int(Self.addedDefault)))
        item.indexes.append(.on(Self.indexed))
        entities[e] = item
        let schema = try Schema(entities)
        self.schema = schema
        self.item = try schema.entity("Item")
        id = try schema.attribute("Item", "id")
        title = try schema.attribute("Item", "title")
        score = try schema.attribute("Item", "score")
        flag = try schema.attribute("Item", "flag")
        created = try schema.attribute("Item", "created")
        amount = try schema.attribute("Item", Self.renamed)
        n2 = try schema.attribute("Item", "n2")
        n3 = try schema.attribute("Item", "n3")
        n4 = try schema.attribute("Item", "n4")
        n5 = try schema.attribute("Item", "n5")
        priority = try schema.attribute("Item", Self.added)
        createdIndex = try schema.index("Item", [Self.indexed])
    }
}

/// M1 for Trellis: the store migrates when it is opened with the new schema.
enum MigrationTrellis {
    static func run(directory: String, model: MigratedModel) throws -> MigrationResult {
        sync()
        let start = Measure.now()
        let migrated = try TrellisStorage.open(directory: directory, schema: model.schema, durability: .perCommit)
        try TrellisStorage.close(migrated)
        let migratedAt = Measure.now()
        let store = try TrellisStorage.open(directory: directory, schema: model.schema, durability: .perCommit)
        let (fetch, added) = fetchAll(store.snapshot, model)
        let end = Measure.now()

        let snapshot = store.snapshot
        let ids = snapshot.scan(model.createdIndex)
        var last = -Double.infinity
        var ordered = true
        for id in ids {
            let created = snapshot.object(id)?.date(model.created)?.timeIntervalSince1970 ?? .nan
            if !(created >= last) { ordered = false }
            last = created
        }
        let range = MigratedModel.createdRange
        let inRange = snapshot.count(
            model.createdIndex, from: [.date(Date(timeIntervalSince1970: range.lower))], inclusive: true,
            to: [.date(Date(timeIntervalSince1970: range.upper))], inclusive: false)
        try TrellisStorage.close(store)
        return MigrationResult(
            migrateMilliseconds: Double(migratedAt - start) / 1e6, totalMilliseconds: Double(end - start) / 1e6,
            fetch: fetch, addedSum: added, indexed: ids.count, indexedInRange: inRange, indexOrdered: ordered)
    }

    /// Every attribute of every item, as `TrellisEngine.fetchAll` reads them, plus the added one.
    private static func fetchAll(_ snapshot: Snapshot, _ m: MigratedModel) -> (FetchSummary, Int64) {
        var sum = FetchSummary()
        var added: Int64 = 0
        for row in snapshot.rows(entity: m.item) {
            let id = row.int(m.id) ?? 0
            let title = row.string(m.title) ?? ""
            let score = row.double(m.score) ?? 0
            let flag = row.bool(m.flag) ?? false
            let created = row.date(m.created) ?? .distantPast
            sum.count += 1
            sum.idSum &+= id
            sum.titleBytes += title.utf8.count
            sum.scoreSum += score
            sum.flagged += flag ? 1 : 0
            sum.createdSum += created.timeIntervalSince1970
            sum.n1Sum &+= row.int(m.amount) ?? 0
            sum.otherSum &+=
                (row.int(m.n2) ?? 0) &+ (row.int(m.n3) ?? 0) &+ (row.int(m.n4) ?? 0) &+ (row.int(m.n5) ?? 0)
            added &+= row.int(m.priority) ?? 0
        }
        return (sum, added)
    }
}

/// M1 for SQLite: the same three changes in one transaction, as an app's migration code runs them.
enum MigrationSQLite {
    static let migration = """
        BEGIN;
        ALTER TABLE Item ADD COLUMN \(MigratedModel.added) INTEGER NOT NULL DEFAULT \(MigratedModel.addedDefault);
        ALTER TABLE Item RENAME COLUMN \(MigratedModel.original) TO \(MigratedModel.renamed);
        CREATE INDEX ItemCreated ON Item(\(MigratedModel.indexed));
        COMMIT;
        """

    static func run(directory: String) throws -> MigrationResult {
        let path = (directory as NSString).appendingPathComponent("bench.sqlite")
        sync()
        let start = Measure.now()
        do {
            let db = try connect(path)
            try db.execute(migration)
        }
        let migratedAt = Measure.now()
        let db = try connect(path)
        let (fetch, added) = try fetchAll(db)
        let end = Measure.now()

        var indexed = 0
        var ordered = true
        do {
            let q = try db.prepare("SELECT created FROM Item INDEXED BY ItemCreated ORDER BY created")
            var last = -Double.infinity
            while try q.step() {
                let created = q.double(0)
                if !(created >= last) { ordered = false }
                last = created
                indexed += 1
            }
        }
        let q = try db.prepare(
            "SELECT count(*) FROM Item INDEXED BY ItemCreated WHERE created >= ? AND created < ?")
        q.bind(1, MigratedModel.createdRange.lower)
        q.bind(2, MigratedModel.createdRange.upper)
        let inRange = try q.step() ? Int(q.int64(0)) : -1
        return MigrationResult(
            migrateMilliseconds: Double(migratedAt - start) / 1e6, totalMilliseconds: Double(end - start) / 1e6,
            fetch: fetch, addedSum: added, indexed: indexed, indexedInRange: inRange, indexOrdered: ordered)
    }

    /// A connection configured as `SQLiteSession` configures its own (WAL, `synchronous=FULL`, foreign keys).
    private static func connect(_ path: String) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        try db.execute("PRAGMA foreign_keys=ON")
        return db
    }

    /// Every column of every row, as `SQLiteEngine.fetchAll` reads them, plus the added one.
    private static func fetchAll(_ db: SQLiteConnection) throws -> (FetchSummary, Int64) {
        let q = try db.prepare(
            "SELECT id, title, score, flag, created, \(MigratedModel.renamed), n2, n3, n4, n5, \(MigratedModel.added)"
                + " FROM Item")
        var sum = FetchSummary()
        var added: Int64 = 0
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
            added &+= q.int64(10)
        }
        return (sum, added)
    }
}
