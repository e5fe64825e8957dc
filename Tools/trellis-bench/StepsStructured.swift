import Foundation
import Trellis

/// S2's metadata record: six fields, as an app's "bucket of goo" holds them.
struct S2Metadata: Codable, Equatable {
    var color = ""
    var size = 0
    var weight = 0.0
    var label = ""
    var rating = 0
    var archived = false

    static let colors = ["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white"]

    /// Item i's record.
    static func of(_ i: Int) -> S2Metadata {
        S2Metadata(
            color: colors[i % colors.count], size: i % 50, weight: Double(i) / 8, label: "label \(i)", rating: i % 5,
            archived: i % 3 == 0)
    }
}

/// (a) The record as a composite attribute: one column per field.
final class S2Composite: Model {
    @Attribute var number = 0
    @Attribute var metadata = S2Metadata()
}

/// (b) The record as JSON in a `Data` attribute, encoded and decoded by the app.
final class S2Blob: Model {
    @Attribute var number = 0
    @Attribute var metadata = Data()
}

/// S2: seed 001's "bucket of goo". 1,000 items, each with a six-field metadata record: add (one save), update (one
/// field of every record, one save), read (every field of every record) and 100 queries on one field (`color`,
/// an eighth of the items each), as (a) a composite attribute, (b) a JSON blob in a `Data` attribute (the query
/// decodes every blob) and (c) SQLite with a JSON column (`json_set` to update, `json_extract` to read and query).
/// Every commit is durable. No engine has an index on the field.
extension BenchRun {
    func runStructured() throws {
        progress("S2 structured metadata: 1,000 items as a composite, a JSON blob and SQLite JSON")
        let count = 1_000
        let queries = 100
        let options = StoreOptions(durability: .perCommit, compaction: .manual)
        let compositeStore = try Store(
            directory: URL(fileURLWithPath: directory("s2-composite")), models: [S2Composite.self], options: options)
        let blobStore = try Store(
            directory: URL(fileURLWithPath: directory("s2-blob")), models: [S2Blob.self], options: options)
        let sqlite = try S2SQLite(path: directory("s2-sqlite.sqlite"))

        // (a) composite
        let a = ModelContext(compositeStore)
        let aAdd = try Measure.milliseconds {
            for i in 0..<count {
                let item = S2Composite()
                item.number = i
                item.metadata = .of(i)
                a.insert(item)
            }
            try a.save()
        }.1
        let aItems = try a.fetch(FetchDescriptor<S2Composite>(sortBy: [SortDescriptor(\.number)]))
        var aSave = 0.0
        let aUpdate = try Measure.milliseconds {
            Self.s2UpdateComposite(aItems)
            aSave = try Measure.milliseconds { try Self.s2SaveComposite(a) }.1
        }.1
        progress("S2 composite update: \(aUpdate - aSave) ms setting, \(aSave) ms saving")
        let (aSum, aRead) = try Measure.milliseconds { () -> Int in
            let reader = ModelContext(compositeStore)
            return try reader.fetch(FetchDescriptor<S2Composite>()).reduce(0) { $0 + Self.digest($1.metadata) }
        }
        let (aFound, aQuery) = try Measure.milliseconds { () -> Int in
            let reader = ModelContext(compositeStore)
            var found = 0
            for q in 0..<queries {
                let color = S2Metadata.colors[q % S2Metadata.colors.count]
                found += try reader.fetchIdentifiers(
                    FetchDescriptor<S2Composite>(predicate: #Predicate { $0.metadata.color == color })
                ).count
            }
            return found
        }

        // (b) JSON blob
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let b = ModelContext(blobStore)
        let bAdd = try Measure.milliseconds {
            for i in 0..<count {
                let item = S2Blob()
                item.number = i
                item.metadata = try encoder.encode(S2Metadata.of(i))
                b.insert(item)
            }
            try b.save()
        }.1
        let bItems = try b.fetch(FetchDescriptor<S2Blob>(sortBy: [SortDescriptor(\.number)]))
        var bSave = 0.0
        let bUpdate = try Measure.milliseconds {
            try Self.s2UpdateBlob(bItems, decoder, encoder)
            bSave = try Measure.milliseconds { try Self.s2SaveBlob(b) }.1
        }.1
        progress("S2 blob update: \(bUpdate - bSave) ms setting, \(bSave) ms saving")
        let (bSum, bRead) = try Measure.milliseconds { () -> Int in
            let reader = ModelContext(blobStore)
            return try reader.fetch(FetchDescriptor<S2Blob>()).reduce(0) {
                $0 + Self.digest(try decoder.decode(S2Metadata.self, from: $1.metadata))
            }
        }
        let (bFound, bQuery) = try Measure.milliseconds { () -> Int in
            let reader = ModelContext(blobStore)
            var found = 0
            for q in 0..<queries {
                let color = S2Metadata.colors[q % S2Metadata.colors.count]
                found += try reader.fetch(FetchDescriptor<S2Blob>()).filter {
                    try decoder.decode(S2Metadata.self, from: $0.metadata).color == color
                }.count
            }
            return found
        }

        // (c) SQLite with a JSON column
        sync()
        let cAdd = try Measure.milliseconds { try sqlite.insert(count, encoder) }.1
        sync()
        let cUpdate = try Measure.milliseconds { try sqlite.incrementRatings() }.1
        let (cSum, cRead) = try Measure.milliseconds { try sqlite.readAll() }
        let (cFound, cQuery) = try Measure.milliseconds { () -> Int in
            var found = 0
            for q in 0..<queries { found += try sqlite.count(color: S2Metadata.colors[q % S2Metadata.colors.count]) }
            return found
        }

        let expectedSum = (0..<count).reduce(0) { sum, i in
            var m = S2Metadata.of(i)
            m.rating += 1
            return sum + Self.digest(m)
        }
        checks.expect("S2", aSum == expectedSum, "the composite items read \(aSum), not \(expectedSum)")
        checks.expect("S2", bSum == expectedSum, "the blob items read \(bSum), not \(expectedSum)")
        checks.expect("S2", cSum == expectedSum, "SQLite read \(cSum), not \(expectedSum)")
        let expectedFound = queries * count / S2Metadata.colors.count
        checks.expect(
            "S2", [aFound, bFound, cFound] == [expectedFound, expectedFound, expectedFound],
            "the queries found \(aFound), \(bFound), \(cFound), not \(expectedFound) each")

        figures.add("S2", "add_ms", "ms", .lower, trellis: aAdd, sqlite: cAdd, peer: "SQLite JSON column")
        figures.add("S2", "update_ms", "ms", .lower, trellis: aUpdate, sqlite: cUpdate, peer: "SQLite JSON column")
        figures.add("S2", "read_ms", "ms", .lower, trellis: aRead, sqlite: cRead, peer: "SQLite JSON column")
        figures.add("S2", "query_ms", "ms", .lower, trellis: aQuery, sqlite: cQuery, peer: "SQLite JSON column")
        let blob = "Trellis JSON blob (Data)"
        figures.add("S2", "add_vs_blob_ms", "ms", .lower, trellis: aAdd, sqlite: bAdd, peer: blob)
        figures.add("S2", "update_vs_blob_ms", "ms", .lower, trellis: aUpdate, sqlite: bUpdate, peer: blob)
        figures.add("S2", "read_vs_blob_ms", "ms", .lower, trellis: aRead, sqlite: bRead, peer: blob)
        figures.add("S2", "query_vs_blob_ms", "ms", .lower, trellis: aQuery, sqlite: bQuery, peer: blob)
        try compositeStore.close()
        try blobStore.close()
    }

    // The update's phases, kept out of line so that callgrind can count each one (`--toggle-collect`).

    @inline(never)
    static func s2UpdateComposite(_ items: [S2Composite]) {
        for item in items { item.metadata.rating += 1 }
    }

    @inline(never)
    static func s2UpdateBlob(_ items: [S2Blob], _ decoder: JSONDecoder, _ encoder: JSONEncoder) throws {
        for item in items {
            var metadata = try decoder.decode(S2Metadata.self, from: item.metadata)
            metadata.rating += 1
            item.metadata = try encoder.encode(metadata)
        }
    }

    @inline(never)
    static func s2SaveComposite(_ context: ModelContext) throws { try context.save() }

    @inline(never)
    static func s2SaveBlob(_ context: ModelContext) throws {
        // Not the composite's function folded under another name: callgrind counts each apart.
        precondition(context.hasChanges, "S2's blob update changed nothing")
        try context.save()
    }

    /// Every field of a record folded into one number, so that nothing read is skipped.
    static func digest(_ m: S2Metadata) -> Int {
        m.color.utf8.count + m.size + Int(m.weight * 8) + m.label.utf8.count + m.rating * 7 + (m.archived ? 1 : 0)
    }
}

/// S2's SQLite side: a table with a JSON text column, WAL and `synchronous=FULL` like every durable step.
final class S2SQLite {
    let db: SQLiteConnection
    private let insertItem: SQLiteStatement
    private let readAllStatement: SQLiteStatement
    private let countByColor: SQLiteStatement

