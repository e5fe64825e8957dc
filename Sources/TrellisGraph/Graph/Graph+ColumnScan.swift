import TrellisCore

extension Graph {
    /// Calls `body` with every leaf of the entity that has matching rows, in ascending key order, with the mask of
    /// its matching rows (bit `r` is serial `key << 6 | r`); rows whose bit is set in `excluded[key]` are left out.
    /// `body` returns false to stop.
    /// - Complexity: O(L × t) for L leaves and t comparisons, each a pass over 64 values of one column.
    package func forEachMatchingLeaf(
        entity: UInt32, where predicate: ColumnPredicate, excluding excluded: [UInt64: UInt64] = [:],
        _ body: (_ key: UInt64, _ leaf: Leaf, _ rows: UInt64) -> Bool
    ) {
        forEachLeaf(entity: entity) { key, leaf in
            var rows = leaf.rows(matching: predicate)
            if !excluded.isEmpty, let out = excluded[key] { rows &= ~out }
            return rows == 0 || body(key, leaf, rows)
        }
    }

    /// The number of live objects of the entity the predicate selects, leaving out the rows set in `excluded`.
    /// - Complexity: O(L × t) for L leaves and t comparisons; allocates nothing.
    package func countRows(
        entity: UInt32, where predicate: ColumnPredicate, excluding excluded: [UInt64: UInt64] = [:]
    ) -> Int {
        var total = 0
        if excluded.isEmpty, case .compare(let attribute, let op, let operand) = predicate {
            // One comparison, nothing excluded (a snapshot's count): the loop W7's `count(where flag == true)` runs,
            // kept free of the predicate's indirect cases, whose boxes cost a retain and a release per leaf.
            forEachLeaf(entity: entity) { _, leaf in
                total &+= leaf.rows(attribute, op, operand).nonzeroBitCount
                return true
            }
            return total
        }
        forEachLeaf(entity: entity) { key, leaf in
            var rows = leaf.rows(matching: predicate)
            if !excluded.isEmpty, let out = excluded[key] { rows &= ~out }
            total &+= rows.nonzeroBitCount
            return true
        }
        return total
    }

    /// Calls `body` with every leaf of the entity in ascending key order until it returns false. Leaves are lent in
    /// place from their trie nodes: the trie's own iteration hands out copies, and a copied leaf costs a retain and a
    /// release of its column and link arrays, more than evaluating a one-term predicate on it.
    private func forEachLeaf(entity: UInt32, _ body: (_ key: UInt64, _ leaf: Leaf) -> Bool) {
        guard Int(entity) < tables.count else { return }
        if let root = tables[Int(entity)].leaves.root {
            guard Self.forEachLeaf(in: root, level: tables[Int(entity)].leaves.height, prefix: 0, body) else { return }
        }
        if let tail = tables[Int(entity)].leaves.tail { _ = body(tail.key, tail.value) }
    }

    private static func forEachLeaf(
        in node: SerialTrieNode<Leaf>, level: Int, prefix: UInt64, _ body: (UInt64, Leaf) -> Bool
    ) -> Bool {
        let shift = UInt64(SerialTrieNode<Leaf>.bitsPerLevel * level)
        var unvisited = node.bitmap
        if level > 0 {
            var position = 0
            while unvisited != 0 {
                let key = prefix | (UInt64(unvisited.trailingZeroBitCount) &<< shift)
                if !forEachLeaf(in: node.children[position], level: level - 1, prefix: key, body) { return false }
                unvisited &= unvisited &- 1
                position += 1
            }
            return true
        }
        return node.items.withUnsafeBufferPointer { items in
            var position = 0
            while unvisited != 0 {
                if !body(prefix | UInt64(unvisited.trailingZeroBitCount), items[position]) { return false }
                unvisited &= unvisited &- 1
                position += 1
            }
            return true
        }
    }

    /// The number of live objects whose attribute equals `value` (`QueryEvaluator`'s equality), or nil when the value
    /// does not fit the attribute's column.
    /// - Complexity: O(L) for L leaves.
    func countRows(entity: UInt32, where attribute: Int, equals value: Value) -> Int? {
        guard Int(entity) < tables.count,
            let operand = ColumnPredicate.Operand(value, for: layout(entity).attributes[attribute].type)
        else { return nil }
        return countRows(entity: entity, where: .compare(attribute: attribute, .equal, operand))
    }
}
