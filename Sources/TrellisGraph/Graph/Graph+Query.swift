import TrellisCore

extension Graph {
    /// The object whose indexed values equal `values` (the first one, by serial, for a non-unique index).
    /// - Complexity: O(log n).
    public func lookup(_ index: IndexKey, _ values: [Value]) -> ObjectID? {
        if values.count == 1 { return lookup(index, values[0]) }
        guard let tree = tree(index), !values.isEmpty else { return nil }
        return tree.first(equalTo: values).map { ObjectID(entity: index.entity, serial: $0) }
    }

    /// `lookup(index, [value])` without building an array: the object whose value in a one-attribute index equals
    /// `value` (the first one, by serial, for a non-unique index). On an index of several attributes, the first in
    /// index order whose first value equals `value`.
    ///
    /// ```swift
    /// let byID = IndexKey(entity: item, index: 0)
    /// if let found = snapshot.lookup(byID, .int(42)) { print(snapshot.object(found)?.string(title) ?? "") }
    /// ```
    /// - Complexity: O(log n).
    public func lookup(_ index: IndexKey, _ value: Value) -> ObjectID? {
        let e = Int(index.entity)
        guard e < tables.count, index.index < tables[e].indexes.count else { return nil }
        // A value of a scalar index's own kind is matched in place and by its encoded bits: `tree(index)` copies the
        // whole index (every reference in both of its cases' payloads, through value witnesses) before a method can be
        // called on it. Any other value (2.0 on an integer index, a general index) goes through the general bounds.
        let serial: UInt64?
        if case .scalar(let tree, let coding) = tables[e].indexes[index.index], let bits = coding.encode(value) {
            serial = IndexTree.first(equalTo: bits, in: tree)
        } else {
            serial = tables[e].indexes[index.index].first(equalTo: [value])
        }
        return serial.map { ObjectID(entity: index.entity, serial: $0) }
    }

    /// Objects in the order of an index, between optional bounds on a prefix of its values.
    ///
    /// A bound with fewer values than the index has compares by that prefix: `from: ["a"], to: ["a"]` with both ends
    /// inclusive selects every entry whose first value is "a". A bound with more values than the index has sorts
    /// after every entry it starts with. Values compare as `Value` orders them: integers and doubles by their exact
    /// values, whatever their cases.
    /// - Complexity: O(log n + k) for k objects returned.
    public func scan(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true, reverse: Bool = false, limit: Int = .max
    ) -> [ObjectID] {
        guard let tree = tree(index) else { return [] }
        var ids: [ObjectID] = []
        tree.forEachSerial(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive, reverse: reverse,
            limit: limit
        ) { ids.append(ObjectID(entity: index.entity, serial: $0)) }
        return ids
    }

    /// The objects `scan` selects, in the same order, as rows to read in place: one pass over the index, then each
    /// row found as the sequence reaches it, where `scan` and then `object(_:)` for each ID look up the entity's
    /// table for every object.
    ///
    /// ```swift
    /// for row in snapshot.rows(byScore, from: [.double(10)], to: [.double(20)], inclusive: false) {
    ///     total += row.double(score) ?? 0
    /// }
    /// ```
    /// - Complexity: O(log n + k) to make, for k objects; each step is a few node hops.
    public func rows(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true, reverse: Bool = false, limit: Int = .max
    ) -> IndexRowSequence {
        guard let tree = tree(index) else {
            return IndexRowSequence(entity: index.entity, serials: [], leaves: SerialTrie(), columnCount: 0)
        }
        var serials: [UInt64] = []
        // The tree counts a range in O(log n): one allocation instead of one each time the array doubles.
        serials.reserveCapacity(
            Swift.min(limit, tree.count(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)))
        tree.forEachSerial(
            from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive, reverse: reverse,
            limit: limit
        ) { serials.append($0) }
        return IndexRowSequence(
            entity: index.entity, serials: serials, leaves: tables[Int(index.entity)].leaves,
            columnCount: schema.layouts[Int(index.entity)].attributes.count)
    }

    /// Reads an index alone: calls `body` with each entry `scan` selects, in the same order, as the object's ID and
    /// the values the entry is keyed by, without finding the object's row. An index that holds every value a read
    /// needs answers it this way; `.on("score", "id")` covers a read of `id` in `score` order.
    ///
    /// ```swift
    /// snapshot.forEachEntry(byScoreThenID, from: [.double(10)], to: [.double(20)], inclusive: false) { entry in
    ///     total += entry.int(1) ?? 0   // the second value: id
    /// }
    /// ```
    /// - Complexity: O(log n + k) for k entries; reading an entry's values touches nothing outside the index.
    public func forEachEntry(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true, reverse: Bool = false, limit: Int = .max,
        _ body: (IndexEntryView) -> Void
    ) {
        let e = Int(index.entity)
        guard e < tables.count, index.index < tables[e].indexes.count else { return }
        tables[e].indexes[index.index].forEachEntry(
            entity: index.entity, from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive,
            reverse: reverse, limit: limit, body)
    }

    /// The number of objects between bounds of an index, as `scan` selects them.
    /// - Complexity: O(log n).
    public func count(
        _ index: IndexKey, from lower: [Value]? = nil, inclusive lowerInclusive: Bool = true, to upper: [Value]? = nil,
        inclusive upperInclusive: Bool = true
    ) -> Int {
        tree(index)?.count(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive) ?? 0
    }

    func tree(_ index: IndexKey) -> IndexTree? {
        guard Int(index.entity) < tables.count, index.index < tables[Int(index.entity)].indexes.count else {
            return nil
        }
        return tables[Int(index.entity)].indexes[index.index]
    }

    /// Another live object holding the same values as `id` in a unique index (nulls never conflict).
    package func uniqueConflict(_ index: Int, of id: ObjectID) -> (ObjectID, [Value])? {
        let e = Int(id.entity)
        // A scalar index is probed in place with the value's bits: copying the table, the index layout and the tree
        // and building the values array cost a one-object commit more than the probes.
        if case .scalar(let tree, let coding) = tables[e].indexes[index] {
            guard let (leaf, r) = locate(id),
                let bits = coding.encode(leaf.value(column: schema.layouts[e].indexes[index].columns[0], row: r))
            else { return nil }
            guard let other = IndexTree.conflict(bits: bits, serial: id.serial, in: tree) else { return nil }
            let values = tables[e].indexValues(schema.layouts[e].indexes[index], serial: id.serial)
            return (ObjectID(entity: id.entity, serial: other), values)
        }
        let table = tables[e]
        let values = table.indexValues(layout(id.entity).indexes[index], serial: id.serial)
        guard let other = table.indexes[index].conflict(with: values, serial: id.serial) else { return nil }
        return (ObjectID(entity: id.entity, serial: other), values)
    }
}
