import CTrellisHints
import TrellisCore

extension SortedTree {
    /// A tree holding `keys[i] → values[i]`, built bottom-up in one pass: full leaves and full internal nodes, each
    /// array allocated at its exact size. `keys` must be strictly ascending and `values` as long.
    ///
    /// Every node is full except the last one or two of each level, which share their entries evenly when the last
    /// would otherwise be under half full, so the tree meets every invariant of one built by inserts (at about twice
    /// the fill that ascending inserts leave).
    ///
    /// - Complexity: O(n).
    package init(
        ascendingKeys keys: ContiguousArray<Key>, values: ContiguousArray<Value>, fanout: Int = Self.defaultFanout
    ) {
        precondition(keys.count == values.count, "SortedTree: \(keys.count) keys but \(values.count) values")
        self.init(fanout: fanout)
        guard !keys.isEmpty else { return }
        storedCount = keys.count
        var level: [(first: Key, node: Node, count: Int)] = []
        level.reserveCapacity(keys.count / fanout + 1)
        for range in Self.runs(keys.count, fanout: fanout) {
            let node = Node(keys: ContiguousArray(keys[range]), values: NodeValues(values[range]))
            level.append((keys[range.lowerBound], node, range.count))
        }
        root = Self.assemble(level, fanout: fanout)
    }

    /// A tree of the first `count` entries of `entries`: the same tree as `init(ascendingKeys:values:fanout:)`
    /// builds, without an array of all the keys first. Nil when the entries do not ascend strictly by key or are
    /// fewer than `count` (found as they are read, so a caller can try this before sorting).
    ///
    /// - Complexity: O(n).
    package init?<S: Sequence<(Key, Value)>>(ascending entries: S, count: Int, fanout: Int = Self.defaultFanout) {
        var builder = AscendingBuilder(count: count, fanout: fanout)
        for (key, value) in entries {
            guard builder.remaining > 0 else { break }
            guard builder.append(key, value) else { return nil }
        }
        guard let tree = builder.finish() else { return nil }
        self = tree
    }

    /// Builds a tree of a known number of entries handed to it one at a time in strictly ascending key order (for a
    /// caller that loops over storage of its own): the tree `init(ascendingKeys:values:fanout:)` builds, leaf by leaf,
    /// without an array of all the keys first.
    package struct AscendingBuilder {
        private let runs: [Range<Int>]
        private let fanout: Int
        private var run = 0
        private var keys = ContiguousArray<Key>()
        private var values = NodeValues<Value>()
        private var level: [(first: Key, node: Node, count: Int)] = []
        private var last: Key?
        /// How many entries are still due.
        private(set) var remaining: Int

        init(count: Int, fanout: Int = SortedTree.defaultFanout) {
            self.fanout = fanout
            remaining = count
            runs = count > 0 ? SortedTree.runs(count, fanout: fanout) : []
            level.reserveCapacity(runs.count)
            if let first = runs.first {
                keys.reserveCapacity(first.count)
                values.reserveCapacity(first.count)
            }
        }

        /// Adds the next entry; false, adding nothing, when it does not ascend strictly or none is due.
        mutating func append(_ key: Key, _ value: Value) -> Bool {
            guard remaining > 0 else { return false }
            if let last, !(last < key) { return false }
            last = key
            keys.append(key)
            values.append(value)
            remaining -= 1
            if keys.count == runs[run].count {
                level.append((keys[0], Node(keys: keys, values: values), keys.count))
                run += 1
                keys = []
                values = []
                if run < runs.count {
                    keys.reserveCapacity(runs[run].count)
                    values.reserveCapacity(runs[run].count)
                }
            }
            return true
        }

        /// The tree; nil while entries are still due.
        func finish() -> SortedTree? {
            guard remaining == 0 else { return nil }
            var tree = SortedTree(fanout: fanout)
            guard !level.isEmpty else { return tree }
            tree.storedCount = runs[runs.count - 1].upperBound
            tree.root = SortedTree.assemble(level, fanout: fanout)
            return tree
        }
    }

    /// The tree of the keys `forEach` hands over, the i-th put at position `places[i]` of the ascending order: the
    /// tree `init(ascendingKeys:values:fanout:)` builds, without an array of all the keys beside its leaves. The keys
    /// land in chunks of 1,024 positions (one random write each; the chunks' addresses stay in cache), and each
    /// chunk is let go as soon as the leaves that hold its positions are built, so the load's peak holds the keys
    /// about once. Nil unless `places` is a permutation of `0 ..< places.count` and the keys
    /// then ascend strictly. `forEach` stops when its body returns false.
    ///
    /// - Complexity: O(n).
    package static func placing(
        places: [Int64], fanout: Int = Self.defaultFanout, _ forEach: ((Key) -> Bool) -> Void
    ) -> SortedTree? where Value == Void, Key: BitwiseCopyable {
        let n = places.count
        let shift = 10
        let mask = (1 << shift) - 1
        var chunks: [UnsafeMutablePointer<Key>?] = stride(from: 0, to: n, by: 1 << shift).map {
            .allocate(capacity: Swift.min(1 << shift, n - $0))
        }
        defer { for chunk in chunks { chunk?.deallocate() } }
        let placed = chunks.withUnsafeBufferPointer { chunks in
            Placement.place(places, forEach) { p, key in
                (chunks[p >> shift].unsafelyUnwrapped + (p & mask)).initialize(to: key)
            } ahead: { p in
                trellis_prefetch_for_write(chunks[p >> shift].unsafelyUnwrapped + (p & mask))
            }
        }
        // Every position written once: no chunk holds an uninitialized key past this point.
        guard placed.complete else { return nil }
        var tree = SortedTree(fanout: fanout)
        guard n > 0 else { return tree }
        let runs = Self.runs(n, fanout: fanout)
        var level: [(first: Key, node: Node, count: Int)] = []
        level.reserveCapacity(runs.count)
        var previous: Key?
        var freed = 0
        for range in runs {
            let keys = ContiguousArray<Key>(uninitializedCapacity: range.count) { buffer, initialized in
                for (i, p) in range.enumerated() { buffer[i] = chunks[p >> shift].unsafelyUnwrapped[p & mask] }
                initialized = range.count
            }
            for key in keys {
                if let previous, !(previous < key) { return nil }
                previous = key
            }
            level.append(
                (keys[0], Node(keys: keys, values: NodeValues(repeatElement((), count: keys.count))), keys.count))
            while freed < chunks.count, (freed + 1) << shift <= range.upperBound {
                chunks[freed]?.deallocate()
                chunks[freed] = nil
                freed += 1
            }
        }
        tree.storedCount = n
        tree.root = Self.assemble(level, fanout: fanout)
        return tree
    }

