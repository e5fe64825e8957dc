// Over 400 lines: one suite covers every reading command and `migrate` on migrated stores, sharing their fixtures.
import Foundation
import Testing
import Trellis

/// `info`, `dump`, `history`, `verify`, `export` and `stats` on stores that went through a schema migration, and
/// `trellis migrate`.
@Suite struct MigrationToolTests {
    let v1 = MigrationFixture.hex(Fixture.schema.fingerprint)
    let v2 = MigrationFixture.hex(MigrationFixture.v2.fingerprint)
    let steps = [
        "Note: rename attribute 'title' to 'heading' (schema only)",
        "Note: add attribute 'pinned' (Bool, default false) (5 objects)",
        "Note: add index on (heading) (5 objects)",
    ]

    @Test func infoShowsTheSchemaVersionsAndTheMigrationHistory() throws {
        let store = try MigrationFixture.migratedStore()
        defer { Fixture.cleanUp(store) }
        let text = try Tool.run(["info", store.path])
        #expect(text.status == 0, "\(text)")
        let lines = MigrationFixture.lines(text.stdout)
        #expect(lines.contains("schema      2 entities, fingerprint \(v2)"))
        #expect(lines.contains("    heading: String"))
        #expect(lines.contains("    pinned: Bool = false"))
        #expect(lines.contains("    index (heading)"))
        #expect(lines.contains("migrations  1; schema versions \(v1) → \(v2)"), "\(text)")
        #expect(lines.contains { $0.hasPrefix("  #7  ") && $0.hasSuffix("Z  \(v1) → \(v2)") }, "\(text)")
        for step in steps { #expect(lines.contains("      " + step), "\(step)\n\(text)") }
        #expect(lines.contains("objects     Folder 1, Note 6 (as of sequence 9)"))
        #expect(
            lines.contains {
                $0.hasPrefix("  segment-0000000000000002.trj") && $0.hasSuffix("sequences 7…9 (3 records)")
            })

        let result = try Tool.run(["info", store.path, "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(json["schemaVersion"] is NSNull)
        #expect(json["problemCount"] as? Int == 0)
        #expect(json["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 6])
        #expect((json["schema"] as? [String: Any])?["fingerprint"] as? String == v2)
        let migrations = try #require(json["migrations"] as? [[String: Any]])
        #expect(migrations.count == 1)
        let m = migrations[0]
        #expect(
            Set(m.keys) == [
                "sequence", "time", "fromFingerprint", "toFingerprint", "fromVersion", "toVersion", "steps",
            ])
        #expect(m["sequence"] as? Int == 7)
        #expect(m["fromFingerprint"] as? String == v1)
        #expect(m["toFingerprint"] as? String == v2)
        #expect(m["fromVersion"] is NSNull)
        #expect(m["toVersion"] is NSNull)
        #expect(m["steps"] as? [String] == steps)
        #expect((m["time"] as? String)?.hasSuffix("Z") == true)

        // The history survives compaction, which folds the migration record into the checkpoint.
        #expect(try Tool.run(["compact", store.path]).status == 0)
        let compacted = try Tool.run(["info", store.path, "--json"]).json()
        #expect((compacted["migrations"] as? [[String: Any]])?.first?["steps"] as? [String] == steps)
    }

    @Test func migrateDryRunListsTheStepsWithTheirCostsAndWritesNothing() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let schema = try MigrationFixture.schemaFile(for: store, MigrationFixture.v2JSON)
        let before = try MigrationFixture.files(store)

        let result = try Tool.run(["migrate", store.path, "--to", schema.path, "--dry-run"])
        #expect(result.status == 0, "\(result)")
        #expect(
            MigrationFixture.lines(result.stdout) == [
                "dry run: \(store.path) would migrate from schema \(v1) to \(v2); nothing was written:"
            ] + steps.map { "  " + $0 } + ["3 steps; the largest touches 5 objects"])
        #expect(try MigrationFixture.files(store) == before, "a dry run writes nothing")

