import TrellisCore

extension SerialTrie {
    /// Gives `body` the value for `key` in place, first inserting `defaultValue()` when the key is absent.
    ///
    /// Only the nodes on the path that other copies share are copied, so an element that is itself a copy-on-write
    /// value (a struct of arrays, say) stays uniquely referenced and `body` mutates its storage without copying it.
    /// If `body` throws, an inserted default stays inserted, with whatever `body` did to it.
    ///
    /// - Complexity: O(h) node visits (h ≤ 11) plus `body`; O(64) more for each shared node on the path and for an
    ///   insertion.
    package mutating func modify<R>(
        _ key: UInt64,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        if tail?.key == key { return try body(&tail!.value) }
        // The nodes hold only keys below the tail's.
        if let previous = tail, key > previous.key { moveTailIntoNodes() }
        return try modifyInNodes(key, default: defaultValue, body)
    }

    /// `modify(_:default:_:)` for keys that mostly come in ascending order: a key above every other one becomes the
    /// tail (the tail it replaces goes into the nodes), and later writes to it copy no node.
    ///
    /// - Complexity: O(1) plus `body` for the tail's key; O(h) node visits for a new largest key, with O(64) more
    ///   for each shared node on the path of the tail going into the nodes; otherwise as `modify`.
    package mutating func modifyKeepingTail<R>(
        _ key: UInt64,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        if tail?.key == key { return try body(&tail!.value) }
        guard tail.map({ key > $0.key }) ?? (root == nil || key > maxNodeKey) else {
            return try modifyInNodes(key, default: defaultValue, body)
        }
        moveTailIntoNodes()
        tail = Tail(key: key, value: defaultValue())
        storedCount += 1
        return try body(&tail!.value)
    }

    /// Puts the tail's entry into the nodes, leaving no tail.
    ///
    /// - Complexity: O(h) node visits, O(64) more for each shared node on the path.
    private mutating func moveTailIntoNodes() {
        guard let previous = tail else { return }
        tail = nil
        storedCount -= 1
        modifyInNodes(previous.key, default: { previous.value }, { _ in })
    }

    /// `modify` in the nodes: `key` must be below the tail's.
    private mutating func modifyInNodes<R>(
        _ key: UInt64,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        makeRoom(for: key)
        var inserted = false
        defer {
            if inserted { storedCount += 1 }
        }
        return try Self.modify(
            &root!,
            level: height,
            key: key,
            default: {
                inserted = true
                return defaultValue()
            },
            body)
    }

    /// Stores `value` for `key`, returning the value it replaced.
    ///
    /// - Complexity: O(h) node visits (h ≤ 11); O(64) more for each shared node on the path and for an insertion.
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: UInt64) -> Value? {
        var inserted = false
        return modify(
            key,
            default: {
                inserted = true
                return value
            },
            { current in
                guard !inserted else { return nil }
                defer { current = value }
                return current
            })
    }

    /// Removes `key`, returning its value. An absent key copies nothing.
    ///
    /// - Complexity: O(h) node visits (h ≤ 11); O(64) more for each node on the path.
    @discardableResult
    package mutating func removeValue(forKey key: UInt64) -> Value? {
        if let previous = tail, previous.key == key {
            tail = nil
            storedCount -= 1
            return previous.value
        }
        guard nodesContain(key) else { return nil }
        let removed = Self.remove(&root!, level: height, key: key)
        storedCount -= 1
        shrinkRoot()
        return removed
    }

    /// Ensures a root exists and is tall enough for `key`, by stacking new roots that hold the old one in slot 0.
    ///
    /// - Complexity: O(h).
    private mutating func makeRoom(for key: UInt64) {
        let needed = Self.height(for: key)
        guard let current = root else {
            // Left empty on purpose: the descent that follows fills it at once.
            root = Node()
            height = needed
            return
        }
        var grown = current
        while height < needed {
            grown = Node(bitmap: 1, children: [grown])
            height += 1
        }
        root = grown
    }

    /// Restores the canonical root after a removal: none when empty, and no root whose only child is in slot 0.
    ///
    /// - Complexity: O(h).
    private mutating func shrinkRoot() {
        guard var node = root, node.bitmap != 0 else {
            root = nil
            height = 0
            return
        }
        while height > 0 && node.bitmap == 1 {
            node = node.children[0]
            height -= 1
        }
        root = node
    }

    /// The recursive step of `modify`: makes `node` unique, adds what is missing on the path, then calls `body`.
    private static func modify<R>(
        _ node: inout Node,
        level: Int,
        key: UInt64,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let index = Node.index(of: key, level: level)
        let bit: UInt64 = 1 &<< UInt64(index)
        let position = node.position(ofSlot: index)
        if node.bitmap & bit == 0 {
            node.bitmap |= bit
            if level == 0 {
                node.insertItem(defaultValue(), at: position)
            } else {
                // Empty only until the recursive call below inserts into it.
                node.children.insertGrowingSlowly(Node(), at: position)
            }
        }
        if level == 0 { return try node.modifyItem(at: position, body) }
        return try modify(&node.children[position], level: level - 1, key: key, default: defaultValue, body)
    }

    /// The recursive step of `removeValue`; `key` must be present. Drops nodes that become empty.
    private static func remove(_ node: inout Node, level: Int, key: UInt64) -> Value {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let index = Node.index(of: key, level: level)
        let bit: UInt64 = 1 &<< UInt64(index)
        let position = node.position(ofSlot: index)
        if level == 0 {
            let removed = node.item(at: position)
            node.removeItem(at: position)
            node.bitmap &= ~bit
            return removed
        }
        let removed = remove(&node.children[position], level: level - 1, key: key)
        if node.children[position].bitmap == 0 {
            node.children.remove(at: position)
            node.bitmap &= ~bit
        }
        return removed
    }
}
