import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// `SortedTree.placing` writes each key straight into the leaf that holds its place: it must build the tree
/// `init(ascendingKeys:values:fanout:)` builds from the same keys sorted, at every size (one leaf, full leaves, the
/// last two leaves sharing their keys), and refuse places that are not a permutation or keys that do not then ascend.
@Suite struct SortedTreePlacingTests {
    /// Keys 10, 20, … handed over in a shuffled order, with the places that sort them.
    private static func shuffled(_ n: Int, seed: UInt64) -> (keys: [UInt64], places: [Int64]) {
        var random = SeededRandom(seed: seed)
        let order = Array(0..<n).shuffled(using: &random)
        return (order.map { UInt64($0 + 1) * 10 }, order.map { Int64($0) })
    }

    private static func build(_ keys: [UInt64], _ places: [Int64], fanout: Int) -> SortedTree<UInt64, Void>? {
        SortedTree<UInt64, Void>.placing(places: places, fanout: fanout) { body in
            for key in keys where !body(key) { return }
        }
    }

    @Test(arguments: [0, 1, 3, 15, 16, 17, 24, 31, 32, 33, 100, 1_000, 4_099])
    func placedKeysBuildTheTreeTheirSortedArrayBuilds(n: Int) throws {
        for fanout in [4, 16, 64] {
            let (keys, places) = Self.shuffled(n, seed: UInt64(n * 7 + fanout))
            let tree = try #require(Self.build(keys, places, fanout: fanout), "n \(n), fanout \(fanout)")
            tree.checkInvariants()
            let sorted = keys.sorted()
            let reference = SortedTree<UInt64, Void>(
                ascendingKeys: ContiguousArray(sorted), values: ContiguousArray(repeating: (), count: n), fanout: fanout
            )
            #expect(tree.count == n)
            #expect(Array(tree).map(\.key) == sorted, "n \(n), fanout \(fanout)")
            #expect(Array(tree).map(\.key) == Array(reference).map(\.key))
            if n > 0 { #expect(tree.firstEntry(notBelow: sorted[n / 2])?.key == sorted[n / 2]) }
        }
    }

    @Test func placesThatAreNotAPermutationOrKeysThatDoNotAscendAreRefused() {
        let (keys, places) = Self.shuffled(200, seed: 5)
        var repeated = places
        repeated[7] = repeated[8]
        #expect(Self.build(keys, repeated, fanout: 16) == nil, "a place used twice")
        var outside = places
        outside[3] = 200
        #expect(Self.build(keys, outside, fanout: 16) == nil, "a place past the end")
        outside[3] = -1
        #expect(Self.build(keys, outside, fanout: 16) == nil, "a negative place")
        #expect(Self.build(Array(keys.dropLast()), places, fanout: 16) == nil, "fewer keys than places")
        #expect(Self.build(keys + [5], places, fanout: 16) == nil, "more keys than places")
        var equal = keys
        equal[places.firstIndex(of: 1)!] = equal[places.firstIndex(of: 0)!]
        #expect(Self.build(equal, places, fanout: 16) == nil, "two equal keys")
        var descending = keys
        descending.swapAt(places.firstIndex(of: 40)!, places.firstIndex(of: 41)!)
        #expect(Self.build(descending, places, fanout: 16) == nil, "keys out of order across their places")
    }
}
