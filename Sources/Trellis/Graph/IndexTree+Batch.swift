/// The entries one index gains and loses over a batch of row changes, in the order the rows changed.
///
/// Applying them together sorts them once and merges them into the tree in one pass (see `SortedTree.merge`), where
/// `IndexTree.update` descends the tree once per entry.
struct IndexChanges: Sendable {
    var scalar: [(entry: ScalarEntry, adding: Bool)] = []
    var general: [(entry: IndexEntry, adding: Bool)] = []

    var isEmpty: Bool { scalar.isEmpty && general.isEmpty }
}

extension IndexTree {
    /// Records in `changes` the entry `update(columns, serial:, adding:, value:)` would add or remove.
    func record(
        _ columns: [Int], serial: UInt64, adding: Bool, into changes: inout IndexChanges, value: (Int) -> Value
    ) {
        switch self {
        case .scalar(_, let coding):
            // A value of the wrong case cannot reach a scalar index: commits check types first.
            let entry = ScalarEntry(bits: coding.encode(value(columns[0])) ?? 0, serial: serial)
            changes.scalar.append((entry, adding))
        case .general:
            changes.general.append((IndexEntry(columns.map(value), serial: serial), adding))
        }
    }

    /// Applies recorded changes with the result of calling `update` for each, in order.
    mutating func apply(_ changes: IndexChanges, rebuildRatio: Int = 32) {
        switch self {
        case .scalar(var tree, let coding):
            guard !changes.scalar.isEmpty else { return }
            self = .general(SortedTree())  // release our hold so `tree` is uniquely referenced
            tree.merge(sortedChanges: Self.netted(changes.scalar), rebuildRatio: rebuildRatio)
            self = .scalar(tree, coding)
        case .general(var tree):
            guard !changes.general.isEmpty else { return }
            self = .general(SortedTree())
            tree.merge(sortedChanges: Self.netted(changes.general), rebuildRatio: rebuildRatio)
            self = .general(tree)
        }
    }

    /// The changes in ascending key order, one per key: the last one made to it, which decides whether it ends up
    /// present.
    static func netted<Key: Comparable>(
        _ changes: [(entry: Key, adding: Bool)]
    ) -> [SortedTree<Key, Void>.BatchChange] {
        var ascending = true
        for i in changes.indices.dropFirst() where !(changes[i - 1].entry < changes[i].entry) {
            ascending = false
            break
        }
        if ascending { return changes.map { .init(key: $0.entry, value: $0.adding ? () : nil) } }
        var order = changes.enumerated().map { (entry: $0.element.entry, sequence: $0.offset) }
        order.sort { $0.entry < $1.entry || (!($1.entry < $0.entry) && $0.sequence < $1.sequence) }
        var out: [SortedTree<Key, Void>.BatchChange] = []
        out.reserveCapacity(order.count)
        for (entry, sequence) in order {
            let change = SortedTree<Key, Void>.BatchChange(key: entry, value: changes[sequence].adding ? () : nil)
            if let last = out.last, !(last.key < entry) {
                out[out.count - 1] = change  // a later change to the same key wins
            } else {
                out.append(change)
            }
        }
        return out
    }

    /// Whether two entries hold the same values with none null: what a unique constraint forbids.
    ///
    /// - Complexity: O(n), one walk.
    var holdsDuplicateValues: Bool {
        switch self {
        case .scalar(let tree, _):
            var previous: UInt64?
            var found = false
            tree.forEach { entry, _ in
                if entry.bits == previous { found = true }
                previous = entry.bits
            }
            return found
        case .general(let tree):
            var previous: IndexEntry?
            var found = false
            tree.forEach { entry, _ in
                let hasNull = entry.first.isNull || entry.rest.contains(where: \.isNull)
                if !hasNull, let p = previous, IndexEntry.compareValues(p, entry) == 0 { found = true }
                previous = hasNull ? nil : entry
            }
            return found
        }
    }
}
