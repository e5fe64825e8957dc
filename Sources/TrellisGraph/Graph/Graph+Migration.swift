import TrellisCore

/// Moving a graph to a new schema, column by column: a migration is the same pure function live and in recovery.
extension Graph {
    /// This graph under `schema`, its data moved as `mapping` says. Every object keeps its serial (and so its ID,
    /// as long as its entity keeps its number); a new attribute becomes a column of its default, a removed one is
    /// dropped, a renamed one keeps its column. An entity whose columns stay where they are keeps its leaves as they
    /// are (shared, not copied), and an index over unchanged columns is kept; other indexes are built in one pass.
    /// - Complexity: O(n) for the objects of entities whose columns change, O(n log n) for each rebuilt index;
    ///   O(1) an entity that only changes names, rules or counts.
    package func migrated(to schema: Schema, mapping: SchemaMapping) -> Graph {
        var out = Graph(schema: schema)
        out.sequence = sequence
        for (t, map) in mapping.entities.enumerated() {
            guard let s = map.source else { continue }
            let source = tables[s]
            let from = self.schema.layouts[s]
            let layout = schema.layouts[t]
            var table = EntityTable(layout)
            table.maxSerial = source.maxSerial
            // A retired entity keeps only its highest serial, so that its IDs are never given out again.
            if schema.entities[t].isRetired {
                out.tables[t] = table
                continue
            }
            table.count = source.count
            var keys: [UInt64] = []
            var leaves: [Leaf] = []
            keys.reserveCapacity(source.count / Leaf.width + 1)
            leaves.reserveCapacity(source.count / Leaf.width + 1)
            if mapping.keepsLeaves(
                map, sourceAttributes: from.attributes.count, sourceRelationships: from.relationships.count)
            {
                table.leaves = source.leaves
                source.leaves.forEach { key, leaf in
                    keys.append(key)
                    leaves.append(leaf)
                }
            } else {
                source.leaves.forEach { key, leaf in
                    keys.append(key)
                    leaves.append(Self.migrated(leaf, map, layout))
                }
                table.leaves = SerialTrie(ascendingKeys: keys, values: leaves)
            }
            for (i, index) in layout.indexes.enumerated() {
                if let kept = Self.keptIndex(index, of: layout, map: map, from: from, tree: source.indexes) {
                    table.indexes[i] = kept
                } else if table.count > 0 {
                    table.indexes[i] = IndexBuilder.sortedIndex(
                        table.indexes[i], index, keys: keys, leaves: leaves)
                }
            }
            out.tables[t] = table
        }
        return out
    }

    /// A stored index that holds exactly what `index` would: the same columns, each copied as it is, in a tree of
    /// the same kind.
    private static func keptIndex(
        _ index: EntityLayout.IndexLayout, of layout: EntityLayout, map: SchemaMapping.EntityMap,
        from: EntityLayout, tree: [IndexTree]
    ) -> IndexTree? {
        var columns: [Int] = []
        for c in index.columns {
            guard map.attributes[c].isPlainCopy, let s = map.attributes[c].source else { return nil }
            columns.append(s)
        }
        guard let j = from.indexes.firstIndex(where: { $0.columns == columns }) else { return nil }
        let empty = IndexTree(index, attributes: layout.attributes)
        switch (empty, tree[j]) {
        case (.scalar(_, let a), .scalar(_, let b)) where a == b: return tree[j]
        case (.pair(_, let a, let b), .pair(_, let c, let d)) where a == c && b == d: return tree[j]
        case (.general, .general): return tree[j]
        default: return nil
        }
    }

