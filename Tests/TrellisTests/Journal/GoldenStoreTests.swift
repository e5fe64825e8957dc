import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The schemas and content of the golden stores: what `Fixtures/golden-writer/main.swift` writes, repeated here as
/// the known content each fixture must still show. Never change either once a store is checked in.
enum GoldenStore {
    static let v1 = try! Schema([
        EntityDescription(
            "Shelf", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("books", to: "Book", inverse: "shelf", toMany: true, deleteRule: .cascade)
            ], indexes: [.unique("name")]),
        EntityDescription(
            "Book",
            attributes: [
                AttributeDescription("flag", .bool), AttributeDescription("i", .int),
                AttributeDescription("i8", .int8), AttributeDescription("i16", .int16),
                AttributeDescription("i32", .int32), AttributeDescription("i64", .int64),
                AttributeDescription("d", .double), AttributeDescription("f", .float),
                AttributeDescription("title", .string), AttributeDescription("published", .date),
                AttributeDescription("cover", .data, optional: true), AttributeDescription("uuid", .uuid),
                AttributeDescription("url", .url), AttributeDescription("price", .decimal),
            ],
            relationships: [RelationshipDescription("shelf", to: "Shelf", inverse: "books", deleteRule: .nullify)],
            indexes: [.on("title"), .on("i"), .on("published"), .unique("uuid")]),
    ])

    /// Books gain `pinned` (default true) and an index on `i32`: the stores' one migration.
    static let v2: Schema = {
        var entities = v1.entities
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: true))
        entities[1].indexes.append(.on("i32"))
        return try! Schema(entities)
    }()

    /// Book `n`'s values as first inserted.
    static func book(_ n: Int) -> [String: Value] {
        [
            "flag": .bool(n % 2 == 0), "i": .int(Int64(n) * 1_000_000_007), "i8": .int(Int64(n - 15)),
            "i16": .int(Int64(n * -300)), "i32": .int(Int64(n * 100_000)), "i64": .int(Int64.max - Int64(n)),
            "d": .double(Double(n) / 3), "f": .double(Double(n) * 0.25), "title": .string("book \(n) ✓"),
            "published": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 86_400.5)),
            "cover": n % 4 == 0 ? .null : .data(Data((0..<(n * 3)).map { UInt8(truncatingIfNeeded: $0 &* n) })),
            "uuid": .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!),
            "url": .url(URL(string: "https://example.com/book/\(n)?q=ü")!),
            "price": .decimal(Decimal(string: "\(n).25")!),
        ]
    }

    /// The books a store holds: 1…30 but 5, 15 and 25 (deleted by transactions 10, 20 and 30).
    static let books = (1...30).filter { $0 % 10 != 5 }

    /// Book `n`'s values in the migrated store: renamed when transaction n + 3 is a multiple of 7, book 1 unpinned.
    static func migratedBook(_ n: Int) -> [String: Value] {
        var values = book(n)
        if (n + 3) % 7 == 0 { values["title"] = .string("renamed \(n)") }
        values["pinned"] = .bool(n != 1)
        return values
    }

    /// Checks that `graph` holds exactly the stores' content: every object, every value, both ends of every link,
    /// answers through every index, and no broken invariant.
    static func expectContent(
        _ graph: Graph, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        func check(_ ok: Bool, _ what: @autoclosure () -> String) {
            #expect(ok, "\(context): \(what())", sourceLocation: sourceLocation)
        }
        check(graph.schema.fingerprint == v2.fingerprint, "schema")
        check(graph.schema.history.count == 1, "one migration: \(graph.schema.history)")
        check(try graph.count("Shelf") == 3 && graph.count("Book") == 27, "counts")
        check(graph.objectIDs(entity: 1) == books.map { ObjectID(entity: 1, serial: UInt64($0)) }, "book IDs")
        for n in books {
            let id = ObjectID(entity: 1, serial: UInt64(n))
            let values = graph.values(id) ?? [:]
            for (name, expected) in migratedBook(n) {
                check(
                    values[name]?.isIdentical(to: expected) == true,
                    "book \(n).\(name): \(String(describing: values[name]))")
            }
            check(values.count == 15, "book \(n) has \(values.count) values")
            check(try graph.targets(id, "shelf") == [ObjectID(entity: 0, serial: UInt64(n % 3 + 1))], "book \(n).shelf")
        }
        for s in 0..<3 {
            let id = ObjectID(entity: 0, serial: UInt64(s + 1))
            check(try graph.value(id, "name") == .string("shelf \(s)"), "shelf \(s).name")
            let expected = books.filter { $0 % 3 == s }.map { ObjectID(entity: 1, serial: UInt64($0)) }
            check(try graph.targets(id, "books") == expected, "shelf \(s).books")
        }
        // A few values spelled out, in case the generator above and the writer's drifted together.
        let book12 = ObjectID(entity: 1, serial: 12)
        check(try graph.value(book12, "published") == .date(Date(timeIntervalSince1970: 1_701_036_806)), "date")
        check(try graph.value(book12, "i") == .int(12_000_000_084), "int")
        check(try graph.value(book12, "i8") == .int(-3), "int8")
        check(try graph.value(book12, "price") == .decimal(Decimal(string: "12.25")!), "decimal")
        check(try graph.value(book12, "url") == .url(URL(string: "https://example.com/book/12?q=%C3%BC")!), "url")
        check(try graph.value(ObjectID(entity: 1, serial: 8), "cover") == .null, "null")
        check(try graph.value(ObjectID(entity: 1, serial: 4), "title") == .string("renamed 4"), "renamed")
        check(try graph.value(ObjectID(entity: 1, serial: 1), "pinned") == .bool(false), "pinned")
        // Every index answers (each read through the index trees the store loaded or rebuilt).
        func fetch(_ entity: String, _ condition: DynamicQuery.Condition) throws -> [UInt64] {
            try graph.fetch(DynamicQuery(entity, where: condition)).map(\.serial)
        }
        check(try fetch("Shelf", .equal("name", .string("shelf 2"))) == [3], "unique name index")
        check(try fetch("Book", .equal("title", .string("renamed 11"))) == [11], "title index")
        check(try fetch("Book", .greater("i", .int(28_000_000_196))) == [29, 30], "int index")
        check(
            try fetch("Book", .less("published", .date(Date(timeIntervalSince1970: 1_700_259_201)))) == [1, 2],
            "date index")
        check(try fetch("Book", .equal("uuid", book(7)["uuid"]!)) == [7], "unique uuid index")
        check(try fetch("Book", .equal("i32", .int(1_200_000))) == [12], "migration's i32 index")
        check(graph.invariantViolations() == [], "invariants: \(graph.invariantViolations())")
    }
}

