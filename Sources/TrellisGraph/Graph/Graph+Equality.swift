import TrellisCore

extension Graph {
    /// The ways this graph's contents differ from `other`'s: live objects, attribute values (identical, case and bits:
    /// `Value.isIdentical(to:)`), the targets of every relationship (both ends: each side is a relationship of its own
    /// entity), every index entry in order, and the highest serial of each entity (not sequence numbers, not the
    /// shape of the trees). Empty when the two hold the same objects and indexes.
    ///
    /// The recovery and crash tests use it to prove that a replayed graph equals the live one.
    /// - Complexity: O(n) over both graphs, shortened by `limit`.
    package func differences(from other: Graph, limit: Int = 10) -> [String] {
        var out: [String] = []
        guard schema == other.schema else { return ["the schemas differ"] }
        if maxSerials != other.maxSerials { out.append("highest serials \(maxSerials) vs \(other.maxSerials)") }
        for (e, layout) in schema.layouts.enumerated() {
            let entity = UInt32(e)
            if count(entity: entity) != other.count(entity: entity) {
                out.append("\(layout.name): \(count(entity: entity)) objects, other has \(other.count(entity: entity))")
                if out.count >= limit { return out }
            }
            var theirs = other.rows(entity: entity).makeIterator()
            var pending = theirs.next()
            for row in rows(entity: entity) {
                while let p = pending, p.id.serial < row.id.serial {
                    out.append("\(schema.describe(p.id)) exists only in the other graph")
                    if out.count >= limit { return out }
                    pending = theirs.next()
                }
                guard let p = pending, p.id == row.id else {
                    out.append("\(schema.describe(row.id)) exists only in this graph")
                    if out.count >= limit { return out }
                    continue
                }
                pending = theirs.next()
                for (a, attribute) in layout.attributes.enumerated() {
                    let (x, y) = (row.value(at: a), p.value(at: a))
                    if !x.isIdentical(to: y) {
                        out.append("\(schema.describe(row.id)).\(attribute.name): \(x) vs \(y)")
                        if out.count >= limit { return out }
                    }
                }
                for (k, rel) in layout.relationships.enumerated() {
                    let key = RelationshipKey(entity: entity, index: k)
                    let (x, y) = (row.targetSerials(key), p.targetSerials(key))
                    if x != y {
                        out.append("\(schema.describe(row.id)).\(rel.name): targets \(x) vs \(y)")
                        if out.count >= limit { return out }
                    }
                }
            }
            while let p = pending {
                out.append("\(schema.describe(p.id)) exists only in the other graph")
                if out.count >= limit { return out }
                pending = theirs.next()
            }
            for (i, index) in layout.indexes.enumerated() {
                if let difference = tables[e].indexes[i].firstDifference(from: other.tables[e].indexes[i]) {
                    out.append(
                        "\(layout.name) index \(index.columns.map { layout.attributes[$0].name }): \(difference)")
                    if out.count >= limit { return out }
                }
            }
        }
        return out
    }

    /// Checks every internal invariant: leaves against counts, both ends of every relationship in step (except
    /// dangling ends a no-action rule left), every index entry (values and serial, in order) against its row. Returns
    /// the problems found.
    package func invariantViolations(limit: Int = 10) -> [String] {
        var out: [String] = []
        func report(_ s: String) -> Bool {
            out.append(s)
            return out.count >= limit
        }
        for (e, layout) in schema.layouts.enumerated() {
            let entity = UInt32(e)
            let table = tables[e]
            table.leaves.checkInvariants()
            var live = 0
            var expectedEntries: [[IndexEntry]] = Array(repeating: [], count: layout.indexes.count)
            let targetTables = layout.relationships.map { tables[Int($0.target)] }
            for row in rows(entity: entity) {
                live += 1
                if row.id.serial > table.maxSerial, report("\(schema.describe(row.id)) is above maxSerial") {
                    return out
                }
                if !layout.indexes.isEmpty {
                    let values = row.values
                    for (i, index) in layout.indexes.enumerated() {
                        if index.isElements {
                            expectedEntries[i] += IndexEntry.elementEntries(
                                values[index.columns[0]], serial: row.id.serial, pairs: index.isPairs)
                        } else {
                            expectedEntries[i].append(
                                IndexEntry(index.columns.map { values[$0] }, serial: row.id.serial))
                        }
                    }
                }
                for (k, rel) in layout.relationships.enumerated() {
                    let inverse = RelationshipKey(entity: rel.target, index: rel.inverse)
                    for serial in row.targetSerials(RelationshipKey(entity: entity, index: k)) {
                        let target = ObjectID(entity: rel.target, serial: serial)
                        // Dangling ends (only a no-action rule leaves them) are skipped; the membership test is
                        // O(log n), so one huge to-many relationship does not make the check quadratic.
                        guard let (leaf, r) = targetTables[k].locate(serial) else { continue }
                        if !leaf.hasTarget(r, inverse.index, row.id.serial),
                            report("\(schema.describe(row.id)).\(rel.name) → \(schema.describe(target)) has no inverse")
                        {
                            return out
                        }
                    }
                }
            }
            if live != table.count, report("\(layout.name): count \(table.count) but \(live) live rows") { return out }
            for (i, entries) in expectedEntries.enumerated() {
                let tree = table.indexes[i]
                tree.checkInvariants()
                // Scalar trees order by encoded bits: the same order as `Value`'s, which this also checks.
                if let difference = tree.firstDifference(fromEntries: entries.sorted()),
                    report("\(layout.name): index \(i) does not match the rows: \(difference)")
                {
                    return out
                }
            }
        }
        return out
    }
}
