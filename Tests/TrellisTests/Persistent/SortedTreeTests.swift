import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("SortedTree")
struct SortedTreeTests {
    /// A tree and its model holding the even keys 0, 2, …, 2(n − 1), each with its negation as value.
    static func evens(_ n: Int, fanout: Int) -> (SortedTree<Int, Int>, SortedModel) {
        var tree = SortedTree<Int, Int>(fanout: fanout)
        var model = SortedModel()
        for key in stride(from: 0, to: 2 * n, by: 2) {
            tree[key] = -key
            _ = model.updateValue(-key, forKey: key)
        }
        return (tree, model)
    }

    @Test("an empty tree answers every query with nothing")
    func emptyTree() {
        var tree = SortedTree<Int, String>()
        #expect(tree.isEmpty && tree.count == 0 && tree[1] == nil)
        #expect(tree.first == nil && tree.last == nil)
        #expect(tree.rank(of: 5) == 0)
        #expect(tree.count() == 0 && tree.count(from: 0, to: 10) == 0)
        #expect(Array(tree).isEmpty && Array(tree.elements(from: 0, to: 9, reverse: true)).isEmpty)
        #expect(tree.removeValue(forKey: 1) == nil)
        tree[1] = "a"
        tree[1] = nil
        #expect(tree.root == nil && tree.isEmpty)
        tree.checkInvariants()
    }

    @Test(
        "range scans and counts agree with the model for all four bound inclusions, forward and reverse",
        arguments: [4, 64])
    func rangeScansAndCounts(fanout: Int) {
        let (tree, model) = Self.evens(500, fanout: fanout)
        let bounds: [Int?] = [nil, -1, 0, 1, 2, 63, 64, 500, 501, 997, 998, 999, 2_000]
        for lower in bounds {
            for upper in bounds {
                for (lowerInclusive, upperInclusive) in [(true, true), (true, false), (false, true), (false, false)] {
                    let expected = model.positions(
                        from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                    let counted = tree.count(
                        from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
                    #expect(
                        counted == expected.count, "count \(String(describing: lower))…\(String(describing: upper))")
                    for reverse in [false, true] {
                        let scanned = tree.elements(
                            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive,
                            reverse: reverse)
                        let wanted = model.elements(
                            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive,
                            reverse: reverse)
                        #expect(SortedModel.same(scanned, wanted))
                    }
                }
            }
        }
    }

    @Test("the default arguments scan from the start, inclusive, to the end")
    func defaultScanArguments() {
        let (tree, model) = Self.evens(100, fanout: 8)
        #expect(
            SortedModel.same(
                tree.elements(), model.elements(from: nil, inclusive: true, to: nil, inclusive: false, reverse: false)))
        #expect(tree.elements(from: 10, to: 20).map(\.key) == [10, 12, 14, 16, 18])
        #expect(tree.elements(to: 4, reverse: true).map(\.key) == [2, 0])
        #expect(tree.count(from: 10) == 95 && tree.count(to: 10) == 5 && tree.count(from: 20, to: 10) == 0)
    }

    @Test("rank and element(atRank:) are inverse on every rank", arguments: [4, 64])
    func ranks(fanout: Int) {
        let (tree, model) = Self.evens(1_000, fanout: fanout)
        for rank in 0..<tree.count {
            let element = tree.element(atRank: rank)
            #expect(element.key == model.keys[rank] && element.value == -element.key)
            #expect(tree.rank(of: element.key) == rank && tree.rank(of: element.key + 1) == rank + 1)
        }
        #expect(tree.rank(of: -5) == 0 && tree.rank(of: 5_000) == 1_000)
    }

    @Test(
        "ascending, descending and middle-out inserts then removals keep every invariant at every step",
        arguments: [4, 5, 64])
    func bulkPatternsKeepInvariants(fanout: Int) {
        let n = 500
        let orders = [
            Array(0..<n), Array((0..<n).reversed()), (0..<n).map { $0 % 2 == 0 ? n / 2 + $0 / 2 : n / 2 - 1 - $0 / 2 },
        ]
        for order in orders {
            var tree = SortedTree<Int, Int>(fanout: fanout)
            for key in order {
                tree[key] = key
                tree.checkInvariants()
            }
            #expect(tree.map(\.key) == Array(0..<n))
            for key in order.reversed() where key % 3 != 0 { tree.removeValue(forKey: key) }
            tree.checkInvariants()
            #expect(tree.map(\.key) == Array(stride(from: 0, to: n, by: 3)))
            for key in order {
                tree.removeValue(forKey: key)
                tree.checkInvariants()
            }
            #expect(tree.isEmpty && tree.root == nil)
        }
    }

