import TrellisCore

extension SortedTree: Sequence {
    /// Walks a run of consecutive ranks, forward or backward, with one path frame per level.
    ///
    /// The run's length is known from the start (subtree counts give ranks), so the iterator compares no keys and never
    /// steps past the run. It holds the nodes it walks, so it keeps reading the version it started on whatever happens
    /// to the tree afterwards.
    package struct Iterator: IteratorProtocol {
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
        package mutating func next() -> (key: Key, value: Value)? {
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
        let reverse: Bool

        /// - Complexity: O(fanout · log n).
        package func makeIterator() -> Iterator {
            let start = reverse ? ranks.upperBound - 1 : ranks.lowerBound
            return Iterator(root: root, start: start, count: ranks.count, reverse: reverse)
        }

        /// - Complexity: O(1).
        package var underestimatedCount: Int { ranks.count }
    }

    /// An iterator over all entries in ascending key order.
    ///
    /// - Complexity: O(log n).
    package func makeIterator() -> Iterator {
        Iterator(root: root, start: 0, count: storedCount, reverse: false)
    }

    /// - Complexity: O(1).
    package var underestimatedCount: Int { storedCount }

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
        Elements(
            root: root,
            ranks: ranks(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive),
            reverse: reverse)
    }

    /// Calls `body` with every entry in ascending key order.
    ///
    /// - Complexity: O(n), without the iterator's bookkeeping.
    package func forEach(_ body: (Key, Value) throws -> Void) rethrows {
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
