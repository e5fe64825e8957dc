import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// `snapshot(asOf:)` rebuilds any retained version exactly as it was published: objects, links, indexes.
@Suite struct TimeTravelTests {
    @Test(arguments: [1, 2, 3, 4])
    func aVersionRebuiltFromTheHistoryEqualsTheOnePublishedThen(seed: Int) throws {
        let temporary = TemporaryDirectory()
        var options = StoreOptions(compaction: .manual)
        options.history = .commits(10_000)
        let store = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema(), options: options)
        var workload = RandomWorkload(seed: UInt64(seed), schema: store.schema)
        var published: [UInt64: Snapshot] = [0: store.snapshot]
        for round in 0..<120 {
            let tx = try workload.transaction(for: store)
            if let commit = try? store.commit(tx), !commit.changes.isEmpty {
                published[commit.sequence] = store.snapshot
            }
            // Compactions in between: history keeps what they replace, and versions on both sides of them rebuild.
            if round % 37 == 36 { try store.compact() }
        }
        #expect(published.count > 60)
        for sequence in published.keys.sorted() {
            let rebuilt = try store.snapshot(asOf: sequence)
            let differences = GraphEquality.differences(published[sequence]!, rebuilt)
            #expect(differences == [], "seed \(seed), version \(sequence)")
            if !differences.isEmpty { break }
        }
        // The same from a reopened store, for a few versions.
        try store.close()
        let reopened = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema(), options: options)
        for sequence in published.keys.sorted().filter({ $0 % 17 == 0 }) {
            #expect(GraphEquality.differences(published[sequence]!, try reopened.snapshot(asOf: sequence)) == [])
        }
    }

    @Test func aVersionByDateAndAVersionThatWasCompacted() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        let context = ModelContext(store)
        context.insert(Folder(name: "a"))
        try context.save()
        let history = try store.history()
        let afterFirst = try #require(history.first).time
        context.insert(Folder(name: "b"))
        try context.save()
        let old = try store.snapshot(asOf: afterFirst)
        #expect(try old.sequence == 1 && old.count("Folder") == 1)
        #expect(try store.snapshot(asOf: Date.distantPast).sequence == 0)
        #expect(try store.snapshot(asOf: 2).count("Folder") == 2)
        try store.compact()
        let error = #expect(throws: TrellisError.self) { try store.snapshot(asOf: 1) }
        #expect(error?.code == .historyCompacted)
        let future = #expect(throws: TrellisError.self) { try store.snapshot(asOf: 9) }
        #expect(future?.code == .invalidArgument)
    }
}
