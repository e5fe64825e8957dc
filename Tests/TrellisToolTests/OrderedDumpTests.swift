import Foundation
import Testing
import Trellis

/// `trellis dump`, `history` and `info` show ordered relationships (issue 19, format version 8): place edits with
/// their positions, and the schema's `ordered` flag.
@Suite struct OrderedDumpTests {
    @Test func placeEditsShowTheirPositionsAndTheSchemaItsFlag() throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        let schema = try Schema([
            EntityDescription(
                "List", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("items", to: "Item", inverse: "list", toMany: true, ordered: true)
                ]),
            EntityDescription(
                "Item", attributes: [AttributeDescription("n", .int)],
                relationships: [RelationshipDescription("list", to: "List", inverse: "items")]),
        ])
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        let (list, items) = try store.write { tx in
            let list = try tx.insert("List", ["name": "l"])
            let items = try (1...3).map { try tx.insert("Item", ["n": .int(Int64($0))]) }
            for (i, item) in items.enumerated() { try tx.link(list, "items", item, at: i) }
            return (list, items)
        }
        try store.write { tx in try tx.move(list, "items", from: 0, to: 2) }
        try store.close()

        let dump = try Tool.run(["dump", directory.path])
        #expect(dump.status == 0, "\(dump)")
        let places = dump.stdout.split(separator: "\n").filter { $0.contains("place ") }
        #expect(places.count == 4, "\(dump.stdout)")
        #expect(places.last?.hasSuffix("items → Item#1 at 2 (from 0)") == true, "\(dump.stdout)")
        #expect(places.first?.hasSuffix("items → Item#1 at 0") == true, "\(dump.stdout)")

        let records = try #require(
            try Tool.run(["dump", directory.path, "--json"]).json()["records"] as? [[String: Any]])
        let links = try #require(records.last?["links"] as? [[String: Any]])
        #expect(links.count == 1)
        #expect(links.first?["kind"] as? String == "place")
        #expect(links.first?["position"] as? Int == 2)
        #expect(links.first?["previousPosition"] as? Int == 0)
        let inserts = try #require(records.first?["links"] as? [[String: Any]])
        #expect(inserts.map { $0["position"] as? Int } == [0, 1, 2])
        #expect(inserts.allSatisfy { $0["previousPosition"] is NSNull })

        let history = try Tool.run(["history", directory.path, "List#\(list.serial)"])
        #expect(history.stdout.contains("items → Item#\(items[0].serial) at 2 (from 0)"), "\(history.stdout)")

        let info = try Tool.run(["info", directory.path, "--json"]).json()
        let entities = try #require((info["schema"] as? [String: Any])?["entities"] as? [[String: Any]])
        let relationships = entities.map { ($0["relationships"] as? [[String: Any]]) ?? [] }
        #expect(relationships.map { $0.map { $0["ordered"] as? Bool } } == [[true], [nil]])
    }
}
