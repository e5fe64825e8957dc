import Foundation
import Trellis

/// The deterministic transactions the crash suite commits: transaction `n` depends on `n` alone, never on chance or
/// on the state it meets, so a test can replay 1…k in memory and compare what a killed process left on disk with it.
///
/// Every transaction commits (none breaks a rule), and each inserts a fixed number of objects, so object serials
/// follow from `n` too: item `n` has serial `n`, folder `f` (0-based) has serial `f + 1`.
///
///     every n:          insert item n (title, score, a note of varying size) into folder (n - 1) / 10
///     n % 10 == 1:      insert that folder first
///     n % 7 == 0:       retitle item n - 5
///     n % 13 == 0:      delete item n - 12
///     n % 50 == 0:      the note is 20 KB (a record that spans many sectors)
///
/// Folder names are unique and items are indexed on title and score, so that a recovery that loses or keeps a wrong
/// index entry differs from the replay (`GraphEquality` compares indexes).
enum CrashWorkload {
    static let schema = try! Schema([
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("items", to: "Item", inverse: "folder", toMany: true, deleteRule: .cascade)
            ], indexes: [.unique("name")]),
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("title", .string), AttributeDescription("score", .double),
                AttributeDescription("note", .data, optional: true),
            ],
            relationships: [RelationshipDescription("folder", to: "Folder", inverse: "items")],
            indexes: [.on("title"), .on("score")]),
    ])

    static let folderEntity: UInt32 = 0
    static let itemEntity: UInt32 = 1

    static func item(_ n: Int) -> ObjectID { ObjectID(entity: itemEntity, serial: UInt64(n)) }

    static func folder(holding n: Int) -> ObjectID { ObjectID(entity: folderEntity, serial: UInt64((n - 1) / 10 + 1)) }

    /// The note of item `n`: a size that varies from commit to commit, with bytes that compress only partly.
    static func note(_ n: Int) -> Data {
        let count = n % 50 == 0 ? 20_000 : (n &* 37) % 700
        var state = UInt32(truncatingIfNeeded: n &* 2_654_435_761)
        return Data(
            (0..<count).map { i in
                state = state &* 1_103_515_245 &+ 12_345
                return i % 3 == 0 ? UInt8(truncatingIfNeeded: state >> 16) : UInt8(truncatingIfNeeded: i)
            })
    }

    /// Adds transaction `n` (1-based) to `tx`.
    static func fill(_ tx: inout Transaction, _ n: Int) throws {
        if n % 10 == 1 { try tx.insert("Folder", ["name": .string("folder \((n - 1) / 10)")]) }
        let item = try tx.insert(
            "Item", ["title": .string("item \(n)"), "score": .double(Double(n) * 1.5), "note": .data(note(n))])
        try tx.link(item, "folder", folder(holding: n))
        if n % 7 == 0 && n > 5 { try tx.set(self.item(n - 5), "title", .string("item \(n - 5) retitled by \(n)")) }
        if n % 13 == 0 && n > 12 { try tx.delete(self.item(n - 12)) }
    }

    /// Commits transaction `n` to `store`; throws what the commit throws.
    @discardableResult
    static func commit(_ n: Int, to store: Store) throws -> Commit {
        var tx = store.transaction()
        try fill(&tx, n)
        return try store.commit(tx)
    }

    /// The graph after each of transactions 0…`count` (index 0: empty), from an in-memory store of `schema` (the
    /// workload's; an older one for stores an older build wrote).
    static func versions(through count: Int, schema: Schema = schema) throws -> [Snapshot] {
        let store = Store(schema: schema)
        var out = [store.snapshot]
        out.reserveCapacity(count + 1)
        for n in stride(from: 1, through: count, by: 1) { out.append(try commit(n, to: store).snapshot) }
        return out
    }
}