    /// One leaf with its columns and links moved, converted and filled.
    private static func migrated(_ leaf: Leaf, _ map: SchemaMapping.EntityMap, _ layout: EntityLayout) -> Leaf {
        var out = Leaf(present: leaf.present, columns: [], links: [])
        out.columns.reserveCapacity(map.attributes.count)
        for (a, source) in map.attributes.enumerated() {
            let attribute = layout.attributes[a]
            let fill = attribute.defaultValue.flatMap { attribute.type.normalized($0) } ?? .null
            guard let s = source.source else {
                var column = Column(kind: Column.Kind(attribute.type))
                for r in Leaf.rows(leaf.present) { column.set(r, fill) }
                out.columns.append(column)
                continue
            }
            var column = leaf.columns[s]
            if source.toDouble {
                var doubles = Column(kind: .double)
                for r in Leaf.rows(leaf.present) where !column.isNull(r) {
                    doubles.set(r, .double(Double(column.int(at: r))))
                }
                doubles.nulls = column.nulls
                column = doubles
            }
            if source.fillNulls && !fill.isNull {
                for r in Leaf.rows(leaf.present) where column.isNull(r) { column.set(r, fill) }
            }
            out.columns.append(column)
        }
        out.links.reserveCapacity(map.relationships.count)
        for (k, source) in map.relationships.enumerated() {
            out.links.append(
                source.map { leaf.links[$0].shaped(like: layout.relationships[k]) }
                    ?? LinkColumn(layout.relationships[k]))
        }
        return out
    }

    /// What breaks one migration check in this graph.
    package struct Violation: Sendable {
        /// The position of the check in the list given.
        package var check: Int
        /// One offending object, or how many more there are, for people.
        package var text: String
        /// For a unique check: the later object of a duplicate pair, the earlier one, and the values they share.
        package var duplicate: (object: ObjectID, existing: ObjectID, values: [Value])?
    }

    /// What breaks `checks` in this graph: one line per offending object, at most `limit` per check.
    package func violations(of checks: [MigrationCheck], limit: Int = 10) -> [Violation] {
        var out: [Violation] = []
        for (c, check) in checks.enumerated() {
            func add(_ text: String, duplicate: (ObjectID, ObjectID, [Value])? = nil) {
                out.append(Violation(check: c, text: text, duplicate: duplicate))
            }
            switch check {
            case .noNulls(let e, let a):
                let layout = schema.layouts[e]
                var found = 0
                for row in rows(entity: UInt32(e)) where row.value(AttributeKey(entity: UInt32(e), index: a)).isNull {
                    found += 1
                    if found <= limit {
                        add(
                            "\(schema.describe(row.id)) holds null in '\(layout.attributes[a].name)', which becomes "
                                + "required without a default")
                    }
                }
                if found > limit { add("… and \(found - limit) more objects of \(layout.name) with null") }
            case .unique(let e, let i):
                let layout = schema.layouts[e]
                let index = layout.indexes[i]
                let names = index.columns.map { layout.attributes[$0].name }.joined(separator: ", ")
                var first: [[Value]: ObjectID] = [:]
                var found = 0
                for row in rows(entity: UInt32(e)) {
                    let values = index.columns.map { row.value(AttributeKey(entity: UInt32(e), index: $0)) }
                    guard !values.contains(where: \.isNull) else { continue }
                    if let other = first[values] {
                        found += 1
                        if found <= limit {
                            let shown = values.map(\.description).joined(separator: ", ")
                            add(
                                "\(schema.describe(row.id)) and \(schema.describe(other)) both hold (\(shown)) in the "
                                    + "new unique constraint on \(layout.name)(\(names))",
                                duplicate: (row.id, other, values))
                        }
                    } else {
                        first[values] = row.id
                    }
                }
                if found > limit { add("… and \(found - limit) more duplicates in \(layout.name)(\(names))") }
            case .counts(let e, let k):
                let layout = schema.layouts[e]
                let r = layout.relationships[k]
                let key = RelationshipKey(entity: UInt32(e), index: k)
                var found = 0
                for row in rows(entity: UInt32(e)) {
                    let n = targetCount(row.id, key)
                    guard n < r.minCount || r.maxCount.map({ n > $0 }) ?? false else { continue }
                    found += 1
                    if found <= limit {
                        add(
                            "\(schema.describe(row.id)) has \(n) target(s) in '\(r.name)', outside the new bounds "
                                + "\(r.minCount)...\(r.maxCount.map(String.init) ?? "")")
                    }
                }
                if found > limit { add("… and \(found - limit) more objects of \(layout.name)") }
            }
        }
        return out
    }

    /// This graph under a schema of the same structure (the same fingerprint): other defaults or history.
    package func withSchema(_ schema: Schema) -> Graph {
        precondition(schema.fingerprint == self.schema.fingerprint, "withSchema: another structure")
        var out = Graph(schema: schema)
        out.sequence = sequence
        out.tables = tables
        return out
    }
}
