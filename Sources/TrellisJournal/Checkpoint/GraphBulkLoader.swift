import TrellisCore
import TrellisGraph

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
    /// The stored places of the current entity's indexes (format version 3), by index.
    private var orders: [Int: [Int64]] = [:]
    /// Stored orders that were not a permutation of the keys in ascending order: those indexes were sorted instead.
    private(set) var rejectedOrders = 0
    /// Indexes built from their stored order, without a sort.
    private(set) var placedIndexes = 0

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
        guard orders.isEmpty else {
            throw TrellisError(.corrupt, "\(context): rows of entity \(entity) after the order of its indexes")
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

    /// Takes the stored order of one index of the current entity, which must follow all of its rows.
    mutating func addOrder(_ header: CheckpointIndexOrder.Header, context: String) throws {
        guard header.entity == entity, count > 0 else {
            throw TrellisError(
                .corrupt, "\(context): an index order for entity \(header.entity) after entity \(entity)")
        }
        guard orders[header.index] == nil else {
            throw TrellisError(.corrupt, "\(context): a second order for index \(header.index)")
        }
        orders[header.index] = try CheckpointIndexOrder.places(header, count: count)
    }

    /// Finishes the last entity and returns every table.
    mutating func finish() -> [EntityTable] {
        finishEntity()
        return tables
    }

    private mutating func flushLeaf() {
        guard var leaf = current else { return }
        current = nil
        leaf.narrowInts()
        leafKeys.append(currentKey)
        leaves.append(leaf)
    }

    private mutating func finishEntity() {
        flushLeaf()
        guard entity >= 0 else { return }
        let layout = schema.layouts[entity]
        var table = tables[entity]
        table.setLeaves(ascendingKeys: leafKeys, leaves: leaves)
        table.count = count
        table.maxSerial = lastSerial
        // An index with a stored order (format version 3) is built from its keys put in their places, each read
        // once and compared only with its neighbour; a stored order that does not sort them is not trusted. Any
        // other index is streamed from the leaves in serial order, which is its order when its keys grow with the
        // serials (a sequential id, and every index without a stored order in a version-3 checkpoint); the first
        // key out of order stops that, and the index is sorted instead.
        //
        // Indexes with a stored order are built here one after the other, each array of keys (and its places) let go
        // before the next: the load's memory peak. Meanwhile the second core streams the others, which opens faster
        // than streaming them here afterwards but raises the peak, by how much depending on how the two threads meet
        // (figures in trellis-bench's RESULTS.md).
        var built = Set<Int>()
        let streaming = orders.isEmpty ? [] : layout.indexes.indices.filter { orders[$0] == nil }
        let background: BackgroundWork<[Int: IndexTree]>?
        if streaming.isEmpty {
            background = nil
        } else {
            let (keys, leaves, count, empty) = (leafKeys, self.leaves, count, table.indexes)
            background = BackgroundWork {
                var trees: [Int: IndexTree] = [:]
                for i in streaming {
                    trees[i] = IndexBuilder.streamedIndex(
                        empty[i], layout.indexes[i], keys: keys, leaves: leaves, count: count)
                }
                return trees
            }
        }
        for i in orders.keys.sorted() {
            // Each index's places are let go once it is built, before the next one's array of keys.
            guard var places = orders.removeValue(forKey: i) else { continue }
            if let index = IndexBuilder.placedIndex(
                table.indexes[i], layout.indexes[i], places: &places, keys: leafKeys, leaves: leaves)
            {
                table.indexes[i] = index
                built.insert(i)
                placedIndexes += 1
            } else {
                rejectedOrders += 1
            }
        }
        for (i, index) in background?.wait() ?? [:] {
            table.indexes[i] = index
            built.insert(i)
        }
        // Here: indexes whose stored order was refused, and all of them when none has a stored order.
        for i in layout.indexes.indices where !built.contains(i) && !streaming.contains(i) {
            if let index = IndexBuilder.streamedIndex(
                table.indexes[i], layout.indexes[i], keys: leafKeys, leaves: leaves, count: count)
            {
                table.indexes[i] = index
                built.insert(i)
            }
        }
        for i in layout.indexes.indices where !built.contains(i) {
            table.indexes[i] = IndexBuilder.sortedIndex(
                table.indexes[i], layout.indexes[i], keys: leafKeys, leaves: leaves)
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
        // Row `rows.lowerBound + k` of the chunk goes to slot `slots[k]` of the leaf. The loops below walk `k` rather
        // than `zip(rows, slots)`, whose iterator was not inlined: a call for every row of a bool or string column.
        let slots = chunk.serials[rows].map { Int($0 & Leaf.mask) }
        for r in slots { leaf.present |= 1 << UInt64(r) }
        // Serials ascend strictly, so rows as many as their span are consecutive: the usual case, in which a column
        // of numbers or booleans without nulls is copied as a block.
        let run = slots[slots.count - 1] - slots[0] + 1 == slots.count
        for c in chunk.columns.indices {
            if run,
                Self.copyRun(&leaf.columns[c], from: chunk.columns, c, at: cursors[c], to: slots[0], count: slots.count)
            {
                cursors[c] += slots.count
                continue
            }
            let column = chunk.columns[c]
            var cursor = cursors[c]
            var nulls = leaf.columns[c].nulls
            switch leaf.columns[c].kind {
            case .bool:
                var bits = leaf.columns[c].bits
                for k in slots.indices {
                    let (i, r) = (rows.lowerBound + k, slots[k])
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
                    for k in slots.indices {
                        let (i, r) = (rows.lowerBound + k, slots[k])
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
                    for k in slots.indices {
                        let (i, r) = (rows.lowerBound + k, slots[k])
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
                var ends = old.ends.isEmpty ? [UInt32].zeros(Leaf.width) : old.ends
                var next = slots[0]
                var end = old.bytes.count
                for k in slots.indices {
                    let (i, r) = (rows.lowerBound + k, slots[k])
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
            case .other, .list:
                for k in slots.indices {
                    let (i, r) = (rows.lowerBound + k, slots[k])
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
        for (relationship, links) in chunk.links.enumerated() {
            let toMany = layout.relationships[relationship].isToMany
            for k in slots.indices {
                let (i, r) = (rows.lowerBound + k, slots[k])
                let start = i == 0 ? 0 : links.ends[i - 1]
                let end = links.ends[i]
                guard start < end else { continue }
                if leaf.links[relationship].isOrdered {
                    leaf.links[relationship].ordered[r] = OrderedTargets(links.targets[start..<end])
                } else if toMany {
                    leaf.links[relationship].setTargets(r, ascending: links.targets[start..<end])
                } else {
                    leaf.links[relationship].one[r] = links.targets[start]
                }
            }
        }
    }

    /// Copies `count` values of column `c` of `columns`, from its `cursor`-th, into rows `first ..< first + count` of
    /// `target` as one block, when the source holds no null and the values are numbers or booleans; false (copying
    /// nothing) otherwise. Reads the decoded column in place: binding it copied it, with its seven arrays.
    private static func copyRun(
        _ target: inout Column, from columns: [CheckpointColumns.DecodedColumn], _ c: Int, at cursor: Int,
        to first: Int, count: Int
    ) -> Bool {
        columns.withUnsafeBufferPointer { columns in
            guard columns[c].nulls.isEmpty else { return false }
            switch target.kind {
            case .int:
                columns[c].ints.withUnsafeBufferPointer { source in
                    target.ints.withUnsafeMutableBufferPointer { out in
                        (out.baseAddress! + first).update(from: source.baseAddress! + cursor, count: count)
                    }
                }
            case .double, .date:
                columns[c].doubles.withUnsafeBytes { source in
                    target.doubles.withUnsafeMutableBytes { out in
                        (out.baseAddress! + first * 8).copyMemory(
                            from: source.baseAddress! + cursor * 8, byteCount: count * 8)
                    }
                }
            case .bool:
                var bits: UInt64 = 0
                columns[c].bools.withUnsafeBufferPointer { words in
                    for k in 0..<count where words[(cursor + k) >> 6] & (1 << UInt64((cursor + k) & 63)) != 0 {
                        bits |= 1 << UInt64(first + k)
                    }
                }
                target.bits |= bits
            case .string, .other, .list:
                return false
            }
            return true
        }
    }
}
