/// Row changes applied a leaf at a time, with index changes gathered for one sorted merge per index at the end.
///
/// Each method does what the one-row mutations in `EntityTable.swift` do for every row of the run, in order, except
/// that index entries go to `changes` instead of the trees; `IndexTree.apply` then gives the trees the state the
/// one-row path leaves.
extension EntityTable {
    /// Why a row of a batch was refused.
    enum BatchFailure: Error {
        case wrongValueCount(Int)
        /// The object exists already, or a value does not fit its column.
        case refused(Int)
    }

    /// Inserts `inserts[run]`, whose serials all fall in one leaf; stops at the first row it refuses and reports it.
    /// The rows before it stay inserted (with their index entries recorded).
    mutating func insertRun(
        _ inserts: [ChangeSet.Insert], _ run: Range<Int>, layout: EntityLayout, changes: inout [IndexChanges]
    ) -> BatchFailure? {
        let (l, _) = Self.split(inserts[run.lowerBound].id.serial)
        var failure: BatchFailure?
        var end = run.lowerBound
        leaves.modify(l, default: { Leaf(layout) }) { leaf in
            for p in run {
                let values = inserts[p].values
                guard values.count == layout.attributes.count else {
                    failure = .wrongValueCount(p)
                    return
                }
                let r = Int(inserts[p].id.serial & Leaf.mask)
                guard !leaf.contains(r) else {
                    failure = .refused(p)
                    return
                }
                for c in values.indices where !leaf.columns[c].set(r, values[c]) {
                    failure = .refused(p)
                    return
                }
                leaf.present |= 1 << UInt64(r)
                end = p + 1
            }
        }
        if failure != nil, let leaf = leaves[l], leaf.present == 0 { leaves.removeValue(forKey: l) }
        count += end - run.lowerBound
        for p in run.lowerBound..<end {
            let serial = inserts[p].id.serial
            maxSerial = max(maxSerial, serial)
            for (i, index) in layout.indexes.enumerated() {
                indexes[i].record(index.columns, serial: serial, adding: true, into: &changes[i]) {
                    inserts[p].values[$0]
                }
            }
        }
        return failure
    }

    /// Applies the indexes' gathered changes.
    mutating func applyIndexChanges(_ changes: [IndexChanges], rebuildRatio: Int = 32) {
        for i in changes.indices where !changes[i].isEmpty {
            indexes[i].apply(changes[i], rebuildRatio: rebuildRatio)
        }
    }
}
