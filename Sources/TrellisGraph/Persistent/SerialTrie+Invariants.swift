import TrellisCore

extension SerialTrie {
    /// Stops the process when the trie's structure is broken; meant for tests, after mutations.
    ///
    /// Checks: the root is absent exactly when the nodes hold no key and its height is the smallest that fits their
    /// largest key; the tail's key is above every key in the nodes; every node is non-empty; bitmaps agree with the
    /// number of items or children; leaves hold no children and interior nodes no items; the top level uses only the
    /// four slots that 64-bit keys reach; the stored count equals the number of keys, the tail's included; keys come
    /// out strictly ascending and each one is found again by lookup.
    ///
    /// - Complexity: O(n · h).
    func checkInvariants() {
        let nodeCount = storedCount - (tail == nil ? 0 : 1)
        if let tail, root != nil {
            precondition(tail.key > maxNodeKey, "SerialTrie: tail \(tail.key) not above every key in the nodes")
        }
        guard let root else {
            precondition(nodeCount == 0, "SerialTrie: no root but count \(storedCount)")
            precondition(height == 0, "SerialTrie: no root but height \(height)")
            return
        }
        precondition((0...Node.maximumHeight).contains(height), "SerialTrie: height \(height) out of range")
        precondition(height == 0 || root.bitmap & ~1 != 0, "SerialTrie: root taller than its keys need")
        let counted = Self.checkNode(root, level: height)
        precondition(counted == nodeCount, "SerialTrie: count \(storedCount) but \(counted) keys in nodes")

        var previous: UInt64?
        var visited = 0
        forEach { key, _ in
            if let previous { precondition(previous < key, "SerialTrie: keys out of order at \(key)") }
            precondition(contains(key), "SerialTrie: key \(key) is not found where it is stored")
            previous = key
            visited += 1
        }
        precondition(visited == storedCount, "SerialTrie: iteration visits \(visited) of \(storedCount) keys")
    }

    /// Checks the subtree at `node` and returns its number of keys.
    private static func checkNode(_ node: Node, level: Int) -> Int {
        precondition(node.bitmap != 0, "SerialTrie: empty node at level \(level)")
        if level == Node.maximumHeight {
            // Level 10 consumes key bits 60...63 only.
            precondition(node.bitmap >> 16 == 0, "SerialTrie: top-level slot beyond the key width")
        }
        let occupied = node.bitmap.nonzeroBitCount
        if level == 0 {
            precondition(node.children.isEmpty, "SerialTrie: leaf with children")
            let expected = Node.storesItems ? occupied : 0
            precondition(node.items.count == expected, "SerialTrie: leaf bitmap disagrees with its items")
            return occupied
        }
        precondition(node.items.isEmpty, "SerialTrie: interior node with items")
        precondition(node.children.count == occupied, "SerialTrie: bitmap disagrees with the children")
        var total = 0
        for child in node.children {
            total += checkNode(child, level: level - 1)
        }
        return total
    }
}
