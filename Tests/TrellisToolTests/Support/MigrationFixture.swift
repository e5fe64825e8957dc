import Foundation
import Testing
import Trellis

/// The fixture store's schema, version 2: Note's `title` is renamed `heading` (by original name), Note gains `pinned`
/// (Bool, default false) and an index on `heading`.
enum MigrationFixture {
    static let v2: Schema = {
        var entities = Fixture.schema.entities
        entities[1].attributes[0] = AttributeDescription("heading", .string, originalName: "title")
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: false))
        entities[1].indexes.append(.on("heading"))
        return try! Schema(entities)
    }()

    /// `Fixture.make` (commits 1…6), migrated to `v2` by the library (record 7, the first of segment 2), then two
    /// commits in v2: Note#1's heading renamed (8) and Note#6 inserted, pinned (9).
    static func migratedStore() throws -> URL {
        let directory = try Fixture.make(Fixture.newDirectory())
        let store = try Store(directory: directory, schema: v2, options: StoreOptions(compaction: .manual))
        let notes = try store.snapshot.objectIDs("Note")
        let folder = try store.snapshot.objectIDs("Folder")[0]
        try store.write { tx in try tx.set(notes[0], "heading", "renamed") }
        try store.write { tx in
            let note = try tx.insert("Note", ["heading": "pinned note", "stars": 9, "pinned": true])
            try tx.link(note, "folder", folder)
        }
        try store.close()
        return directory
    }

    static func hex(_ n: UInt64) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The schema `trellis info --json` prints for `store`, changed by `edit`, written next to the store; its URL.
    static func schemaFile(
        for store: URL, name: String = "schema.json", _ edit: (inout [[String: Any]]) throws -> Void
    ) throws -> URL {
        let info = try Tool.run(["info", store.path, "--json"]).json()
        var schema = try #require(info["schema"] as? [String: Any])
        var entities = try #require(schema["entities"] as? [[String: Any]])
        try edit(&entities)
        schema["entities"] = entities
        let url = store.deletingLastPathComponent().appendingPathComponent(name)
        try JSONSerialization.data(withJSONObject: schema, options: [.prettyPrinted]).write(to: url)
        return url
    }

    /// The v2 change, made to the JSON of the fixture's schema.
    static func v2JSON(_ entities: inout [[String: Any]]) throws {
        var note = entities[1]
        var attributes = try #require(note["attributes"] as? [[String: Any]])
        attributes[0]["name"] = "heading"
        attributes[0]["originalName"] = "title"
        attributes.append(["name": "pinned", "type": "Bool", "optional": false, "default": false])
        note["attributes"] = attributes
        var indexes = try #require(note["indexes"] as? [[String: Any]])
        indexes.append(["attributes": ["heading"], "unique": false])
        note["indexes"] = indexes
        entities[1] = note
    }

    /// Every file of the directory and its bytes.
    static func files(_ directory: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            out[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return out
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }
}
