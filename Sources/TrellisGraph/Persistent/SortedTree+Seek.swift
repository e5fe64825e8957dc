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
