import TrellisCore

extension SortedTree {
    /// Stops the process when the tree's structure is broken; meant for tests, after mutations.
    ///
    /// Checks: the root is absent exactly when the tree is empty, a root leaf is not empty and a root internal node
    /// has two children or more; every other node is between half full and full; keys ascend strictly within a node;
    /// every key and separator lies within the bounds its ancestors' separators set; the arrays of each kind agree in
    /// length; every subtree count is right; all leaves are at one depth; the stored count is the number of entries in
    /// the nodes; the pending run ascends strictly and shares no key with the nodes.
    ///
    /// - Complexity: O(n).
    func checkInvariants() {
        precondition(pending.keys.count == pending.values.count, "SortedTree: pending keys and values disagree")
        for (position, key) in pending.keys.enumerated() {
            if position > 0 { precondition(pending.keys[position - 1] < key, "SortedTree: pending keys out of order") }
            precondition(!nodesContain(key), "SortedTree: a pending key is in the nodes too")
        }
        guard let root else {
            precondition(storedCount == 0, "SortedTree: no root but count \(storedCount)")
            return
        }
        precondition(root.isLeaf ? !root.keys.isEmpty : root.children.count >= 2, "SortedTree: degenerate root")
        var leafDepth: Int?
        let counted = Self.checkNode(
            root, depth: 0, lower: nil, upper: nil, isRoot: true, fanout: fanout, leafDepth: &leafDepth)
        precondition(counted == storedCount, "SortedTree: count \(storedCount) but \(counted) entries in nodes")
    }

    /// Checks the subtree at `node`, whose keys must lie in `lower..<upper` (a `nil` bound is open), and returns its
    /// number of entries.
    private static func checkNode(
        _ node: Node,
        depth: Int,
        lower: Key?,
        upper: Key?,
        isRoot: Bool,
        fanout: Int,
        leafDepth: inout Int?
    ) -> Int {
        let capacity = capacity(of: node, fanout: fanout)
        precondition(node.fill <= capacity, "SortedTree: node over full at depth \(depth)")
        precondition(isRoot || node.fill >= capacity / 2, "SortedTree: node under half full at depth \(depth)")
        for (position, key) in node.keys.enumerated() {
            if position > 0 { precondition(node.keys[position - 1] < key, "SortedTree: keys out of order") }
            if let lower { precondition(lower <= key, "SortedTree: key below its subtree's separator") }
            if let upper { precondition(key < upper, "SortedTree: key not below the next separator") }
        }

        if node.isLeaf {
            precondition(node.values.count == node.keys.count, "SortedTree: leaf keys and values disagree")
            precondition(node.counts.isEmpty, "SortedTree: leaf with counts")
            if let leafDepth {
                precondition(leafDepth == depth, "SortedTree: leaves at depths \(leafDepth) and \(depth)")
            } else {
                leafDepth = depth
            }
            return node.keys.count
        }

        precondition(node.values.isEmpty, "SortedTree: internal node with values")
        precondition(node.keys.count == node.children.count - 1, "SortedTree: separators disagree with children")
        precondition(node.counts.count == node.children.count, "SortedTree: counts disagree with children")
        var total = 0
        for (position, child) in node.children.enumerated() {
            let childLower = position == 0 ? lower : node.keys[position - 1]
            let childUpper = position == node.keys.count ? upper : node.keys[position]
            let entries = checkNode(
                child, depth: depth + 1, lower: childLower, upper: childUpper, isRoot: false, fanout: fanout,
                leafDepth: &leafDepth)
            precondition(entries == node.counts[position], "SortedTree: wrong subtree count at depth \(depth)")
            total += entries
        }
        return total
    }
}