    /// Builds the internal levels above `level` (the leaves, left to right) and returns the root.
    fileprivate static func assemble(_ leaves: [(first: Key, node: Node, count: Int)], fanout: Int) -> Node {
        var level = leaves
        while level.count > 1 {
            var parents: [(first: Key, node: Node, count: Int)] = []
            parents.reserveCapacity(level.count / branching(fanout) + 1)
            for range in Self.runs(level.count, fanout: branching(fanout)) {
                var separators = ContiguousArray<Key>()
                separators.reserveCapacity(range.count - 1)
                var children = ContiguousArray<Node>()
                children.reserveCapacity(range.count)
                var counts = ContiguousArray<Int>()
                counts.reserveCapacity(range.count)
                var total = 0
                for i in range {
                    if i != range.lowerBound { separators.append(level[i].first) }
                    children.append(level[i].node)
                    counts.append(level[i].count)
                    total += level[i].count
                }
                parents.append(
                    (level[range.lowerBound].first, Node(keys: separators, children: children, counts: counts), total))
            }
            level = parents
        }
        return level[0].node
    }

    /// Cuts `count` entries into runs of `fanout`; when the last run would be under half full, the last two share
    /// their entries evenly (both then hold at least half). One run of any size when `count` fits in one node.
    static func runs(_ count: Int, fanout: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        runs.reserveCapacity(count / fanout + 1)
        var start = 0
        while start < count {
            runs.append(start..<Swift.min(start + fanout, count))
            start += fanout
        }
        if runs.count >= 2, runs[runs.count - 1].count < fanout / 2 {
            let lower = runs[runs.count - 2].lowerBound
            let total = count - lower
            let middle = lower + total / 2
            runs[runs.count - 2] = lower..<middle
            runs[runs.count - 1] = middle..<count
        }
        return runs
    }
}

/// Elements handed over one by one, each put at the position a list gives it (a checkpoint's index order).
enum Placement {
    /// How many elements ahead `place` asks for a position's cache line: the positions are at random, so each write
    /// would otherwise wait for its line (at a million keys most of a checkpoint load's index time).
    static let distance = 16

    /// Calls `place` with each element `forEach` hands over, the i-th with position `places[i]`, as long as every
    /// position is in `0 ..< places.count` and new. Returns a bit per position placed (bit `p & 63` of word `p >> 6`)
    /// and whether the positions placed are all of them: a permutation of `0 ..< places.count`. `forEach` stops when
    /// its body returns false, which it does at the first position out of range or repeated, or past the last one.
    /// `ahead` is told each position some elements before its element comes, to prefetch where it will be written.
    @inline(__always)
    static func place<Element>(
        _ places: [Int64], _ forEach: ((Element) -> Bool) -> Void, _ place: (Int, Element) -> Void,
        ahead: (Int) -> Void = { _ in }
    ) -> (seen: [UInt64], complete: Bool) {
        let n = places.count
        var seen = [UInt64](repeating: 0, count: (n + 63) >> 6)
        var filled = 0
        var valid = true
        // The closures are only called during this call; the compiler cannot see that `forEach` does not call
        // `place` or `ahead` itself.
        withoutActuallyEscaping(place) { place in
            withoutActuallyEscaping(ahead) { ahead in
                places.withUnsafeBufferPointer { places in
                    seen.withUnsafeMutableBufferPointer { seen in
                        forEach { element in
                            guard filled < n else {
                                valid = false
                                return false
                            }
                            let p = Int(truncatingIfNeeded: places[filled])
                            let bit: UInt64 = 1 << UInt64(p & 63)
                            guard p >= 0, p < n, seen[p >> 6] & bit == 0 else {
                                valid = false
                                return false
                            }
                            seen[p >> 6] |= bit
                            place(p, element)
                            // Where a later element goes: its line is on its way by the time that element comes.
                            let later = filled + Placement.distance
                            if later < n {
                                let q = Int(truncatingIfNeeded: places[later])
                                if q >= 0, q < n { ahead(q) }
                            }
                            filled += 1
                            return true
                        }
                    }
                }
            }
        }
        return (seen, valid && filled == n)
    }
}
