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

    /// Opens the store in `directory`, prints `lines`, closes it and prints `closed SEQUENCE`.
    static func run(directory: URL) throws {
        let store = try Store(directory: directory, schema: schema)
        for line in try lines(store.snapshot) { say(line) }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}
