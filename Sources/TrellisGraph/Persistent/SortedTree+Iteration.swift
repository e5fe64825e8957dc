import TrellisCore

extension SortedTree: Sequence {
    /// Walks a run of consecutive ranks of the nodes' entries and a run of the pending entries together, in key order
    /// (descending when `reverse`).
    ///
    /// It holds what it walks, so it keeps reading the version it started on whatever happens to the tree afterwards.
    package struct Iterator: IteratorProtocol {
        private var nodes: NodeIterator
        /// The nodes' next entry, read ahead to compare with the pending run's.
        private var nodeNext: (key: Key, value: Value)?
        private let pending: SortedTreePending<Key, Value>
        /// The pending positions still to visit: from the low end upwards, or from the high end down when `reverse`.
        private var pendingLeft: Range<Int>
        private let reverse: Bool

        /// An iterator over the nodes' ranks `nodeRanks` and the pending positions `pendingPositions`.
        ///
        /// - Complexity: O(fanout · log n).
        init(
            root: Node?, nodeRanks: Range<Int>, pending: SortedTreePending<Key, Value>, pendingPositions: Range<Int>,
            reverse: Bool
        ) {
            let start = reverse ? nodeRanks.upperBound - 1 : nodeRanks.lowerBound
            nodes = NodeIterator(root: root, start: start, count: nodeRanks.count, reverse: reverse)
            self.pending = pending
            pendingLeft = pendingPositions
            self.reverse = reverse
            if !pendingLeft.isEmpty { nodeNext = nodes.next() }
        }

        /// The next entry.
        ///
        /// - Complexity: O(1) amortized.
        package mutating func next() -> (key: Key, value: Value)? {
            guard !pendingLeft.isEmpty else {
                if let held = nodeNext {
                    nodeNext = nil
                    return held
                }
                return nodes.next()
            }
            let position = reverse ? pendingLeft.upperBound - 1 : pendingLeft.lowerBound
            let key = pending.keys[position]
            if let held = nodeNext, reverse ? key < held.key : held.key < key {
                nodeNext = nodes.next()
                return held
            }
            if reverse { pendingLeft.removeLast() } else { pendingLeft.removeFirst() }
            return (key, pending.values[position])
        }
    }

    /// Walks a run of consecutive ranks of the nodes' entries, forward or backward, with one path frame per level.
    ///
    /// The run's length is known from the start (subtree counts give ranks), so the iterator compares no keys and never
    /// steps past the run. It holds the nodes it walks, so it keeps reading the version it started on whatever happens
    /// to the tree afterwards.
    struct NodeIterator: IteratorProtocol {
        /// The node at each level, root first, and the position taken in it (a child, or an entry of the leaf).
        private var path: ContiguousArray<(node: Node, position: Int)> = []
        private var remaining: Int
        private let reverse: Bool

        /// An iterator over `count` entries starting at rank `start` and moving up, or down when `reverse`.
        ///
        /// - Complexity: O(fanout · log n).
        init(root: Node?, start: Int, count: Int, reverse: Bool) {
            self.reverse = reverse
            guard count > 0, var node = root else {
                remaining = 0
                return
            }
            remaining = count
            var rank = start
            while !node.isLeaf {
                let position = node.childPosition(forRank: &rank)
                path.append((node, position))
                node = node.children[position]
            }
            path.append((node, rank))
        }

        /// The next entry of the run.
        ///
        /// - Complexity: O(1) amortized.
        mutating func next() -> (key: Key, value: Value)? {
            guard remaining > 0 else { return nil }
            let (leaf, position) = path[path.count - 1]
            let element = (key: leaf.keys[position], value: leaf.values[position])
            remaining -= 1
            if remaining > 0 {
                if reverse { stepBackward() } else { stepForward() }
            }
            return element
        }

        /// Moves to the next rank; there must be one.
        private mutating func stepForward() {
            var level = path.count - 1
            path[level].position += 1
            guard path[level].position == path[level].node.keys.count else { return }
            repeat {
                level -= 1
                path[level].position += 1
            } while path[level].position == path[level].node.children.count
            for below in (level + 1)..<path.count {
                let above = path[below - 1]
                path[below] = (above.node.children[above.position], 0)
            }
        }

        /// Moves to the previous rank; there must be one.
        private mutating func stepBackward() {
            var level = path.count - 1
            guard path[level].position == 0 else {
                path[level].position -= 1
                return
            }
            repeat { level -= 1 } while path[level].position == 0
            path[level].position -= 1
            for below in (level + 1)..<path.count {
                let above = path[below - 1]
                let child = above.node.children[above.position]
                path[below] = (child, child.fill - 1)
            }
        }
    }