    @Test(
        "writes copy the path only when shared: a uniquely held tree keeps its root, a hidden copy keeps its entries",
        arguments: Sharing.allCases)
    func pathCopying(sharing: Sharing) {
        var (tree, _) = Self.evens(5_000, fanout: 16)
        let rootBefore = ObjectIdentifier(tree.root!)
        let hidden = sharing == .shared ? tree : nil
        tree[500] = 1
        tree[501] = 2
        tree.removeValue(forKey: 502)
        #expect(tree[500] == 1 && tree[501] == 2 && tree[502] == nil && tree.count == 5_000)
        tree.checkInvariants()
        if let hidden {
            #expect(ObjectIdentifier(tree.root!) != rootBefore && !tree.isIdentical(to: hidden))
            #expect(hidden[500] == -500 && hidden[501] == nil && hidden[502] == -502 && hidden.count == 5_000)
            hidden.checkInvariants()
        } else {
            #expect(ObjectIdentifier(tree.root!) == rootBefore)
        }
    }

    @Test("removing an absent key copies nothing, even from a shared tree")
    func absentRemovalCopiesNothing() {
        var (tree, _) = Self.evens(1_000, fanout: 8)
        let hidden = tree
        #expect(tree.removeValue(forKey: 3) == nil && tree.removeValue(forKey: -2) == nil)
        #expect(tree.isIdentical(to: hidden))
    }

    @Test("an iterator keeps reading the version it started on while the tree changes")
    func iteratorSeesItsVersion() {
        var (tree, model) = Self.evens(400, fanout: 4)
        var iterator = tree.elements(from: 100, reverse: true).makeIterator()
        for key in stride(from: 0, to: 800, by: 4) { tree.removeValue(forKey: key) }
        tree[51] = 1
        var seen: [Int] = []
        while let element = iterator.next() { seen.append(element.key) }
        #expect(seen == model.elements(from: 100, inclusive: true, to: nil, inclusive: false, reverse: true).map(\.key))
        #expect(tree.count == 201)
    }

    @Test("an optional value stored as nil is still present")
    func optionalValues() {
        var tree = SortedTree<String, Int?>()
        tree.updateValue(nil, forKey: "a")
        #expect(tree.contains("a") && tree.count == 1)
        #expect(tree.updateValue(3, forKey: "a") == .some(nil))
        #expect(tree.removeValue(forKey: "a") == .some(3))
        #expect(tree.isEmpty)
    }

    /// The most entries of a leaf and the most children of an internal node anywhere in `tree`.
    static func largestNodes(_ tree: SortedTree<Int, Int>) -> (leaf: Int, internal: Int) {
        var largest = (leaf: 0, internal: 0)
        func walk(_ node: SortedTreeNode<Int, Int>) {
            if node.isLeaf {
                largest.leaf = max(largest.leaf, node.keys.count)
            } else {
                largest.internal = max(largest.internal, node.children.count)
                node.children.forEach(walk)
            }
        }
        if let root = tree.root { walk(root) }
        return largest
    }

    @Test(
        "with the default fan-out, leaves hold up to 64 entries but internal nodes at most 16 children, however built")
    func internalNodesBranchLess() {
        let n = 20_000
        let keys = ContiguousArray(stride(from: 0, to: 2 * n, by: 2))
        let built = SortedTree(ascendingKeys: keys, values: ContiguousArray(keys.map { -$0 }))
        var inserted = SortedTree<Int, Int>()
        var random = SeededRandom(seed: 16)
        for key in keys.shuffled(using: &random) { inserted[key] = -key }
        var merged = built
        merged.merge(sortedChanges: stride(from: 1, to: 2 * n, by: 4).map { .init(key: $0, value: $0) })
        for (name, tree) in [("built", built), ("inserted", inserted), ("merged", merged)] {
            tree.checkInvariants()
            let largest = Self.largestNodes(tree)
            #expect(largest.leaf > 32 && largest.leaf <= 64, "\(name): largest leaf \(largest.leaf)")
            #expect(
                largest.internal > 8 && largest.internal <= 16, "\(name): largest internal node \(largest.internal)")
        }
        #expect(inserted.map(\.key) == Array(keys) && built.map(\.key) == Array(keys))
        #expect(merged.count == n + n / 2 && merged[5] == 5 && merged[4] == -4)
        // Removing most keys merges internal nodes; the bounds still hold.
        for key in keys where key % 10 != 0 { inserted.removeValue(forKey: key) }
        inserted.checkInvariants()
        #expect(Self.largestNodes(inserted).internal <= 16 && inserted.count == n / 5)
    }
}