        let json = try Tool.run(["migrate", store.path, "--to", schema.path, "--dry-run", "--json"]).json()
        #expect(
            Set(json.keys) == [
                "store", "dryRun", "needed", "canRun", "fromFingerprint", "toFingerprint", "steps", "problems",
                "migrated", "sequence",
            ])
        #expect(json["dryRun"] as? Bool == true)
        #expect(json["needed"] as? Bool == true)
        #expect(json["canRun"] as? Bool == true)
        #expect(json["migrated"] as? Bool == false)
        #expect(json["sequence"] is NSNull)
        #expect(json["toFingerprint"] as? String == v2)
        let planned = try #require(json["steps"] as? [[String: Any]])
        #expect(planned.map { $0["kind"] as? String } == ["renameAttribute", "addAttribute", "addIndex"])
        #expect(planned.map { $0["objects"] as? Int } == [0, 5, 5])
        #expect(planned.map { $0["property"] as? String } == ["heading", "pinned", "heading"])
        #expect(try MigrationFixture.files(store) == before, "a dry run writes nothing")
    }

    @Test func migrateRenamesAddsAnAttributeAndAnIndexAndAReopenSeesIt() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let schema = try MigrationFixture.schemaFile(for: store, MigrationFixture.v2JSON)
        let result = try Tool.run(["migrate", store.path, "--to", schema.path])
        #expect(result.status == 0, "\(result)")
        #expect(
            MigrationFixture.lines(result.stdout) == [
                "migrated \(store.path) from schema \(v1) → \(v2) at sequence 7, in one record:"
            ] + steps.map { "  " + $0 } + ["3 steps; the largest touches 5 objects"])
        #expect(try Fixture.segments(store).count == 2, "the migration opens a segment of its own")

        // The tool committed it: the store now has v2's structure, and the app's v2 opens it without migrating.
        #expect(try JournalReader(directory: store).schema().fingerprint == MigrationFixture.v2.fingerprint)
        #expect(try !Store.plannedMigration(directory: store, schema: MigrationFixture.v2).isNeeded)
        let reopened = try Store(
            directory: store, schema: MigrationFixture.v2, options: StoreOptions(readOnly: true))
        let snapshot = reopened.snapshot
        let notes = try snapshot.objectIDs("Note")
        #expect(notes.count == 5)
        #expect(try snapshot.value(notes[0], "heading")?.stringValue?.hasPrefix("note 1 ") == true)
        #expect(try snapshot.value(notes[0], "pinned") == .bool(false))
        #expect(try snapshot.value(notes[0], "stars") == .int(1))
        let query = DynamicQuery("Note", where: .equal("heading", try snapshot.value(notes[2], "heading") ?? .null))
        #expect(try snapshot.explain(query).index == ["heading"])
        #expect(try snapshot.fetch(query) == [notes[2]])
        #expect(reopened.schema.history.count == 1)
        #expect(reopened.schema.history.first?.sequence == 7)
        try reopened.close()

        let again = try Tool.run(["migrate", store.path, "--to", schema.path])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.hasPrefix("nothing to migrate: \(store.path) already has this schema's structure"))
        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 0, "\(verify)")
    }

    @Test func aRefusedMigrationExitsOneNamingEachChangeAndChangesNoByte() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let schema = try MigrationFixture.schemaFile(for: store) { entities in
            var note = entities[1]
            var attributes = try #require(note["attributes"] as? [[String: Any]])
            attributes[0]["type"] = "Int"
            attributes.append(["name": "owner", "type": "String"])
            note["attributes"] = attributes
            entities[1] = note
        }
        let before = try MigrationFixture.files(store)
        for dryRun in [true, false] {
            let result = try Tool.run(["migrate", store.path, "--to", schema.path] + (dryRun ? ["--dry-run"] : []))
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.hasPrefix("refused: \(store.path) cannot be migrated from schema \(v1) to "))
            #expect(result.stdout.contains("  Note.title: changing its type from String to Int can lose data"))
            #expect(result.stdout.contains("  Note.owner: a new required attribute without a default"), "\(result)")
            #expect(result.stderr.contains("refused (2 problems); nothing was changed"), "\(result)")
            #expect(try MigrationFixture.files(store) == before, "dry run \(dryRun): not a byte changed")
        }
        let json = try Tool.run(["migrate", store.path, "--to", schema.path, "--json"])
        #expect(json.status == 1)
        #expect(try json.json()["canRun"] as? Bool == false)
        #expect((try json.json()["problems"] as? [String])?.count == 2)
        #expect(try MigrationFixture.files(store) == before)
    }

    @Test func aSchemaFileThatIsNotASchemaIsAUsageErrorNamingWhatIsWrong() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let before = try MigrationFixture.files(store)
        let file = store.deletingLastPathComponent().appendingPathComponent("bad.json")
        let cases: [(String, String)] = [
            ("{\"entities\": [", "is not a schema: not valid JSON"),
            ("[1, 2]", "is not a schema: expected a JSON object, found an array"),
            ("{\"entities\": 3}", "entities: expected an array, found the number 3"),
            ("{\"entities\": [{\"attributes\": []}]}", "entities[0].name: missing"),
            (
                "{\"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"Strin\"}]}]}",
                "entities[0].attributes[0].type: 'Strin' is not a type; the types are Bool, Int"
            ),
            (
                "{\"entities\": [{\"name\": \"A\", \"atributes\": []}]}",
                "unknown field 'atributes' in entities[0] (the fields are attributes, indexes, name, originalName, "
                    + "relationships)"
            ),
            (
                "{\"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"n\", \"type\": \"Int8\", "
                    + "\"default\": 300}]}]}",
                "entities[0].attributes[0].default: 300 is out of range (-128…127)"
            ),
            (
                "{\"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"d\", \"type\": \"Date\", "
                    + "\"default\": \"yesterday\"}]}]}",
                "entities[0].attributes[0].default: the default of a Date attribute is ISO 8601 UTC text"
            ),
            (
                "{\"entities\": [{\"name\": \"A\", \"relationships\": [{\"name\": \"r\", \"target\": \"B\", "
                    + "\"inverse\": \"s\", \"deleteRule\": \"explode\"}]}]}",
                "entities[0].relationships[0].deleteRule: 'explode' is not a delete rule"
            ),
            (
                "{\"entities\": [{\"name\": \"A\", \"relationships\": [{\"name\": \"r\", \"target\": \"B\", "
                    + "\"inverse\": \"s\"}]}]}",
                "is not a schema: not a valid schema: "
            ),
        ]
        for (text, message) in cases {
            try Data(text.utf8).write(to: file)
            let result = try Tool.run(["migrate", store.path, "--to", file.path, "--dry-run"])
            #expect(result.status == 2, "\(text): \(result)")
            #expect(result.stderr.contains(message), "\(text): \(result)")
            #expect(result.stdout.isEmpty, "\(text): \(result)")
        }
        let missing = try Tool.run(["migrate", store.path, "--to", file.path + ".nowhere"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read the schema file \(file.path).nowhere: no such file"))
        #expect(try MigrationFixture.files(store) == before)
    }

    @Test func dumpShowsTheMigrationRecordAndReadsOlderRecordsWithTheirOwnSchema() throws {
        let store = try MigrationFixture.migratedStore()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["dump", store.path, "--from", "6"])
        #expect(result.status == 0, "\(result)")
        let lines = MigrationFixture.lines(result.stdout)
        #expect(lines[0].hasPrefix("#6  "))
        #expect(lines[1].hasPrefix("    insert  Note#5         title=\"note 5"), "\(result)")
        let migration = try #require(lines.firstIndex { $0.hasPrefix("#7  ") })
        #expect(lines[migration].contains("  segment-0000000000000002.trj@"))
        #expect(lines[migration + 1] == "    migrate schema \(v1) → \(v2)")
        #expect(Array(lines[(migration + 2)...(migration + 4)]) == steps.map { "    step    " + $0 })
        #expect(lines[migration + 5].hasPrefix("#8  "))
        #expect(lines[migration + 6].hasPrefix("    update  Note#1         heading: \"note 1"))
        #expect(lines[migration + 6].hasSuffix("→ \"renamed\""))
        #expect(lines.contains("    insert  Note#6         heading=\"pinned note\", stars=9, due=null, pinned=true"))

        let json = try Tool.run(["dump", store.path, "--json"]).json()
        let records = try #require(json["records"] as? [[String: Any]])
        #expect(records.map { $0["sequence"] as? Int } == Array(1...9))
        #expect(records[0]["migration"] is NSNull)
        let old = try #require((records[1]["inserts"] as? [[String: Any]])?.first?["values"] as? [String: Any])
        #expect(Set(old.keys) == ["title", "stars", "due"])
        let new = try #require((records[8]["inserts"] as? [[String: Any]])?.first?["values"] as? [String: Any])
        #expect(Set(new.keys) == ["heading", "stars", "due", "pinned"])
        let m = try #require(records[6]["migration"] as? [String: Any])
        #expect(m["fromFingerprint"] as? String == v1)
        #expect(m["toFingerprint"] as? String == v2)
        #expect(m["steps"] as? [String] == steps)
        #expect(records[6]["file"] as? String == "segment-0000000000000002.trj")
        #expect((records[6]["inserts"] as? [Any])?.isEmpty == true)
        #expect((json["problems"] as? [Any])?.isEmpty == true)

        // A filter follows the object through the migration; the migration record is always listed.
        let one = try Tool.run(["dump", store.path, "--object", "Note#1", "--json"]).json()
        #expect((one["records"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == [2, 7, 8])
    }

    @Test func historyShowsTheMigrationBetweenTheObjectsChangesInTheirOwnSchemas() throws {
        let store = try MigrationFixture.migratedStore()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["history", store.path, "Note#1"])
        #expect(result.status == 0, "\(result)")
        let lines = MigrationFixture.lines(result.stdout)
        #expect(lines.count == 5, "\(result)")
        #expect(lines[1].hasPrefix("  #2  ") && lines[1].contains("  insert  title=\"note 1"))
        #expect(lines[2].hasPrefix("  #2  ") && lines[2].hasSuffix("  link  folder → Folder#1"))
        #expect(lines[3].hasPrefix("  #7  "))
        #expect(lines[3].hasSuffix("  migration  schema \(v1) → \(v2): " + steps.joined(separator: "; ")))
        #expect(lines[4].hasPrefix("  #8  ") && lines[4].contains("  update  heading: \"note 1"))

        let json = try Tool.run(["history", store.path, "Note#1", "--json"]).json()
        let changes = try #require(json["changes"] as? [[String: Any]])
        #expect(changes.map { $0["kind"] as? String } == ["insert", "link", "migration", "update"])
        let m = changes[2]
        #expect(
            Set(m.keys) == [
                "sequence", "time", "author", "kind", "fromFingerprint", "toFingerprint", "fromVersion", "toVersion",
                "steps", "objectBefore", "objectAfter",
            ])
        #expect(m["author"] is NSNull, "a migration has no author")
        #expect(m["sequence"] as? Int == 7)
        #expect(m["objectBefore"] as? String == "Note#1")
        #expect(m["objectAfter"] as? String == "Note#1")
        #expect(m["steps"] as? [String] == steps)
        #expect(((changes[0]["values"] as? [String: Any])?["title"] as? String)?.hasPrefix("note 1") == true)
        let update = try #require((changes[3]["changes"] as? [[String: Any]])?.first)
        #expect(update["attribute"] as? String == "heading")
        #expect(update["new"] as? String == "renamed")
    }

    @Test func verifyIsCleanAndTheOtherReadersReplayThroughTheMigration() throws {
        let store = try MigrationFixture.migratedStore()
        defer { Fixture.cleanUp(store) }
        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("records     9 checked, through sequence 9"))
        #expect(verify.stdout.contains("objects     Folder 1, Note 6"))
        #expect(verify.stdout.hasSuffix("clean: no problems\n"))
        let verification = try JournalReader(directory: store).verify()
        #expect(verification.problems.isEmpty)
        #expect(verification.lastSequence == 9)

        let stats = try Tool.run(["stats", store.path, "--json"])
        #expect(stats.status == 0, "\(stats)")
        #expect(try stats.json()["records"] as? Int == 9)

        // Export rebuilds the store before the migration in the old schema, and after it in the new one.
        let before = try Tool.run(["export", store.path, "--as-of", "6"])
        #expect(before.status == 0, "\(before)")
        let old = try #require((before.json()["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(old.count == 5)
        #expect(Set((old[0]["values"] as? [String: Any])?.keys.map { $0 } ?? []) == ["title", "stars", "due"])
        let now = try Tool.run(["export", store.path]).json()
        #expect(now["schemaFingerprint"] as? String == v2)
        let notes = try #require((now["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(notes.count == 6)
        #expect((notes[0]["values"] as? [String: Any])?["heading"] as? String == "renamed")
        #expect((notes[0]["values"] as? [String: Any])?["pinned"] as? Bool == false)
        #expect((notes[5]["values"] as? [String: Any])?["pinned"] as? Bool == true)

        // A checkpoint taken before a migration is read in its own schema, the migration replayed on top of it.
        #expect(try Tool.run(["compact", store.path]).status == 0)
        let v3 = try MigrationFixture.schemaFile(for: store, name: "v3.json") { entities in
            var note = entities[1]
            var attributes = try #require(note["attributes"] as? [[String: Any]])
            attributes.removeAll { $0["name"] as? String == "due" }
            note["attributes"] = attributes
            entities[1] = note
        }
        let migrated = try Tool.run(["migrate", store.path, "--to", v3.path])
        #expect(migrated.status == 0, "\(migrated)")
        let after = try Tool.run(["verify", store.path, "--json"])
        #expect(after.status == 0, "\(after)")
        #expect(try after.json()["checkpointSequence"] as? Int == 9)
        #expect(try after.json()["lastSequence"] as? Int == 10)
        let history = try Tool.run(["history", store.path, "Note#6"])
        #expect(history.status == 0, "\(history)")
        #expect(history.stdout.contains("at checkpoint (sequence 9): heading=\"pinned note\", stars=9, due=null"))
        #expect(history.stdout.contains("  migration  schema \(v2) → "))
        let info = try Tool.run(["info", store.path, "--json"]).json()
        #expect((info["migrations"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == [7, 10])
        #expect(info["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 6])
    }

    @Test func anObjectIsFollowedWhenARemovedEntityRenumbersItsOwn() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        // Folder (entity 0) goes, with Note's relationship to it: Note moves from entity 1 to 0, serials stay.
        let schema = try MigrationFixture.schemaFile(for: store) { entities in
            var note = entities[1]
            note["relationships"] = [Any]()
            entities = [note]
        }
        let result = try Tool.run(["migrate", store.path, "--to", schema.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("  Folder: remove entity"), "\(result)")
        #expect(try Tool.run(["verify", store.path]).status == 0)

        let history = try Tool.run(["history", store.path, "Note#2", "--json"]).json()
        let changes = try #require(history["changes"] as? [[String: Any]])
        #expect(changes.map { $0["kind"] as? String } == ["insert", "link", "migration"])
        #expect(changes.map { $0["sequence"] as? Int } == [3, 3, 7])
        #expect(changes[1]["target"] as? String == "Folder#1")
        #expect(((changes[0]["values"] as? [String: Any])?["title"] as? String)?.hasPrefix("note 2") == true)

        let notes = try Tool.run(["dump", store.path, "--object", "Note#2", "--json"]).json()
        #expect((notes["records"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == [3, 7])
        // An entity the newest schema no longer has is named in the schema that had it.
        let folders = try Tool.run(["dump", store.path, "--entity", "Folder", "--json"]).json()
        #expect((folders["records"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == Array(1...7))
        let export = try Tool.run(["export", store.path]).json()
        let exported = try #require((export["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(exported.map { $0["id"] as? String } == (1...5).map { "Note#\($0)" })
    }

    @Test func aMigrationSegmentTheManifestDoesNotNameIsNotTheStoresSchema() throws {
        // What a crash between writing a migration's segment and its manifest leaves: the old store, and a segment
        // with the new schema that no manifest names.
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let other = store.deletingLastPathComponent().appendingPathComponent("migrated")
        try FileManager.default.copyItem(at: store, to: other)
        let schema = try MigrationFixture.schemaFile(for: store, MigrationFixture.v2JSON)
        #expect(try Tool.run(["migrate", other.path, "--to", schema.path]).status == 0)
        let orphan = "segment-0000000000000002.trj"
        try FileManager.default.copyItem(
            at: other.appendingPathComponent(orphan), to: store.appendingPathComponent(orphan))

        #expect(try JournalReader(directory: store).schema().fingerprint == Fixture.schema.fingerprint)
        let info = try Tool.run(["info", store.path, "--json"]).json()
        #expect((info["schema"] as? [String: Any])?["fingerprint"] as? String == v1)
        #expect((info["migrations"] as? [Any])?.isEmpty == true)
        #expect((info["otherFiles"] as? [[String: Any]])?.contains { $0["file"] as? String == orphan } == true)
        let verify = try Tool.run(["verify", store.path, "--json"]).json()
        let problems = try #require(verify["problems"] as? [[String: Any]])
        #expect(problems.map { $0["class"] as? String } == ["orphan file"], "\(problems)")
        #expect(problems.first?["file"] as? String == orphan)
        let dump = try Tool.run(["dump", store.path, "--json"]).json()
        #expect((dump["records"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == Array(1...6))
    }

    @Test func aPlansVersionsShowInInfoAndACustomStagesChangesReplay() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let migrated = try Store(
            directory: store, migrationPlan: NotesPlan.self, options: StoreOptions(compaction: .manual))
        try migrated.close()

        let info = try Tool.run(["info", store.path, "--json"])
        #expect(info.status == 0, "\(info)")
        let json = try info.json()
        #expect(json["schemaVersion"] as? String == "2.0.0")
        let m = try #require((json["migrations"] as? [[String: Any]])?.first)
        #expect(m["fromVersion"] as? String == "1.0.0")
        #expect(m["toVersion"] as? String == "2.0.0")
        let to = try #require(m["toFingerprint"] as? String)
        let text = try Tool.run(["info", store.path])
        #expect(text.stdout.contains("schema      2 entities, fingerprint \(to), version 2.0.0"), "\(text)")
        #expect(text.stdout.contains("migrations  1; schema versions \(v1) (1.0.0) → \(to) (2.0.0)"), "\(text)")
        let dump = try Tool.run(["dump", store.path, "--from", "7"])
        #expect(dump.stdout.contains("    migrate schema \(v1) (1.0.0) → \(to) (2.0.0)\n"), "\(dump)")

        #expect(try Tool.run(["verify", store.path]).status == 0)
        // The custom stage's changes are part of the migration record: replaying it gives each note its score.
        let export = try Tool.run(["export", store.path]).json()
        let notes = try #require((export["entities"] as? [String: Any])?["Note"] as? [[String: Any]])
        #expect(notes.map { ($0["values"] as? [String: Any])?["score"] as? Double } == [1.5, 3, 4.5, 6, 7.5])
    }
}
