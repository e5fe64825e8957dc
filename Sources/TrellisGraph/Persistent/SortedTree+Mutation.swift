import TrellisCore

extension SortedTree {
    /// Stores `value` for `key`, returning the value it replaced.
    ///
    /// A full node splits in two on the way back up; a full root gains a new root above it.
    ///
    /// - Complexity: O(log n) node visits, O(fanout) work in each node on the path (shifting within arrays, and
    ///   copying the nodes that other copies share).
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if let position = pending.position(of: key) {
            let replaced = pending.values[position]
            pending.values[position] = value
            return replaced
        }
        guard root != nil else {
            root = Node(keys: [key], values: [value])
            storedCount = 1
            return nil
        }
        var split: Node.Split?
        let replaced = Self.insert(value, forKey: key, into: &root!, fanout: fanout, split: &split)
        if replaced == nil { storedCount += 1 }
        if let split {
            root = Node(
                keys: [split.separator],
                children: [root!, split.node],
                counts: [storedCount - split.count, split.count])
        }
        return replaced
    }

    /// The recursive step of `updateValue`. Reports in `split` the upper half of `node` when the insertion overfilled
    /// it.
    private static func insert(
        _ value: Value,
        forKey key: Key,
        into node: inout Node,
        fanout: Int,
        split: inout Node.Split?
    ) -> Value? {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        if node.isLeaf {
            let position = node.firstPosition(notBelow: key)
            if position < node.keys.count && node.keys[position] == key {
                let replaced = node.values[position]
                node.values[position] = value
                return replaced
            }
            node.keys.insertGrowingSlowly(key, at: position)
            node.values.insertGrowingSlowly(value, at: position)
            if node.keys.count > fanout { split = node.splitOff() }
            return nil
        }

        let position = node.firstPosition(above: key)
        var childSplit: Node.Split?
        let replaced = insert(value, forKey: key, into: &node.children[position], fanout: fanout, split: &childSplit)
        if replaced == nil { node.counts[position] += 1 }
        if let childSplit {
            node.keys.insertGrowingSlowly(childSplit.separator, at: position)
            node.children.insertGrowingSlowly(childSplit.node, at: position + 1)
            node.counts[position] -= childSplit.count
            node.counts.insertGrowingSlowly(childSplit.count, at: position + 1)
            if node.children.count > branching(fanout) { split = node.splitOff() }
        }
        return replaced
    }

    /// Removes `key`, returning its value. An absent key copies nothing.
    ///
    /// A node that falls below half full on the way back up is combined with a neighbour: merged into one node when
    /// the two fit, otherwise split evenly between them. A root left with one child is replaced by it.
    ///
    /// - Complexity: O(log n) node visits, O(fanout) work in each node on the path.
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        if let position = pending.position(of: key) {
            pending.keys.remove(at: position)
            return pending.values.remove(at: position)
        }
        guard nodesContain(key) else { return nil }
        let removed = Self.remove(key, from: &root!, fanout: fanout)
        storedCount -= 1
        if storedCount == 0 {
            root = nil
        } else {
            while let node = root, !node.isLeaf, node.children.count == 1 { root = node.children[0] }
        }
        return removed
    }

    /// The recursive step of `removeValue`; `key` must be present under `node`.
    private static func remove(_ key: Key, from node: inout Node, fanout: Int) -> Value {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        if node.isLeaf {
            let position = node.firstPosition(notBelow: key)
            node.keys.remove(at: position)
            return node.values.remove(at: position)
        }
        let position = node.firstPosition(above: key)
        let removed = remove(key, from: &node.children[position], fanout: fanout)
        node.counts[position] -= 1
        if node.children[position].fill < capacity(of: node.children[position], fanout: fanout) / 2 {
            rebalance(node, at: position, fanout: fanout)
        }
        return removed
    }

    /// Restores the fill of `parent.children[position]` by combining it with a neighbour.
    ///
    /// - Complexity: O(fanout).
    @inline(never)
    private static func rebalance(_ parent: Node, at position: Int, fanout: Int) {
        // Combine the pair (left, left + 1) that contains the underfull child; only the left node is written.
        let leftPosition = position > 0 ? position - 1 : position
        let rightPosition = leftPosition + 1
        if !isKnownUniquelyReferenced(&parent.children[leftPosition]) {
            parent.children[leftPosition] = parent.children[leftPosition].copy()
        }
        let left = parent.children[leftPosition]
        let right = parent.children[rightPosition]
        let total = parent.counts[leftPosition] + parent.counts[rightPosition]
        // Exact reservations: appending would double the buffers, and a merged node stays this size for a while.
        if left.isLeaf {
            left.keys.reserveCapacity(left.keys.count + right.keys.count)
            left.keys += right.keys
            left.values.reserveCapacity(left.values.count + right.values.count)
            left.values += right.values
        } else {
            left.keys.reserveCapacity(left.keys.count + 1 + right.keys.count)
            left.keys.append(parent.keys[leftPosition])
            left.keys += right.keys
            left.children.reserveCapacity(left.children.count + right.children.count)
            left.children += right.children
            left.counts.reserveCapacity(left.counts.count + right.counts.count)
            left.counts += right.counts
        }

        guard left.fill > capacity(of: left, fanout: fanout) else {
            parent.keys.remove(at: leftPosition)
            parent.children.remove(at: rightPosition)
            parent.counts.remove(at: rightPosition)
            parent.counts[leftPosition] = total
            return
        }
        let split = left.splitOff()
        parent.keys[leftPosition] = split.separator
        parent.children[rightPosition] = split.node
        parent.counts[leftPosition] = total - split.count
        parent.counts[rightPosition] = split.count
    }
}
