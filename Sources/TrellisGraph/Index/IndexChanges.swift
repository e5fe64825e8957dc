import TrellisCore

/// The entries one index gains and loses over a batch of row changes, in the order the rows changed.
///
/// Applying them together sorts them once and merges them into the tree in one pass (see `SortedTree.merge`), where
/// `IndexTree.update` descends the tree once per entry.
struct IndexChanges: Sendable {
    var scalar: [(entry: ScalarEntry, adding: Bool)] = []
    var general: [(entry: IndexEntry, adding: Bool)] = []

    var isEmpty: Bool { scalar.isEmpty && general.isEmpty }
}

/// Recorded index changes in key order, one per key (`IndexTree.netted`): the sorting half of applying them.
struct NettedChanges: Sendable {
    var scalar: [SortedTree<ScalarEntry, Void>.BatchChange] = []
    var general: [SortedTree<IndexEntry, Void>.BatchChange] = []

    init(_ changes: IndexChanges) {
        if !changes.scalar.isEmpty { scalar = IndexTree.netted(changes.scalar) }
        if !changes.general.isEmpty { general = IndexTree.netted(changes.general) }
    }
}
