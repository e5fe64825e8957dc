extension SortedTree {
    /// The first entry whose key is not less than `key`, found in one descent (no ranks, no iterator).
    ///
    /// - Complexity: O(log n).
    func firstEntry(notBelow key: Key) -> (key: Key, value: Value)? {
        guard var node = root else { return nil }
        // The nearest subtree to the right of the descent path holds the answer when the leaf reached has none.
        var nextSubtree: Node?
        while !node.isLeaf {
            let position = node.firstPosition(above: key)
            if position + 1 < node.children.count { nextSubtree = node.children[position + 1] }
            node = node.children[position]
        }
        let position = node.firstPosition(notBelow: key)
        if position < node.keys.count { return (node.keys[position], node.values[position]) }
        guard var subtree = nextSubtree else { return nil }
        while !subtree.isLeaf { subtree = subtree.children[0] }
        return (subtree.keys[0], subtree.values[0])
    }
}
