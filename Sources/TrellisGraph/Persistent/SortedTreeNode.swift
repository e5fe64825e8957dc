import TrellisCore

/// One node of a `SortedTree`: a leaf of sorted keys with their values, or an internal node of separators, children
/// and the number of entries under each child.
///
/// ```
/// internal  keys     [      s1,      s2      ]   s_i ≤ every key under children[i], > every key under children[i - 1]
///           children [  c0,      c1,      c2  ]
///           counts   [ |c0|,    |c1|,    |c2| ]   entries under each child, for ranks and range counts
/// leaf      keys     [k0, k1, …]  strictly ascending
///           values   [v0, v1, …]
/// ```
///
/// Keys and values are separate arrays so that a binary search touches keys only. One class serves both kinds; the
/// arrays a kind does not use are the shared empty singleton and cost no allocation. A node is a leaf exactly when it
/// has no children.
///
/// A node reachable from more than one tree value is never mutated (mutation copies it first), which is what makes the
/// unchecked `Sendable` conformance sound.
final class SortedTreeNode<Key: Comparable, Value>: @unchecked Sendable {
    // No run-time exclusivity checks: a node is written only while one tree value holds it (see above), so no read can
    // overlap a write, and the check cost more than a comparison on every read of a descent.
    @exclusivity(unchecked) var keys: ContiguousArray<Key>
    @exclusivity(unchecked) var values: NodeValues<Value>
    @exclusivity(unchecked) var children: ContiguousArray<SortedTreeNode<Key, Value>>
    @exclusivity(unchecked) var counts: ContiguousArray<Int>

    /// A node with the given contents: keys and values for a leaf; keys, children and counts for an internal node.
    ///
    /// - Complexity: O(1).
    init(
        keys: ContiguousArray<Key> = [],
        values: NodeValues<Value> = [],
        children: ContiguousArray<SortedTreeNode<Key, Value>> = [],
        counts: ContiguousArray<Int> = []
    ) {
        self.keys = keys
        self.values = values
        self.children = children
        self.counts = counts
        #if TRELLIS_COUNT_NODES
        NodeCount.allocated()
        #endif
    }

    /// A shallow copy; the arrays share storage until one side writes.
    ///
    /// - Complexity: O(1) here; the first write to a copied array costs O(its length).
    @inline(never)
    func copy() -> SortedTreeNode<Key, Value> {
        SortedTreeNode(keys: keys, values: values, children: children, counts: counts)
    }

    /// - Complexity: O(1).
    var isLeaf: Bool { children.isEmpty }

    /// Entries of a leaf, or children of an internal node: the quantity that fill bounds limit.
    ///
    /// - Complexity: O(1).
    var fill: Int { isLeaf ? keys.count : children.count }

    /// The first position whose key is not less than `key` (`keys.count` if none).
    ///
    /// - Complexity: O(f / 4) comparisons for f keys, but no two of them wait on each other (see `block`).
    func firstPosition(notBelow key: Key) -> Int {
        // One access to the stored array for the whole search: indexing `self.keys` in the loop paid a retain per
        // comparison.
        keys.withUnsafeBufferPointer { keys in
            var (low, high) = Self.block(keys) { $0 < key }
            while low < high {
                let middle = (low &+ high) / 2
                if keys[middle] < key { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// The first position whose key is greater than `key` (`keys.count` if none). For an internal node this is the
    /// child whose range holds `key`.
    ///
    /// - Complexity: O(f / 4) comparisons for f keys, none waiting on another.
    func firstPosition(above key: Key) -> Int {
        keys.withUnsafeBufferPointer { keys in
            var (low, high) = Self.block(keys) { !(key < $0) }
            while low < high {
                let middle = (low &+ high) / 2
                if key < keys[middle] { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    /// The run of at most four positions that holds the first key for which `before` is false (`before` must be true
    /// for a prefix of the keys and false after it), found by testing every fourth key.
    ///
    /// A binary search over a node that is not in cache waits for one cache miss after another, since each probe's
    /// address depends on the one before; the tests here do not depend on each other, so the processor fetches their
    /// cache lines all at once, and the search that follows runs within one of them. Small nodes skip it.
    @inline(__always)
    private static func block(_ keys: UnsafeBufferPointer<Key>, _ before: (Key) -> Bool) -> (Int, Int) {
        let n = keys.count
        guard n > 16 else { return (0, n) }
        var heads = 0
        var i = 4
        while i < n {
            heads &+= before(keys[i]) ? 1 : 0
            i &+= 4
        }
        return (heads == 0 ? 0 : 4 &* heads &+ 1, Swift.min(4 &* heads &+ 4, n))
    }

    /// The number of entries under the children before `position`.
    ///
    /// - Complexity: O(position).
    func entries(before position: Int) -> Int {
        var total = 0
        for index in 0..<position { total += counts[index] }
        return total
    }

    /// The child of an internal node that holds the entry at `rank` within this subtree; `rank` becomes the rank
    /// within that child.
    ///
    /// - Complexity: O(f).
    func childPosition(forRank rank: inout Int) -> Int {
        var position = 0
        while rank >= counts[position] {
            rank -= counts[position]
            position += 1
        }
        return position
    }

    /// The number of entries in the subtree.
    ///
    /// - Complexity: O(f).
    var entryCount: Int { isLeaf ? keys.count : entries(before: counts.count) }

    /// The upper half that `splitOff()` moved into a new node, for the parent to adopt to the right of this node.
    struct Split {
        /// A key that separates the two halves: at most the new node's smallest key, above this node's largest.
        var separator: Key
        var node: SortedTreeNode<Key, Value>
        /// Entries under `node`.
        var count: Int
    }

    /// Moves the upper half of an overfull node into a new node; both halves end at least half full.
    ///
    /// - Complexity: O(f) for a fill of f.
    @inline(never)
    func splitOff() -> Split {
        if isLeaf {
            let middle = keys.count / 2
            // Both halves get buffers of their exact size: the node that overflowed had grown past its fan-out.
            let right = SortedTreeNode(
                keys: ContiguousArray(keys[middle...]), values: values.slice(middle..<values.count))
            keys = ContiguousArray(keys[..<middle])
            values = values.slice(0..<middle)
            return Split(separator: right.keys[0], node: right, count: right.keys.count)
        }
        // Children [0, middle) stay; the separator between children middle - 1 and middle moves up to the parent.
        let middle = children.count / 2
        let separator = keys[middle - 1]
        let right = SortedTreeNode(
            keys: ContiguousArray(keys[middle...]),
            children: ContiguousArray(children[middle...]),
            counts: ContiguousArray(counts[middle...]))
        keys = ContiguousArray(keys[..<(middle - 1)])
        children = ContiguousArray(children[..<middle])
        counts = ContiguousArray(counts[..<middle])
        return Split(separator: separator, node: right, count: right.entryCount)
    }
}
