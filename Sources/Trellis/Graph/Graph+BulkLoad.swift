/// Builds a graph bottom-up from the decoded chunks of a columnar checkpoint: rows go straight into the 64-row leaves
/// of their entity, the leaves into a trie built in one pass, and each index into a tree built in one pass from its
/// sorted keys. Nothing is inserted one by one, and every array gets its exact size.
///
/// Chunks must come entity by entity in ascending entity order, each entity's serials ascending across its chunks;
/// anything else is damage (`TrellisError.corrupt`).
struct GraphBulkLoader {
    let schema: Schema
    private(set) var tables: [EntityTable]
    private var entity = -1
    private var lastSerial: UInt64 = 0
    private var count = 0
    private var leafKeys: [UInt64] = []
    private var leaves: [Leaf] = []
    private var current: Leaf?
    private var currentKey: UInt64 = 0

    init(schema: Schema) {
        self.schema = schema
        tables = schema.layouts.map(EntityTable.init)
    }

    /// Adds the rows of one decoded chunk.
    mutating func add(_ chunk: CheckpointColumns.DecodedChunk, context: String) throws {
        if chunk.entity != entity {
            guard chunk.entity > entity else {
                throw TrellisError(.corrupt, "\(context): entity \(chunk.entity) comes after entity \(entity)")
            }
            finishEntity()
            entity = chunk.entity
        }
        guard let first = chunk.serials.first, first > lastSerial else {
            throw TrellisError(.corrupt, "\(context): serial \(chunk.serials.first ?? 0) is not above \(lastSerial)")
        }
        let layout = schema.layouts[entity]
        var cursors = [Int](repeating: 0, count: layout.attributes.count)
        let serials = chunk.serials
        var i = 0
        while i < serials.count {
            let key = serials[i] >> Leaf.shift
            var j = i + 1
            while j < serials.count, serials[j] >> Leaf.shift == key { j += 1 }
            if current == nil || currentKey != key {
                flushLeaf()
                current = Leaf(layout)
                currentKey = key
            }
            try Self.fill(&current!, rows: i..<j, of: chunk, cursors: &cursors, layout: layout, context: context)
            i = j
        }
        count += serials.count
        lastSerial = serials[serials.count - 1]
    }

    /// Finishes the last entity and returns every table.
    mutating func finish() -> [EntityTable] {
        finishEntity()
        return tables
    }

    private mutating func flushLeaf() {
        guard let leaf = current else { return }
        leafKeys.append(currentKey)
        leaves.append(leaf)
        current = nil
    }

    private mutating func finishEntity() {
        flushLeaf()
        guard entity >= 0 else { return }
        let layout = schema.layouts[entity]
        var table = tables[entity]
        table.leaves = SerialTrie(ascendingKeys: leafKeys, values: leaves)
        table.count = count
        table.maxSerial = lastSerial
        // Indexes whose keys must be sorted go first, through an array; those whose keys already ascend with the
        // serials (a sequential id) are streamed into their trees afterwards. So at most one array of keys exists
        // at a time, and never beside more than the trees built before it: the load's memory peak. (Building them
        // at the same time, on two threads, saved about 1.5 ms of 100,000 objects' load but raised that peak by
        // 20–50 bytes an object.)
        let ascending = layout.indexes.indices.map { i in
            Self.keysAscend(table.indexes[i], layout.indexes[i], keys: leafKeys, leaves: leaves)
        }
        for i in layout.indexes.indices where !ascending[i] {
            table.indexes[i] = Self.sortedIndex(table.indexes[i], layout.indexes[i], keys: leafKeys, leaves: leaves)
        }
        for i in layout.indexes.indices where ascending[i] {
            table.indexes[i] = Self.streamedIndex(
                table.indexes[i], layout.indexes[i], keys: leafKeys, leaves: leaves, count: count)
        }
        tables[entity] = table
        leafKeys = []
        leaves = []
        count = 0
        lastSerial = 0
    }

