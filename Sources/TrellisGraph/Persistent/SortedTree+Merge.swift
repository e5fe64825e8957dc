import TrellisCore

extension SortedTree {
    /// One change of a batch: store `value` for `key`, or remove `key` when `value` is nil.
    package struct BatchChange {
        var key: Key
        var value: Value?
    }

    /// Applies changes given in strictly ascending key order, with the same result as applying them one at a time
    /// with `updateValue(_:forKey:)` and `removeValue(forKey:)`.
    ///
    /// A batch small against the tree goes key by key, copying only the paths it touches. A larger one walks the tree
    /// once, merging the batch into the entries, and builds a new tree of full nodes from the result: no splits, no
    /// per-key descents, and nodes that are written once.
    ///
    /// - Parameter rebuildRatio: the batch rebuilds the tree when `changes.count * rebuildRatio >= count`.
    /// - Complexity: O(k log n) for a small batch of k changes, O(n + k) for a large one.
    /// Changes handed over (`consume`) are let go, with the old nodes this tree alone held, before the new nodes are
    /// built: a big batch then never holds the changes, the entries and the new tree at once.
    package mutating func merge(sortedChanges changes: consuming [BatchChange], rebuildRatio: Int = 32) {
        guard !changes.isEmpty else { return }
        foldPending()
        guard changes.count * rebuildRatio >= storedCount else {
            for change in changes {
                if let value = change.value {
                    updateValue(value, forKey: change.key)
                } else {
                    removeValue(forKey: change.key)
                }
            }
            return
        }
        var keys = ContiguousArray<Key>()
        var values = NodeValues<Value>()
        keys.reserveCapacity(storedCount + changes.count)
        values.reserveCapacity(storedCount + changes.count)
        // Entries of the tree interleaved with the batch: a change replaces (or drops) an entry with its key. Plain
        // loops over the leaves: a nested function and closure that shared these variables made every access to
        // them a run-time exclusivity check.
        var leaves: [Node] = []
        forEachLeaf { leaves.append($0) }
        var next = 0
        changes.withUnsafeBufferPointer { changes in
            for leaf in leaves {
                leaf.keys.withUnsafeBufferPointer { leafKeys in
                    leaf.values.withUnsafeBufferPointer { leafValues in
                        for position in leafKeys.indices {
                            let key = leafKeys[position]
                            while next < changes.count, changes[next].key < key {
                                if let value = changes[next].value {
                                    keys.append(changes[next].key)
                                    values.append(value)
                                }
                                next += 1
                            }
                            // A change to this very key replaces the entry; it is taken before the next one.
                            if next < changes.count, changes[next].key == key { continue }
                            keys.append(key)
                            values.append(leafValues[position])
                        }
                    }
                }
            }
            while next < changes.count {
                if let value = changes[next].value {
                    keys.append(changes[next].key)
                    values.append(value)
                }
                next += 1
            }
        }
        changes = []
        leaves = []
        root = nil
        storedCount = keys.count
        root = Self.buildFull(keys: keys, values: values, fanout: fanout)
    }

    /// Calls `body` with the keys and values of every leaf, left to right.
    private func forEachLeaf(_ body: (Node) -> Void) {
        guard let root else { return }
        func walk(_ node: Node) {
            guard node.isLeaf else {
                for child in node.children { walk(child) }
                return
            }
            body(node)
        }
        walk(root)
    }

    /// A tree of the given entries (strictly ascending keys), its nodes as full as the fill bounds allow: every level
    /// splits into as few nodes as fit, of sizes that differ by one at most, so none falls below half full.
    ///
    /// - Complexity: O(n).
    private static func buildFull(keys: ContiguousArray<Key>, values: NodeValues<Value>, fanout: Int) -> Node? {
        guard !keys.isEmpty else { return nil }
        var level: [(node: Node, first: Key, count: Int)] = []
        for range in evenRuns(keys.count, fanout: fanout) {
            let node = Node(keys: ContiguousArray(keys[range]), values: values.slice(range))
            level.append((node, keys[range.lowerBound], range.count))
        }
        while level.count > 1 {
            var above: [(node: Node, first: Key, count: Int)] = []
            above.reserveCapacity(level.count / branching(fanout) + 1)
            for range in evenRuns(level.count, fanout: branching(fanout)) {
                var separators = ContiguousArray<Key>()
                var children = ContiguousArray<Node>()
                var counts = ContiguousArray<Int>()
                separators.reserveCapacity(range.count - 1)
                children.reserveCapacity(range.count)
                counts.reserveCapacity(range.count)
                var total = 0
                for i in range {
                    if i > range.lowerBound { separators.append(level[i].first) }
                    children.append(level[i].node)
                    counts.append(level[i].count)
                    total += level[i].count
                }
                let node = Node(keys: separators, children: children, counts: counts)
                above.append((node, level[range.lowerBound].first, total))
            }
            level = above
        }
        return level[0].node
    }

    /// `count` items cut into the fewest runs of at most `fanout`, whose lengths differ by one at most.
    private static func evenRuns(_ count: Int, fanout: Int) -> [Range<Int>] {
        let runs = (count + fanout - 1) / fanout
        let base = count / runs
        let longer = count % runs
        var out: [Range<Int>] = []
        out.reserveCapacity(runs)
        var start = 0
        for r in 0..<runs {
            let length = base + (r < longer ? 1 : 0)
            out.append(start..<(start + length))
            start += length
        }
        return out
    }
}

extension SortedTree.BatchChange: Sendable where Key: Sendable, Value: Sendable {}