    init(path: String) throws {
        db = try SQLiteConnection(path: path)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        try db.execute("CREATE TABLE IF NOT EXISTS S2(number INTEGER NOT NULL, metadata TEXT NOT NULL)")
        insertItem = try db.prepare("INSERT INTO S2(number, metadata) VALUES (?, ?)")
        readAllStatement = try db.prepare(
            "SELECT json_extract(metadata, '$.color'), json_extract(metadata, '$.size'), "
                + "json_extract(metadata, '$.weight'), json_extract(metadata, '$.label'), "
                + "json_extract(metadata, '$.rating'), json_extract(metadata, '$.archived') FROM S2")
        countByColor = try db.prepare("SELECT count(*) FROM S2 WHERE json_extract(metadata, '$.color') = ?")
    }

    func insert(_ count: Int, _ encoder: JSONEncoder) throws {
        try db.execute("BEGIN")
        for i in 0..<count {
            insertItem.reset()
            insertItem.bind(1, Int64(i))
            insertItem.bind(2, String(decoding: try encoder.encode(S2Metadata.of(i)), as: UTF8.self))
            try insertItem.run()
        }
        try db.execute("COMMIT")
    }

    func incrementRatings() throws {
        try db.execute(
            "UPDATE S2 SET metadata = json_set(metadata, '$.rating', json_extract(metadata, '$.rating') + 1)")
    }

    /// Every field of every record, folded as `BenchRun.digest` folds them.
    func readAll() throws -> Int {
        let q = readAllStatement
        q.reset()
        var sum = 0
        while try q.step() {
            let m = S2Metadata(
                color: q.string(0), size: Int(q.int64(1)), weight: q.double(2), label: q.string(3),
                rating: Int(q.int64(4)), archived: q.int64(5) != 0)
            sum += BenchRun.digest(m)
        }
        return sum
    }

    func count(color: String) throws -> Int {
        countByColor.reset()
        countByColor.bind(1, color)
        defer { countByColor.reset() }
        guard try countByColor.step() else { return 0 }
        return Int(countByColor.int64(0))
    }
}
