import TrellisCore

extension SortedTree {
    /// The number of keys less than `key` (the position `key` has or would have in ascending order).
    ///
    /// - Complexity: O(fanout · log n), reading only the counts stored in the nodes on one path.
    package func rank(of key: Key) -> Int {
        entryCount(below: key, includingKey: false)
    }

    /// The entry at `rank` among the nodes' entries alone (the pending run aside).
    ///
    /// - Complexity: O(fanout · log n).
    func nodeElement(atRank rank: Int) -> (key: Key, value: Value) {
        var node = root!
        var remaining = rank
        while !node.isLeaf { node = node.children[node.childPosition(forRank: &remaining)] }
        return (node.keys[remaining], node.values[remaining])
    }

    /// The entry at `rank` in ascending order (the entry with `rank` smaller keys).
    ///
    /// - Precondition: `0 <= rank < count`.
    /// - Complexity: O(fanout · log n).
    package func element(atRank rank: Int) -> (key: Key, value: Value) {
        precondition(rank >= 0 && rank < count, "SortedTree: rank \(rank) out of 0..<\(count)")
        return pending.isEmpty ? nodeElement(atRank: rank) : mergedElement(atRank: rank)
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
        let end = upper.map { entryCount(below: $0, includingKey: upperInclusive) } ?? count
        return start..<Swift.max(start, end)
    }

    /// The ranks of the keys in a range among the nodes' entries alone, and the positions of those in the pending run.
    ///
    /// - Complexity: O(fanout · log n).
    func splitRanks(
        from lower: Key?, inclusive lowerInclusive: Bool, to upper: Key?, inclusive upperInclusive: Bool
    ) -> (nodes: Range<Int>, pending: Range<Int>) {
        let start = lower.map { nodeEntryCount(below: $0, includingKey: !lowerInclusive) } ?? 0
        let end = upper.map { nodeEntryCount(below: $0, includingKey: upperInclusive) } ?? storedCount
        guard !pending.isEmpty else { return (start..<Swift.max(start, end), 0..<0) }
        let first = lower.map { pending.entryCount(below: $0, includingKey: !lowerInclusive) } ?? 0
        let last = upper.map { pending.entryCount(below: $0, includingKey: upperInclusive) } ?? pending.count
        return (start..<Swift.max(start, end), first..<Swift.max(first, last))
    }

    /// The number of keys less than `key`, or not greater than it when `includingKey`.
    ///
    /// - Complexity: O(fanout · log n).
    private func entryCount(below key: Key, includingKey: Bool) -> Int {
        nodeEntryCount(below: key, includingKey: includingKey)
            + (pending.isEmpty ? 0 : pending.entryCount(below: key, includingKey: includingKey))
    }

    /// `entryCount(below:includingKey:)` among the nodes' entries alone.
    ///
    /// - Complexity: O(fanout · log n).
    func nodeEntryCount(below key: Key, includingKey: Bool) -> Int {
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
