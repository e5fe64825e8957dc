import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Recovery replays a journal long next to its checkpoint onto a graph without indexes, writing inserts straight into
/// the leaves (`ColumnarInserts`) and building every index once at the end and before a migration record. What it
/// opens must be exactly what loading a checkpoint of the same data opens: same objects, values, links (in order),
/// index entries and highest serials.
@Suite struct ColumnarReplayTests {
    /// The outline schema, migrated: an attribute with a default, an index on an existing attribute, and an optional
    /// collection attribute with an element index.
    static func v2() throws -> Schema {
        let v1 = try Fixtures.outlineSchema()
        var entities = v1.entities
        let tag = entities.firstIndex { $0.name == "Tag" }!
        entities[tag].attributes.append(AttributeDescription("color", .string, default: "grey"))
        let folder = entities.firstIndex { $0.name == "Folder" }!
        entities[folder].indexes.append(.on("rank"))
        let note = entities.firstIndex { $0.name == "Note" }!
        entities[note].attributes.append(AttributeDescription("labels", .stringArray, optional: true))
        entities[note].indexes.append(.on("labels"))
        return try Schema(entities)
    }

    static let options = StoreOptions(compaction: .manual, segmentBytes: 64 << 10)

    /// One big insert (leaf runs, more rows than the batch paths' thresholds), then random transactions.
    static func fill(_ store: Store, seed: UInt64, notes: Int, transactions: Int) throws {
        var random = SeededRandom(seed: seed)
        var tx = store.transaction()
        for k in 0..<notes {
            var values: [String: Value] = [
                "title": .string("note \(k) \(random.next() % 1000)"), "score": .double(Double(random.next() % 500)),
            ]
            if k % 3 == 0 { values["body"] = .string(k % 2 == 0 ? "é \(k)" : "") }
            if k % 5 == 0 { values["due"] = .date(Date(timeIntervalSince1970: Double(random.next() % 100_000))) }
            _ = try tx.insert("Note", values)
        }
        for k in 0..<200 { _ = try tx.insert("Tag", ["label": .string("label \(seed) \(k)")]) }
        try store.commit(tx)
        var workload = RandomWorkload(seed: seed, schema: store.schema)
        for _ in 0..<transactions {
            let tx = try workload.transaction(for: store, size: 12)
            _ = try? store.commit(tx)  // a refused one (a cycle of parents, a label taken) changes nothing
        }
        // Updates of many objects in one record, and deletes of many (leaf runs of updates and removals).
        let ids = try store.snapshot.objectIDs("Note")
        var updates = store.transaction()
        for id in ids where id.serial % 3 == 0 { try updates.set(id, "score", .double(Double(id.serial % 77))) }
        try store.commit(updates)
        var deletes = store.transaction()
        for id in ids where id.serial % 7 == 0 { try deletes.delete(id) }
        try store.commit(deletes)
    }

    @Test("a replayed journal (a migration in it, a checkpoint before part of it) opens as its compacted copy does")
    func replayEqualsTheCompactedLoadOfTheSameJournal() throws {
        let temporary = TemporaryDirectory()
        let replayed = temporary.store
        let compacted = temporary.url.appendingPathComponent("compacted")
        do {
            let store = try Store(directory: replayed, schema: try Fixtures.outlineSchema(), options: Self.options)
            try Self.fill(store, seed: 11, notes: 700, transactions: 60)
            // A checkpoint, then a journal many times its size: recovery applies the first records with the
            // checkpoint's indexes, then drops them and builds them at the end.
            try store.compact()
            try Self.fill(store, seed: 12, notes: 9000, transactions: 120)
            try store.close()
        }
        do {
            // A lightweight migration (one record), then more commits in the new schema, labels included.
            let store = try Store(directory: replayed, schema: try Self.v2(), options: Self.options)
            #expect(store.schema.history.count == 1)
            try Self.fill(store, seed: 13, notes: 5000, transactions: 120)
            var random = SeededRandom(seed: 5)
            var tx = store.transaction()
            for id in try store.snapshot.objectIDs("Note") where id.serial % 4 == 1 {
                let labels = (0..<Int(random.next() % 4)).map { _ in Value.string("l\(random.next() % 9)") }
                try tx.set(id, "labels", .list(labels))
            }
            try store.commit(tx)
            try store.close()
        }
        try FileManager.default.copyItem(at: replayed, to: compacted)
        let live: Graph
        do {
            let store = try Store(directory: compacted, schema: try Self.v2(), options: Self.options)
            live = store.snapshot
            try store.compact()
            try store.close()
        }
        #expect(try StoreFiles.list(PosixFileLayer(), compacted.path).segments.count == 1)
        #expect(try StoreFiles.list(PosixFileLayer(), replayed.path).segments.count > 3)

        // Another process opens each (read-only, with the schema it holds) and prints every object.
        let fromJournal = try CrashChild.run(["dump", "--dir", replayed.path])
        let fromCheckpoint = try CrashChild.run(["dump", "--dir", compacted.path])
        #expect(fromJournal.exitStatus == 0, "\(fromJournal.lines.suffix(2))")
        #expect(fromCheckpoint.exitStatus == 0, "\(fromCheckpoint.lines.suffix(2))")
        #expect(fromJournal.lines.count > 10_000)
        #expect(fromJournal.lines == fromCheckpoint.lines)
        #expect(fromJournal.lines == (try ContactsFixture.dump(live)))

        // Here too, down to index entries, ordered targets and highest serials.
        let reopened = try Store(directory: replayed, schema: try Self.v2(), options: StoreOptions(readOnly: true))
        let loaded = try Store(directory: compacted, schema: try Self.v2(), options: StoreOptions(readOnly: true))
        #expect(reopened.snapshot.differences(from: loaded.snapshot) == [])
        #expect(reopened.snapshot.differences(from: live) == [])
        #expect(reopened.snapshot.invariantViolations() == [])
        #expect(reopened.snapshot.sequence == loaded.snapshot.sequence)
        #expect(reopened.snapshot.maxSerials == live.maxSerials)
        try reopened.close()
        try loaded.close()
    }

