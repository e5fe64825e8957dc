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
        guard let root else { return nil }
        // Every node below the root lives as long as the root does, so the descent holds only the root and visits
        // the others unretained: a retain and a release per level were a third of a lookup.
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            // The nearest subtree to the right of the descent path holds the answer when the leaf reached has none.
            var nextSubtree: Unmanaged<Node>?
            while true {
                let step: Unmanaged<Node>? = node._withUnsafeGuaranteedRef { n in
                    if n.isLeaf { return nil }
                    let position = n.firstPosition(above: key)
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
                let position = leaf.firstPosition(notBelow: key)
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

    /// `firstKey(bitsNotBelow:)` among the nodes' keys alone.
    ///
    /// - Complexity: O(log n).
    private func firstNodeKey(bitsNotBelow bits: UInt64) -> ScalarEntry? {
        guard let root else { return nil }
        // As in `firstNodeEntry(notBelow:)`: the nodes below the root live as long as it does.
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            var nextSubtree: Unmanaged<Node>?
            while true {
                let step: Unmanaged<Node>? = node._withUnsafeGuaranteedRef { n in
                    if n.isLeaf { return nil }
                    // Child i holds the keys from separator i - 1 up to separator i: the first key not below `bits`
                    // is in the child after the separators below it, or else first in the next subtree.
                    let position = n.keys.withUnsafeBufferPointer { Self.count($0, below: bits) }
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
            let found: ScalarEntry? = node._withUnsafeGuaranteedRef { leaf in
                leaf.keys.withUnsafeBufferPointer { keys in
                    let position = Self.count(keys, below: bits)
                    return position < keys.count ? keys[position] : nil
                }
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
            return subtree._withUnsafeGuaranteedRef { $0.keys[0] }
        }
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
