import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// Issue 21: a `SortedTree` keeps new keys in a small pending run (`insertBuffered`) and folds them into its nodes in
/// batches. Every read answers for the run and the nodes together, and a kept copy never changes.
@Suite("SortedTree pending run against a sorted-array model")
struct SortedTreePendingTests {
    @Test(
        "40,000 random buffered inserts, updates and removals agree with a sorted array across folds",
        arguments: [4, SortedTree<Int, Int>.defaultFanout])
    func bufferedOperationsAgreeWithModel(fanout: Int) throws {
        let keySpace = 3_000
        var random = SeededRandom(seed: 0x21_B0 + UInt64(fanout))
        var tree = SortedTree<Int, Int>(fanout: fanout)
        var model = SortedModel()
        var kept: [(tree: SortedTree<Int, Int>, model: SortedModel)] = []
        var sawPending = 0
        var folds = 0

        for step in 1...40_000 {
            let key = random.below(keySpace)
            let value = Int(truncatingIfNeeded: random.next())
            let pendingBefore = tree.pendingCount
            switch random.below(100) {
            case ..<45:
                try #require(
                    tree.insertBuffered(value, forKey: key, limit: 8) == model.updateValue(value, forKey: key),
                    "step \(step): buffered insert of \(key)")
            case ..<55:
                try #require(tree.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case ..<75:
                try #require(tree.removeValue(forKey: key) == model.removeValue(forKey: key))
            case ..<82:
                try #require(tree.rank(of: key) == model.lowerBound(key), "step \(step): rank of \(key)")
                if model.count > 0 {
                    let rank = random.below(model.count)
                    let element = tree.element(atRank: rank)
                    try #require(element.key == model.keys[rank] && element.value == model[element.key])
                }
            case ..<88:
                let (lower, upper) = (random.below(keySpace + 2) - 1, random.below(keySpace + 2) - 1)
                let (lowerInclusive, upperInclusive) = (random.chance(50), random.chance(50))
                let counted = tree.count(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                let expected = model.positions(
                    from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                try #require(counted == expected.count, "step \(step): count(\(lower), \(upper))")
            case ..<94:
                let position = model.lowerBound(key)
                let expected = position < model.count ? model.keys[position] : nil
                try #require(tree.firstEntry(notBelow: key)?.key == expected, "step \(step): seek \(key)")
                try #require(tree.first?.key == model.keys.first && tree.last?.key == model.keys.last)
            default:
                let upper = key + random.below(keySpace / 10)
                try SortedTreeModelTests.checkScan(of: tree, model, lower: key, upper: upper, random: &random)
            }
            if tree.pendingCount > 0 { sawPending += 1 }
            if pendingBefore == 7 && tree.pendingCount == 0 { folds += 1 }

            try #require(tree[key] == model[key], "step \(step): key \(key)")
            try #require(tree.contains(key) == (model[key] != nil), "step \(step): contains \(key)")
            try #require(tree.count == model.count, "step \(step): count")
            if step % 500 == 0 {
                tree.checkInvariants()
                try #require(SortedModel.matches(tree, model), "step \(step): contents")
                var walked: [Int] = []
                tree.forEach { key, _ in walked.append(key) }
                try #require(walked == model.keys, "step \(step): forEach")
                try SortedTreeModelTests.checkScan(of: tree, model, lower: nil, upper: nil, random: &random)
                kept.append((tree, model))
            }
        }
        // The run was used and folded many times, so the checks above crossed folds.
        #expect(sawPending > 10_000)
        #expect(folds > 100)
        for version in kept {
            version.tree.checkInvariants()
            #expect(SortedModel.matches(version.tree, version.model))
        }
    }

    @Test("a batch merge folds the pending run first and gives the tree a merge of both would")
    func mergeFoldsPending() {
        var tree = SortedTree<Int, Int>(fanout: 4)
        for key in stride(from: 0, to: 200, by: 2) { tree[key] = key }
        for key in [1, 3, 199, 201] { tree.insertBuffered(-key, forKey: key, limit: 100) }
        #expect(tree.pendingCount == 4)
        let before = tree
        tree.merge(
            sortedChanges: [.init(key: 3, value: nil), .init(key: 4, value: 40), .init(key: 5, value: 5)],
            rebuildRatio: 1_000)
        tree.checkInvariants()
        #expect(tree.pendingCount == 0)
        #expect(tree[1] == -1 && tree[3] == nil && tree[4] == 40 && tree[5] == 5 && tree[201] == -201)
        #expect(tree.count == 100 + 4 - 1 + 1)
        #expect(before.pendingCount == 4 && before[3] == -3 && before[4] == 4 && before.count == 104)
    }

    @Test("a key the nodes hold is replaced there, never added to the run twice")
    func bufferedInsertOfHeldKeyReplacesInNodes() {
        var tree = SortedTree<Int, Int>()
        for key in 0..<100 { tree[key] = key }
        #expect(tree.insertBuffered(7, forKey: 50) == 50)
        #expect(tree.pendingCount == 0 && tree[50] == 7 && tree.count == 100)
        #expect(tree.insertBuffered(1, forKey: 500) == nil)
        #expect(tree.insertBuffered(2, forKey: 500) == 1)
        #expect(tree.pendingCount == 1 && tree[500] == 2 && tree.count == 101)
        tree.checkInvariants()
    }
}