    @Test("a record that inserts an object twice is refused by the columnar path as by the plain one")
    func aDuplicateInsertIsRefused() throws {
        let schema = try Fixtures.outlineSchema()
        var changes = ChangeSet()
        let note = try schema.entityNumber("Note")
        let row: [Value] = [.string("a"), .null, .null, .double(1), .bool(false)]
        changes.inserts = [
            .init(id: ObjectID(entity: note, serial: 1), values: row),
            .init(id: ObjectID(entity: note, serial: 1), values: row),
        ]
        let payload = ChangeSetCodec.encode(changes, schema: schema)
        var graph = Graph(schema: schema).withoutIndexes()
        #expect(throws: TrellisError.self) {
            _ = try ChangeSetCodec.decodeRecord(
                payload, schema: schema, context: "test", version: 1,
                inserts: { (r: inout ByteReader) throws(TrellisError) in try ColumnarInserts.apply(&r, to: &graph) })
        }
        var plain = Graph(schema: schema)
        #expect(throws: TrellisError.self) { try plain.apply(changes, sequence: 1) }
    }

    @Test("inserts read column by column into a graph without indexes, then indexed, equal the plain apply")
    func columnarInsertsThenIndexesEqualThePlainApply() throws {
        let schema = try Fixtures.outlineSchema()
        var random = SeededRandom(seed: 3)
        var changes = ChangeSet()
        let note = try schema.entityNumber("Note")
        // Serials out of order and across leaves, nulls, empty and non-ASCII text.
        var serials = Array(UInt64(1)...300)
        serials.shuffle(using: &random)
        for serial in serials {
            let body: Value = serial % 3 == 0 ? .null : .string(serial % 2 == 0 ? "" : "ü\(serial)")
            let due: Value = serial % 5 == 0 ? .null : .date(Date(timeIntervalSince1970: Double(serial)))
            changes.inserts.append(
                .init(
                    id: ObjectID(entity: note, serial: serial),
                    values: [.string("t\(serial)"), body, due, .double(Double(serial % 13)), .bool(serial % 2 == 0)]))
        }
        let payload = ChangeSetCodec.encode(changes, schema: schema)
        var graph = Graph(schema: schema).withoutIndexes()
        let rest = try ChangeSetCodec.decodeRecord(
            payload, schema: schema, context: "test", version: 1,
            inserts: { (r: inout ByteReader) throws(TrellisError) in try ColumnarInserts.apply(&r, to: &graph) }
        ).changes
        #expect(rest.inserts.isEmpty)
        try graph.apply(rest, sequence: 1)
        let rebuilt = graph.rebuildingIndexes(schema)
        var plain = Graph(schema: schema)
        try plain.apply(changes, sequence: 1)
        #expect(rebuilt.differences(from: plain) == [])
        #expect(rebuilt.invariantViolations() == [])
        #expect(rebuilt.count(entity: note) == 300)
    }
}
