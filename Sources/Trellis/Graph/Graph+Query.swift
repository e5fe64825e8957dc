extension Graph {
    /// The object whose indexed values equal `values` (the first one, by serial, for a non-unique index).
    /// - Complexity: O(log n).
    public func lookup(_ index: IndexKey, _ values: [Value]) -> ObjectID? {
        guard let tree = tree(index), !values.isEmpty else { return nil }
        for (entry, _) in tree.elements(from: .lowerProbe(values), to: .upperProbe(values)) {
            return ObjectID(entity: index.entity, serial: entry.serial)
        }
        return nil
    }

    /// Objects in the order of an index, between optional bounds on a prefix of its values.
    ///
    /// A bound with fewer values than the index has compares by that prefix: `from: ["a"], to: ["a"]` with both ends
    /// inclusive selects every entry whose first value is "a".
    /// - Complexity: O(log n + k) for k objects returned.
    public func scan(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true, reverse: Bool = false, limit: Int = .max
    ) -> [ObjectID] {
        guard let tree = tree(index), limit > 0 else { return [] }
        let (lo, hi) = Self.probes(lower, lowerInclusive, upper, upperInclusive)
        var out: [ObjectID] = []
        for (entry, _) in tree.elements(from: lo, to: hi, reverse: reverse) {
            out.append(ObjectID(entity: index.entity, serial: entry.serial))
            if out.count == limit { break }
        }
        return out
    }

    /// The number of objects between bounds of an index, as `scan` selects them.
    /// - Complexity: O(log n).
    public func count(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true
    ) -> Int {
        guard let tree = tree(index) else { return 0 }
        let (lo, hi) = Self.probes(lower, lowerInclusive, upper, upperInclusive)
        return tree.count(from: lo, to: hi)
    }

    func tree(_ index: IndexKey) -> SortedTree<IndexEntry, Void>? {
        guard Int(index.entity) < tables.count, index.index < tables[Int(index.entity)].indexes.count else {
            return nil
        }
        return tables[Int(index.entity)].indexes[index.index]
    }

    private static func probes(
        _ lower: [Value]?, _ li: Bool, _ upper: [Value]?, _ ui: Bool
    ) -> (
        IndexEntry?, IndexEntry?
    ) {
        let lo = lower.flatMap { $0.isEmpty ? nil : (li ? IndexEntry.lowerProbe($0) : IndexEntry.upperProbe($0)) }
        let hi = upper.flatMap { $0.isEmpty ? nil : (ui ? IndexEntry.upperProbe($0) : IndexEntry.lowerProbe($0)) }
        return (lo, hi)
    }

    /// Serials of other live objects sharing `entry`'s values in a unique index (nulls never conflict).
    func uniqueConflicts(_ index: Int, entity: UInt32, _ entry: IndexEntry) -> [UInt64] {
        guard !entry.hasNull else { return [] }
        let tree = tables[Int(entity)].indexes[index]
        let values = entry.values
        var out: [UInt64] = []
        for (other, _) in tree.elements(from: .lowerProbe(values), to: .upperProbe(values))
        where other.serial != entry.serial {
            out.append(other.serial)
        }
        return out
    }
}
