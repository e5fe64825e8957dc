import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 19: `[String]`, `[Int]` and `Set<String>` attributes (optional too) in models and in the dynamic API, stored
/// as one list value (format version 8), queried with `contains` and `isEmpty`, indexed by element, read back by
/// other processes after journal and checkpoint, and added or removed by a lightweight migration.
@Suite struct CollectionAttributeTests {
    typealias X = CrashExpectations

    @Test func collectionTypesInTheSchemaAndElementIndexes() throws {
        let schema = try Schema(models: [Tagged.self])
        let attributes = schema.entities[0].attributes.map { "\($0.name):\($0.type)\($0.isOptional ? "?" : "")" }
        #expect(
            attributes == [
                "number:Int", "tags:[String]", "codes:[Int]", "labels:Set<String>", "maybeTags:[String]?",
                "maybeCodes:[Int]?", "maybeLabels:Set<String>?", "metadata:[String: String]",
                "maybeMetadata:[String: String]?",
            ])
        #expect(schema.entities[0].attributes[1].defaultValue == .list([]))
        #expect(schema.layouts[0].indexes.map(\.isElements) == [true, true, true])
        #expect(schema.layouts[0].indexes.map(\.isPairs) == [false, false, true])
        #expect(schema.layouts[0].indexes.map(\.columns) == [[1], [3], [7]])
    }

    @Test func aCollectionIsIndexedAloneAndNeverUnique() {
        for index in [IndexDescription.unique("tags"), .on("tags", "n")] {
            let entity = EntityDescription(
                "Item", attributes: [AttributeDescription("tags", .stringArray), AttributeDescription("n", .int)],
                indexes: [index])
            #expect(throws: TrellisError.self, "\(index)") { try Schema([entity]) }
        }
    }

    @Test func valuesAreCheckedAndSetsNormalized() {
        #expect(AttributeType.stringSet.normalized(.list(["b", "a", "b"])) == .list(["a", "b"]))
        #expect(AttributeType.stringArray.normalized(.list(["b", "a", "b"])) == .list(["b", "a", "b"]))
        #expect(AttributeType.stringArray.normalized(.list([1])) == nil)
        #expect(AttributeType.intArray.normalized(.list(["1"])) == nil)
        #expect(AttributeType.intArray.normalized(.string("1")) == nil)
        #expect(AttributeType.string.normalized(.list(["a"])) == nil)
        #expect(Set(["b", "a"]).persistentValue == .list(["a", "b"]))
        #expect([3, 1, 3].persistentValue == .list([3, 1, 3]))
        #expect([String](persistentValue: .list([1])) == nil)
        #expect(Set<String>(persistentValue: .list(["x", "y"])) == ["y", "x"])
    }

    @Test func theListCodecRoundTripsAndRefusesDamage() throws {
        for value: Value in [.list([]), .list(["", "été", "a"]), .list([0, -1, .int(.max), .int(.min)])] {
            let bytes = ByteWriter.bytes { $0.value(value) }
            var reader = ByteReader(bytes, context: "t")
            #expect(try reader.value().isIdentical(to: value))
            #expect(reader.isAtEnd)
        }
        // The bytes journal-format.md gives: tag 12, a count, tagged elements (ints zigzag).
        #expect(ByteWriter.bytes { $0.value(.list(["a", "b"])) } == [12, 2, 5, 1, 0x61, 5, 1, 0x62])
        #expect(ByteWriter.bytes { $0.value(.list([1, -1])) } == [12, 2, 3, 2, 3, 1])
        #expect(ByteWriter.bytes { $0.value(.list([])) } == [12, 0])
        let damaged: [[UInt8]] = [
            [12, 2, 3, 2, 5, 1, 0x61],  // an int and a string in one list
            [12, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0],  // a double element
            [12, 1, 12, 0],  // a list in a list
            [12, 0xff, 0xff, 0xff, 0xff, 0x0f, 3, 0],  // a count far beyond the input
        ]
        for bytes in damaged {
            var reader = ByteReader(bytes, context: "t")
            #expect(throws: TrellisError.self, "\(bytes)") { try reader.value() }
        }
    }

    /// A change set whose list does not fit its attribute is damage when it is read, before it can apply.
    @Test func aRecordsListMustFitItsAttribute() throws {
        let schema = try Schema([
            EntityDescription(
                "Item",
                attributes: [
                    AttributeDescription("tags", .stringArray), AttributeDescription("labels", .stringSet),
                    AttributeDescription("n", .int),
                ])
        ])
        func record(_ values: [Value]) -> [UInt8] {
            var changes = ChangeSet()
            changes.inserts = [.init(id: ObjectID(entity: 0, serial: 1), values: values)]
            return ChangeSetCodec.encode(changes, schema: schema)
        }
        let fine = try ChangeSetCodec.decode(
            record([.list(["b", "a"]), .list(["a", "b"]), 1]), schema: schema, context: "t")
        #expect(fine.inserts[0].values[0] == .list(["b", "a"]))
        for values: [Value] in [
            [.list([1]), .list([]), 1], [.list([]), .list(["b", "a"]), 1], [.list([]), .list([]), .list([1])],
        ] {
            #expect(throws: TrellisError.self, "\(values)") {
                try ChangeSetCodec.decode(record(values), schema: schema, context: "t")
            }
        }
    }

    /// The dynamic API: collection attributes by name, `contains` and `isEmpty` conditions planned on the element
    /// index, and a wrong element refused.
    @Test func dynamicSchemaAndQueries() throws {
        let schema = try Schema([
            EntityDescription(
                "Item",
                attributes: [
                    AttributeDescription("tags", .stringSet, default: .list([])),
                    AttributeDescription("codes", .intArray, optional: true),
                ],
                indexes: [.on("tags")])
        ])
        let store = Store(schema: schema)
        try store.write { tx in
            for i in 0..<100 {
                _ = try tx.insert(
                    "Item",
                    [
                        "tags": .list(i % 10 == 0 ? ["z", "a", "z"] : i % 10 == 1 ? [] : ["a"]),
                        "codes": i % 2 == 0 ? .null : .list([.int(Int64(i)), 7]),
                    ])
            }
        }
        let snapshot = store.snapshot
        let first = try #require(snapshot.fetch(DynamicQuery("Item")).first)
        #expect(try snapshot.value(first, "tags") == .list(["a", "z"]), "a set's elements are stored sorted, once")
        let zs = DynamicQuery("Item", where: .contains("tags", "z"))
        #expect(try snapshot.count(zs) == 10)
        let plan = try snapshot.explain(zs)
        #expect(plan.index == ["tags"] && plan.access == .indexEquality && plan.candidates == 10, "\(plan)")
        #expect(try snapshot.count(DynamicQuery("Item", where: .isEmpty("tags"))) == 10)
        #expect(try snapshot.count(DynamicQuery("Item", where: .contains("codes", 7))) == 50)
        #expect(try snapshot.count(DynamicQuery("Item", where: .not(.contains("codes", 7)))) == 50)
        #expect(
            try snapshot.count(DynamicQuery("Item", where: .and([.contains("codes", 7), .contains("tags", "z")]))) == 0)
        #expect(throws: TrellisError.self) { try snapshot.count(DynamicQuery("Item", where: .contains("codes", "7"))) }
        #expect(throws: TrellisError.self) {
            try store.write { tx in _ = try tx.insert("Item", ["tags": .list([1])]) }
        }
    }

    /// Save, journal, checkpoint and reopen, each round in a new process (`trellis-crashtest tags`): every collection
    /// type, required and optional, empty and nil, comes back as written, and the element indexes answer `contains`
    /// in the child (after a checkpoint load, too) and here.
    @Test func collectionsRoundTripThroughJournalCheckpointAndOtherProcesses() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        for round in 1...7 {
            let child = try CrashChild.run(["tags", "--dir", store.path, "--add", "\(round)"])
            #expect(child.exitStatus == 0 && !child.killed, "round \(round): \(child.lines.suffix(3))")
            let items = TagsCommand.expected(after: round)
            let expected = items.map { TagsCommand.line($0.number, $0.values) } + TagsCommand.queryLines(items)
            #expect(Array(child.lines.dropLast()) == expected, "round \(round)")
        }
        #expect(try JournalReader(directory: store).manifest().checkpointSequence > 0, "round 6 compacted")
        let opened = try Store(directory: store, models: [Tagged.self])
        let context = ModelContext(opened)
        let items = try context.fetch(FetchDescriptor<Tagged>(sortBy: [SortDescriptor(\.number)]))
        let expected = TagsCommand.expected(after: 7)
        #expect(items.map(\.number) == expected.map(\.number))
        for (item, e) in zip(items, expected) {
            let v = TaggedValues(
                tags: item.tags, codes: item.codes, labels: item.labels, maybeTags: item.maybeTags,
                maybeCodes: item.maybeCodes, maybeLabels: item.maybeLabels, metadata: item.metadata,
                maybeMetadata: item.maybeMetadata)
            #expect(v == e.values, "item \(item.number)")
        }
        // Every kind of value was written: empty and nil collections, and repeats.
        #expect(expected.contains { $0.values.tags.isEmpty } && expected.contains { $0.values.maybeTags == nil })
        #expect(expected.contains { $0.values.maybeTags == [] } && expected.contains { $0.values.maybeLabels == [] })
        #expect(expected.contains { Set($0.values.codes).count < $0.values.codes.count })
        #expect(
            expected.contains { $0.values.metadata.isEmpty } && expected.contains { $0.values.maybeMetadata == nil })
        #expect(expected.contains { $0.values.maybeMetadata == [:] })
        #expect(opened.snapshot.invariantViolations() == [])
        try opened.close()
        #expect(try X.problems(store) == [])
    }

    enum NoteV1 {
        final class Note: Model {
            @Attribute var title = ""
        }
    }

    enum NoteV2 {
        final class Note: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var tags: [String] = ["new"]
            @Attribute var scores: [Int]?
        }
    }

    /// Adding collection attributes is a lightweight migration (existing objects get the default, nil for an
    /// optional one), and so is removing them; the store reopens after each.
    @Test func addingAndRemovingCollectionsIsALightweightMigration() throws {
        let temporary = TemporaryDirectory()
        do {
            let store = try Store(directory: temporary.store, models: [NoteV1.Note.self])
            let context = ModelContext(store)
            for i in 0..<3 {
                let note = NoteV1.Note()
                note.title = "n\(i)"
                context.insert(note)
            }
            try context.save()
            try store.close()
        }
        do {
            let store = try Store(directory: temporary.store, models: [NoteV2.Note.self])
            #expect(
                store.schema.history.last?.steps.sorted() == [
                    "Note: add attribute 'scores' ([Int], null) (3 objects)",
                    "Note: add attribute 'tags' ([String], default [\"new\"]) (3 objects)",
                    "Note: add index on (tags) (3 objects)",
                ], "\(store.schema.history.last?.steps ?? [])")
            let context = ModelContext(store)
            let notes = try context.fetch(FetchDescriptor<NoteV2.Note>(sortBy: [SortDescriptor(\.title)]))
            #expect(notes.map(\.tags) == [["new"], ["new"], ["new"]])
            #expect(notes.map(\.scores) == [nil, nil, nil])
            notes[1].tags = ["kept", "new"]
            notes[2].scores = [1, 2]
            try context.save()
            let kept = FetchDescriptor<NoteV2.Note>(predicate: #Predicate { $0.tags.contains("kept") })
            #expect(try context.fetch(kept).map(\.title) == ["n1"])
            #expect(try context.explain(kept).index == ["tags"])
            try store.close()
        }
        do {
            let store = try Store(directory: temporary.store, models: [NoteV2.Note.self])
            let context = ModelContext(store)
            let notes = try context.fetch(FetchDescriptor<NoteV2.Note>(sortBy: [SortDescriptor(\.title)]))
            #expect(notes.map(\.tags) == [["new"], ["kept", "new"], ["new"]])
            #expect(notes.map(\.scores) == [nil, nil, [1, 2]])
            try store.close()
        }
        let store = try Store(directory: temporary.store, models: [NoteV1.Note.self])
        #expect(store.schema.history.count == 2)
        #expect(
            try ModelContext(store).fetch(FetchDescriptor<NoteV1.Note>()).map(\.title).sorted() == ["n0", "n1", "n2"])
        try store.close()
        #expect(try X.problems(temporary.store) == [])
    }
}