/// Stores written by older builds (see Fixtures/README.md) open with this one, read-only and writable, with every
/// object and value they were written with; they take a commit and a compaction and reopen. A change to the format
/// or to the schema fingerprint that strands old stores fails here first.
@Suite struct GoldenStoreTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Each golden store and the format version its files carry.
    static let stores: [(name: String, version: UInt8)] = [
        ("format4-store", 4), ("format5-store", 5), ("format6-store", 6), ("format7-store", 7),
        ("format8-store", 8), ("format9-store", 9),
    ]

    func copy(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent(name), to: directory)
        return directory
    }

    @Test("each golden store's files carry its format version", arguments: stores)
    func theFixtureCarriesItsVersion(name: String, version: UInt8) throws {
        let directory = Self.fixtures.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.contains("MANIFEST") && files.contains { $0.hasPrefix("checkpoint-") })
        #expect(files.filter { $0.hasPrefix("segment-") }.count >= 1)
        for file in files {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(bytes[8] == version && bytes[9] == 0, "\(name)/\(file) is format version \(version)")
        }
    }

    @Test("a golden store verifies clean and opens read-only with every object and value", arguments: stores)
    func aGoldenStoreOpensReadOnly(name: String, version: UInt8) throws {
        let directory = try copy(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        let verification = try JournalReader(directory: directory).verify()
        #expect(verification.problems == [], "\(name)")
        #expect(verification.objectCounts == ["Shelf": 3, "Book": 27], "\(name)")
        #expect(try JournalReader(directory: directory).manifest().fingerprint == GoldenStore.v2.fingerprint)
        let store = try Store(directory: directory, schema: GoldenStore.v2, options: StoreOptions(readOnly: true))
        try GoldenStore.expectContent(store.snapshot, "\(name), read-only")
        try store.close()
    }

    @Test("a golden store opens writable, takes a commit, compacts and reopens with its content", arguments: stores)
    func aGoldenStoreOpensWritableAndCompacts(name: String, version: UInt8) throws {
        let directory = try copy(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        let options = StoreOptions(compaction: .manual)
        let store = try Store(directory: directory, schema: GoldenStore.v2, options: options)
        try GoldenStore.expectContent(store.snapshot, "\(name), writable")
        let sequence = store.snapshot.sequence
        try store.write { tx in try tx.set(ObjectID(entity: 0, serial: 1), "name", .string("shelf 0, again")) }
        try store.write { tx in try tx.set(ObjectID(entity: 0, serial: 1), "name", .string("shelf 0")) }
        try store.close()
        let reopened = try Store(directory: directory, schema: GoldenStore.v2, options: options)
        #expect(reopened.snapshot.sequence == sequence + 2)
        try GoldenStore.expectContent(reopened.snapshot, "\(name), after two commits")
        try reopened.compact()
        try reopened.close()
        let compacted = try Store(directory: directory, schema: GoldenStore.v2, options: options)
        #expect(compacted.snapshot.sequence == sequence + 2)
        try GoldenStore.expectContent(compacted.snapshot, "\(name), compacted")
        try compacted.close()
        #expect(try JournalReader(directory: directory).verify().problems == [], "\(name)")
    }
}
