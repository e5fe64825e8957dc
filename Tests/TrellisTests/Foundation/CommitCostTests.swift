import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

// Node counting exists in builds with TRELLIS_COUNT_NODES: debug builds, and the release build CI tests
// (`.ci/run` checks that this suite's figures are in its log).
#if TRELLIS_COUNT_NODES
/// "A commit costs what it changes", counted rather than timed (issue 22): the persistent nodes a one-object commit
/// allocates (`NodeCount`) into a store of 10,000 objects and into one of 300,000 (long mode: 1,000,000) grow with
/// the depth of the trees, not with the store. 300,000 is past the 262,144 objects (4,096 leaves of 64) where the
/// entity's trie takes another level, so the larger store is deeper in every tree.
@Suite struct CommitCostTests {
    /// A store of `count` items (indexed by score), filled in commits of 100,000. In memory: the nodes a commit
    /// allocates are the graph's, and a journal would only make the filling slower.
    static func store(items count: Int) throws -> Store {
        let store = Store(schema: JournalWorkload.schema)
        var made = 0
        while made < count {
            let batch = min(100_000, count - made)
            var tx = store.transaction()
            for i in made..<(made + batch) {
                try tx.insert("Item", ["title": .string("item \(i)"), "score": .double(Double(i)), "count": 1])
            }
            try store.commit(tx)
            made += batch
        }
        return store
    }

    /// The nodes one commit allocates: an insert, an update and a delete, each of one object.
    static func nodesPerCommit(_ store: Store) throws -> [Int] {
        let some = try store.snapshot.objectIDs("Item")[7]
        var counts: [Int] = []
        counts.append(
            try NodeCount.measure {
                try store.write { tx in
                    _ = try tx.insert("Item", ["title": "new", "score": .double(-1), "count": 1])
                }
            })
        counts.append(try NodeCount.measure { try store.write { tx in try tx.set(some, "score", .double(0.5)) } })
        counts.append(try NodeCount.measure { try store.write { tx in try tx.delete(some) } })
        return counts
    }

    @Test func aOneObjectCommitAllocatesNodesForTheTreesDepthNotTheStoresSize() throws {
        let small = try Self.store(items: 10_000)
        let smallCounts = try Self.nodesPerCommit(small)
        try small.close()
        let largeSize = ProcessInfo.processInfo.environment["TRELLIS_LONG_TESTS"] == "1" ? 1_000_000 : 300_000
        let large = try Self.store(items: largeSize)
        let largeCounts = try Self.nodesPerCommit(large)
        try large.close()
        print(
            "commit cost: nodes allocated by an insert, an update, a delete: \(smallCounts) at 10,000 objects, "
                + "\(largeCounts) at \(largeSize)")
        // A path of each tree the commit touches (the entity's trie, its index, the ID sets): a few dozen nodes.
        #expect(smallCounts.allSatisfy { $0 > 0 && $0 <= 64 }, "10,000 objects: \(smallCounts)")
        // A hundred times the objects adds a level or two to each tree: a few nodes more, not a hundred times.
        for (s, l) in zip(smallCounts, largeCounts) {
            #expect(
                l <= s + 16, "insert, update, delete: \(smallCounts) nodes at 10,000, \(largeCounts) at \(largeSize)")
        }
    }
}
#endif
