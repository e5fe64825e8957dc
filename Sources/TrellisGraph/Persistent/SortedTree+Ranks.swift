import TrellisCore

extension SortedTree {
    /// The number of keys less than `key` (the position `key` has or would have in ascending order).
    ///
    /// - Complexity: O(fanout · log n), reading only the counts stored in the nodes on one path.
    package func rank(of key: Key) -> Int {
        entryCount(below: key, includingKey: false)
    }

    /// The entry at `rank` in ascending order (the entry with `rank` smaller keys).
    ///
    /// - Precondition: `0 <= rank < count`.
    /// - Complexity: O(fanout · log n).
    package func element(atRank rank: Int) -> (key: Key, value: Value) {
        precondition(rank >= 0 && rank < storedCount, "SortedTree: rank \(rank) out of 0..<\(storedCount)")
        var node = root!
        var remaining = rank
        while !node.isLeaf { node = node.children[node.childPosition(forRank: &remaining)] }
        return (node.keys[remaining], node.values[remaining])
    }

    /// The number of keys in a range; a `nil` bound leaves that side open, and an empty or inverted range counts 0.
    ///
    /// - Complexity: O(fanout · log n), whatever the size of the range.
    package func count(
        from lower: Key? = nil,
        inclusive lowerInclusive: Bool = true,
        to upper: Key? = nil,
        inclusive upperInclusive: Bool = false
    ) -> Int {
        ranks(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive).count
    }

    /// The ranks of the keys in a range, as `count(from:inclusive:to:inclusive:)` defines it.
    ///
    /// - Complexity: O(fanout · log n).
    package func ranks(
        from lower: Key?, inclusive lowerInclusive: Bool, to upper: Key?, inclusive upperInclusive: Bool
    )
        -> Range<Int>
    {
        let start = lower.map { entryCount(below: $0, includingKey: !lowerInclusive) } ?? 0
        let end = upper.map { entryCount(below: $0, includingKey: upperInclusive) } ?? storedCount
        return start..<Swift.max(start, end)
    }

    /// The number of keys less than `key`, or not greater than it when `includingKey`.
    ///
    /// - Complexity: O(fanout · log n).
    private func entryCount(below key: Key, includingKey: Bool) -> Int {
        guard var node = root else { return 0 }
        var total = 0
        while !node.isLeaf {
            // Every key under an earlier child is below the separator before `position`, which is at most `key`.
            let position = node.firstPosition(above: key)
            total += node.entries(before: position)
            node = node.children[position]
        }
        return total + (includingKey ? node.firstPosition(above: key) : node.firstPosition(notBelow: key))
    }
}
