import Foundation
import Testing
import Trellis

/// Every read command's `--json` parses and carries the fields Tools/trellis/README.md documents, with the values
/// of a known store (Folder#1 "Inbox"; Note#1…5, one per commit; then Note#2 renamed and Note#3 deleted).
@Suite struct JSONOutputTests {
    static func store() throws -> URL {
        try Fixture.make(Fixture.newDirectory()) { store in
            let notes = try store.snapshot.objectIDs("Note")
            try store.write { tx in try tx.set(notes[1], "title", "renamed") }
            try store.write { tx in try tx.delete(notes[2]) }
        }
    }

    func keys(_ object: Any?) -> Set<String> { Set((object as? [String: Any])?.keys.map { $0 } ?? []) }

    @Test func infoJSONHasTheDocumentedFields() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["info", store.path, "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(
            keys(json) == [
                "store", "formatVersion", "manifest", "schema", "schemaVersion", "migrations", "objectCounts",
                "lastSequence", "checkpoint",
                "segments", "records", "storedBytes", "uncompressedBytes", "compressionRatio", "totalBytes",
                "reclaimableBytesEstimate", "otherFiles", "history", "problemCount",
            ])
        #expect(json["formatVersion"] as? Int == 10)
        #expect(keys(json["history"]) == ["firstRetained"], "no HISTORY file: only where the history starts")
        #expect(json["lastSequence"] as? Int == 8)
        #expect(json["records"] as? Int == 8)
        #expect(json["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 4])
        #expect(json["checkpoint"] is NSNull)
        #expect(json["problemCount"] as? Int == 0)
        #expect(json["schemaVersion"] is NSNull)
        #expect((json["migrations"] as? [Any])?.isEmpty == true)
        let segments = try #require(json["segments"] as? [[String: Any]])
        #expect(segments.count == 1)
        #expect(
            keys(segments[0]) == ["file", "id", "bytes", "records", "firstSequence", "lastSequence", "live"])
        #expect(segments[0]["firstSequence"] as? Int == 1)
        #expect(segments[0]["lastSequence"] as? Int == 8)
        let schema = try #require(json["schema"] as? [String: Any])
        let entities = try #require(schema["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Folder", "Note"])
        let attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
        #expect(attributes.map { $0["name"] as? String } == ["title", "stars", "due"])
        #expect(attributes.map { $0["type"] as? String } == ["String", "Int", "Date"])
        #expect(
            keys(entities[1]["relationships"].flatMap { ($0 as? [Any])?.first }) == [
                "name", "target", "inverse", "toMany", "deleteRule", "minCount", "maxCount",
            ])
        #expect(
            keys(json["manifest"]) == [
                "generation", "schemaFingerprint", "checkpointSequence", "firstSegment", "lastSegment",
                "durableSequence",
            ])
        // The fixture's store was closed cleanly, so its manifest records every record as durable.
        #expect((json["manifest"] as? [String: Any])?["durableSequence"] as? Int == 8)
    }

    @Test func verifyJSONHasTheDocumentedFields() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let json = try Tool.run(["verify", store.path, "--json"]).json()
        #expect(
            keys(json) == [
                "store", "clean", "checkpointSequence", "records", "lastSequence", "objectCounts", "problems",
                "suggestedRepair",
            ])
        #expect(json["clean"] as? Bool == true)
        #expect(json["records"] as? Int == 8)
        #expect(json["lastSequence"] as? Int == 8)
        #expect(json["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 4])
        #expect((json["problems"] as? [Any])?.isEmpty == true)
        #expect(json["suggestedRepair"] is NSNull)
    }

    @Test func dumpJSONListsEveryRecordWithDecodedChanges() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let json = try Tool.run(["dump", store.path, "--json"]).json()
        #expect(keys(json) == ["store", "records", "problems"])
        let records = try #require(json["records"] as? [[String: Any]])
        #expect(records.map { $0["sequence"] as? Int } == Array(1...8))
        #expect(
            keys(records[0]) == [
                "sequence", "time", "author", "file", "offset", "storedBytes", "uncompressedBytes", "compressed",
                "inserts", "updates", "links", "deletes", "migration",
            ])
        #expect(records[0]["migration"] is NSNull)
        let insert = try #require((records[1]["inserts"] as? [[String: Any]])?.first)
        #expect(insert["object"] as? String == "Note#1")
        #expect((insert["values"] as? [String: Any])?["stars"] as? Int == 1)
        let link = try #require((records[1]["links"] as? [[String: Any]])?.first)
        #expect(link["kind"] as? String == "link")
        #expect(link["source"] as? String == "Note#1")
        #expect(link["relationship"] as? String == "folder")
        #expect(link["target"] as? String == "Folder#1")
        let change = try #require(
            ((records[6]["updates"] as? [[String: Any]])?.first?["changes"] as? [[String: Any]])?.first)
        #expect(change["attribute"] as? String == "title")
        #expect((change["old"] as? String)?.hasPrefix("note 2") == true)
        #expect(change["new"] as? String == "renamed")
        let delete = try #require((records[7]["deletes"] as? [[String: Any]])?.first)
        #expect(delete["object"] as? String == "Note#3")
        #expect((delete["relationships"] as? [String: [String]])?["folder"] == ["Folder#1"])

        let filtered = try Tool.run(["dump", store.path, "--json", "--from", "2", "--to", "4"]).json()
        #expect((filtered["records"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == [2, 3, 4])
    }

    @Test func historyJSONFollowsOneObjectFromInsertToDelete() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let json = try Tool.run(["history", store.path, "Note#2", "--json"]).json()
        #expect(
            keys(json) == ["store", "object", "existed", "checkpointSequence", "atCheckpoint", "changes", "problems"])
        #expect(json["existed"] as? Bool == true)
        #expect(json["object"] as? String == "Note#2")
        let changes = try #require(json["changes"] as? [[String: Any]])
        #expect(changes.map { $0["kind"] as? String } == ["insert", "link", "update"])
        #expect(changes.map { $0["sequence"] as? Int } == [3, 3, 7])
        #expect(changes[1]["relationship"] as? String == "folder")

        let deleted = try Tool.run(["history", store.path, "Note#3", "--json"]).json()
        let kinds = (deleted["changes"] as? [[String: Any]])?.map { $0["kind"] as? String }
        #expect(kinds == ["insert", "link", "delete"])
        // From the folder's side, the same links show under its inverse, `notes`.
        let folder = try Tool.run(["history", store.path, "Folder#1", "--json"]).json()
        let links = (folder["changes"] as? [[String: Any]])?.filter { $0["kind"] as? String == "link" }
        #expect(links?.count == 5)
        #expect(links?.first?["relationship"] as? String == "notes")
        #expect(links?.first?["target"] as? String == "Note#1")
    }

    /// Issue 16, item 7: the history of an ID the store never had printed an empty history with exit 0.
    @Test func historyOfAnObjectThatNeverExistedExitsOneSayingSo() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let text = try Tool.run(["history", store.path, "Note#99"])
        #expect(text.status == 1, "\(text)")
        #expect(text.stderr.contains("Note#99 never existed in this store"), "\(text)")
        let json = try Tool.run(["history", store.path, "Note#99", "--json"])
        #expect(json.status == 1)
        #expect(try json.json()["existed"] as? Bool == false)
        // A deleted object did exist.
        #expect(try Tool.run(["history", store.path, "Note#3"]).status == 0)
    }

    @Test func statsJSONHasHistogramsAndPerEntityFigures() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["stats", store.path, "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(keys(json) == ["store", "records", "recordSizes", "commitsOverTime", "entities", "problems"])
        #expect(json["records"] as? Int == 8)
        let sizes = try #require(json["recordSizes"] as? [String: Any])
        #expect(keys(sizes) == ["min", "median", "max", "histogram"])
        let histogram = try #require(sizes["histogram"] as? [[String: Int]])
        #expect(histogram.reduce(0) { $0 + ($1["count"] ?? 0) } == 8)
        let bins = try #require(json["commitsOverTime"] as? [[String: Any]])
        #expect(bins.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 8)
        let entities = try #require(json["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Folder", "Note"])
        #expect(entities[1]["inserts"] as? Int == 5)
        #expect(entities[1]["updates"] as? Int == 1)
        #expect(entities[1]["deletes"] as? Int == 1)
        #expect(entities[1]["links"] as? Int == 5)
    }

    @Test func exportAsOfAnEarlierSequenceRebuildsThatVersion() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let now = try Tool.run(["export", store.path]).json()
        #expect(now["sequence"] as? Int == 8)
        let notes = try #require((now["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(notes.map { $0["id"] as? String } == ["Note#1", "Note#2", "Note#4", "Note#5"])
        #expect((notes[1]["values"] as? [String: Any])?["title"] as? String == "renamed")
        #expect((notes[1]["relationships"] as? [String: [String]])?["folder"] == ["Folder#1"])

        let then = try Tool.run(["export", store.path, "--as-of", "3"]).json()
        #expect(then["sequence"] as? Int == 3)
        let early = try #require((then["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(early.map { $0["id"] as? String } == ["Note#1", "Note#2"])
        let folder = try #require(((then["entities"] as? [String: Any])?["Folder"] as? [[String: Any]])?.first)
        #expect((folder["relationships"] as? [String: [String]])?["notes"] == ["Note#1", "Note#2"])

        let beyond = try Tool.run(["export", store.path, "--as-of", "99"])
        #expect(beyond.status == 1)
        #expect(beyond.stderr.contains("the journal ends at sequence 8"), "\(beyond)")
    }

    @Test func exportEntityWritesOnlyThatEntitysObjects() throws {
        let store = try Self.store()
        defer { Fixture.cleanUp(store) }
        let folders = try Tool.run(["export", store.path, "--entity", "Folder"])
        #expect(folders.status == 0, "\(folders)")
        let entities = try #require(try folders.json()["entities"] as? [String: Any])
        #expect(Array(entities.keys) == ["Folder"])
        let folder = try #require((entities["Folder"] as? [[String: Any]])?.first)
        #expect(folder["id"] as? String == "Folder#1")
        #expect((folder["values"] as? [String: Any])?["name"] as? String == "Inbox")
        #expect((folder["relationships"] as? [String: [String]])?["notes"] == ["Note#1", "Note#2", "Note#4", "Note#5"])

        let then = try Tool.run(["export", store.path, "--entity", "Note", "--as-of", "3"]).json()
        let notes = try #require((then["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(notes.map { $0["id"] as? String } == ["Note#1", "Note#2"])
        #expect((then["entities"] as? [String: Any])?.count == 1)

        let unknown = try Tool.run(["export", store.path, "--entity", "Nope"])
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("the store has no entity 'Nope' (it has: Folder, Note)"), "\(unknown)")
        #expect(unknown.stdout.isEmpty)
    }

    @Test func exportEntityAsOfASequenceBeforeTheEntityExistedIsRefused() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        // A migration adds the entity Tag after commit 6, and commit 8 inserts one.
        var entities = Fixture.schema.entities
        entities.append(EntityDescription("Tag", attributes: [AttributeDescription("label", .string)]))
        let writer = try Store(directory: store, schema: try Schema(entities))
        try writer.write { tx in _ = try tx.insert("Tag", ["label": "urgent"]) }
        try writer.close()
        let now = try Tool.run(["export", store.path, "--entity", "Tag"]).json()
        #expect(((now["entities"] as? [String: Any])?["Tag"] as? [[String: Any]])?.count == 1)
        let before = try Tool.run(["export", store.path, "--entity", "Tag", "--as-of", "6"])
        #expect(before.status == 2, "\(before)")
        #expect(before.stderr.contains("the store had no entity 'Tag' as of sequence 6 (it had: Folder, Note)"))
        #expect(before.stdout.isEmpty)
    }
}
