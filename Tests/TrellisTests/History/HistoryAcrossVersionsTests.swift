import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// History of a store written by format version 6 (the golden store): its records read with no author, its
/// migration is an entry of the feed with the schemas on both sides, and a version-7 segment after it carries authors.
@Suite struct HistoryAcrossVersionsTests {
    @Test func aVersionSixStoresHistoryReadsAndItsMigrationIsAnEntry() throws {
        let directory = try GoldenStoreTests().copy("format6-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = StoreOptions(compaction: .manual)
        options.history = .commits(100)
        let store = try Store(directory: directory, schema: GoldenStore.v2, options: options)
        let history = try store.history()
        #expect(history.map(\.sequence) == Array(22...33), "the journal after checkpoint 21")
        #expect(history.allSatisfy { $0.author == nil })
        let migration = try #require(history.first { $0.isMigration })
        #expect(migration.sequence == 32)
        #expect(migration.migration?.toFingerprint == GoldenStore.v2.fingerprint)
        #expect(migration.migration?.fromFingerprint == GoldenStore.v1.fingerprint)
        #expect(history.filter { $0.sequence < 32 }.allSatisfy { $0.schemaFingerprint == GoldenStore.v1.fingerprint })
        #expect(history.filter { $0.sequence >= 32 }.allSatisfy { $0.schemaFingerprint == GoldenStore.v2.fingerprint })
        // The version before the migration rebuilds in the old schema.
        #expect(try store.snapshot(asOf: 31).schema.fingerprint == GoldenStore.v1.fingerprint)

        // Appended to the version-6 segment, a commit has no room for its author; after a rotation it has.
        var tx = store.transaction()
        tx.author = "seven"
        try tx.set(ObjectID(entity: 0, serial: 1), "name", .string("renamed"))
        try store.commit(tx)
        try store.compact()
        var again = store.transaction()
        again.author = "seven"
        try again.set(ObjectID(entity: 0, serial: 1), "name", .string("shelf 0"))
        try store.commit(again)
        let after = try store.history(since: HistoryToken(sequence: 33, storeID: nil))
        #expect(after.map(\.author) == [nil, "seven"])
        #expect(try store.history().first?.sequence == 22, "kept through the compaction")
    }
}
