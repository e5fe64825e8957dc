import Foundation
import Trellis

/// The store of ordered relationships that `OrderedRelationshipTests` writes and this tool reads back in another
/// process: boards with an ordered to-many `cards` (inverse to-one `board`, cascade) and an ordered to-many `pins`
/// (inverse to-many `pinnedOn`, nullify).
enum OrderedCommand {
    static let schema: Schema = {
        do {
            return try Schema([
                EntityDescription(
                    "Board", attributes: [AttributeDescription("name", .string)],
                    relationships: [
                        RelationshipDescription(
                            "cards", to: "Card", inverse: "board", toMany: true, ordered: true, deleteRule: .cascade),
                        RelationshipDescription("pins", to: "Card", inverse: "pinnedOn", toMany: true, ordered: true),
                    ]),
                EntityDescription(
                    "Card", attributes: [AttributeDescription("title", .string)],
                    relationships: [
                        RelationshipDescription("board", to: "Board", inverse: "cards"),
                        RelationshipDescription("pinnedOn", to: "Board", inverse: "pins", toMany: true),
                    ]),
            ])
        } catch {
            fatalError("OrderedCommand.schema: \(error)")
        }
    }()

    /// The lines that describe every board's lists, in serial order: `board S cards: A B C` then
    /// `board S pins: …`, each target by serial.
    static func lines(_ snapshot: Snapshot) throws -> [String] {
        var out: [String] = []
        for board in try snapshot.objectIDs("Board").sorted() {
            for relationship in ["cards", "pins"] {
                let serials = try snapshot.targets(board, relationship).map { String($0.serial) }
                out.append("board \(board.serial) \(relationship): " + serials.joined(separator: " "))
            }
        }
        return out
    }

    /// Opens the store in `directory`; with `commits` > 0 first makes that many commits of inserts, moves and removes
    /// at positions, deletes and a compaction halfway (a store for `.ci/check-pyreader.sh`); then prints `lines`,
    /// closes it and prints `closed SEQUENCE`.
    static func run(directory: URL, commits: Int = 0) throws {
        let store = try Store(directory: directory, schema: schema)
        if commits > 0 { try write(store, commits: commits) }
        for line in try lines(store.snapshot) { say(line) }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }

    /// `commits` commits on three boards, from a fixed seed: new cards inserted at positions, moves, removes at
    /// positions, pins, card deletes; a compaction halfway, so that the store has a checkpoint and a journal after it.
    static func write(_ store: Store, commits: Int) throws {
        var state: UInt64 = 19
        func below(_ n: Int) -> Int {
            // A 64-bit LCG's high bits: the same commits on every run.
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        var tx = store.transaction()
        var boards: [ObjectID] = []
        for i in 0..<3 { boards.append(try tx.insert("Board", ["name": .string("board \(i)")])) }
        _ = try store.commit(tx)
        for n in 0..<commits {
            if n == commits / 2 { try store.compact() }
            let snapshot = store.snapshot
            let board = boards[below(boards.count)]
            let cards = try snapshot.targets(board, "cards")
            let pins = try snapshot.targets(board, "pins")
            var tx = store.transaction()
            switch below(10) {
            case 0..<4:
                let card = try tx.insert("Card", ["title": .string("card \(n)")])
                try tx.link(board, "cards", card, at: below(cards.count + 1))
            case 4, 5:
                guard !cards.isEmpty else { continue }
                try tx.move(board, "cards", from: below(cards.count), to: below(cards.count))
            case 6:
                guard !cards.isEmpty else { continue }
                try tx.unlink(board, "cards", at: below(cards.count))
            case 7:
                let all = try snapshot.objectIDs("Card")
                guard !all.isEmpty else { continue }
                try tx.link(board, "pins", all[below(all.count)], at: below(pins.count + 1))
            case 8:
                guard !pins.isEmpty else { continue }
                try tx.move(board, "pins", from: below(pins.count), to: below(pins.count))
            default:
                guard !cards.isEmpty else { continue }
                try tx.delete(cards[below(cards.count)])
            }
            _ = try store.commit(tx)
        }
    }
}
