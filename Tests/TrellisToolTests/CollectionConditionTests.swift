import Foundation
import Testing
import Trellis

/// `trellis find --where` on collection and metadata attributes: `tags contains "beach"`, `tags isEmpty` (and
/// `tags.isEmpty`), `metadata["color"] == "red"`, `info["rating"] > 3` with typed metadata, answered by the element
/// and pairs indexes (`--explain`), and the refusals that point at the column of the mistake.
@Suite struct CollectionConditionTests {
    static let schema = try! Schema([
        EntityDescription(
            "Photo",
            attributes: [
                AttributeDescription("name", .string), AttributeDescription("tags", .stringArray),
                AttributeDescription("codes", .intArray), AttributeDescription("labels", .stringSet, optional: true),
                AttributeDescription("metadata", .stringDictionary),
                AttributeDescription("info", .metadataDictionary, optional: true),
            ],
            indexes: [.on("tags"), .on("info")])
    ])

    /// Six photos: `p1`…`p6`, with tags, codes, labels, string metadata and typed metadata (null, numbers of both
    /// kinds, a string where a number usually is, a missing key).
    static func make() throws -> URL {
        let directory = Fixture.newDirectory()
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        func pairs(_ d: [String: MetadataValue]) -> Value { d.persistentValue }
        let rows: [[String: Value]] = [
            [
                "name": "p1", "tags": .list(["beach", "sun"]), "codes": .list([1, 2]), "labels": .list(["a"]),
                "metadata": ["color": "red"].persistentValue, "info": pairs(["rating": 5, "note": .null]),
            ],
            [
                "name": "p2", "tags": .list([]), "codes": .list([]), "labels": .null,
                "metadata": ["color": "blue", "size": "L"].persistentValue, "info": pairs(["rating": 2.5]),
            ],
            [
                "name": "p3", "tags": .list(["beach"]), "codes": .list([3]), "labels": .list([]),
                "metadata": [String: String]().persistentValue, "info": pairs(["rating": "high"]),
            ],
            [
                "name": "p4", "tags": .list(["city"]), "codes": .list([2]), "labels": .list(["a", "b"]),
                "metadata": ["color": "red", "size": "S"].persistentValue, "info": .null,
            ],
            [
                "name": "p5", "tags": .list(["beach", "city"]), "codes": .list([]), "labels": .null,
                "metadata": ["size": "M"].persistentValue, "info": pairs(["rating": 4, "sale": true]),
            ],
            [
                "name": "p6", "tags": .list([]), "codes": .list([7]), "labels": .list(["b"]),
                "metadata": ["color": "green"].persistentValue, "info": pairs([:]),
            ],
        ]
        try store.write { tx in for row in rows { _ = try tx.insert("Photo", row) } }
        try store.close()
        return directory
    }

    /// The names `find --json` prints for `condition`.
    func names(_ store: URL, _ condition: String) throws -> [String] {
        let result = try Tool.run(["find", store.path, "Photo", "--where", condition, "--json"])
        #expect(result.status == 0, "\(condition): \(result)")
        let objects = try #require(try result.json()["objects"] as? [[String: Any]], "\(result)")
        return objects.compactMap { ($0["values"] as? [String: Any])?["name"] as? String }
    }

    @Test func collectionConditionsSelectWhatTheirElementsSay() throws {
        let store = try Self.make()
        defer { Fixture.cleanUp(store) }
        #expect(try names(store, #"tags contains "beach""#) == ["p1", "p3", "p5"])
        #expect(try names(store, #"not (tags contains "beach")"#) == ["p2", "p4", "p6"])
        #expect(try names(store, "codes contains 2") == ["p1", "p4"])
        #expect(try names(store, #"labels contains "b""#) == ["p4", "p6"])
        #expect(try names(store, "tags isEmpty") == ["p2", "p6"])
        #expect(try names(store, "tags.isEmpty") == ["p2", "p6"])
        // A null collection is not empty: it is nothing (as in the library).
        #expect(try names(store, "labels isEmpty") == ["p3"])
        #expect(try names(store, "labels == null") == ["p2", "p5"])
        #expect(try names(store, #"tags contains "city" and codes isEmpty"#) == ["p5"])
        #expect(try names(store, "codes contains 7 || tags.isEmpty") == ["p2", "p6"])
    }

