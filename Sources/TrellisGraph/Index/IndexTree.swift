import TrellisCore

/// One ordered index of an entity. A single required number, date or boolean gets a tree of 16-byte `ScalarEntry`
/// keys, two of them a tree of 24-byte `PairEntry` keys; anything else (strings, optionals, more attributes) a tree of
/// general `IndexEntry` keys. All answer in serials, in index order.
package enum IndexTree: Sendable {
    case scalar(SortedTree<ScalarEntry, Void>, ScalarCoding)
    case pair(SortedTree<PairEntry, Void>, ScalarCoding, ScalarCoding)
    case general(SortedTree<IndexEntry, Void>)

    init(_ index: EntityLayout.IndexLayout, attributes: [AttributeDescription]) {
        if index.columns.count == 1, let coding = ScalarCoding(attributes[index.columns[0]]) {
            self = .scalar(SortedTree(), coding)
        } else if index.columns.count == 2, !index.isElements, let a = ScalarCoding(attributes[index.columns[0]]),
            let b = ScalarCoding(attributes[index.columns[1]])
        {
            self = .pair(SortedTree(), a, b)
        } else {
            self = .general(SortedTree())
        }
    }

    package var count: Int {
        switch self {
        case .scalar(let tree, _): return tree.count
        case .pair(let tree, _, _): return tree.count
        case .general(let tree): return tree.count
        }
    }

    /// Whether this is a pair index (whose changes `Graph.nettedIndexChanges(after:feeding:)` records per update).
    var isPair: Bool {
        if case .pair = self { return true }
        return false
    }

    // MARK: Maintenance

    /// Adds (or removes) the entry of `serial`, whose indexed values are `value(column)`. `absent`: the caller knows
    /// the tree does not hold the entry it adds (see `SortedTree.insertBuffered`).
    mutating func update(
        _ columns: [Int], serial: UInt64, adding: Bool, elements: Bool = false, pairs: Bool = false,
        absent: Bool = false, value: (Int) -> Value
    ) {
        if elements, case .general(var tree) = self {
            self = .general(SortedTree())
            for entry in IndexEntry.elementEntries(value(columns[0]), serial: serial, pairs: pairs) {
                if adding { tree[entry] = () } else { tree.removeValue(forKey: entry) }
            }
            self = .general(tree)
            return
        }
        switch self {
        case .scalar(var tree, let coding):
            self = .general(SortedTree())  // release our hold so `tree` is uniquely referenced
            // A value of the wrong case cannot reach a scalar index: commits check types first.
            let entry = ScalarEntry(bits: coding.encode(value(columns[0])) ?? 0, serial: serial)
            // A new entry waits in the tree's pending run: a small commit copies that, not a path of nodes.
            if adding {
                tree.insertBuffered((), forKey: entry, absent: absent)
            } else {
                tree.removeValue(forKey: entry)
            }
            self = .scalar(tree, coding)
        case .pair(var tree, let a, let b):
            self = .general(SortedTree())
            let entry = PairEntry(
                first: a.encode(value(columns[0])) ?? 0, second: b.encode(value(columns[1])) ?? 0, serial: serial)
            if adding {
                tree.insertBuffered((), forKey: entry, absent: absent)
            } else {
                tree.removeValue(forKey: entry)
            }
            self = .pair(tree, a, b)
        case .general(var tree):
            self = .general(SortedTree())
            let entry = IndexEntry(columns.map(value), serial: serial)
            if adding {
                tree.insertBuffered((), forKey: entry, absent: absent)
            } else {
                tree.removeValue(forKey: entry)
            }
            self = .general(tree)
        }
    }

    // MARK: Queries

    /// The first serial in a scalar index's tree whose encoded value is `bits`.
    /// - Complexity: O(log n), one descent.
    @inline(__always)
    static func first(equalTo bits: UInt64, in tree: SortedTree<ScalarEntry, Void>) -> UInt64? {
        guard let entry = tree.firstKey(bitsNotBelow: bits), entry.bits == bits else { return nil }
        return entry.serial
    }

    /// Serials between bounds on a prefix of the indexed values, in index order.
    func serials(
        from lower: [Value]?, inclusive lowerInclusive: Bool, to upper: [Value]?, inclusive upperInclusive: Bool,
        reverse: Bool = false, limit: Int = .max
    ) -> [UInt64] {
        var out: [UInt64] = []
        forEachSerial(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive, reverse: reverse, limit: limit
        ) { out.append($0) }
        return out
    }

    /// Calls `body` with the serials `serials(from:inclusive:to:inclusive:reverse:limit:)` returns, in order, without
    /// building the array.
    /// - Complexity: O(log n + k) for k serials.
    @inline(__always)
    func forEachSerial(
        from lower: [Value]?, inclusive lowerInclusive: Bool, to upper: [Value]?, inclusive upperInclusive: Bool,
        reverse: Bool, limit: Int, _ body: (UInt64) -> Void
    ) {
        guard limit > 0 else { return }
        var left = limit
        /// Passes one serial on; false once `limit` have gone.
        func take(_ serial: UInt64) -> Bool {
            body(serial)
            left -= 1
            return left > 0
        }
        switch self {
        case .scalar(let tree, let coding):
            guard let (lo, hi) = Self.scalarBounds(coding, lower, lowerInclusive, upper, upperInclusive) else {
                return
            }
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial)
            }
        case .pair(let tree, let a, let b):
            guard let (lo, hi) = Self.pairBounds(a, b, lower, lowerInclusive, upper, upperInclusive) else { return }
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial)
            }
        case .general(let tree):
            let (lo, hi) = Self.generalBounds(lower, lowerInclusive, upper, upperInclusive)
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial)
            }
        }
    }

    /// Calls `body` with the entries between the bounds, in order, each as its object's ID and the values it is keyed
    /// by (`IndexEntryView`), as `forEachSerial` selects them.
    /// - Complexity: O(log n + k) for k entries.
    func forEachEntry(
        entity: UInt32, from lower: [Value]?, inclusive lowerInclusive: Bool, to upper: [Value]?,
        inclusive upperInclusive: Bool, reverse: Bool, limit: Int, _ body: (IndexEntryView) -> Void
    ) {
        guard limit > 0 else { return }
        var left = limit
        @inline(__always) func take(_ serial: UInt64, _ storage: IndexEntryView.Storage) -> Bool {
            body(IndexEntryView(id: ObjectID(entity: entity, serial: serial), storage: storage))
            left -= 1
            return left > 0
        }
        switch self {
        case .scalar(let tree, let coding):
            guard let (lo, hi) = Self.scalarBounds(coding, lower, lowerInclusive, upper, upperInclusive) else {
                return
            }
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial, .scalar(entry.bits, coding))
            }
        case .pair(let tree, let a, let b):
            guard let (lo, hi) = Self.pairBounds(a, b, lower, lowerInclusive, upper, upperInclusive) else { return }
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial, .pair(entry.first, entry.second, a, b))
            }
        case .general(let tree):
            let (lo, hi) = Self.generalBounds(lower, lowerInclusive, upper, upperInclusive)
            tree.forEachElement(from: lo, inclusive: true, to: hi, inclusive: false, reverse: reverse) { entry, _ in
                take(entry.serial, .general(entry))
            }
        }
    }

    /// The number of entries `serials` would return without a limit.
    /// - Complexity: O(log n).
    func count(
        from lower: [Value]?, inclusive lowerInclusive: Bool, to upper: [Value]?, inclusive upperInclusive: Bool
    )
        -> Int
    {
        switch self {
        case .scalar(let tree, let coding):
            guard let (lo, hi) = Self.scalarBounds(coding, lower, lowerInclusive, upper, upperInclusive) else {
                return 0
            }
            return tree.count(from: lo, to: hi)
        case .pair(let tree, let a, let b):
            guard let (lo, hi) = Self.pairBounds(a, b, lower, lowerInclusive, upper, upperInclusive) else { return 0 }
            return tree.count(from: lo, to: hi)
        case .general(let tree):
            let (lo, hi) = Self.generalBounds(lower, lowerInclusive, upper, upperInclusive)
            return tree.count(from: lo, to: hi)
        }
    }

    /// The first serial (in index order) whose indexed values equal `values`.
    /// - Complexity: O(log n), one descent.
    func first(equalTo values: [Value]) -> UInt64? {
        switch self {
        case .scalar(let tree, let coding):
            guard values.count == 1, case .key(let probe) = coding.bound(values[0], lower: true, inclusive: true),
                let (entry, _) = tree.firstEntry(notBelow: probe), entry.bits == probe.bits,
                coding.bound(values[0], lower: false, inclusive: true).isAtOrAbove(entry)
            else { return nil }
            return entry.serial
        case .pair(let tree, let a, let b):
            // More values than the index holds match nothing, as in a general index.
            guard !values.isEmpty, values.count <= 2, let (lo, hi) = Self.pairBounds(a, b, values, true, values, true),
                let (entry, _) = tree.firstEntry(notBelow: lo ?? PairEntry(first: 0, second: 0, serial: 0)),
                hi.map({ entry < $0 }) ?? true
            else { return nil }
            return entry.serial
        case .general(let tree):
            guard let (entry, _) = tree.firstEntry(notBelow: .lowerProbe(values)),
                IndexEntry.compareValues(entry, .lowerProbe(values)) == 0
            else { return nil }
            return entry.serial
        }
    }

    /// Another serial holding the same values as `serial` does (for unique constraints; nulls never conflict).
    /// - Complexity: O(log n), at most two descents.
    func conflict(with values: [Value], serial: UInt64) -> UInt64? {
        guard !values.contains(where: \.isNull) else { return nil }
        switch self {
        case .scalar(let tree, let coding):
            guard let bits = coding.encode(values[0]) else { return nil }
            return Self.conflict(bits: bits, serial: serial, in: tree)
        case .pair(let tree, let a, let b):
            guard values.count == 2, let x = a.encode(values[0]), let y = b.encode(values[1]) else { return nil }
            for probe in [
                PairEntry(first: x, second: y, serial: 0), PairEntry(first: x, second: y, serial: serial &+ 1),
            ] {
                guard let (entry, _) = tree.firstEntry(notBelow: probe), entry.first == x, entry.second == y else {
                    return nil
                }
                if entry.serial != serial { return entry.serial }
            }
        case .general(let tree):
            for probe in [IndexEntry.lowerProbe(values), IndexEntry(values, serial: serial &+ 1)] {
                guard let (entry, _) = tree.firstEntry(notBelow: probe), IndexEntry.compareValues(entry, probe) == 0
                else { return nil }
                if entry.serial != serial { return entry.serial }
            }
        }
        return nil
    }

    /// Another serial than `serial` whose encoded value in a scalar index's tree is `bits`: the first entry with those
    /// bits, or, when that is `serial`'s own, the first after it.
    /// - Complexity: O(log n), at most two descents.
    @inline(__always)
    static func conflict(bits: UInt64, serial: UInt64, in tree: SortedTree<ScalarEntry, Void>) -> UInt64? {
        guard let first = tree.firstKey(bitsNotBelow: bits), first.bits == bits else { return nil }
        if first.serial != serial { return first.serial }
        guard serial != .max,
            let (next, _) = tree.firstEntry(notBelow: ScalarEntry(bits: bits, serial: serial + 1)), next.bits == bits
        else { return nil }
        return next.serial
    }

    /// Every serial in index order (for invariant checks).
    var allSerials: [UInt64] {
        serials(from: nil, inclusive: true, to: nil, inclusive: true)
    }

    func checkInvariants() {
        switch self {
        case .scalar(let tree, _): tree.checkInvariants()
        case .pair(let tree, _, _): tree.checkInvariants()
        case .general(let tree): tree.checkInvariants()
        }
    }

    // MARK: Bounds

    private static func scalarBounds(
        _ coding: ScalarCoding, _ lower: [Value]?, _ li: Bool, _ upper: [Value]?, _ ui: Bool
    ) -> (ScalarEntry?, ScalarEntry?)? {
        var lo: ScalarEntry?
        var hi: ScalarEntry?
        // A bound of more values than one sorts after the entries holding its first, as a longer probe does in a
        // general index: they lie below it, whichever end it is.
        if let lower, let v = lower.first {
            switch coding.bound(v, lower: true, inclusive: lower.count > 1 ? false : li) {
            case .empty: return nil
            case .unbounded: break
            case .key(let k): lo = k
            }
        }
        if let upper, let v = upper.first {
            switch coding.bound(v, lower: false, inclusive: upper.count > 1 ? true : ui) {
            case .empty: return nil
            case .unbounded: break
            case .key(let k): hi = k
            }
        }
        if let lo, let hi, hi < lo { return nil }
        // The tree's upper bound is exclusive; probes never equal a stored entry, so that changes nothing.
        return (lo, hi)
    }

    /// The tree bounds of a pair index for bounds on a prefix of its two values: the first value's bound, narrowed by
    /// the second's when the first is a value the index can hold. A bound of more values than two sorts after the
    /// entries holding its first two, as a longer probe does in a general index.
    private static func pairBounds(
        _ a: ScalarCoding, _ b: ScalarCoding, _ lower: [Value]?, _ li: Bool, _ upper: [Value]?, _ ui: Bool
    ) -> (PairEntry?, PairEntry?)? {
        var lo: PairEntry?
        var hi: PairEntry?
        if let lower, !lower.isEmpty {
            guard let key = pairBound(a, b, lower, lower: true, inclusive: li) else { return nil }
            lo = key
        }
        if let upper, !upper.isEmpty {
            guard let key = pairBound(a, b, upper, lower: false, inclusive: ui) else { return nil }
            hi = key
        }
        if let lo, let hi, hi < lo { return nil }
        return (lo, hi)
    }

    /// One end of `pairBounds`: nil when nothing can lie on the inner side of it, `.some(nil)` when everything does.
    private static func pairBound(
        _ a: ScalarCoding, _ b: ScalarCoding, _ values: [Value], lower: Bool, inclusive: Bool
    ) -> PairEntry?? {
        let outer: ScalarEntry
        switch a.bound(values[0], lower: lower, inclusive: inclusive) {
        case .empty: return nil
        case .unbounded: return .some(nil)
        case .key(let k): outer = k
        }
        // A first value the index can hold exactly bounds differently when inclusive and when not; one rounded
        // inward (2.5 on integers) does not, and then the second value cannot narrow it.
        let exact: Bool
        if case .key(let flipped) = a.bound(values[0], lower: lower, inclusive: !inclusive) {
            exact = flipped.serial != outer.serial
        } else {
            exact = false
        }
        // Before (or after) every entry holding the first value.
        let before = PairEntry(first: outer.bits, second: 0, serial: 0)
        let after = PairEntry(first: outer.bits, second: .max, serial: .max)
        guard exact, values.count > 1 else { return outer.serial == 0 ? before : after }
        // Past two values: the entries holding the first two lie below the bound, whichever end it is.
        let inclusive = values.count > 2 ? !lower : inclusive
        switch b.bound(values[1], lower: lower, inclusive: inclusive) {
        case .key(let k): return PairEntry(first: outer.bits, second: k.bits, serial: k.serial)
        case .unbounded: return lower ? before : after
        case .empty: return lower ? after : before
        }
    }

    private static func generalBounds(
        _ lower: [Value]?, _ li: Bool, _ upper: [Value]?, _ ui: Bool
    ) -> (
        IndexEntry?, IndexEntry?
    ) {
        let lo = lower.flatMap { $0.isEmpty ? nil : (li ? IndexEntry.lowerProbe($0) : IndexEntry.upperProbe($0)) }
        let hi = upper.flatMap { $0.isEmpty ? nil : (ui ? IndexEntry.upperProbe($0) : IndexEntry.lowerProbe($0)) }
        return (lo, hi)
    }
}

extension ScalarCoding.Bound {
    /// Whether an upper bound admits `entry`.
    func isAtOrAbove(_ entry: ScalarEntry) -> Bool {
        switch self {
        case .unbounded: return true
        case .empty: return false
        case .key(let k): return !(k < entry)
        }
    }
}
