extension SortedTree {
    /// A tree holding `keys[i] → values[i]`, built bottom-up in one pass: full leaves and full internal nodes, each
    /// array allocated at its exact size. `keys` must be strictly ascending and `values` as long.
    ///
    /// Every node is full except the last one or two of each level, which share their entries evenly when the last
    /// would otherwise be under half full, so the tree meets every invariant of one built by inserts (at about twice
    /// the fill that ascending inserts leave).
    ///
    /// - Complexity: O(n).
    init(ascendingKeys keys: ContiguousArray<Key>, values: ContiguousArray<Value>, fanout: Int = Self.defaultFanout) {
        precondition(keys.count == values.count, "SortedTree: \(keys.count) keys but \(values.count) values")
        self.init(fanout: fanout)
        guard !keys.isEmpty else { return }
        storedCount = keys.count
        var level: [(first: Key, node: Node, count: Int)] = []
        level.reserveCapacity(keys.count / fanout + 1)
        for range in Self.runs(keys.count, fanout: fanout) {
            let node = Node(keys: ContiguousArray(keys[range]), values: ContiguousArray(values[range]))
            level.append((keys[range.lowerBound], node, range.count))
        }
        root = Self.assemble(level, fanout: fanout)
    }

    /// A tree of the first `count` entries of `entries`, which must ascend strictly by key: the same tree as
    /// `init(ascendingKeys:values:fanout:)` builds, without an array of all the keys first.
    ///
    /// - Complexity: O(n).
    init<S: Sequence<(Key, Value)>>(ascending entries: S, count: Int, fanout: Int = Self.defaultFanout) {
        self.init(fanout: fanout)
        guard count > 0 else { return }
        var iterator = entries.makeIterator()
        var level: [(first: Key, node: Node, count: Int)] = []
        level.reserveCapacity(count / fanout + 1)
        for range in Self.runs(count, fanout: fanout) {
            var keys = ContiguousArray<Key>()
            keys.reserveCapacity(range.count)
            var values = ContiguousArray<Value>()
            values.reserveCapacity(range.count)
            for _ in range {
                guard let (key, value) = iterator.next() else { preconditionFailure("SortedTree: fewer than \(count)") }
                keys.append(key)
                values.append(value)
            }
            level.append((keys[0], Node(keys: keys, values: values), range.count))
        }
        storedCount = count
        root = Self.assemble(level, fanout: fanout)
    }

    /// Builds the internal levels above `level` (the leaves, left to right) and returns the root.
    private static func assemble(_ leaves: [(first: Key, node: Node, count: Int)], fanout: Int) -> Node {
        var level = leaves
        while level.count > 1 {
            var parents: [(first: Key, node: Node, count: Int)] = []
            parents.reserveCapacity(level.count / branching(fanout) + 1)
            for range in Self.runs(level.count, fanout: branching(fanout)) {
                var separators = ContiguousArray<Key>()
                separators.reserveCapacity(range.count - 1)
                var children = ContiguousArray<Node>()
                children.reserveCapacity(range.count)
                var counts = ContiguousArray<Int>()
                counts.reserveCapacity(range.count)
                var total = 0
                for i in range {
                    if i != range.lowerBound { separators.append(level[i].first) }
                    children.append(level[i].node)
                    counts.append(level[i].count)
                    total += level[i].count
                }
                parents.append(
                    (level[range.lowerBound].first, Node(keys: separators, children: children, counts: counts), total))
            }
            level = parents
        }
        return level[0].node
    }

    /// Cuts `count` entries into runs of `fanout`; when the last run would be under half full, the last two share
    /// their entries evenly (both then hold at least half). One run of any size when `count` fits in one node.
    static func runs(_ count: Int, fanout: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        runs.reserveCapacity(count / fanout + 1)
        var start = 0
        while start < count {
            runs.append(start..<Swift.min(start + fanout, count))
            start += fanout
        }
        if runs.count >= 2, runs[runs.count - 1].count < fanout / 2 {
            let lower = runs[runs.count - 2].lowerBound
            let total = count - lower
            let middle = lower + total / 2
            runs[runs.count - 2] = lower..<middle
            runs[runs.count - 1] = middle..<count
        }
        return runs
    }
}
