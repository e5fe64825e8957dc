import Foundation

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

enum Fixtures {
    /// Folders in a tree (cascade down, nullify up), notes in folders, tags shared by notes, an account that denies
    /// deletion while it owns notes, and a log that keeps dangling references (no action).
    static func outlineSchema() throws -> Schema {
        try Schema([
            EntityDescription(
                "Folder",
                attributes: [AttributeDescription("name", .string), AttributeDescription("rank", .int, default: 0)],
                relationships: [
                    RelationshipDescription("parent", to: "Folder", inverse: "children"),
                    RelationshipDescription(
                        "children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                    RelationshipDescription("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade),
                ], indexes: [.on("name")]),
            EntityDescription(
                "Note",
                attributes: [
                    AttributeDescription("title", .string), AttributeDescription("body", .string, optional: true),
                    AttributeDescription("due", .date, optional: true),
                    AttributeDescription("score", .double, default: 0),
                    AttributeDescription("done", .bool, default: false),
                ],
                relationships: [
                    RelationshipDescription("folder", to: "Folder", inverse: "notes"),
                    RelationshipDescription("tags", to: "Tag", inverse: "notes", toMany: true),
                    RelationshipDescription("owner", to: "Account", inverse: "notes"),
                    RelationshipDescription(
                        "log", to: "LogEntry", inverse: "note", toMany: true, deleteRule: .noAction),
                ], indexes: [.on("score"), .on("due")]),
            EntityDescription(
                "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [RelationshipDescription("notes", to: "Note", inverse: "tags", toMany: true)],
                indexes: [.unique("label")]),
            EntityDescription(
                "Account",
                attributes: [AttributeDescription("email", .string), AttributeDescription("region", .string)],
                relationships: [
                    RelationshipDescription("notes", to: "Note", inverse: "owner", toMany: true, deleteRule: .deny)
                ],
                indexes: [.unique("email"), .unique("region", "email")]),
            EntityDescription(
                "LogEntry", attributes: [AttributeDescription("text", .string)],
                relationships: [RelationshipDescription("note", to: "Note", inverse: "log")]),
        ])
    }

    /// Builds a folder tree with the given fan-out and depth (depth 1: the root only) in one commit; returns the root.
    @discardableResult
    static func folderTree(in store: Store, fanOut: Int, depth: Int) throws -> ObjectID {
        var tx = store.transaction()
        let folder = try store.schema.entityNumber("Folder")
        let root = tx.insert(entity: folder, row: [.string("root"), .int(0)])
        var level = [root]
        for d in 1..<depth {
            var next: [ObjectID] = []
            next.reserveCapacity(level.count * fanOut)
            for parent in level {
                for i in 0..<fanOut {
                    let child = tx.insert(entity: folder, row: [.string("f\(d)-\(i)"), .int(Int64(i))])
                    try tx.link(child, "parent", parent)
                    next.append(child)
                }
            }
            level = next
        }
        try store.commit(tx)
        return root
    }
}
