import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// `JournalReader` (what `trellis verify`, `info`, `dump` and `repair` stand on) reads a migrated store as recovery
/// does: each segment with the schema it was written with, migration records applied, a checkpoint from before a
/// migration read with its own schema; and a segment that no manifest names yet is not the store's schema.
@Suite struct MigratedStoreReaderTests {
    static func v2() throws -> Schema {
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes.append(AttributeDescription("score", .double, default: 1.5))
        entities[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name")
        return try Schema(entities)
    }

    @Test func verifyFindsNothingWrongWithStoresMigratedBeforeAndAfterACheckpoint() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // An empty store migrated (the first record of the journal is the migration), then a commit.
        try Store(directory: directory, schema: try MigrationFixtures.v1()).close()
        let v2 = try Self.v2()
        let migrated = try Store(directory: directory, schema: v2)
        try migrated.write { tx in _ = try tx.insert("Person", ["fullName": "Ada", "age": 36]) }
        try migrated.close()
        let first = try JournalReader(directory: directory).verify()
        #expect(first.problems == [])
        #expect(first.records == 2 && first.lastSequence == 2)
        #expect(first.objectCounts == ["Team": 0, "Person": 1])
        #expect(try JournalReader(directory: directory).schema().fingerprint == v2.fingerprint)

        // Compacted at v2, then migrated again after the checkpoint (`score` removed).
        let compacting = try Store(directory: directory, schema: v2)
        try compacting.compact()
        try compacting.close()
        var entities = v2.entities
        entities[1].attributes.removeAll { $0.name == "score" }
        let v3 = try Schema(entities)
        let again = try Store(directory: directory, schema: v3)
        #expect(again.schema.history.count == 2)
        try again.close()
        let second = try JournalReader(directory: directory).verify()
        #expect(second.problems == [])
        #expect(second.checkpointSequence == 2 && second.lastSequence == 3)
        #expect(second.objectCounts == ["Team": 0, "Person": 1])
    }

    @Test func aSegmentNoManifestNamesIsNotTheStoresSchema() throws {
        // A migrated store lends its segment 2 (v2) to a seeded v1 store, as a migration that died after writing it
        // and before its manifest switch leaves it.
        let migrated = MigrationFixtures.directory()
        let seeded = MigrationFixtures.directory()
        defer {
            try? FileManager.default.removeItem(at: migrated)
            try? FileManager.default.removeItem(at: seeded)
        }
        for directory in [migrated, seeded] {
            let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
            try MigrationFixtures.seed(store)
            try store.close()
        }
        try Store(directory: migrated, schema: try Self.v2()).close()
        let segment = JournalFormat.segmentName(2)
        try FileManager.default.copyItem(
            at: migrated.appendingPathComponent(segment), to: seeded.appendingPathComponent(segment))

        let reader = try JournalReader(directory: seeded)
        #expect(try reader.schema().fingerprint == (try MigrationFixtures.v1()).fingerprint)
        let verification = try reader.verify()
        #expect(verification.problems.map(\.kind) == [.orphanFile])
        #expect(verification.problems.first?.file == segment)
        #expect(verification.objectCounts == ["Team": MigrationFixtures.teams, "Person": MigrationFixtures.people])
        // The store opens as v1, and the orphan goes.
        let store = try Store(directory: seeded, schema: reader.schema())
        #expect(store.schema.history.isEmpty)
        #expect(try store.snapshot.count("Person") == MigrationFixtures.people)
        try store.close()
        #expect(try JournalReader(directory: seeded).verify().problems == [])
    }
}
