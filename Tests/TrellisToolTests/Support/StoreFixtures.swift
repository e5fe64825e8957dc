import Foundation
import Trellis

/// Stores made by the library for the tool to read: a notes app's schema, and a few shapes of journal.
enum Fixture {
    static let schema = try! Schema([
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade)
            ]),
        EntityDescription(
            "Note",
            attributes: [
                AttributeDescription("title", .string), AttributeDescription("stars", .int),
                AttributeDescription("due", .date, optional: true),
            ],
            relationships: [RelationshipDescription("folder", to: "Folder", inverse: "notes")],
            indexes: [.on("stars")]),
    ])

    /// A new directory that does not exist yet, under the temporary directory; remove it with `cleanUp`.
    static func newDirectory(_ name: String = "store") -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "trellis-tool-tests-\(UUID().uuidString.prefix(8))/\(name)")
    }

    static func cleanUp(_ store: URL) {
        try? FileManager.default.removeItem(at: store.deletingLastPathComponent())
    }

    /// A closed store: commit 1 inserts the folder Folder#1 "Inbox", commits 2…`commits` insert one note each
    /// (Note#1…), linked to the folder. With `segmentBytes: 1` every commit gets its own segment.
    @discardableResult
    static func make(
        _ directory: URL, commits: Int = 6, segmentBytes: Int = 64 << 20, body: ((Store) throws -> Void)? = nil
    ) throws -> URL {
        let store = try Store(
            directory: directory, schema: schema,
            options: StoreOptions(compaction: .manual, segmentBytes: segmentBytes))
        let inbox = try store.write { tx in try tx.insert("Folder", ["name": "Inbox"]) }
        for i in 1..<commits {
            try store.write { tx in
                let note = try tx.insert(
                    "Note",
                    ["title": .string("note \(i) " + String(repeating: "·", count: 20)), "stars": .int(Int64(i))])
                try tx.link(note, "folder", inbox)
            }
        }
        try body?(store)
        try store.close()
        return directory
    }

    /// Every valid record of the store's journal, in order.
    static func records(_ directory: URL) throws -> [JournalRecord] {
        var out: [JournalRecord] = []
        try JournalReader(directory: directory).forEachRecord { out.append($0) }
        return out
    }

    /// The journal segments in the directory, by name, in order.
    static func segments(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("segment-") && $0.hasSuffix(".trj")
        }.sorted()
    }
}
