import TrellisCore

extension HashTrie {
    /// Gives `body` the value for `key` in place, first inserting `defaultValue()` when the key is absent.
    ///
    /// Only the nodes on the path that other copies share are copied, so an element that is itself a copy-on-write
    /// value stays uniquely referenced and `body` mutates its storage without copying it. If `body` throws, an
    /// inserted default stays inserted, with whatever `body` did to it.
    ///
    /// - Complexity: O(log₃₂ n) expected node visits plus `body`; O(32) more for each shared node on the path.
    mutating func modify<R>(
        _ key: Key,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        if root == nil { root = Node() }
        var inserted = false
        defer {
            if inserted { storedCount += 1 }
        }
        return try Self.modify(
            &root!,
            key: key,
            hash: Node.hash(key),
            shift: 0,
            default: {
                inserted = true
                return defaultValue()
            },
            body)
    }

    /// Stores `value` for `key`, returning the value it replaced.
    ///
    /// - Complexity: O(log₃₂ n) expected node visits; O(32) more for each shared node on the path.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
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

    /// The recursive step of `modify` at a node whose level starts at hash bit `shift`.
    private static func modify<R>(
        _ node: inout Node,
        key: Key,
        hash: UInt64,
        shift: Int,
        default defaultValue: () -> Value,
        _ body: (inout Value) throws -> R
    ) rethrows -> R {
        if shift > 0 && node.isCollision {
            let collisionHash = Node.hash(node.items[0].key)
            guard collisionHash == hash else {
                // The collision node itself stays as it is (and shared, if it was): it moves under a new node.
                node = Node.split(node, collisionHash, (key, defaultValue()), hash, shift: shift)
                return try modify(&node, key: key, hash: hash, shift: shift, default: defaultValue, body)
            }
            if !isKnownUniquelyReferenced(&node) { node = node.copy() }
            guard let position = node.items.firstIndex(where: { $0.key == key }) else {
                node.items.append((key, defaultValue()))
                return try body(&node.items[node.items.count - 1].value)
            }
            return try body(&node.items[position].value)
        }

        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let bit = Node.bit(hash, shift: shift)
        let childShift = shift + Node.bitsPerLevel
        if node.childMap & bit != 0 {
            let position = node.childPosition(bit)
            return try modify(
                &node.children[position], key: key, hash: hash, shift: childShift, default: defaultValue, body)
        }
        let position = node.itemPosition(bit)
        guard node.itemMap & bit != 0 else {
            node.itemMap |= bit
            node.items.insertGrowingSlowly((key, defaultValue()), at: position)
            return try body(&node.items[position].value)
        }
        if node.items[position].key == key { return try body(&node.items[position].value) }

        // Another key owns the slot: both move into a new subtree, where the walk goes on to find the new one.
        let resident = node.items.remove(at: position)
        node.itemMap &= ~bit
        let child = Node.pair(resident, Node.hash(resident.key), (key, defaultValue()), hash, shift: childShift)
        let childPosition = node.childPosition(bit)
        node.childMap |= bit
        node.children.insertGrowingSlowly(child, at: childPosition)
        return try modify(
            &node.children[childPosition], key: key, hash: hash, shift: childShift, default: defaultValue, body)
    }

    /// Removes `key`, returning its value. An absent key copies nothing.
    ///
    /// Nodes left with a single pair fold into their parent, and a node left holding only a collision node is
    /// replaced by it, so the shape stays canonical.
    ///
    /// - Complexity: O(log₃₂ n) expected node visits; O(32) more for each node on the path.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        let hash = Node.hash(key)
        guard let removed = item(forKey: key, hash: hash) else { return nil }
        Self.remove(key, hash: hash, shift: 0, from: &root!)
        storedCount -= 1
        if storedCount == 0 { root = nil }
        return removed.value
    }

    /// The stored pair for `key`. A separate function so that no binding of the root outlives the lookup and spoils
    /// the uniqueness check of the removal that follows.
    private func item(forKey key: Key, hash: UInt64) -> Node.Item? {
        guard let root else { return nil }
        return Self.find(key, hash: hash, in: root)
    }

    /// The recursive step of `removeValue`; `key` must be present under `node`.
    private static func remove(_ key: Key, hash: UInt64, shift: Int, from node: inout Node) {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        if shift > 0 && node.isCollision {
            node.items.removeAll { $0.key == key }
            return
        }
        let bit = Node.bit(hash, shift: shift)
        if node.itemMap & bit != 0 {
            node.items.remove(at: node.itemPosition(bit))
            node.itemMap &= ~bit
            return
        }
        let position = node.childPosition(bit)
        remove(key, hash: hash, shift: shift + Node.bitsPerLevel, from: &node.children[position])
        let child = node.children[position]
        if child.isSingleItem {
            node.children.remove(at: position)
            node.childMap &= ~bit
            node.items.insertGrowingSlowly(child.items[0], at: node.itemPosition(bit))
            node.itemMap |= bit
        } else if child.isCollisionWrapper {
            node.children[position] = child.children[0]
        }
    }
}
