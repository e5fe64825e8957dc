import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// `Graph.object(_:)` reads an object in place with one lookup: every typed read gives what `value(_:_:)` gives.
@Suite struct ObjectReadTests {
    static func schema() throws -> Schema {
        try Schema([
            EntityDescription(
                "Note",
                attributes: [
                    AttributeDescription("count", .int), AttributeDescription("weight", .double),
                    AttributeDescription("done", .bool), AttributeDescription("title", .string, optional: true),
                    AttributeDescription("due", .date),
                ])
        ])
    }

    @Test func typedReadsOfAnObjectMatchValueReadsForEveryObject() throws {
        let store = Store(schema: try Self.schema())
        let s = store.schema
        let (count, weight, done, title, due) = (
            try s.attribute("Note", "count"), try s.attribute("Note", "weight"), try s.attribute("Note", "done"),
            try s.attribute("Note", "title"), try s.attribute("Note", "due")
        )
        var ids: [ObjectID] = []
        try store.write { tx in
            for i in 0..<150 {
                ids.append(
                    try tx.insert(
                        "Note",
                        [
                            "count": .int(Int64(i * 7 - 300)), "weight": .double(Double(i) / 4),
                            "done": .bool(i % 3 == 0), "title": i % 5 == 0 ? .null : .string("note \(i) é"),
                            "due": .date(Date(timeIntervalSince1970: Double(i) * 3600)),
                        ]))
            }
        }
        try store.write { tx in try tx.delete(ids[10]) }
        let snapshot = store.snapshot
        #expect(snapshot.object(ids[10]) == nil)
        for (i, id) in ids.enumerated() where i != 10 {
            let object = try #require(snapshot.object(id))
            #expect(object.id == id)
            #expect(object.int(count) == Int64(i * 7 - 300))
            #expect(object.double(weight) == Double(i) / 4)
            #expect(object.bool(done) == (i % 3 == 0))
            #expect(object.string(title) == (i % 5 == 0 ? nil : "note \(i) é"))
            #expect(object.date(due) == Date(timeIntervalSince1970: Double(i) * 3600))
            #expect(object.values == snapshot.row(id))
        }
    }

    /// `object(_:)` makes its row from the leaf where the trie holds it (the newest leaf apart): a row of an entity
    /// with relationships reads its targets, one of an entity without holds no link array, and a serial past the
    /// objects, in a deleted row, of a missing entity or in a missing leaf finds nothing.
    @Test func objectRowsInTrieLeavesAndTheNewestLeafReadTheirLinks() throws {
        let schema = try Schema([
            EntityDescription(
                "Folder", attributes: [.init("name", .string)],
                relationships: [RelationshipDescription("notes", to: "Note", inverse: "folder", toMany: true)]),
            EntityDescription(
                "Note", attributes: [.init("n", .int)],
                relationships: [RelationshipDescription("folder", to: "Folder", inverse: "notes")]),
            EntityDescription("Plain", attributes: [.init("n", .int)]),
        ])
        let store = Store(schema: schema)
        let notes = try schema.relationship("Folder", "notes")
        let name = try schema.attribute("Folder", "name")
        let plainN = try schema.attribute("Plain", "n")
        // 200 folders fill three leaves of 64 and part of a fourth, the trie's newest; each holds its index's notes.
        var folders: [ObjectID] = []
        var plains: [ObjectID] = []
        try store.write { tx in
            for f in 0..<200 {
                let folder = try tx.insert("Folder", ["name": .string("folder \(f)")])
                folders.append(folder)
                for _ in 0..<(f % 4) {
                    let note = try tx.insert("Note", ["n": .int(Int64(f))])
                    try tx.link(folder, "notes", note)
                }
                plains.append(try tx.insert("Plain", ["n": .int(Int64(f))]))
            }
        }
        try store.write { tx in try tx.delete(plains[5]) }
        let snapshot = store.snapshot
        for (f, folder) in folders.enumerated() {
            let row = try #require(snapshot.object(folder), "folder \(f)")
            #expect(row.string(name) == "folder \(f)")
            #expect(row.targetSerials(notes).count == f % 4, "folder \(f)'s notes")
            #expect(row.targetSerials(notes).map { ObjectID(entity: 1, serial: $0) } == snapshot.targets(folder, notes))
        }
        for (p, plain) in plains.enumerated() where p != 5 {
            let row = try #require(snapshot.object(plain))
            #expect(row.int(plainN) == Int64(p))
            #expect(row.links == nil, "an entity without relationships: no link array")
        }
        #expect(snapshot.object(plains[5]) == nil, "a deleted object")
        // A leaf inside the trie's height that holds no object: every Plain of the second leaf deleted.
        let secondLeaf = plains.filter { $0.serial >> 6 == 1 }
        #expect(secondLeaf.count == 64)
        try store.write { tx in for id in secondLeaf { try tx.delete(id) } }
        for id in secondLeaf { #expect(store.snapshot.object(id) == nil, "an emptied leaf") }
        #expect(store.snapshot.object(plains[70 + 64]).map { $0.int(plainN) } == Int64(70 + 64), "the next leaf")
        #expect(snapshot.object(ObjectID(entity: 2, serial: 5_000)) == nil, "a serial past the objects")
        #expect(snapshot.object(ObjectID(entity: 2, serial: 1 << 40)) == nil, "a serial no leaf of the trie holds")
        #expect(snapshot.object(ObjectID(entity: 9, serial: 1)) == nil, "an entity the schema does not have")
    }
}
