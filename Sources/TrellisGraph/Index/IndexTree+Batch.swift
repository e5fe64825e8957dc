import TrellisCore

extension IndexTree {
    var encoder: IndexEncoder {
        switch self {
        case .scalar(_, let coding): return IndexEncoder(coding: coding)
        case .pair(_, let a, let b): return IndexEncoder(coding: a, second: b)
        case .general: return IndexEncoder(coding: nil)
        }
    }

    /// The encoder for this index as `layout` declares it (an element index expands each collection).
    func encoder(_ layout: EntityLayout.IndexLayout) -> IndexEncoder {
        var encoder = self.encoder
        encoder.elements = layout.isElements
        encoder.pairs = layout.isPairs
        return encoder
    }

    /// Applies recorded changes with the result of calling `update` for each, in order.
    mutating func apply(_ changes: IndexChanges, rebuildRatio: Int = 32) {
        apply(NettedChanges(changes), rebuildRatio: rebuildRatio)
    }

    /// Applies changes netted already (`NettedChanges(_:)`, which may run on another thread).
    /// Changes handed over (`consume`) are let go once merged, before the new tree's nodes are built.
    mutating func apply(_ changes: consuming NettedChanges, rebuildRatio: Int = 32) {
        let (scalar, pair, general) = (changes.scalar, changes.pair, changes.general)
        changes = NettedChanges()
        switch self {
        case .scalar(var tree, let coding):
            guard !scalar.isEmpty else { return }
            self = .general(SortedTree())  // release our hold so `tree` is uniquely referenced
            tree.merge(sortedChanges: consume scalar, rebuildRatio: rebuildRatio)
            self = .scalar(tree, coding)
        case .pair(var tree, let a, let b):
            guard !pair.isEmpty else { return }
            self = .general(SortedTree())
            tree.merge(sortedChanges: consume pair, rebuildRatio: rebuildRatio)
            self = .pair(tree, a, b)
        case .general(var tree):
            guard !general.isEmpty else { return }
            self = .general(SortedTree())
            tree.merge(sortedChanges: consume general, rebuildRatio: rebuildRatio)
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

    /// `netted` for scalar entries: a large batch is sorted by radix on the encoded value, which is stable, so equal
    /// values keep their serial order only where the input had it; a pass over the runs of equal values restores it.
    static func netted(
        _ changes: consuming [(entry: ScalarEntry, adding: Bool)]
    ) -> [SortedTree<ScalarEntry, Void>.BatchChange] {
        nettedByRadix(consume changes)
    }

    /// `netted` for pair entries: sorted by radix on the first value, then each run of equal first values by the
    /// rest of the key.
    static func netted(
        _ changes: consuming [(entry: PairEntry, adding: Bool)]
    ) -> [SortedTree<PairEntry, Void>.BatchChange] {
        nettedByRadix(consume changes)
    }

    @inline(__always)
    private static func nettedByRadix<Entry: RadixKey>(
        _ changes: consuming [(entry: Entry, adding: Bool)]
    ) -> [SortedTree<Entry, Void>.BatchChange] {
        var ascending = true
        for i in changes.indices.dropFirst() where !(changes[i - 1].entry < changes[i].entry) {
            ascending = false
            break
        }
        if ascending { return changes.map { .init(key: $0.entry, value: $0.adding ? () : nil) } }
        guard changes.count >= 256 else {
            // Below this the radix sort's fixed cost (2,048 counters, 256 summed a pass) outweighs what it saves.
            return netted(changes)
        }
        let sorted = changes.count < 16_384 ? radixSorted(changes, width: 8) : radixSorted(changes, width: 11)
        // The unsorted list goes before the result is built (when the caller handed it over), one list fewer at the
        // peak of a big commit.
        changes = []
        var out: [SortedTree<Entry, Void>.BatchChange] = []
        out.reserveCapacity(sorted.count)
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count, sorted[end].entry.radixBits == sorted[start].entry.radixBits { end += 1 }
            if end - start == 1 {
                out.append(.init(key: sorted[start].entry, value: sorted[start].adding ? () : nil))
            } else {
                // Equal radix values: order by the whole key, keeping the input order of equal entries (the later one
                // wins).
                let run = sorted[start..<end].enumerated().sorted {
                    $0.element.entry != $1.element.entry
                        ? $0.element.entry < $1.element.entry : $0.offset < $1.offset
                }
                for (_, change) in run {
                    let next = SortedTree<Entry, Void>.BatchChange(key: change.entry, value: change.adding ? () : nil)
                    if let last = out.last, last.key == change.entry {
                        out[out.count - 1] = next
                    } else {
                        out.append(next)
                    }
                }
            }
            start = end
        }
        return out
    }

    /// The changes stably sorted by `radixBits` alone: a least-significant-digit radix sort on those 64 bits, in
    /// digits of `width` bits: 8 (eight passes) for a batch below 16,384 changes and 11 (six passes) from there, where
    /// the passes saved outweigh the 2,048 counters a digit. One pass counts every digit's histogram; a digit that is
    /// the same in every change (the high bytes of small integers, a date's sign and exponent) skips its pass, found
    /// from one counter. Each pass scatters to 256 or 2,048 streams, which stay in cache. Inlined into each call so
    /// that the width is a constant.
    @inline(__always)
    private static func radixSorted<Entry: RadixKey>(
        _ changes: [(entry: Entry, adding: Bool)], width: Int
    ) -> [(entry: Entry, adding: Bool)] {
        let n = changes.count
        guard n > 1 else { return changes }
        let digitCount = (64 + width - 1) / width
        let mask = UInt64(1) << UInt64(width) - 1
        var counts = [Int](repeating: 0, count: digitCount << width)
        changes.withUnsafeBufferPointer { source in
            counts.withUnsafeMutableBufferPointer { counts in
                for change in source {
                    var bits = change.entry.radixBits
                    for digit in 0..<digitCount {
                        counts[digit << width | Int(truncatingIfNeeded: bits & mask)] += 1
                        bits >>= UInt64(width)
                    }
                }
            }
        }
        // The digits that differ somewhere, low to high; the last pass writes into the result, the others alternate
        // with one scratch buffer, so nothing is copied on write.
        let first = changes[0].entry.radixBits
        var digits: [Int] = []
        for digit in 0..<digitCount
        where counts[digit << width | Int(truncatingIfNeeded: (first >> UInt64(digit * width)) & mask)] != n {
            digits.append(digit)
        }
        typealias Change = (entry: Entry, adding: Bool)
        guard !digits.isEmpty else { return changes }
        return [Change](uninitializedCapacity: n) { out, initialized in
            // One pass writes straight into the result and needs no scratch buffer.
            let scratch = digits.count > 1 ? UnsafeMutableBufferPointer<Change>.allocate(capacity: n) : out
            defer { if digits.count > 1 { scratch.deallocate() } }
            changes.withUnsafeBufferPointer { changes in
                counts.withUnsafeMutableBufferPointer { counts in
                    var source = changes.baseAddress!
                    var target = digits.count % 2 == 1 ? out.baseAddress! : scratch.baseAddress!
                    for digit in digits {
                        let shift = UInt64(digit * width)
                        let base = digit << width
                        var total = 0
                        for i in base..<base + (1 << width) {
                            let c = counts[i]
                            counts[i] = total
                            total += c
                        }
                        for i in 0..<n {
                            let change = source[i]
                            let slot = base | Int(truncatingIfNeeded: (change.entry.radixBits >> shift) & mask)
                            (target + counts[slot]).initialize(to: change)
                            counts[slot] += 1
                        }
                        source = UnsafePointer(target)
                        target = target == out.baseAddress! ? scratch.baseAddress! : out.baseAddress!
                    }
                }
            }
            initialized = n
        }
    }

    /// Whether two entries hold the same values with none null: what a unique constraint forbids.
    ///
    /// - Complexity: O(n), one walk.
    package var holdsDuplicateValues: Bool {
        switch self {
        case .scalar(let tree, _):
            var previous: UInt64?
            var found = false
            tree.forEach { entry, _ in
                if entry.bits == previous { found = true }
                previous = entry.bits
            }
            return found
        case .pair(let tree, _, _):
            var previous: PairEntry?
            var found = false
            tree.forEach { entry, _ in
                if let p = previous, p.first == entry.first, p.second == entry.second { found = true }
                previous = entry
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

/// An index key whose order starts with one 64-bit encoded value: what `IndexTree.netted` sorts by radix.
protocol RadixKey: Comparable {
    /// The encoded value the key's order starts with.
    var radixBits: UInt64 { get }
}

extension ScalarEntry: RadixKey {
    @inline(__always) var radixBits: UInt64 { bits }
}

extension PairEntry: RadixKey {
    @inline(__always) var radixBits: UInt64 { first }
}
