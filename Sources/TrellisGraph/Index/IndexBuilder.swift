import CTrellisHints
import TrellisCore

/// Builds an index tree in one pass from an entity's leaves: from its keys sorted in an array, from the places a
/// checkpoint stored for them, or straight from the leaves when the keys already ascend with the serials. Used by
/// the checkpoint's bulk loader and by a migration that reindexes a table.
package enum IndexBuilder {
    /// Hands every live row's key of a scalar index to `body`, in serial order, until `body` returns false; returns
    /// whether it never did. A loop over each leaf's column in place: a per-row read through `leaves[l].columns[c]`
    /// copied the column (retaining and releasing each of its arrays), and a chain of lazy sequences cost several
    /// times as much as this loop.
    private static func forEachScalarEntry(
        _ coding: ScalarCoding, column c: Int, keys: [UInt64], leaves: [Leaf], _ body: (ScalarEntry) -> Bool
    ) -> Bool {
        leaves.withUnsafeBufferPointer { leaves in
            for l in leaves.indices {
                let base = keys[l] << Leaf.shift
                let present = leaves[l].present
                let complete = leaves[l].columns.withUnsafeBufferPointer { columns -> Bool in
                    // A null cannot reach a scalar index (its attribute is required); as commits do, it keys as 0.
                    let nulls = columns[c].nulls
                    func each(_ key: (Int) -> UInt64) -> Bool {
                        var m = present
                        while m != 0 {
                            let r = m.trailingZeroBitCount
                            m &= m - 1
                            let bits = nulls >> UInt64(r) & 1 == 0 ? key(r) : 0
                            guard body(ScalarEntry(bits: bits, serial: base | UInt64(r))) else { return false }
                        }
                        return true
                    }
                    switch coding {
                    case .int:
                        return columns[c].withInts { v in each { ScalarCoding.encode(v[$0]) } }
                    case .double, .date:
                        return columns[c].doubles.withUnsafeBufferPointer { v in each { ScalarCoding.encode(v[$0]) } }
                    case .bool:
                        let set = columns[c].bits
                        return each { set >> UInt64($0) & 1 }
                    }
                }
                guard complete else { return false }
            }
            return true
        }
    }

    /// Calls `body` with a function from row number to the encoded value of `column` in that row (0 for a null, as
    /// commits key it).
    @inline(__always)
    private static func withKeys<R>(
        _ coding: ScalarCoding, _ column: Column, _ body: ((Int) -> UInt64) -> R
    ) -> R {
        let nulls = column.nulls
        switch coding {
        case .int:
            return column.withInts { v in body { nulls >> UInt64($0) & 1 == 0 ? ScalarCoding.encode(v[$0]) : 0 } }
        case .double, .date:
            return column.doubles.withUnsafeBufferPointer { v in
                body { nulls >> UInt64($0) & 1 == 0 ? ScalarCoding.encode(v[$0]) : 0 }
            }
        case .bool:
            let set = column.bits
            return body { nulls >> UInt64($0) & 1 == 0 ? set >> UInt64($0) & 1 : 0 }
        }
    }

    /// Hands every live row's key of a pair index to `body`, in serial order, until `body` returns false; returns
    /// whether it never did.
    private static func forEachPairEntry(
        _ a: ScalarCoding, _ b: ScalarCoding, columns: [Int], keys: [UInt64], leaves: [Leaf],
        _ body: (PairEntry) -> Bool
    ) -> Bool {
        for l in leaves.indices {
            let base = keys[l] << Leaf.shift
            let present = leaves[l].present
            let complete = leaves[l].columns.withUnsafeBufferPointer { c -> Bool in
                withKeys(a, c[columns[0]]) { first in
                    withKeys(b, c[columns[1]]) { second in
                        var m = present
                        while m != 0 {
                            let r = m.trailingZeroBitCount
                            m &= m - 1
                            guard body(PairEntry(first: first(r), second: second(r), serial: base | UInt64(r))) else {
                                return false
                            }
                        }
                        return true
                    }
                }
            }
            guard complete else { return false }
        }
        return true
    }

    /// Every live row's key of a general index, in serial order.
    private static func generalKeys(
        _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> some Sequence<IndexEntry> {
        zip(keys, leaves).lazy.flatMap { key, leaf in
            Leaf.rows(leaf.present).lazy.map { r in
                IndexEntry(index.columns.map { leaf.columns[$0].value(r) }, serial: key << Leaf.shift | UInt64(r))
            }
        }
    }

    /// Every live row's entries of an element index (one per distinct element), in serial order.
    private static func elementKeys(
        _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> ContiguousArray<IndexEntry> {
        var entries = ContiguousArray<IndexEntry>()
        for (key, leaf) in zip(keys, leaves) {
            for r in Leaf.rows(leaf.present) {
                let serial = key << Leaf.shift | UInt64(r)
                entries.append(
                    contentsOf: IndexEntry.elementEntries(
                        leaf.columns[index.columns[0]].value(r), serial: serial, pairs: index.isPairs))
            }
        }
        return entries
    }

    /// An index built from its keys sorted in an array.
    package static func sortedIndex(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> IndexTree {
        let count = leaves.reduce(0) { $0 + $1.present.nonzeroBitCount }
        switch empty {
        case .scalar(_, let coding):
            let sorted = ContiguousArray.radixSorted(count: count) { body in
                _ = forEachScalarEntry(coding, column: index.columns[0], keys: keys, leaves: leaves) { entry in
                    body(entry)
                    return true
                }
            }
            let values = ContiguousArray(repeating: (), count: sorted.count)
            return .scalar(SortedTree(ascendingKeys: sorted, values: values), coding)
        case .pair(_, let a, let b):
            var entries = ContiguousArray<PairEntry>()
            entries.reserveCapacity(count)
            _ = forEachPairEntry(a, b, columns: index.columns, keys: keys, leaves: leaves) { entry in
                entries.append(entry)
                return true
            }
            entries.sortWithoutBuffer()
            let values = ContiguousArray(repeating: (), count: entries.count)
            return .pair(SortedTree(ascendingKeys: entries, values: values), a, b)
        case .general:
            var entries: ContiguousArray<IndexEntry>
            if index.isElements {
                entries = elementKeys(index, keys: keys, leaves: leaves)
            } else {
                entries = ContiguousArray<IndexEntry>()
                entries.reserveCapacity(count)
                entries.append(contentsOf: generalKeys(index, keys: keys, leaves: leaves))
            }
            entries.sortWithoutBuffer()
            let values = ContiguousArray(repeating: (), count: entries.count)
            return .general(SortedTree(ascendingKeys: entries, values: values))
        }
    }

    /// An index built from its keys put in their stored places: nil unless the places are a permutation that sorts
    /// the keys strictly. A scalar or pair index's keys are written straight into the tree's leaves; a general index's
    /// are placed in an array first, and its places are let go (emptied) before the tree is built beside them.
    package static func placedIndex(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, places: inout [Int64], keys: [UInt64], leaves: [Leaf]
    ) -> IndexTree? {
        // An element index has no stored order (it is not one entry per object): the caller sorts it.
        guard !index.isElements else { return nil }
        switch empty {
        case .scalar(_, let coding):
            let tree = SortedTree<ScalarEntry, Void>.placing(places: places) { body in
                _ = forEachScalarEntry(coding, column: index.columns[0], keys: keys, leaves: leaves, body)
            }
            places = []
            return tree.map { .scalar($0, coding) }
        case .pair(_, let a, let b):
            let tree = SortedTree<PairEntry, Void>.placing(places: places) { body in
                _ = forEachPairEntry(a, b, columns: index.columns, keys: keys, leaves: leaves, body)
            }
            places = []
            return tree.map { .pair($0, a, b) }
        case .general:
            let sorted = ContiguousArray<IndexEntry>.placing(places: places) { body in
                for entry in generalKeys(index, keys: keys, leaves: leaves) where !body(entry) { return }
            }
            places = []
            guard let sorted else { return nil }
            return .general(
                SortedTree(ascendingKeys: sorted, values: ContiguousArray(repeating: (), count: sorted.count)))
        }
    }

    /// An index built straight from the leaves: nil unless its keys ascend with the serials.
    package static func streamedIndex(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf], count: Int
    ) -> IndexTree? {
        guard !index.isElements else { return nil }
        switch empty {
        case .scalar(_, let coding):
            var builder = SortedTree<ScalarEntry, Void>.AscendingBuilder(count: count)
            let ordered = forEachScalarEntry(coding, column: index.columns[0], keys: keys, leaves: leaves) { entry in
                builder.append(entry, ())
            }
            guard ordered, let tree = builder.finish() else { return nil }
            return .scalar(tree, coding)
        case .pair(_, let a, let b):
            var builder = SortedTree<PairEntry, Void>.AscendingBuilder(count: count)
            let ordered = forEachPairEntry(a, b, columns: index.columns, keys: keys, leaves: leaves) { entry in
                builder.append(entry, ())
            }
            guard ordered, let tree = builder.finish() else { return nil }
            return .pair(tree, a, b)
        case .general:
            let entries = generalKeys(index, keys: keys, leaves: leaves).lazy.map { ($0, ()) }
            return SortedTree(ascending: entries, count: count).map { .general($0) }
        }
    }
}

extension ContiguousArray where Element: Comparable {
    /// The elements that `forEach` hands its body (as many as `places`), the i-th put at `places[i]`: nil unless
    /// `places` is a permutation of `0 ..< places.count` and the result ascends strictly. One pass writes each
    /// element where it belongs and a second compares neighbours: O(n), where sorting is O(n log n). The body
    /// returns false when it takes no more.
    static func placing(places: [Int64], _ forEach: ((Element) -> Bool) -> Void) -> ContiguousArray? {
        let n = places.count
        let out = ContiguousArray(uninitializedCapacity: n) { buffer, initialized in
            let base = buffer.baseAddress
            let placed = Placement.place(places, forEach) { p, item in
                buffer.initializeElement(at: p, to: item)
            } ahead: { p in
                if let base { trellis_prefetch_for_write(base + p) }
            }
            if placed.complete {
                initialized = n
                return
            }
            // Not a permutation of the items: release those already placed.
            for p in 0..<n where placed.seen[p >> 6] & (1 << UInt64(p & 63)) != 0 {
                (buffer.baseAddress! + p).deinitialize(count: 1)
            }
            initialized = 0
        }
        guard out.count == n else { return nil }
        var i = 1
        while i < n {
            guard out[i - 1] < out[i] else { return nil }
            i += 1
        }
        return out
    }

    /// Sorts in place with no scratch buffer (the standard library's sort allocates one of up to half the array,
    /// which a checkpoint load would hold at its memory peak): quicksort on the median of three, insertion sort for
    /// short ranges, heapsort where quicksort recurses too deep. Not stable; index keys are unique.
    ///
    /// - Complexity: O(n log n).
    mutating func sortWithoutBuffer() {
        guard count > 1 else { return }
        withUnsafeMutableBufferPointer { b in
            Self.introsort(b, 0, b.count, depth: 2 * (Int.bitWidth - b.count.leadingZeroBitCount))
        }
    }

    fileprivate static func introsort(_ b: UnsafeMutableBufferPointer<Element>, _ low: Int, _ high: Int, depth: Int) {
        var low = low
        var high = high
        var depth = depth
        while high - low > 16 {
            if depth == 0 {
                heapsort(b, low, high)
                return
            }
            depth -= 1
            let middle = low + (high - low) / 2
            // Median of three to b[middle], then partition around it (Hoare).
            if b[middle] < b[low] { b.swapAt(middle, low) }
            if b[high - 1] < b[low] { b.swapAt(high - 1, low) }
            if b[high - 1] < b[middle] { b.swapAt(high - 1, middle) }
            let pivot = b[middle]
            var i = low
            var j = high - 1
            while true {
                while b[i] < pivot { i += 1 }
                while pivot < b[j] { j -= 1 }
                if i >= j { break }
                b.swapAt(i, j)
                i += 1
                j -= 1
            }
            // Recurse into the smaller side, loop on the larger: the stack stays O(log n).
            if j + 1 - low < high - (j + 1) {
                introsort(b, low, j + 1, depth: depth)
                low = j + 1
            } else {
                introsort(b, j + 1, high, depth: depth)
                high = j + 1
            }
        }
        var i = low + 1
        while i < high {
            let item = b[i]
            var j = i
            while j > low, item < b[j - 1] {
                b[j] = b[j - 1]
                j -= 1
            }
            b[j] = item
            i += 1
        }
    }

    private static func heapsort(_ b: UnsafeMutableBufferPointer<Element>, _ low: Int, _ high: Int) {
        let n = high - low
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while 2 * root + 1 < end {
                var child = 2 * root + 1
                if child + 1 < end, b[low + child] < b[low + child + 1] { child += 1 }
                guard b[low + root] < b[low + child] else { return }
                b.swapAt(low + root, low + child)
                root = child
            }
        }
        var start = n / 2
        while start > 0 {
            start -= 1
            siftDown(start, n)
        }
        var end = n
        while end > 1 {
            end -= 1
            b.swapAt(low, low + end)
            siftDown(0, end)
        }
    }
}

extension ContiguousArray where Element == ScalarEntry {
    /// The `count` entries that `forEach` hands its body, in ascending order, sorted faster than by comparing (MSD radix):
    /// one pass over them finds the spread of the keys' bits, a second counts the entries of about n / 8 buckets of
    /// it, and a third copies every entry into its bucket of the array returned. The entries are made three times
    /// (cheaply, from the leaves) rather than held in an array of their own: the sorted array is the only one, as
    /// beside the tree then built from it. A bucket of more than 32 entries (keys bunch: a double's encoding is
    /// logarithmic) is split in place over as many of the next bits as its size needs (`flagSort`), and what remains
    /// is sorted by comparing (`sortWithoutBuffer`'s introsort).
    ///
    /// Copying into buckets writes each entry once; the in-place flag sort this replaces moved each one along a chain
    /// of random reads and writes, at several times the cost.
    ///
    /// - Complexity: O(n) passes plus O(n log b) for final buckets of b entries.
    static func radixSorted(count: Int, _ forEach: ((ScalarEntry) -> Void) -> Void) -> ContiguousArray<ScalarEntry> {
        func sortedByComparing() -> ContiguousArray<ScalarEntry> {
            var all = ContiguousArray<ScalarEntry>()
            all.reserveCapacity(count)
            forEach { all.append($0) }
            all.sortWithoutBuffer()
            return all
        }
        guard count > 64 else { return sortedByComparing() }
        var low = UInt64.max
        var high = UInt64.min
        forEach { entry in
            low = Swift.min(low, entry.bits)
            high = Swift.max(high, entry.bits)
        }
        let spread = 64 - (high - low).leadingZeroBitCount
        guard spread > 0 else { return sortedByComparing() }
        // About eight entries a bucket, and at most 2^16 buckets (1 MiB of counts).
        let bucketBits = Swift.min(spread, Swift.max(4, Swift.min(16, Int.bitWidth - count.leadingZeroBitCount - 3)))
        let buckets = 1 << bucketBits
        let shift = UInt64(spread - bucketBits)
        var starts = [Int](repeating: 0, count: buckets + 1)
        var seen = 0
        starts.withUnsafeMutableBufferPointer { starts in
            forEach { entry in
                starts[Int((entry.bits &- low) >> shift) + 1] += 1
                seen += 1
            }
            for b in 0..<buckets { starts[b + 1] += starts[b] }
        }
        precondition(seen == count, "radixSorted: \(seen) entries, not \(count)")
        var next = Array(starts[0..<buckets])
        var sorted = ContiguousArray<ScalarEntry>(uninitializedCapacity: count) { out, initialized in
            next.withUnsafeMutableBufferPointer { next in
                forEach { entry in
                    let b = Int((entry.bits &- low) >> shift)
                    out.initializeElement(at: next[b], to: entry)
                    next[b] += 1
                }
            }
            initialized = count
        }
        let depth = 2 * (Int.bitWidth - count.leadingZeroBitCount)
        sorted.withUnsafeMutableBufferPointer { items in
            var subStarts = [Int](repeating: 0, count: 257)
            for b in 0..<buckets {
                let bucket = starts[b]..<starts[b + 1]
                if bucket.count > 32, shift > 0 {
                    let subBits = Swift.min(8, Int(shift), Int.bitWidth - bucket.count.leadingZeroBitCount - 2)
                    let base = low &+ (UInt64(b) << shift)
                    Self.flagSort(
                        items, bucket, low: base, shift: Int(shift) - subBits, bits: subBits, starts: &subStarts)
                    for s in 0..<(1 << subBits) where subStarts[s + 1] - subStarts[s] > 1 {
                        Self.introsort(items, subStarts[s], subStarts[s + 1], depth: depth)
                    }
                } else if bucket.count > 1 {
                    Self.introsort(items, bucket.lowerBound, bucket.upperBound, depth: depth)
                }
            }
        }
        return sorted
    }

    /// Moves the entries of `range` into 2^`bits` buckets by `(bits - low) >> shift`, in place; `starts` receives
    /// each bucket's first position (and the end after the last).
    private static func flagSort(
        _ items: UnsafeMutableBufferPointer<ScalarEntry>, _ range: Range<Int>, low: UInt64, shift: Int, bits: Int,
        starts: inout [Int]
    ) {
        let buckets = 1 << bits
        let s = UInt64(shift)
        for b in 0...buckets { starts[b] = 0 }
        for i in range { starts[Int((items[i].bits &- low) >> s) + 1] += 1 }
        starts[0] = range.lowerBound
        for b in 0..<buckets { starts[b + 1] += starts[b] }
        var next = Array(starts[0..<buckets])
        for b in 0..<buckets {
            while next[b] < starts[b + 1] {
                let entry = items[next[b]]
                let home = Int((entry.bits &- low) >> s)
                if home == b {
                    next[b] += 1
                } else {
                    items[next[b]] = items[next[home]]
                    items[next[home]] = entry
                    next[home] += 1
                }
            }
        }
    }
}
