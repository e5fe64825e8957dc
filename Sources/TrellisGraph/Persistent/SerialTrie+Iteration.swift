import TrellisCore

extension SerialTrie: Sequence {
    /// Walks a trie in ascending key order with an explicit stack, one frame per level.
    ///
    /// The iterator holds the nodes it walks, so it keeps reading the version it started on whatever happens to the
    /// trie afterwards.
    @usableFromInline package struct Iterator: IteratorProtocol {
        /// A node being walked and the occupied slots of it not yet visited.
        private struct Frame {
            var node: Node
            var unvisited: UInt64
        }

        private var frames: ContiguousArray<Frame> = []
        private let height: Int
        /// The trie's tail, still to come after the nodes when its key is in range.
        private var tail: Tail?
        /// The key bits of the slots chosen so far, one six-bit digit per level above the current one.
        private var prefix: UInt64 = 0

        /// An iterator over the keys of `root` that are at least `lowerKey`.
        ///
        /// - Complexity: O(h).
        init(root: Node?, height: Int, tail: Tail?, from lowerKey: UInt64) {
            self.height = height
            self.tail = tail.flatMap { $0.key >= lowerKey ? $0 : nil }
            guard var node = root, SerialTrie.fits(lowerKey, height: height) else { return }
            frames.reserveCapacity(height + 1)
            var level = height
            while true {
                let index = Node.index(of: lowerKey, level: level)
                let bit: UInt64 = 1 &<< UInt64(index)
                let atOrAbove = node.bitmap & ~(bit &- 1)
                guard level > 0, node.bitmap & bit != 0 else {
                    // A leaf starts at the bound itself; an interior node without the bound's slot starts at the
                    // next slot, below which everything is above the bound.
                    frames.append(Frame(node: node, unvisited: atOrAbove))
                    return
                }
                frames.append(Frame(node: node, unvisited: atOrAbove & ~bit))
                prefix |= UInt64(index) &<< UInt64(Node.bitsPerLevel * level)
                node = node.children[node.position(ofSlot: index)]
                level -= 1
            }
        }

        /// The next key and value in ascending key order.
        ///
        /// - Complexity: O(1) amortized.
        @usableFromInline package mutating func next() -> (key: UInt64, value: Value)? {
            while !frames.isEmpty {
                let top = frames.count - 1
                let unvisited = frames[top].unvisited
                guard unvisited != 0 else {
                    frames.removeLast()
                    continue
                }
                frames[top].unvisited = unvisited & (unvisited &- 1)
                let index = unvisited.trailingZeroBitCount
                let node = frames[top].node
                let level = height - top
                let shift = UInt64(Node.bitsPerLevel * level)
                prefix = (prefix & ~(63 &<< shift)) | (UInt64(index) &<< shift)
                let position = node.position(ofSlot: index)
                if level == 0 { return (prefix, node.item(at: position)) }
                let child = node.children[position]
                frames.append(Frame(node: child, unvisited: child.bitmap))
            }
            guard let last = tail else { return nil }
            tail = nil
            return (last.key, last.value)
        }
    }

    /// An iterator over all keys and values in ascending key order.
    ///
    /// - Complexity: O(h).
    @usableFromInline package func makeIterator() -> Iterator {
        Iterator(root: root, height: height, tail: tail, from: 0)
    }

    /// - Complexity: O(1).
    @usableFromInline package var underestimatedCount: Int { storedCount }

    /// The keys from `lowerKey` on with their values, in ascending key order; lazily walked.
    ///
    /// - Complexity: O(h) to start, O(1) amortized per element.
    package func elements(from lowerKey: UInt64) -> some Sequence<(key: UInt64, value: Value)> {
        IteratorSequence(Iterator(root: root, height: height, tail: tail, from: lowerKey))
    }

    /// Calls `body` with every key and value in ascending key order.
    ///
    /// - Complexity: O(n), without the iterator's bookkeeping.
    @inlinable
    package func forEach(_ body: (UInt64, Value) throws -> Void) rethrows {
        if let root {
            // Nodes below the root live as long as the root does: the walk visits them unretained.
            try withExtendedLifetime(root) {
                try Self.forEach(in: Unmanaged.passUnretained(root), level: height, prefix: 0, body)
            }
        }
        if let tail { try body(tail.key, tail.value) }
    }

    @inlinable
    static func forEach(
        in node: Unmanaged<Node>,
        level: Int,
        prefix: UInt64,
        _ body: (UInt64, Value) throws -> Void
    ) rethrows {
        try node._withUnsafeGuaranteedRef { node in
            var unvisited = node.bitmap
            var position = 0
            let shift = UInt64(Node.bitsPerLevel * level)
            while unvisited != 0 {
                let key = prefix | (UInt64(unvisited.trailingZeroBitCount) &<< shift)
                if level == 0 {
                    try body(key, node.item(at: position))
                } else {
                    let child = node.children.withUnsafeBufferPointer { Unmanaged.passUnretained($0[position]) }
                    try forEach(in: child, level: level - 1, prefix: key, body)
                }
                unvisited &= unvisited &- 1
                position += 1
            }
        }
    }

    /// The smallest key, or `nil` when empty.
    ///
    /// - Complexity: O(h).
    package var minKey: UInt64? {
        guard var node = root else { return tail?.key }
        var key: UInt64 = 0
        for level in stride(from: height, through: 0, by: -1) {
            key |= UInt64(node.bitmap.trailingZeroBitCount) &<< UInt64(Node.bitsPerLevel * level)
            if level > 0 { node = node.children[0] }
        }
        return key
    }

    /// The largest key, or `nil` when empty.
    ///
    /// - Complexity: O(h).
    package var maxKey: UInt64? {
        if let tail { return tail.key }
        return root == nil ? nil : maxNodeKey
    }

    /// The largest key in the nodes (the tail aside); the nodes must not be empty.
    ///
    /// - Complexity: O(h).
    var maxNodeKey: UInt64 {
        var node = root!
        var key: UInt64 = 0
        for level in stride(from: height, through: 0, by: -1) {
            let index = UInt64.bitWidth - 1 - node.bitmap.leadingZeroBitCount
            key |= UInt64(index) &<< UInt64(Node.bitsPerLevel * level)
            if level > 0 { node = node.children[node.children.count - 1] }
        }
        return key
    }
}
