import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("SortedTree batch merges against one change at a time")
struct SortedTreeMergeTests {
    /// Random trees and random sorted batches (keys below, between, on and above the stored ones; stores and removes,
    /// removes of absent keys), merged both by rebuilding and key by key, agree with applying each change alone; the
    /// version held before the merge never changes.
    @Test(arguments: [4, 64], [0, 1, 1_000_000])
    func mergeAgreesWithOneChangeAtATime(fanout: Int, rebuildRatio: Int) throws {
        var random = SeededRandom(seed: 0xBA7C_4 + UInt64(fanout * 7 + rebuildRatio))
        for round in 0..<60 {
            let size = [0, 1, 5, 40, 300, 2_000][round % 6]
            let keySpace = 4 * size + 10
            var tree = SortedTree<Int, Int>(fanout: fanout)
            for _ in 0..<size { tree[random.below(keySpace)] = Int(random.next() % 1000) }
            let kept = tree
            let keptEntries = Array(kept).map { [$0.key, $0.value] }

            var batch: [Int: Int?] = [:]
            let changes = [1, 3, 30, 500, 3_000][random.below(5)]
            for _ in 0..<changes {
                // Some keys beyond the stored range on both sides.
                let key = random.below(keySpace + 40) - 20
                batch[key] = random.chance(40) ? nil : Optional(Int(random.next() % 1000))
            }
            let sorted = batch.keys.sorted().map { SortedTree<Int, Int>.BatchChange(key: $0, value: batch[$0]!) }

            var expected = tree
            for change in sorted {
                if let value = change.value { expected[change.key] = value } else { expected[change.key] = nil }
            }
            tree.merge(sortedChanges: sorted, rebuildRatio: rebuildRatio)
            tree.checkInvariants()
            try #require(
                Array(tree).map { [$0.key, $0.value] } == Array(expected).map { [$0.key, $0.value] },
                "round \(round)")
            try #require(tree.count == expected.count)
            for rank in Swift.stride(from: 0, to: tree.count, by: max(1, tree.count / 17)) {
                try #require(tree.element(atRank: rank).key == expected.element(atRank: rank).key)
            }
            try #require(Array(kept).map { [$0.key, $0.value] } == keptEntries, "round \(round): kept version changed")
            kept.checkInvariants()

            // The merged tree keeps working under one-key changes.
            for _ in 0..<50 {
                let key = random.below(keySpace)
                if random.chance(50) {
                    tree[key] = 1
                    expected[key] = 1
                } else {
                    tree[key] = nil
                    expected[key] = nil
                }
            }
            tree.checkInvariants()
            try #require(Array(tree).map(\.key) == Array(expected).map(\.key))
        }
    }

    /// Index changes with repeats of one entry (added, removed, added again) in one batch end as `update` one at a
    /// time leaves them, in scalar and general trees, for batches small and large enough to be radix sorted.
    @Test(arguments: [0, 1_000_000])
    func indexChangesEndAsUpdatesOneAtATime(rebuildRatio: Int) throws {
        let attributes = [
            AttributeDescription("n", .int), AttributeDescription("s", .string, optional: true),
        ]
        let layouts: [EntityLayout.IndexLayout] = [
            .init(columns: [0], isUnique: false), .init(columns: [1, 0], isUnique: false),
        ]
        var random = SeededRandom(seed: 0x1DE7)
        for round in 0..<40 {
            for layout in layouts {
                var oneByOne = IndexTree(layout, attributes: attributes)
                for _ in 0..<random.below(400) {
                    let values: [Value] = [.int(Int64(random.below(50))), .string("s\(random.below(5))")]
                    oneByOne.update(layout.columns, serial: UInt64(1 + random.below(300)), adding: true) {
                        values[$0]
                    }
                }
                var batched = oneByOne
                var changes = IndexChanges()
                for _ in 0..<[2, 20, 600, 6_000][round % 4] {
                    let values: [Value] = [
                        .int(Int64(random.below(50))), random.chance(20) ? .null : .string("s\(random.below(5))"),
                    ]
                    let serial = UInt64(1 + random.below(round % 4 == 3 ? 5_000 : 300))
                    let adding = random.chance(60)
                    oneByOne.update(layout.columns, serial: serial, adding: adding) { values[$0] }
                    batched.encoder.record(layout.columns, serial: serial, adding: adding, into: &changes) {
                        values[$0]
                    }
                }
                batched.apply(changes, rebuildRatio: rebuildRatio)
                batched.checkInvariants()
                try #require(Self.entries(batched) == Self.entries(oneByOne), "round \(round)")
                try #require(batched.count == oneByOne.count)
            }
        }
    }

    private static func entries(_ tree: IndexTree) -> [String] {
        switch tree {
        case .scalar(let t, _): return Array(t).map { "\($0.key.bits)/\($0.key.serial)" }
        case .pair(let t, _, _): return Array(t).map { "\($0.key.first) \($0.key.second)/\($0.key.serial)" }
        case .general(let t): return Array(t).map { "\($0.key.first) \($0.key.rest) \($0.key.serial)" }
        }
    }
}
