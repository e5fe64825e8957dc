import TrellisCore

/// Row changes applied a leaf at a time, with index changes gathered for one sorted merge per index at the end.
///
/// Each method does what the one-row mutations in `EntityTable.swift` do for every row of the run, in order, except
/// that index entries go to `changes` instead of the trees; `IndexTree.apply` then gives the trees the state the
/// one-row path leaves.
extension EntityTable {
    /// Why a row of a batch was refused.
    enum BatchFailure: Error {
        case wrongValueCount(Int)
        /// The object exists already (insert), the attribute is unknown (update), or a value does not fit its column.
        case refused(Int)
        /// The object does not exist.
        case missing(Int)
    }

    /// Inserts `inserts[run]`, whose serials all fall in one leaf; stops at the first row it refuses and reports it.
    /// The rows before it stay inserted (with their index entries recorded, unless `changes` is empty: another thread
    /// is building the index trees).
    mutating func insertRun(
        _ inserts: [ChangeSet.Insert], _ run: Range<Int>, layout: EntityLayout, changes: inout [IndexChanges]
    ) -> BatchFailure? {
        let (l, _) = Self.split(inserts[run.lowerBound].id.serial)
        var failure: BatchFailure?
        var end = run.lowerBound
        let width = layout.attributes.count
        inserts.withUnsafeBufferPointer { inserts in
            leaves.modify(l, default: { Leaf(layout) }) { leaf in
                // The run is checked first, row by row, so that the columns can then be filled one at a time; a row
                // refused is not written at all.
                var present = leaf.present
                for p in run {
                    let count = inserts[p].values.count
                    guard count == width else {
                        failure = .wrongValueCount(p)
                        break
                    }
                    let bit: UInt64 = 1 << (inserts[p].id.serial & Leaf.mask)
                    guard present & bit == 0,
                        (0..<width).allSatisfy({ leaf.columns[$0].accepts(inserts[p].values[$0]) })
                    else {
                        failure = .refused(p)
                        break
                    }
                    present |= bit
                    end = p + 1
                }
                guard end > run.lowerBound else { return }
                leaf.columns.withUnsafeMutableBufferPointer { columns in
                    for c in 0..<width { columns[c].fill(c, from: inserts, run.lowerBound..<end) }
                }
                leaf.present = present
            }
        }
        if failure != nil, let leaf = leaves[l], leaf.present == 0 { leaves.removeValue(forKey: l) }
        count += end - run.lowerBound
        let encoders = zip(indexes, layout.indexes).map { $0.encoder($1) }
        let indexColumns = changes.isEmpty ? [] : layout.indexes.map(\.columns)
        inserts.withUnsafeBufferPointer { inserts in
            for p in run.lowerBound..<end {
                let serial = inserts[p].id.serial
                maxSerial = max(maxSerial, serial)
                for i in indexColumns.indices {
                    encoders[i].record(indexColumns[i], serial: serial, adding: true, into: &changes[i]) {
                        inserts[p].values[$0]
                    }
                }
            }
        }
        return failure
    }

    /// Applies `updates[run]`, whose serials all fall in one leaf; stops at the first update it refuses and reports
    /// it. The updates before it (and the changes of the refused one before the bad one) stay applied.
    ///
    /// `feeding[a]` lists the indexes that attribute `a` feeds. Index changes are recorded into `changes`, one per
    /// index, or not at all when it is empty (another thread is building the index trees).
    mutating func updateRun(
        _ updates: [ChangeSet.Update], _ run: Range<Int>, layout: EntityLayout, feeding: [[Int]],
        changes: inout [IndexChanges]
    ) -> BatchFailure? {
        let (l, _) = Self.split(updates[run.lowerBound].id.serial)
        guard leaves[l] != nil else { return .missing(run.lowerBound) }
        let encoders = zip(indexes, layout.indexes).map { $0.encoder($1) }
        // No index changes are recorded when `changes` is empty: another thread is building the index trees.
        let indexed = !changes.isEmpty && layout.indexes.contains { !$0.columns.isEmpty }
        var failure: BatchFailure?
        leaves.modify(l, default: { Leaf(layout) }) { leaf in
            for p in run {
                let serial = updates[p].id.serial
                let r = Int(serial & Leaf.mask)
                guard leaf.contains(r) else {
                    failure = .missing(p)
                    return
                }
                for change in updates[p].changes {
                    let a = change.attribute.index
                    guard change.attribute.entity == updates[p].id.entity, a < layout.attributes.count else {
                        failure = .refused(p)
                        return
                    }
                    let old = indexed ? leaf.value(column: a, row: r) : .null
                    guard leaf.columns[a].set(r, change.new) else {
                        failure = .refused(p)
                        return
                    }
                    guard indexed, !old.isIdentical(to: change.new) else { continue }
                    for i in feeding[a] {
                        // As `setValue`: the entry with the old value goes, the one with the new value comes.
                        let columns = layout.indexes[i].columns
                        encoders[i].record(columns, serial: serial, adding: false, into: &changes[i]) { c in
                            c == a ? old : leaf.value(column: c, row: r)
                        }
                        encoders[i].record(columns, serial: serial, adding: true, into: &changes[i]) { c in
                            c == a ? change.new : leaf.value(column: c, row: r)
                        }
                    }
                }
            }
        }
        return failure
    }

    /// Removes the rows of `serials` (ascending, live, all in one leaf), recording their index entries' removal.
    /// A leaf left empty is dropped whole, without clearing its rows one by one.
    mutating func removeRun(_ serials: ArraySlice<UInt64>, layout: EntityLayout, changes: inout [IndexChanges]) {
        let (l, _) = Self.split(serials[serials.startIndex])
        var mask: UInt64 = 0
        for serial in serials { mask |= 1 << (serial & Leaf.mask) }
        let encoders = zip(indexes, layout.indexes).map { $0.encoder($1) }
        var emptied = false
        leaves.modify(l, default: { Leaf(layout) }) { leaf in
            for serial in serials {
                let r = Int(serial & Leaf.mask)
                for (i, index) in layout.indexes.enumerated() {
                    encoders[i].record(index.columns, serial: serial, adding: false, into: &changes[i]) {
                        leaf.value(column: $0, row: r)
                    }
                }
            }
            if leaf.present & ~mask == 0 {
                emptied = true
                return
            }
            leaf.present &= ~mask
            for serial in serials { leaf.clearRow(Int(serial & Leaf.mask)) }
        }
        if emptied { leaves.removeValue(forKey: l) }
        count -= serials.count
    }

    /// Applies the indexes' gathered changes.
    mutating func applyIndexChanges(_ changes: [IndexChanges], rebuildRatio: Int = 32) {
        for i in changes.indices where !changes[i].isEmpty {
            indexes[i].apply(changes[i], rebuildRatio: rebuildRatio)
        }
    }
}