    @Test func keyConditionsReadStringAndTypedMetadata() throws {
        let store = try Self.make()
        defer { Fixture.cleanUp(store) }
        #expect(try names(store, #"metadata["color"] == "red""#) == ["p1", "p4"])
        #expect(try names(store, #"metadata["color"] != "red""#) == ["p2", "p3", "p5", "p6"])
        #expect(try names(store, #"metadata["size"] != null"#) == ["p2", "p4", "p5"])
        #expect(try names(store, #"metadata["size"] == null"#) == ["p1", "p3", "p6"])
        #expect(try names(store, #"metadata["color"] < "h""#) == ["p2", "p6"])
        // Typed metadata: numbers compare with numbers only (the string "high" is neither above nor below 3).
        #expect(try names(store, #"info["rating"] > 3"#) == ["p1", "p5"])
        #expect(try names(store, #"info["rating"] <= 2.5"#) == ["p2"])
        #expect(try names(store, #"info["rating"] == 5"#) == ["p1"])
        #expect(try names(store, #"info["rating"] == "high""#) == ["p3"])
        #expect(try names(store, #"info["sale"] == true"#) == ["p5"])
        // A key holding null is present; a null dictionary has no keys.
        #expect(try names(store, #"info["note"] != null"#) == ["p1"])
        #expect(try names(store, #"info["rating"] == null"#) == ["p4", "p6"])
    }

    @Test func explainShowsTheElementAndPairsIndexes() throws {
        let store = try Self.make()
        defer { Fixture.cleanUp(store) }
        let tags = try Tool.run(["find", store.path, "Photo", "--where", #"tags contains "beach""#, "--explain"])
        #expect(
            tags.status == 0 && tags.stdout.contains(#"index equality on (tags) (tags contains "beach")"#), "\(tags)")
        let rating = try Tool.run(["find", store.path, "Photo", "--where", #"info["rating"] > 3"#, "--explain"])
        #expect(
            rating.status == 0 && rating.stdout.contains(#"index range on (info) (info["rating"] > 3)"#), "\(rating)")
    }

    @Test func mistakesAreRefusedAtTheirColumn() throws {
        let store = try Self.make()
        defer { Fixture.cleanUp(store) }
        let cases: [(String, String, Int)] = [
            (#"name contains "p""#, "'name' is String, not a collection", 1),
            ("tags contains 3", "'tags' is String; 3 is not one", 15),
            ("codes contains null", "a collection holds no null elements", 16),
            ("name isEmpty", "'name' is String, not a collection", 1),
            (#"name["x"] == "y""#, "'name' is String, not a dictionary", 1),
            (#"metadata["color"] == 3"#, "its values are text in quotes, not 3", 22),
            (#"info["rating"] > null"#, "'>' with null matches nothing", 18),
            ("metadata[color] == 1", "expected a key in quotes after 'metadata['", 10),
            (#"metadata["color" == 1"#, "expected ']' after the key", 18),
            (#"metadata["color"] in ["a"]"#, "expected a comparison (==, !=, <, <=, >, >=) after", 19),
        ]
        for (condition, message, column) in cases {
            let result = try Tool.run(["find", store.path, "Photo", "--where", condition])
            #expect(result.status != 0, "\(condition)")
            #expect(result.stderr.contains(message), "\(condition): \(result.stderr)")
            #expect(result.stderr.contains("(column \(column))"), "\(condition): \(result.stderr)")
        }
    }

    /// A schema file may add a `[String: MetadataValue]` attribute with a default of every kind (a lightweight
    /// migration); `export` writes the values back as given and `find` reads their keys.
    @Test func aSchemaFileAddsTypedMetadataWithADefault() throws {
        let store = try Self.make()
        defer { Fixture.cleanUp(store) }
        let schema = try MigrationFixture.schemaFile(for: store) { entities in
            var photo = entities[0]
            var attributes = try #require(photo["attributes"] as? [[String: Any]])
            attributes.append([
                "name": "extra", "type": "[String: MetadataValue]", "optional": false,
                "default": ["a", NSNull(), "b", 1, "c", 1.5, "d", true, "e", "text"],
            ])
            photo["attributes"] = attributes
            entities[0] = photo
        }
        let migrated = try Tool.run(["migrate", store.path, "--to", schema.path])
        #expect(migrated.status == 0, "\(migrated)")
        let export = try Tool.run(["export", store.path])
        #expect(export.status == 0, "\(export)")
        #expect(
            export.stdout.contains(#""extra":["a",null,"b",1,"c",1.5,"d",true,"e","text"]"#),
            "\(export.stdout.prefix(2000))")
        #expect(try names(store, #"extra["b"] == 1 and extra["c"] > 1 and extra["d"] == true"#).count == 6)
        #expect(try names(store, #"extra["a"] != null and extra["e"] == "text""#).count == 6)
        #expect(try names(store, #"extra["e"] > 1"#).isEmpty, "a string is not above a number")
    }
}
