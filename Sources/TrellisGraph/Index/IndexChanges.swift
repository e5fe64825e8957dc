import TrellisCore

/// The entries one index gains and loses over a batch of row changes, in the order the rows changed.
///
/// Applying them together sorts them once and merges them into the tree in one pass (see `SortedTree.merge`), where
/// `IndexTree.update` descends the tree once per entry.
struct IndexChanges: Sendable {
    var scalar: [(entry: ScalarEntry, adding: Bool)] = []
    var pair: [(entry: PairEntry, adding: Bool)] = []
    var general: [(entry: IndexEntry, adding: Bool)] = []

    var isEmpty: Bool { scalar.isEmpty && pair.isEmpty && general.isEmpty }
}

/// Recorded index changes in key order, one per key (`IndexTree.netted`): the sorting half of applying them.
struct NettedChanges: Sendable {
    var scalar: [SortedTree<ScalarEntry, Void>.BatchChange] = []
    var pair: [SortedTree<PairEntry, Void>.BatchChange] = []
    var general: [SortedTree<IndexEntry, Void>.BatchChange] = []

    init() {}

    init(_ changes: consuming IndexChanges) {
        // Each list is handed over, so a radix sort can let it go before it builds its result.
        let (scalar, pair, general) = (changes.scalar, changes.pair, changes.general)
        changes = IndexChanges()
        if !scalar.isEmpty { self.scalar = IndexTree.netted(consume scalar) }
        if !pair.isEmpty { self.pair = IndexTree.netted(consume pair) }
        if !general.isEmpty { self.general = IndexTree.netted(general) }
    }

    /// Every entity's changes netted, each list emptied as it is taken.
    static func netting(_ changes: inout [[IndexChanges]]) -> [[NettedChanges]] {
        changes.indices.map { e in
            changes[e].indices.map { i in
                let list = changes[e][i]
                changes[e][i] = IndexChanges()
                return NettedChanges(consume list)
            }
        }
    }
}