    /// A lazily walked run of ranks; see `elements(from:inclusive:to:inclusive:reverse:)`.
    package struct Elements: Sequence {
        let root: Node?
        let ranks: Range<Int>
        let pending: SortedTreePending<Key, Value>
        let pendingPositions: Range<Int>
        let reverse: Bool

        /// - Complexity: O(fanout · log n).
        package func makeIterator() -> Iterator {
            Iterator(
                root: root, nodeRanks: ranks, pending: pending, pendingPositions: pendingPositions, reverse: reverse)
        }

        /// - Complexity: O(1).
        package var underestimatedCount: Int { ranks.count + pendingPositions.count }
    }

    /// An iterator over all entries in ascending key order.
    ///
    /// - Complexity: O(log n).
    package func makeIterator() -> Iterator {
        Iterator(
            root: root, nodeRanks: 0..<storedCount, pending: pending, pendingPositions: 0..<pending.count,
            reverse: false)
    }

    /// - Complexity: O(1).
    package var underestimatedCount: Int { count }

    /// The entries with keys in a range, in ascending key order (descending when `reverse`), walked lazily. A `nil`
    /// bound leaves that side open; an empty or inverted range yields nothing.
    ///
    /// - Complexity: O(fanout · log n) to start, O(1) amortized per element.
    package func elements(
        from lower: Key? = nil,
        inclusive lowerInclusive: Bool = true,
        to upper: Key? = nil,
        inclusive upperInclusive: Bool = false,
        reverse: Bool = false
    ) -> some Sequence<(key: Key, value: Value)> {
        let (nodes, pendingPositions) = splitRanks(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
        return Elements(
            root: root, ranks: nodes, pending: pending, pendingPositions: pendingPositions, reverse: reverse)
    }

    /// Calls `body` with the entries `elements(from:inclusive:to:inclusive:reverse:)` yields, in the same order, until
    /// it returns false.
    ///
    /// When no pending entry falls in the range, the nodes are walked leaf by leaf with no iterator: a run within a
    /// leaf is one loop over its arrays.
    ///
    /// - Complexity: O(fanout · log n) to start, O(1) amortized per element.
    package func forEachElement(
        from lower: Key?, inclusive lowerInclusive: Bool, to upper: Key?, inclusive upperInclusive: Bool,
        reverse: Bool, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        let (nodes, pendingPositions) = splitRanks(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
        guard pendingPositions.isEmpty else {
            var entries = Iterator(
                root: root, nodeRanks: nodes, pending: pending, pendingPositions: pendingPositions, reverse: reverse)
            while let (key, value) = entries.next() { guard try body(key, value) else { return } }
            return
        }
        guard let root, !nodes.isEmpty else { return }
        _ = try Self.visit(root, ranks: nodes, reverse: reverse, body)
    }

    /// Visits the entries of `node`'s subtree at `ranks` (ranks within the subtree); false once `body` stopped.
    private static func visit(
        _ node: Node, ranks: Range<Int>, reverse: Bool, _ body: (Key, Value) throws -> Bool
    ) rethrows -> Bool {
        if node.isLeaf {
            return try node.keys.withUnsafeBufferPointer { keys in
                try node.values.withUnsafeBufferPointer { values in
                    if reverse {
                        for i in ranks.reversed() where try !body(keys[i], values[i]) { return false }
                    } else {
                        for i in ranks where try !body(keys[i], values[i]) { return false }
                    }
                    return true
                }
            }
        }
        // The children whose entries overlap `ranks`, and the rank of the first one's first entry.
        var first = 0
        var base = 0
        while base + node.counts[first] <= ranks.lowerBound {
            base += node.counts[first]
            first += 1
        }
        var last = first
        var end = base + node.counts[first]
        while end < ranks.upperBound {
            last += 1
            end += node.counts[last]
        }
        // The rank where the walk stands: the first child's start going forward, the last child's end going back.
        var edge = reverse ? end : base
        for step in 0...(last - first) {
            let position = reverse ? last - step : first + step
            let count = node.counts[position]
            let childBase = reverse ? edge - count : edge
            let part = Swift.max(ranks.lowerBound, childBase)..<Swift.min(ranks.upperBound, childBase + count)
            guard
                try visit(
                    node.children[position], ranks: (part.lowerBound - childBase)..<(part.upperBound - childBase),
                    reverse: reverse, body)
            else { return false }
            edge = reverse ? childBase : childBase + count
        }
        return true
    }

    /// Calls `body` with every entry in ascending key order.
    ///
    /// - Complexity: O(n), without the iterator's bookkeeping.
    package func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        guard pending.isEmpty else {
            var entries = makeIterator()
            while let (key, value) = entries.next() { try body(key, value) }
            return
        }
        guard let root else { return }
        try Self.forEach(in: root, body)
    }

    private static func forEach(in node: Node, _ body: (Key, Value) throws -> Void) rethrows {
        guard node.isLeaf else {
            for child in node.children { try forEach(in: child, body) }
            return
        }
        for position in node.keys.indices { try body(node.keys[position], node.values[position]) }
    }
}
