import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// Issue 21: `NodeValues` keeps only a count for a zero-sized `Value` (the `Void` of every index tree). It must behave
/// exactly as a `ContiguousArray` would, and a tree of `Void` values must hold the same keys through every path that
/// writes nodes: one-key inserts and removes (splits, merges, borrows), the pending run, batch merges that rebuild, and
/// bulk builds.
@Suite struct NodeValuesTests {
    @Test("NodeValues of Int and of Void follow a ContiguousArray through 5,000 random operations")
    func followsAnArray() {
        var random = SeededRandom(seed: 21)
        var ints = NodeValues<Int>()
        var voids = NodeValues<Void>()
        var model = ContiguousArray<Int>()
        for step in 0..<5_000 {
            switch random.below(6) {
            case 0, 1:
                let position = random.below(model.count + 1)
                model.insert(step, at: position)
                ints.insertGrowingSlowly(step, at: position)
                voids.insertGrowingSlowly((), at: position)
            case 2 where !model.isEmpty:
                let position = random.below(model.count)
                #expect(ints.remove(at: position) == model.remove(at: position))
                voids.remove(at: position)
            case 3:
                model.append(-step)
                ints.append(-step)
                voids.append(())
            case 4 where !model.isEmpty:
                let position = random.below(model.count)
                model[position] = step * 7
                ints[position] = step * 7
            case 5 where model.count > 2:
                // Split in two and join again, as a node split and a merge do.
                let middle = random.below(model.count)
                var (left, right) = (ints.slice(0..<middle), ints.slice(middle..<ints.count))
                var (leftVoid, rightVoid) = (voids.slice(0..<middle), voids.slice(middle..<voids.count))
                #expect(left.count == middle && right.count == model.count - middle)
                #expect(leftVoid.count == middle && rightVoid.count == model.count - middle)
                left.reserveCapacity(model.count)
                left += right
                leftVoid += rightVoid
                (ints, voids) = (left, leftVoid)
                right = []
                rightVoid = []
                #expect(right.isEmpty && rightVoid.isEmpty)
            default:
                break
            }
            #expect(ints.count == model.count && voids.count == model.count)
        }
        #expect(ints.withUnsafeBufferPointer { Array($0) } == Array(model))
        #expect(voids.withUnsafeBufferPointer { $0.count } == model.count)
        #expect((0..<model.count).allSatisfy { ints[$0] == model[$0] })
        #expect(NodeValues<Void>([(), (), ()]).count == 3 && NodeValues<Void>().isEmpty)
    }

    @Test(
        "a tree of Void values holds the keys of a Set through inserts, removes, pending folds, merges and bulk builds")
    func voidTreeFollowsASet() {
        var random = SeededRandom(seed: 22)
        for fanout in [4, 16, 64] {
            var tree = SortedTree<Int, Void>(fanout: fanout)
            var model = Set<Int>()
            for round in 0..<40 {
                for _ in 0..<random.below(300) {
                    let key = random.below(5_000)
                    if random.below(3) == 0 {
                        tree.removeValue(forKey: key)
                        model.remove(key)
                    } else if random.below(2) == 0 {
                        if !model.contains(key) { _ = tree.insertBuffered((), forKey: key) }
                        model.insert(key)
                    } else {
                        tree[key] = ()
                        model.insert(key)
                    }
                }
                if round % 5 == 4 {
                    // A batch: large enough every other time to rebuild the tree from a merge.
                    let keys = Set((0..<(round % 10 == 4 ? 2_000 : 20)).map { _ in random.below(5_000) }).sorted()
                    let changes = keys.map { key in
                        SortedTree<Int, Void>.BatchChange(key: key, value: random.below(2) == 0 ? nil : ())
                    }
                    tree.merge(sortedChanges: changes)
                    for change in changes {
                        if change.value == nil { model.remove(change.key) } else { model.insert(change.key) }
                    }
                }
                tree.checkInvariants()
                #expect(tree.count == model.count, "fanout \(fanout), round \(round)")
                #expect(Array(tree).map(\.key) == model.sorted(), "fanout \(fanout), round \(round)")
                let probe = random.below(5_000)
                #expect(tree.contains(probe) == model.contains(probe))
            }
            let sorted = model.sorted()
            let built = SortedTree<Int, Void>(
                ascendingKeys: ContiguousArray(sorted), values: ContiguousArray(repeating: (), count: sorted.count),
                fanout: fanout)
            built.checkInvariants()
            #expect(Array(built).map(\.key) == sorted && built.count == sorted.count)
        }
    }
}
