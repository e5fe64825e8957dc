import Foundation
import Testing
import Trellis

/// `trellis schema-diff`: each kind of difference on its own line, matched across renames as a migration matches,
/// the verdict on what opening the store with the schema would do, and diff's exit codes (0 same, 1 different,
/// 2 trouble).
@Suite struct SchemaDiffTests {
    let v1 = MigrationFixture.hex(Fixture.schema.fingerprint)

    func run(_ store: URL, _ file: URL) throws -> (ToolResult, [String]) {
        let result = try Tool.run(["schema-diff", store.path, file.path])
        return (result, MigrationFixture.lines(result.stdout))
    }

    @Test func theStoresOwnSchemaIsIdenticalAndExitsZero() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { _ in }
        let (result, lines) = try run(store, file)
        #expect(result.status == 0, "\(result)")
        #expect(
            lines == [
                "--- \(store.path) (schema \(v1))", "+++ \(file.path) (schema \(v1))", "no differences",
                "migration: none: the store opens with this schema as it is",
            ])
        let json = try Tool.run(["schema-diff", store.path, file.path, "--json"]).json()
        #expect(
            Array(json.keys).sorted() == [
                "differences", "givenFingerprint", "identical", "migration", "schemaFile", "store", "storedFingerprint",
            ])
        #expect(json["identical"] as? Bool == true)
        #expect(json["storedFingerprint"] as? String == v1)
        #expect(json["givenFingerprint"] as? String == v1)
        #expect((json["differences"] as? [Any])?.isEmpty == true)
        let migration = try #require(json["migration"] as? [String: Any])
        #expect(migration["needed"] as? Bool == false)
        #expect(migration["canRun"] as? Bool == true)
        #expect(migration["lightweight"] as? Bool == false)
    }

    @Test func additionsRenamesAndChangesAreListedAndTheMigrationIsLightweight() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            try MigrationFixture.v2JSON(&entities)
            var folder = entities[0]
            var notes = try #require(folder["relationships"] as? [[String: Any]])
            notes[0]["deleteRule"] = "nullify"
            folder["relationships"] = notes
            entities[0] = folder
            var attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
            attributes[1]["default"] = 7
            entities[1]["attributes"] = attributes
            entities.append(["name": "Tag", "attributes": [["name": "label", "type": "String"]]])
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        let v2 = try #require(lines.dropFirst().first?.split(separator: " ").last?.dropLast())
        #expect(v2 != Substring(v1))
        #expect(
            Array(lines.prefix(8)) == [
                "--- \(store.path) (schema \(v1))", "+++ \(file.path) (schema \(v2))",
                "~ relationship Folder.notes: delete rule cascade → nullify",
                "~ attribute Note.heading: renamed from 'title'", "~ attribute Note.stars: default none → 7",
                "+ attribute Note.pinned: Bool = false", "+ index Note (heading)", "+ entity Tag",
            ])
        #expect(lines[8] == "+ attribute Tag.label: String")
        #expect(
            lines[9]
                == "migration: lightweight: opening the store with this schema runs 5 steps in one atomic record, "
                + "losing nothing and keeping every object ID:")
        #expect(lines.contains("  Note: add attribute 'pinned' (Bool, default false) (5 objects)"), "\(result)")
        #expect(lines.contains("  Tag: add entity (schema only)"), "\(result)")
        #expect(lines.count == 15)

        let json = try Tool.run(["schema-diff", store.path, file.path, "--json"]).json()
        #expect(json["identical"] as? Bool == false)
        let differences = try #require(json["differences"] as? [[String: Any]])
        #expect(differences.count == 7)
        let renamed = differences[1]
        #expect(renamed["change"] as? String == "renamed")
        #expect(renamed["item"] as? String == "attribute")
        #expect(renamed["entity"] as? String == "Note")
        #expect(renamed["name"] as? String == "heading")
        #expect(renamed["field"] as? String == "name")
        #expect(renamed["stored"] as? String == "title")
        #expect(renamed["given"] as? String == "heading")
        #expect(differences[0]["field"] as? String == "deleteRule")
        #expect(differences[0]["given"] as? String == "nullify")
        #expect(differences[3]["change"] as? String == "added")
        #expect(differences[3]["given"] as? String == "Bool = false")
        #expect(differences[5]["item"] as? String == "entity")
        #expect(differences[5]["name"] is NSNull)
        let migration = try #require(json["migration"] as? [String: Any])
        #expect(migration["lightweight"] as? Bool == true)
        #expect(
            (migration["steps"] as? [[String: Any]])?.map { $0["kind"] as? String } == [
                "changeDeleteRule", "renameAttribute", "addAttribute", "addIndex", "addEntity",
            ])
    }

    @Test func aChangeThatCouldLoseDataIsListedAndTheMigrationRefusedWithItsProblem() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            var attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
            attributes[1]["type"] = "String"
            entities[1]["attributes"] = attributes
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        #expect(
            Array(lines.dropFirst(2)) == [
                "~ attribute Note.stars: type Int → String",
                "migration: refused: opening the store with this schema would throw migrationRefused and change "
                    + "nothing (1 problem):",
                "  Note.stars: changing its type from Int to String can lose data (only widening integers, integers "
                    + "to Double and Float to Double are inferred; use a custom migration stage)",
            ])
        let migration = try #require(
            try Tool.run(["schema-diff", store.path, file.path, "--json"]).json()["migration"] as? [String: Any])
        #expect(migration["needed"] as? Bool == false)
        #expect(migration["canRun"] as? Bool == false)
        #expect(migration["lightweight"] as? Bool == false)
        #expect((migration["problems"] as? [String])?.count == 1)
    }

    @Test func theVerdictIsPlannedAgainstTheData() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        // The notes have no due date: making it required without a default is refused because of them, while a
        // store without notes would take it.
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            var attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
            attributes[2]["optional"] = false
            entities[1]["attributes"] = attributes
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        #expect(lines.count >= 5, "\(result)")
        #expect(Array(lines.dropFirst(2).prefix(1)) == ["~ attribute Note.due: optional → required"])
        #expect(lines.dropFirst(3).first?.hasPrefix("migration: refused: ") == true, "\(result)")
        #expect(lines.dropFirst(4).allSatisfy { $0.hasPrefix("  ") && $0.contains("due") }, "\(result)")

        let empty = try Fixture.make(Fixture.newDirectory(), commits: 1)
        defer { Fixture.cleanUp(empty) }
        let (fine, verdict) = try run(empty, file)
        #expect(fine.status == 1, "\(fine)")
        #expect(verdict.dropFirst(3).first?.hasPrefix("migration: lightweight: ") == true, "\(fine)")
    }

    @Test func removalsAndAnIndexTurnedUniqueAreListed() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            var note = entities[1]
            note["attributes"] = (note["attributes"] as? [[String: Any]])?.filter { $0["name"] as? String != "due" }
            note["relationships"] = []
            note["indexes"] = [["attributes": ["stars"], "unique": true]]
            entities = [note]
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        #expect(
            Array(lines.dropFirst(2).prefix(4)) == [
                "- entity Folder", "- attribute Note.due: Date?",
                "- relationship Note.folder: Folder (inverse notes, delete rule nullify, count 0…1)",
                "~ index Note (stars): not unique → unique",
            ])
        #expect(lines[6].hasPrefix("migration: lightweight: "), "\(result)")
        #expect(lines.contains("  Note: add unique constraint on (stars) (5 objects)"), "\(result)")
    }

    @Test func renamesAreFollowedSoARenamedTargetIsNoChangeOfTarget() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            entities[0]["name"] = "Box"
            entities[0]["originalName"] = "Folder"
            var notes = try #require(entities[0]["relationships"] as? [[String: Any]])
            notes[0]["name"] = "items"
            notes[0]["originalName"] = "notes"
            entities[0]["relationships"] = notes
            var folder = try #require(entities[1]["relationships"] as? [[String: Any]])
            folder[0]["target"] = "Box"
            folder[0]["inverse"] = "items"
            entities[1]["relationships"] = folder
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        #expect(
            Array(lines.dropFirst(2)) == [
                "~ entity Box: renamed from 'Folder'", "~ relationship Box.items: renamed from 'notes'",
                "migration: lightweight: opening the store with this schema runs 2 steps in one atomic record, "
                    + "losing nothing and keeping every object ID:",
                "  Box: rename entity from 'Folder' (schema only)",
                "  Box: rename relationship 'notes' to 'items' (schema only)",
            ])
    }

    @Test func aDefaultOnlyChangeDiffersButNeedsNoMigration() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { entities in
            var attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
            attributes[0]["default"] = "untitled"
            entities[1]["attributes"] = attributes
        }
        let (result, lines) = try run(store, file)
        #expect(result.status == 1, "\(result)")
        #expect(
            Array(lines.dropFirst(2)) == [
                #"~ attribute Note.title: default none → "untitled""#,
                "migration: none: the store opens with this schema as it is (default values are not part of its "
                    + "structure; the store keeps its own)",
            ])
    }

    @Test func theSchemaInfoPrintsAfterAnEntityWasRemovedIsIdentical() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        // Folder goes, with Note's relationship to it; the store keeps a placeholder in its place.
        let v2 = try MigrationFixture.schemaFile(for: store, name: "v2.json") { entities in
            entities[1]["relationships"] = [Any]()
            entities = [entities[1]]
        }
        #expect(try Tool.run(["migrate", store.path, "--to", v2.path]).status == 0)
        // The schema `info --json` prints now is the store's: the placeholder is no entity to add back.
        let file = try MigrationFixture.schemaFile(for: store) { _ in }
        let (result, lines) = try run(store, file)
        #expect(result.status == 0, "\(result)")
        #expect(
            Array(lines.dropFirst(2)) == [
                "no differences", "migration: none: the store opens with this schema as it is",
            ])
        let info = try Tool.run(["info", store.path])
        #expect(!MigrationFixture.lines(info.stdout).contains("  Folder"), "\(info)")
        #expect(MigrationFixture.lines(info.stdout).contains("  Note"), "\(info)")
        #expect(MigrationFixture.lines(info.stdout).contains("objects     Note 5 (as of sequence 7)"), "\(info)")
        let export = try Tool.run(["export", store.path]).json()
        #expect((export["entities"] as? [String: Any]).map { Array($0.keys) } == ["Note"])
    }

    @Test func errorsExitTwoAndAStoreThatCannotBeOpenedThree() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let file = try MigrationFixture.schemaFile(for: store) { _ in }
        let notJSON = store.deletingLastPathComponent().appendingPathComponent("bad.json")
        try Data("{\"entities\": [{\"name\": 3}]}".utf8).write(to: notJSON)
        let cases: [([String], String)] = [
            ([store.path], "missing SCHEMA.json"),
            ([store.path, store.path + "-nowhere.json"], "cannot read the schema file"),
            ([store.path, notJSON.path], "is not a schema: entities[0].name: expected a string"),
        ]
        for (arguments, message) in cases {
            let result = try Tool.run(["schema-diff"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains(message), "\(arguments): \(result)")
        }
        let missing = try Tool.run(["schema-diff", Fixture.newDirectory("nowhere").path, file.path])
        #expect(missing.status == 3, "\(missing)")

        // A damaged record in the middle: the diff is printed, but what opening would do cannot be told.
        let third = try Fixture.records(store)[2]
        try StoreFile(store, third.file).flip(at: third.offset + 40 + 3)
        let (damaged, lines) = try run(store, file)
        #expect(damaged.status == 2, "\(damaged)")
        #expect(lines.last == "no differences", "\(damaged)")
        #expect(damaged.stderr.contains("trellis schema-diff: cannot tell what opening the store would do: "))
    }
}