    /// Copies rows `rows` of `chunk` into `leaf`, which holds their serials; `cursors` count each column's non-null
    /// values used so far.
    private static func fill(
        _ leaf: inout Leaf, rows: Range<Int>, of chunk: CheckpointColumns.DecodedChunk, cursors: inout [Int],
        layout: EntityLayout, context: String
    ) throws {
        let slots = chunk.serials[rows].map { Int($0 & Leaf.mask) }
        for r in slots { leaf.present |= 1 << UInt64(r) }
        for (c, column) in chunk.columns.enumerated() {
            var cursor = cursors[c]
            var nulls = leaf.columns[c].nulls
            switch leaf.columns[c].kind {
            case .bool:
                var bits = leaf.columns[c].bits
                for (i, r) in zip(rows, slots) {
                    if column.isNull(i) {
                        nulls |= 1 << UInt64(r)
                    } else {
                        if column.bools[cursor >> 6] & (1 << UInt64(cursor & 63)) != 0 { bits |= 1 << UInt64(r) }
                        cursor += 1
                    }
                }
                leaf.columns[c].bits = bits
            case .int:
                leaf.columns[c].ints.withUnsafeMutableBufferPointer { out in
                    for (i, r) in zip(rows, slots) {
                        if column.isNull(i) {
                            nulls |= 1 << UInt64(r)
                        } else {
                            out[r] = column.ints[cursor]
                            cursor += 1
                        }
                    }
                }
            case .double, .date:
                leaf.columns[c].doubles.withUnsafeMutableBufferPointer { out in
                    for (i, r) in zip(rows, slots) {
                        if column.isNull(i) {
                            nulls |= 1 << UInt64(r)
                        } else {
                            out[r] = Double(bitPattern: column.doubles[cursor])
                            cursor += 1
                        }
                    }
                }
            case .string:
                // Rows arrive in ascending order, after any this leaf got from an earlier chunk: append.
                let old = leaf.columns[c].strings
                // The group's non-null strings lie back to back in `text`: one copy takes them all.
                let first = cursor
                var last = cursor
                for i in rows where !column.isNull(i) { last += 1 }
                let from = first == 0 ? 0 : column.ends[first - 1]
                let to = last == 0 ? 0 : column.ends[last - 1]
                // A leaf's text is addressed with 32-bit ends; only damage (chunk after chunk of text for one leaf)
                // can pass that.
                guard old.bytes.count + (to - from) <= Int(UInt32.max) else {
                    throw TrellisError(.corrupt, "\(context): more than 4 GiB of text for the strings of one leaf")
                }
                var bytes: [UInt8] = []
                bytes.reserveCapacity(old.bytes.count + to - from)
                bytes.append(contentsOf: old.bytes)
                bytes.append(contentsOf: column.text[from..<to])
                let shift = old.bytes.count - from
                var ends = old.ends.isEmpty ? [UInt32](repeating: 0, count: Leaf.width) : old.ends
                var next = slots[0]
                var end = old.bytes.count
                for (i, r) in zip(rows, slots) {
                    for x in next..<r { ends[x] = UInt32(end) }
                    if column.isNull(i) {
                        nulls |= 1 << UInt64(r)
                    } else {
                        end = column.ends[cursor] + shift
                        cursor += 1
                    }
                    ends[r] = UInt32(end)
                    next = r + 1
                }
                for x in next..<Leaf.width { ends[x] = UInt32(end) }
                // No bytes: every row is empty or null, which the empty `PackedStrings` says without allocating.
                leaf.columns[c].strings = bytes.isEmpty ? PackedStrings() : PackedStrings(bytes: bytes, ends: ends)
            case .other:
                for (i, r) in zip(rows, slots) {
                    if column.isNull(i) {
                        nulls |= 1 << UInt64(r)
                    } else {
                        leaf.columns[c].others[r] = column.others[cursor]
                        cursor += 1
                    }
                }
            }
            leaf.columns[c].nulls = nulls
            cursors[c] = cursor
        }
        for (k, links) in chunk.links.enumerated() {
            let toMany = layout.relationships[k].isToMany
            for (i, r) in zip(rows, slots) {
                let start = i == 0 ? 0 : links.ends[i - 1]
                let end = links.ends[i]
                guard start < end else { continue }
                if toMany {
                    leaf.links[k].many[r] = SerialTrie(
                        ascendingKeys: links.targets[start..<end], values: EmptyCollection<Void>())
                } else {
                    leaf.links[k].one[r] = links.targets[start]
                }
            }
        }
    }

    /// Every live row's key of a scalar index, in serial order.
    private static func scalarKeys(
        _ coding: ScalarCoding, column c: Int, keys: [UInt64], leaves: [Leaf]
    ) -> ScalarKeys {
        ScalarKeys(coding: coding, column: c, keys: keys, leaves: leaves)
    }

    /// The keys of a scalar index read from the leaves, one row at a time (a plain iterator: this runs once per
    /// object, and a chain of lazy sequences costs several times as much here).
    struct ScalarKeys: Sequence, IteratorProtocol {
        let coding: ScalarCoding
        let column: Int
        let keys: [UInt64]
        let leaves: [Leaf]
        private var leaf = 0
        private var remaining: UInt64 = 0
        private var key: UInt64 = 0

        init(coding: ScalarCoding, column: Int, keys: [UInt64], leaves: [Leaf]) {
            self.coding = coding
            self.column = column
            self.keys = keys
            self.leaves = leaves
        }

        mutating func next() -> ScalarEntry? {
            while remaining == 0 {
                guard leaf < leaves.count else { return nil }
                remaining = leaves[leaf].present
                key = keys[leaf]
                leaf += 1
            }
            let r = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            let bit: UInt64 = 1 << UInt64(r)
            // A null cannot reach a scalar index (its attribute is required); as commits do, it keys as 0.
            var bits: UInt64 = 0
            if leaves[leaf - 1].columns[column].nulls & bit == 0 {
                switch coding {
                case .int: bits = ScalarCoding.encode(leaves[leaf - 1].columns[column].ints[r])
                case .double, .date: bits = ScalarCoding.encode(leaves[leaf - 1].columns[column].doubles[r])
                case .bool: bits = leaves[leaf - 1].columns[column].bits & bit != 0 ? 1 : 0
                }
            }
            return ScalarEntry(bits: bits, serial: key << Leaf.shift | UInt64(r))
        }
    }

