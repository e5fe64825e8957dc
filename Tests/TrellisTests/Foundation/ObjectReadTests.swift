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
}
