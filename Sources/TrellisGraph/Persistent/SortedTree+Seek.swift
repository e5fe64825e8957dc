import TrellisCore

extension SortedTree {
    /// The first entry whose key is not less than `key`, found in one descent (no ranks, no iterator).
    ///
    /// - Complexity: O(log n).
    package func firstEntry(notBelow key: Key) -> (key: Key, value: Value)? {
        let inNodes = firstNodeEntry(notBelow: key)
        guard !pending.isEmpty else { return inNodes }
        let position = pending.position(notBelow: key)
        guard position < pending.count else { return inNodes }
        if let inNodes, inNodes.key < pending.keys[position] { return inNodes }
        return (pending.keys[position], pending.values[position])
    }

    /// `firstEntry(notBelow:)` among the nodes' entries alone.
    ///
    /// - Complexity: O(log n).
    private func firstNodeEntry(notBelow key: Key) -> (key: Key, value: Value)? {
        firstNodeEntry(child: { $0.firstPosition(above: key) }, inLeaf: { $0.firstPosition(notBelow: key) })
    }

    /// The first entry among the nodes' at or after a sought place, in one descent: `child` gives, in an internal node,
    /// the position of the child whose range holds the place, and `inLeaf`, in the leaf reached, the place's position
    /// (its key count when the place is past its keys; then the answer is the first entry of the nearest subtree to
    /// the right of the descent path).
    ///
    /// - Complexity: O(log n) calls of `child` and one of `inLeaf`.
    @inline(__always)
    func firstNodeEntry(child: (Node) -> Int, inLeaf: (Node) -> Int) -> (key: Key, value: Value)? {
        guard let root else { return nil }
        // Every node below the root lives as long as the root does, so the descent holds only the root and visits
        // the others unretained: a retain and a release per level were a third of a lookup.
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            var nextSubtree: Unmanaged<Node>?
            while true {
                let step: Unmanaged<Node>? = node._withUnsafeGuaranteedRef { n in
                    if n.isLeaf { return nil }
                    let position = child(n)
                    return n.children.withUnsafeBufferPointer { children in
                        if position + 1 < children.count {
                            nextSubtree = Unmanaged.passUnretained(children[position + 1])
                        }
                        return Unmanaged.passUnretained(children[position])
                    }
                }
                guard let step else { break }
                node = step
            }
            let found: (key: Key, value: Value)? = node._withUnsafeGuaranteedRef { leaf in
                let position = inLeaf(leaf)
                return position < leaf.keys.count ? (leaf.keys[position], leaf.values[position]) : nil
            }
            if let found { return found }
            guard var subtree = nextSubtree else { return nil }
            while true {
                let step: Unmanaged<Node>? = subtree._withUnsafeGuaranteedRef { n in
                    n.isLeaf ? nil : Unmanaged.passUnretained(n.children[0])
                }
                guard let step else { break }
                subtree = step
            }
            return subtree._withUnsafeGuaranteedRef { ($0.keys[0], $0.values[0]) }
        }
    }
}

extension SortedTree where Key == ScalarEntry {
    /// The first key whose bits are not below `bits`: `firstEntry(notBelow: ScalarEntry(bits: bits, serial: 0))`'s
    /// key, found comparing the bits alone. Keys ascend by bits first, so those below `bits` are a prefix of every node
    /// and counting them is a branchless pass; the general search compares two words a key with a branch each.
    ///
    /// - Complexity: O(log n).
    package func firstKey(bitsNotBelow bits: UInt64) -> ScalarEntry? {
        let inNodes = firstNodeKey(bitsNotBelow: bits)
        guard !pending.isEmpty else { return inNodes }
        let position = pending.position(notBelow: ScalarEntry(bits: bits, serial: 0))
        guard position < pending.count else { return inNodes }
        if let inNodes, inNodes < pending.keys[position] { return inNodes }
        return pending.keys[position]
    }

    /// `firstKey(bitsNotBelow:)` among the nodes' keys alone. Child i of an internal node holds the keys from
    /// separator i - 1 up to separator i, so the first key not below `bits` is in the child after the separators
    /// below it, or else first in the next subtree.
    ///
    /// - Complexity: O(log n).
    private func firstNodeKey(bitsNotBelow bits: UInt64) -> ScalarEntry? {
        firstNodeEntry(child: { Self.count(in: $0, below: bits) }, inLeaf: { Self.count(in: $0, below: bits) })?.key
    }

    /// `count(_:below:)` of a node's keys.
    @inline(__always)
    static func count(in node: Node, below bits: UInt64) -> Int {
        node.keys.withUnsafeBufferPointer { count($0, below: bits) }
    }

    /// The number of keys whose bits are below `bits`, in keys sorted by bits: the last key of each group of four
    /// first (tests that do not wait on each other, so a node out of cache costs its misses at once, as
    /// `SortedTreeNode.block` does), then the first three keys of the group that holds the answer.
    ///
    /// - Complexity: O(k / 4 + 3) comparisons for k keys, without branches on their outcome.
    @inline(__always)
    static func count(_ keys: UnsafeBufferPointer<ScalarEntry>, below bits: UInt64) -> Int {
        let n = keys.count
        var groups = 0
        var last = 3
        while last < n {
            groups &+= keys[last].bits < bits ? 1 : 0
            last &+= 4
        }
        // Every key of the first `groups` groups is below; of the next group, the fourth is not (or is past the end).
        let start = groups &* 4
        let end = Swift.min(start &+ 3, n)
        var below = start
        var i = start
        while i < end {
            below &+= keys[i].bits < bits ? 1 : 0
            i &+= 1
        }
        return below
    }
}
