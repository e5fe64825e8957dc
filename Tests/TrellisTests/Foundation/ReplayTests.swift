import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct ReplayTests {
    /// Every commit's resolved change set, applied to the version before it, rebuilds exactly the version the commit
    /// published: the property recovery relies on.
    @Test(arguments: 0..<20)
    func applyingEachResolvedChangeSetRebuildsTheCommittedGraph(seed: Int) throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var workload = RandomWorkload(seed: UInt64(seed), schema: store.schema)
        var replayed = Graph(schema: store.schema)
        var inPlace = Graph(schema: store.schema)  // recovery's way: `apply`, nothing else holding the graph
        var refused = 0
        for _ in 0..<150 {
            let tx = try workload.transaction(for: store)
            let before = store.snapshot
            do {
                let commit = try store.commit(tx)
                if commit.changes.isEmpty { continue }
                replayed = try replayed.applying(commit.changes)
                try inPlace.apply(commit.changes, sequence: commit.sequence)
                #expect(replayed.sequence == commit.sequence)
            } catch let error as TrellisError {
                // A refused commit (a cycle of parents is fine; unique labels may collide) changes nothing.
                refused += 1
                #expect(store.snapshot.sequence == before.sequence, "\(error)")
            }
        }
        let live = store.snapshot
        #expect(live.differences(from: replayed) == [])
        #expect(live.differences(from: inPlace) == [] && inPlace.sequence == live.sequence)
        #expect(live.invariantViolations() == [])
        #expect(replayed.invariantViolations() == [])
        #expect(inPlace.invariantViolations() == [])
        #expect(refused < 150)
    }

    @Test func applyingIsPureAndRejectsChangeSetsThatDoNotFit() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let commit = try store.commit(
            {
                var tx = store.transaction()
                try tx.insert("Folder", ["name": "a"])
                return tx
            }())
        let empty = Graph(schema: store.schema)
        let once = try empty.applying(commit.changes)
        #expect(try empty.count("Folder") == 0)
        #expect(try once.count("Folder") == 1)
        let error = #expect(throws: TrellisError.self) { try once.applying(commit.changes) }
        #expect(error?.code == .corrupt)
        #expect(try once.count("Folder") == 1)
    }
}
