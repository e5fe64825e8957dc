import TrellisCore

// Entry points for the layers above (the journal's checkpoint writer and loader) that would otherwise call the
// persistent structures' generic code across the module boundary, where it runs unspecialized, several times slower.
// Each is compiled here, for its concrete types.

extension EntityTable {
    /// Calls `body` with each leaf and its key, in ascending key order.
    package func forEachLeaf(_ body: (_ key: UInt64, _ leaf: Leaf) throws -> Void) rethrows {
        try leaves.forEach(body)
    }

    /// Builds the table's leaf trie from leaves keyed by strictly ascending `keys`.
    package mutating func setLeaves(ascendingKeys keys: [UInt64], leaves: [Leaf]) {
        self.leaves = SerialTrie(ascendingKeys: keys, values: leaves)
    }
}

extension LinkColumn {
    /// Row `row`'s to-many targets made from strictly ascending serials.
    package mutating func setTargets(_ row: Int, ascending serials: ArraySlice<UInt64>) {
        many[row] = SerialTrie(ascendingKeys: serials, values: EmptyCollection<Void>())
    }
}

extension EntityTable {
    /// The places of index `index`: for the i-th live object in serial order, its position in the index (what a
    /// checkpoint stores as an index order, `CheckpointIndexOrder`).
    /// Nil when every object stands in serial order (nothing to store), and when the index does not hold exactly the
    /// live objects (which commits never leave; should it happen, the checkpoint stores no order and loading builds
    /// the index from the rows, rather than compaction stopping).
    package func indexPlaces(_ index: Int) -> [Int64]? {
        // The rank of a serial among the live ones: the live objects of the leaves before its own, plus those of its
        // leaf below it.
        var keys: [UInt64] = []
        var bases: [Int] = []
        var presents: [UInt64] = []
        var total = 0
        leaves.forEach { key, leaf in
            keys.append(key)
            bases.append(total)
            presents.append(leaf.present)
            total += leaf.present.nonzeroBitCount
        }
        guard indexes[index].count == total else { return nil }
        // Leaves with no gap between them (a store without deletions): a leaf's position is its key's distance from
        // the first, found without a search.
        let first = keys.first ?? 0
        let dense = keys.last.map { $0 - first + 1 == UInt64(keys.count) } ?? false
        var places = [Int64](repeating: -1, count: total)
        var position: Int64 = 0
        var inSerialOrder = true
        var consistent = true
        func place(_ serial: UInt64) {
            let key = serial >> Leaf.shift
            let bit: UInt64 = 1 << (serial & Leaf.mask)
            var low = 0
            if dense {
                low = key >= first && key - first < UInt64(keys.count) ? Int(key - first) : keys.count
            } else {
                var high = keys.count
                while low < high {
                    let middle = (low + high) / 2
                    if keys[middle] < key { low = middle + 1 } else { high = middle }
                }
            }
            guard low < keys.count, keys[low] == key, presents[low] & bit != 0 else {
                consistent = false
                return
            }
            let rank = bases[low] + (presents[low] & (bit - 1)).nonzeroBitCount
            if rank != Int(position) { inSerialOrder = false }
            places[rank] = position
            position += 1
        }
        switch indexes[index] {
        case .scalar(let tree, _): tree.forEach { entry, _ in place(entry.serial) }
        case .pair(let tree, _, _): tree.forEach { entry, _ in place(entry.serial) }
        case .general(let tree): tree.forEach { entry, _ in place(entry.serial) }
        }
        // Every object placed once: an entry naming an object twice would leave another's place unset.
        guard consistent, !inSerialOrder, !places.contains(-1) else { return nil }
        return places
    }
}

extension EntityTable {
    /// Gives `body` the leaf with key `key` in place, first inserting an empty leaf of `layout` when there is none:
    /// held only by this table, its columns are written without copying them. A key above every other one becomes the
    /// trie's tail, as `insertRow` keeps it. If `body` throws, an inserted leaf stays, with what `body` wrote to it.
    /// The caller brings `count` and `maxSerial` up to date for the rows it adds.
    package mutating func modifyLeaf<R>(
        _ key: UInt64, layout: EntityLayout, _ body: (inout Leaf) throws(TrellisError) -> R
    ) throws(TrellisError) -> R {
        var result: Result<R, TrellisError>?
        leaves.modifyKeepingTail(key, default: { Leaf(layout) }) { leaf in
            do throws(TrellisError) {
                result = .success(try body(&leaf))
            } catch {
                result = .failure(error)
            }
        }
        return try result!.get()
    }
}
