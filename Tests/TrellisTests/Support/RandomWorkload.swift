import Foundation

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Random transactions over the outline schema: inserts, updates, relationship edits and deletes (with cascades),
/// including ones the store must refuse. Deterministic for a seed.
struct RandomWorkload {
    var rng: SeededRandom
    let schema: Schema

    init(seed: UInt64, schema: Schema) {
        rng = SeededRandom(seed: seed)
        self.schema = schema
    }

    private mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[Int(rng.next() % UInt64(items.count))]
    }

    private mutating func word() -> String {
        String((0..<(3 + rng.next() % 6)).map { _ in Character(UnicodeScalar(97 + UInt8(rng.next() % 26))) })
    }

    /// One transaction of up to `size` random operations against `snapshot`.
    mutating func transaction(for store: Store, size: Int = 8) throws -> Transaction {
        let snapshot = store.snapshot
        var tx = store.transaction()
        var folders = try snapshot.objectIDs("Folder")
        var notes = try snapshot.objectIDs("Note")
        var tags = try snapshot.objectIDs("Tag")
        for _ in 0..<(1 + Int(rng.next() % UInt64(size))) {
            switch rng.next() % 12 {
            case 0, 1:
                folders.append(
                    try tx.insert("Folder", ["name": .string(word()), "rank": .int(Int64(rng.next() % 100))]))
            case 2, 3:
                var values: [String: Value] = ["title": .string(word()), "score": .double(Double(rng.next() % 1000))]
                if rng.next() % 2 == 0 {
                    values["due"] = .date(Date(timeIntervalSince1970: Double(rng.next() % 1_000_000)))
                }
                if rng.next() % 3 == 0 { values["body"] = .string(word() + " " + word()) }
                notes.append(try tx.insert("Note", values))
            case 4:
                tags.append(try tx.insert("Tag", ["label": .string(word())]))
            case 5:
                if let n = pick(notes) { try tx.set(n, "score", .double(Double(rng.next() % 1000) / 4)) }
            case 6:
                if let n = pick(notes) { try tx.set(n, "done", .bool(rng.next() % 2 == 0)) }
            case 7:
                if let n = pick(notes), let f = pick(folders) { try tx.link(n, "folder", f) }
            case 8:
                if let f = pick(folders), let p = pick(folders), f != p { try tx.link(f, "parent", p) }
            case 9:
                if let n = pick(notes), let t = pick(tags) {
                    if rng.next() % 3 == 0 { try tx.unlink(n, "tags", t) } else { try tx.link(n, "tags", t) }
                }
            case 10:
                if let n = pick(notes) { try tx.delete(n) }
            default:
                if rng.next() % 3 == 0, let f = pick(folders) {
                    try tx.delete(f)
                } else if let t = pick(tags) {
                    try tx.delete(t)
                }
            }
        }
        return tx
    }
}