    /// Every live row's key of a general index, in serial order.
    private static func generalKeys(
        _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> some Sequence<IndexEntry> {
        zip(keys, leaves).lazy.flatMap { key, leaf in
            Self.rows(leaf.present).lazy.map { r in
                IndexEntry(index.columns.map { leaf.columns[$0].value(r) }, serial: key << Leaf.shift | UInt64(r))
            }
        }
    }

    /// The rows whose bits are set in `present`, ascending.
    private static func rows(_ present: UInt64) -> some Sequence<Int> {
        sequence(state: present) { (m: inout UInt64) -> Int? in
            guard m != 0 else { return nil }
            defer { m &= m - 1 }
            return m.trailingZeroBitCount
        }
    }

    /// Whether an index's keys, in serial order, are already in index order.
    private static func keysAscend(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> Bool {
        switch empty {
        case .scalar(_, let coding):
            return isAscending(scalarKeys(coding, column: index.columns[0], keys: keys, leaves: leaves))
        case .general:
            return isAscending(generalKeys(index, keys: keys, leaves: leaves))
        }
    }

    /// An index built from its keys sorted in an array.
    private static func sortedIndex(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf]
    ) -> IndexTree {
        let count = leaves.reduce(0) { $0 + $1.present.nonzeroBitCount }
        switch empty {
        case .scalar(_, let coding):
            let sorted = ContiguousArray.radixSorted(count: count) {
                scalarKeys(coding, column: index.columns[0], keys: keys, leaves: leaves)
            }
            let values = ContiguousArray(repeating: (), count: sorted.count)
            return .scalar(SortedTree(ascendingKeys: sorted, values: values), coding)
        case .general:
            var entries = ContiguousArray<IndexEntry>()
            entries.reserveCapacity(count)
            entries.append(contentsOf: generalKeys(index, keys: keys, leaves: leaves))
            entries.sortWithoutBuffer()
            let values = ContiguousArray(repeating: (), count: entries.count)
            return .general(SortedTree(ascendingKeys: entries, values: values))
        }
    }

    /// An index whose keys ascend with the serials, built straight from the leaves.
    private static func streamedIndex(
        _ empty: IndexTree, _ index: EntityLayout.IndexLayout, keys: [UInt64], leaves: [Leaf], count: Int
    ) -> IndexTree {
        switch empty {
        case .scalar(_, let coding):
            let entries = scalarKeys(coding, column: index.columns[0], keys: keys, leaves: leaves).lazy.map { ($0, ()) }
            return .scalar(SortedTree(ascending: entries, count: count), coding)
        case .general:
            let entries = generalKeys(index, keys: keys, leaves: leaves).lazy.map { ($0, ()) }
            return .general(SortedTree(ascending: entries, count: count))
        }
    }

    private static func isAscending<T: Comparable>(_ items: some Sequence<T>) -> Bool {
        var previous: T?
        for item in items {
            if let previous, !(previous < item) { return false }
            previous = item
        }
        return true
    }
}

extension ContiguousArray where Element: Comparable {
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
    /// The `count` entries that `entries()` yields, in ascending order, sorted faster than by comparing (MSD radix):
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
    static func radixSorted<Keys: Sequence<ScalarEntry>>(
        count: Int, _ entries: () -> Keys
    ) -> ContiguousArray<
        ScalarEntry
    > {
        guard count > 64 else {
            var small = ContiguousArray(entries())
            small.sortWithoutBuffer()
            return small
        }
        var low = UInt64.max
        var high = UInt64.min
        for entry in entries() {
            low = Swift.min(low, entry.bits)
            high = Swift.max(high, entry.bits)
        }
        let spread = 64 - (high - low).leadingZeroBitCount
        guard spread > 0 else {
            var same = ContiguousArray(entries())
            same.sortWithoutBuffer()
            return same
        }
        // About eight entries a bucket, and at most 2^16 buckets (1 MiB of counts).
        let bucketBits = Swift.min(spread, Swift.max(4, Swift.min(16, Int.bitWidth - count.leadingZeroBitCount - 3)))
        let buckets = 1 << bucketBits
        let shift = UInt64(spread - bucketBits)
        var starts = [Int](repeating: 0, count: buckets + 1)
        var seen = 0
        starts.withUnsafeMutableBufferPointer { starts in
            for entry in entries() {
                starts[Int((entry.bits &- low) >> shift) + 1] += 1
                seen += 1
            }
            for b in 0..<buckets { starts[b + 1] += starts[b] }
        }
        precondition(seen == count, "radixSorted: \(seen) entries, not \(count)")
        var next = Array(starts[0..<buckets])
        var sorted = ContiguousArray<ScalarEntry>(unsafeUninitializedCapacity: count) { out, initialized in
            next.withUnsafeMutableBufferPointer { next in
                for entry in entries() {
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
