import TrellisCore

extension HashTrie {
    /// Stops the process when the trie's structure is broken; meant for tests, after mutations.
    ///
    /// Checks: the root is absent exactly when the trie is empty and is a bitmap node; item and child maps are
    /// disjoint and agree with the array lengths; every key sits in the slot its hash selects on the path to it; a
    /// collision node holds two or more distinct keys of one hash; the shape is canonical (no node below the root holds
    /// a single pair or only a collision node, and none is empty); the stored count equals the number of keys.
    ///
    /// - Complexity: O(n), plus O(c²) for each collision node of c keys.
    func checkInvariants() {
        guard let root else {
            precondition(storedCount == 0, "HashTrie: no root but count \(storedCount)")
            return
        }
        precondition(!root.isCollision, "HashTrie: the root is a collision node or empty")
        let counted = Self.checkNode(root, shift: 0, prefix: 0, isRoot: true)
        precondition(counted == storedCount, "HashTrie: count \(storedCount) but \(counted) keys in nodes")
    }

    /// Checks the subtree at `node`, whose keys' hashes all start with the `shift` low bits of `prefix`, and returns
    /// its number of keys.
    private static func checkNode(_ node: Node, shift: Int, prefix: UInt64, isRoot: Bool) -> Int {
        let prefixMask: UInt64 = shift >= UInt64.bitWidth ? ~0 : (1 &<< UInt64(shift)) &- 1
        if !isRoot && node.isCollision {
            precondition(node.children.isEmpty, "HashTrie: collision node with children")
            precondition(node.items.count >= 2, "HashTrie: collision node with \(node.items.count) keys")
            let hash = Node.hash(node.items[0].key)
            precondition(hash & prefixMask == prefix, "HashTrie: collision node off its hash prefix")
            for (index, item) in node.items.enumerated() {
                precondition(Node.hash(item.key) == hash, "HashTrie: collision node with different hashes")
                for other in node.items[..<index] {
                    precondition(other.key != item.key, "HashTrie: duplicate key in a collision node")
                }
            }
            return node.items.count
        }

        precondition(shift < UInt64.bitWidth, "HashTrie: bitmap node below the last hash bit")
        precondition(node.itemMap & node.childMap == 0, "HashTrie: a slot holds both a pair and a subtree")
        precondition(node.items.count == node.itemMap.nonzeroBitCount, "HashTrie: item map disagrees with the items")
        precondition(
            node.children.count == node.childMap.nonzeroBitCount, "HashTrie: child map disagrees with the children")
        if !isRoot {
            precondition(!node.isSingleItem, "HashTrie: a node below the root holds a single pair")
            precondition(!node.isCollisionWrapper, "HashTrie: a node holds only a collision node")
        }

        var remaining = node.itemMap
        for item in node.items {
            let hash = Node.hash(item.key)
            precondition(hash & prefixMask == prefix, "HashTrie: key off its node's hash prefix")
            precondition(Node.bit(hash, shift: shift) == remaining & ~(remaining &- 1), "HashTrie: key in a wrong slot")
            remaining &= remaining &- 1
        }

        var total = node.items.count
        remaining = node.childMap
        for child in node.children {
            let slot = UInt64(remaining.trailingZeroBitCount)
            let childPrefix = prefix | (slot &<< UInt64(shift))
            total += checkNode(child, shift: shift + Node.bitsPerLevel, prefix: childPrefix, isRoot: false)
            remaining &= remaining &- 1
        }
        if !isRoot { precondition(total >= 2, "HashTrie: a subtree below the root holds \(total) keys") }
        return total
    }
}
