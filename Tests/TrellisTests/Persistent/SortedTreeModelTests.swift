import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("SortedTree against a sorted-array model")
struct SortedTreeModelTests {
    @Test(
        "100,000 random operations, scans, counts and ranks agree with a sorted array; kept versions never change",
        arguments: [SortedTree<Int, Int>.defaultFanout, 4], Sharing.allCases)
    func randomOperationsAgreeWithModel(fanout: Int, sharing: Sharing) throws {
        // A fan-out of 4 makes a tree of a few thousand keys eight or more levels deep, so every rebalancing case of
        // internal nodes comes up; the default fan-out covers the sizes used in practice.
        let keySpace = fanout == 4 ? 2_000 : 12_000
        var random = SeededRandom(seed: 0x50_27ED + UInt64(fanout))
        var tree = SortedTree<Int, Int>(fanout: fanout)
        var model = SortedModel()
        var kept: [(tree: SortedTree<Int, Int>, model: SortedModel)] = []

        for step in 1...100_000 {
            let key = random.below(keySpace)
            let value = Int(truncatingIfNeeded: random.next())
            let hidden = sharing == .shared ? tree : nil
            let before = model[key]
            let countBefore = model.count

            switch random.below(100) {
            case ..<25:
                try #require(tree.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case ..<33:
                tree[key] = value
                _ = model.updateValue(value, forKey: key)
            case ..<58:
                try #require(tree.removeValue(forKey: key) == model.removeValue(forKey: key))
            case ..<65:
                tree[key] = nil
                _ = model.removeValue(forKey: key)
            case ..<75:
                try #require(tree.rank(of: key) == model.lowerBound(key), "step \(step): rank of \(key)")
                if model.count > 0 {
                    let rank = random.below(model.count)
                    let element = tree.element(atRank: rank)
                    try #require(element.key == model.keys[rank] && element.value == model[element.key])
                }
            case ..<85:
                let (lower, upper) = (random.below(keySpace + 2) - 1, random.below(keySpace + 2) - 1)
                let (lowerInclusive, upperInclusive) = (random.chance(50), random.chance(50))
                let counted = tree.count(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                let expected = model.positions(
                    from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                try #require(counted == expected.count, "step \(step): count(\(lower), \(upper))")
            default:
                // Short scans keep the cost per step small; whole-range scans run with the full checks below.
                let upper = key + random.below(keySpace / 20)
                try Self.checkScan(of: tree, model, lower: key, upper: upper, random: &random)
            }

            try #require(tree[key] == model[key], "step \(step): key \(key)")
            try #require(tree.count == model.count, "step \(step): count")
            if let hidden {
                try #require(hidden[key] == before, "step \(step): the hidden copy changed at \(key)")
                try #require(hidden.count == countBefore, "step \(step): the hidden copy's count changed")
            }
            if step % 1_000 == 0 {
                tree.checkInvariants()
                try #require(SortedModel.matches(tree, model), "step \(step): contents")
                try Self.checkScan(of: tree, model, lower: nil, upper: key, random: &random)
                try Self.checkScan(of: tree, model, lower: key, upper: nil, random: &random)
            }
            if step % 5_000 == 0 { kept.append((tree, model)) }
            if step % 25_000 == 0 {
                for version in kept { try #require(SortedModel.matches(version.tree, version.model)) }
            }
        }
        #expect(kept.count == 20)
        for version in kept {
            version.tree.checkInvariants()
            #expect(SortedModel.matches(version.tree, version.model))
        }
    }

    /// Compares one scan, with inclusivity and direction drawn at random, against the model.
    static func checkScan(
        of tree: SortedTree<Int, Int>,
        _ model: SortedModel,
        lower: Int?,
        upper: Int?,
        random: inout SeededRandom
    ) throws {
        let (lowerInclusive, upperInclusive, reverse) = (random.chance(50), random.chance(50), random.chance(50))
        let scanned = tree.elements(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive, reverse: reverse)
        let expected = model.elements(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive, reverse: reverse)
        try #require(
            SortedModel.same(scanned, expected),
            "scan \(String(describing: lower))…\(String(describing: upper)) \(lowerInclusive) \(upperInclusive) \(reverse)"
        )
    }
}
