import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// Issue 21: `SortedTree.forEachElement` walks a range leaf by leaf where no pending entry falls in it, and through the
/// iterator where one does. Both must yield exactly what `elements(from:inclusive:to:inclusive:reverse:)` yields, in
/// the same order, and stop exactly where the body says.
@Suite struct SortedTreeVisitTests {
    /// A tree of `count` random keys below 10,000, some left in the pending run, and the keys in order.
    static func randomTree(
        fanout: Int, count: Int, pending: Bool, _ random: inout SeededRandom
    ) -> (SortedTree<Int, Int>, [Int]) {
        var tree = SortedTree<Int, Int>(fanout: fanout)
        var keys = Set<Int>()
        for _ in 0..<count {
            let key = random.below(10_000)
            guard keys.insert(key).inserted else { continue }
            if pending && random.below(3) == 0 {
                _ = tree.insertBuffered(-key, forKey: key, limit: 1_000_000)
            } else {
                tree[key] = -key
            }
        }
        return (tree, keys.sorted())
    }

    @Test(
        "forEachElement yields what elements yields, for random ranges, both directions, with and without pending entries",
        arguments: [4, 16, 64])
    func visitMatchesIterator(fanout: Int) {
        var random = SeededRandom(seed: UInt64(fanout))
        var leafWalks = 0
        for round in 0..<60 {
            let (tree, keys) = Self.randomTree(
                fanout: fanout, count: random.below(3_000), pending: round % 2 == 1, &random)
            #expect(Array(tree).map(\.key) == keys)
            for _ in 0..<40 {
                let lower: Int? = random.below(8) == 0 ? nil : random.below(10_200) - 100
                let upper: Int? = random.below(8) == 0 ? nil : random.below(10_200) - 100
                let (li, ui, reverse) = (random.below(2) == 0, random.below(2) == 0, random.below(2) == 0)
                let expected = Array(
                    tree.elements(from: lower, inclusive: li, to: upper, inclusive: ui, reverse: reverse))
                var seen: [(key: Int, value: Int)] = []
                tree.forEachElement(from: lower, inclusive: li, to: upper, inclusive: ui, reverse: reverse) {
                    seen.append(($0, $1))
                    return true
                }
                #expect(
                    seen.map(\.key) == expected.map(\.key), "\(String(describing: lower))…\(String(describing: upper))")
                #expect(seen.allSatisfy { $0.value == -$0.key })
                if tree.pendingCount == 0 { leafWalks += 1 }
                // Stopping after k elements yields exactly the first k.
                let k = expected.isEmpty ? 0 : random.below(expected.count) + 1
                var taken: [Int] = []
                tree.forEachElement(from: lower, inclusive: li, to: upper, inclusive: ui, reverse: reverse) { key, _ in
                    taken.append(key)
                    return taken.count < k
                }
                #expect(taken == expected.prefix(k).map(\.key))
            }
        }
        #expect(leafWalks > 500, "the leaf-by-leaf walk was taken \(leafWalks) times")
    }
}
