import Foundation

@testable import Trellis

/// A deterministic random stream (splitmix64), so every failing case can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Fixtures {
    /// Folders in a tree (cascade down, nullify up), notes in folders, tags shared by notes, an account that denies
    /// deletion while it owns notes, and a log that keeps dangling references (no action).
    static func outlineSchema() throws -> Schema {
        try Schema([
            Entity(
                "Folder", attributes: [Attribute("name", .string), Attribute("rank", .int, default: 0)],
                relationships: [
                    Relationship("parent", to: "Folder", inverse: "children"),
                    Relationship("children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                    Relationship("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade),
                ], indexes: [.on("name")]),
            Entity(
                "Note",
                attributes: [
                    Attribute("title", .string), Attribute("body", .string, optional: true),
                    Attribute("due", .date, optional: true), Attribute("score", .double, default: 0),
                    Attribute("done", .bool, default: false),
                ],
                relationships: [
                    Relationship("folder", to: "Folder", inverse: "notes"),
                    Relationship("tags", to: "Tag", inverse: "notes", toMany: true),
                    Relationship("owner", to: "Account", inverse: "notes"),
                    Relationship("log", to: "LogEntry", inverse: "note", toMany: true, deleteRule: .noAction),
                ], indexes: [.on("score"), .on("due")]),
            Entity(
                "Tag", attributes: [Attribute("label", .string)],
                relationships: [Relationship("notes", to: "Note", inverse: "tags", toMany: true)],
                indexes: [.unique("label")]),
            Entity(
                "Account", attributes: [Attribute("email", .string), Attribute("region", .string)],
                relationships: [Relationship("notes", to: "Note", inverse: "owner", toMany: true, deleteRule: .deny)],
                indexes: [.unique("email"), .unique("region", "email")]),
            Entity(
                "LogEntry", attributes: [Attribute("text", .string)],
                relationships: [Relationship("note", to: "Note", inverse: "log")]),
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
