import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The README's example, kept compiling and true.
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleCascadesAndKeepsTheOldSnapshot() throws {
        let schema = try Schema([
            EntityDescription(
                "Folder", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("parent", to: "Folder", inverse: "children"),
                    RelationshipDescription(
                        "children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                ], indexes: [.on("name")])
        ])
        let store = Store(schema: schema)
        let inbox = try store.write { tx -> ObjectID in
            let inbox = try tx.insert("Folder", ["name": "Inbox"])
            try tx.link(try tx.insert("Folder", ["name": "Receipts"]), "parent", inbox)
            return inbox
        }
        let snapshot = store.snapshot
        #expect(try snapshot.targets(inbox, "children").map(\.description) == ["0#2"])
        try store.write { tx in try tx.delete(inbox) }
        #expect(try snapshot.count("Folder") == 2)
        #expect(try store.snapshot.count("Folder") == 0)
    }
}
