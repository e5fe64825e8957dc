import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// A store written by the last build of format version 3 (see Fixtures/README.md) opens with this build: its
/// fingerprints were computed with default values and its schema codec is version 1, and neither stops it.
@Suite struct FormatVersionThreeStoreTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format3-store")

    /// The crash workload's schema when the fixture was written (before its indexes).
    static let schema = try! Schema(
        CrashWorkload.schema.entities.map { entity in
            var unindexed = entity
            unindexed.indexes = []
            return unindexed
        })
    static let versions = try! CrashWorkload.versions(through: 41, schema: schema)

    /// `CrashExpectations.expectPrefix` against the fixture's own schema.
    func expectPrefix(_ graph: Graph, acknowledged: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(graph.sequence == UInt64(acknowledged), sourceLocation: sourceLocation)
        #expect(
            CrashExpectations.problems(graph, comparedWith: Self.versions[acknowledged]) == [],
            sourceLocation: sourceLocation)
    }

    func copy() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("format3-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Self.fixture, to: directory)
        return directory
    }

    @Test func theFixtureIsVersionThree() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.fixture.path) where name != "README.md" {
            let bytes = try Data(contentsOf: Self.fixture.appendingPathComponent(name))
            #expect(bytes[8] == 3 && bytes[9] == 0, "\(name) is format version 3")
        }
    }

    @Test func aVersionThreeStoreOpensWithItsDataAndTakesNewCommits() throws {
        let directory = try copy()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try CrashExpectations.problems(directory).isEmpty, "verify reads version 3")
        let store = try Store(directory: directory, schema: Self.schema)
        #expect(store.schema.history.isEmpty)
        expectPrefix(store.snapshot, acknowledged: 40)
        try store.write { tx in try CrashWorkload.fill(&tx, 41) }
        try store.close()
        // Version-3 files and a version-4 record in one store; then a version-4 checkpoint.
        let reopened = try Store(directory: directory, schema: Self.schema)
        expectPrefix(reopened.snapshot, acknowledged: 41)
        try reopened.compact()
        try reopened.close()
        let compacted = try Store(directory: directory, schema: Self.schema)
        expectPrefix(compacted.snapshot, acknowledged: 41)
        try compacted.close()
        #expect(try CrashExpectations.problems(directory).isEmpty)
    }

    @Test func aVersionThreeStoreMigrates() throws {
        let directory = try copy()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = Self.schema.entities
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: true))
        entities[1].attributes[0] = AttributeDescription("headline", .string, originalName: "title")
        let store = try Store(directory: directory, schema: Schema(entities))
        let expected = Self.versions[40]
        let items = expected.objectIDs(entity: CrashWorkload.itemEntity)
        #expect(try store.snapshot.count("Item") == items.count)
        for id in items {
            #expect(try store.snapshot.value(id, "headline") == expected.value(id, "title"))
            #expect(try store.snapshot.value(id, "pinned") == .bool(true))
        }
        try store.close()
        #expect(try CrashExpectations.problems(directory).isEmpty)
    }
}
