import TrellisCore

extension HashTrie: Sequence {
    /// Walks a trie depth first with an explicit stack: a node's inline pairs, then its subtrees.
    ///
    /// The iterator holds the nodes it walks, so it keeps reading the version it started on whatever happens to the
    /// trie afterwards.
    struct Iterator: IteratorProtocol {
        /// A node being walked, with the positions of its next pair and next subtree.
        private struct Frame {
            var node: Node
            var nextItem = 0
            var nextChild = 0
        }

        private var frames: ContiguousArray<Frame> = []

        /// An iterator over the trie under `root`.
        ///
        /// - Complexity: O(1).
        init(root: Node?) {
            guard let root else { return }
            frames.append(Frame(node: root))
        }

        /// The next key and value, in no particular order.
        ///
        /// - Complexity: O(1) amortized.
        mutating func next() -> (key: Key, value: Value)? {
            while let top = frames.indices.last {
                let node = frames[top].node
                let nextItem = frames[top].nextItem
                if nextItem < node.items.count {
                    frames[top].nextItem = nextItem + 1
                    return node.items[nextItem]
                }
                let nextChild = frames[top].nextChild
                if nextChild < node.children.count {
                    frames[top].nextChild = nextChild + 1
                    frames.append(Frame(node: node.children[nextChild]))
                } else {
                    frames.removeLast()
                }
            }
            return nil
        }
    }

    /// An iterator over all keys and values, in no particular order.
    ///
    /// - Complexity: O(1).
    func makeIterator() -> Iterator {
        Iterator(root: root)
    }

    /// - Complexity: O(1).
    var underestimatedCount: Int { storedCount }

    /// Calls `body` with every key and value, in the same order as iteration.
    ///
    /// - Complexity: O(n), without the iterator's bookkeeping.
    func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        guard let root else { return }
        try Self.forEach(in: root, body)
    }

    private static func forEach(in node: Node, _ body: (Key, Value) throws -> Void) rethrows {
        for item in node.items {
            try body(item.key, item.value)
        }
        for child in node.children {
            try forEach(in: child, body)
        }
    }
}