/// The DocC example of Structured Attributes, "Collections of scalars".
@Suite struct CollectionDocTests {
    enum Example {
        final class Photo: Model {
            @Attribute(.indexed) var tags: [String] = []
            @Attribute var ratings: [Int] = []
            @Attribute var albums: Set<String>?
        }
    }

    typealias Photo = Example.Photo

    @Test func theArticlesExampleRunsAsItSays() throws {
        let store = try Store(models: [Photo.self])
        let context = ModelContext(store)
        for i in 0..<100 {
            let photo = Photo()
            photo.tags = i % 8 == 0 ? ["beach", "sun"] : ["city"]
            photo.ratings = i % 16 == 0 ? [] : [i % 5]
            photo.albums = i % 3 == 0 ? nil : ["a\(i % 2)"]
            context.insert(photo)
        }
        try context.save()

        let tagged = try context.fetch(
            FetchDescriptor<Photo>(
                predicate: #Predicate { $0.tags.contains("beach") && !$0.ratings.isEmpty }))
        let plan = try context.explain(FetchDescriptor<Photo>(predicate: #Predicate { $0.tags.contains("beach") }))
        // Photo: index equality on (tags) (tags contains "beach"), ~13 candidates; filter: none; sort: in memory

        #expect(tagged.count == 6)
        #expect(tagged.allSatisfy { $0.tags.contains("beach") && !$0.ratings.isEmpty })
        #expect(
            plan.description
                == "Photo: index equality on (tags) (tags contains \"beach\"), ~13 candidates; filter: none; sort: in memory"
        )
    }
}

/// A store written by format version 7 (the golden store) takes collection attributes by a migration: the migration
/// and what follows go to a new version-8 segment, the version-7 files keep their bytes, and another process reads
/// the result.
@Suite struct CollectionFormatUpgradeTests {
    @Test func aVersionSevenStoreTakesCollectionsByMigrationAndAnotherProcessReadsThem() throws {
        let directory = try GoldenStoreTests().copy("format7-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = GoldenStoreTests.fixtures.appendingPathComponent("format7-store")
        var entities = GoldenStore.v2.entities
        entities[1].attributes.append(AttributeDescription("tags", .stringArray, default: .list([])))
        entities[1].attributes.append(AttributeDescription("meta", .stringDictionary, optional: true))
        entities[1].indexes.append(.on("tags"))
        let v3 = try Schema(entities)
        let store = try Store(directory: directory, schema: v3, options: StoreOptions(compaction: .manual))
        #expect(store.schema.history.count == 2)
        let books = try store.snapshot.fetch(DynamicQuery("Book")).sorted { $0.serial < $1.serial }
        #expect(books.map { Int($0.serial) } == GoldenStore.books)
        #expect(try books.allSatisfy { try store.snapshot.value($0, "tags") == .list([]) })
        try store.write { tx in
            for id in books.prefix(5) { try tx.set(id, "tags", .list(["golden", .string("b\(id.serial)")])) }
            try tx.set(books[1], "meta", .list(["color", "red", "size", "L"]))
        }
        let golden = DynamicQuery("Book", where: .contains("tags", "golden"))
        #expect(try store.snapshot.count(golden) == 5)
        #expect(try store.snapshot.explain(golden).index == ["tags"])
        #expect(try store.snapshot.count(DynamicQuery("Book", where: .isEmpty("tags"))) == books.count - 5)
        #expect(try store.snapshot.count(DynamicQuery("Book", where: .entry("meta", key: "color", "red"))) == 1)
        let expected = try ContactsFixture.dump(store.snapshot)
        try store.close()

        // The version-7 files are as shipped (a segment only extended, never rewritten); every new one is this build's.
        let shipped = Set(try FileManager.default.contentsOfDirectory(atPath: fixture.path))
        var newSegments = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".trj") {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            if shipped.contains(name) {
                let original = try Data(contentsOf: fixture.appendingPathComponent(name))
                #expect(bytes.prefix(original.count) == original, "\(name)")
                #expect(bytes[8] == 7, "\(name)")
            } else {
                newSegments += 1
                #expect(bytes[8] == UInt8(JournalFormat.version), "\(name)")
            }
        }
        #expect(newSegments == 1)

        let child = try CrashChild.run(["dump", "--dir", directory.path])
        #expect(child.exitStatus == 0 && !child.killed, "\(child.lines.suffix(3))")
        #expect(child.lines == expected)
        #expect(
            child.lines.contains { $0.contains("tags=[\"golden\", \"b") && $0.contains("meta=[\"color\", \"red\"") })
        #expect(try JournalReader(directory: directory).verify().problems == [])
    }
}
