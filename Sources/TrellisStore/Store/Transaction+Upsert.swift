import TrellisCore
import TrellisGraph

/// `UniqueConflictResolution.update`: the transaction rewritten so that each insert whose unique values another object
/// holds becomes an update of that object.
extension Transaction {
    /// One unique constraint's values on one entity.
    private struct UniqueKey: Hashable {
        let entity: UInt32
        let index: Int
        let values: [Value]
    }

    /// This transaction with every insert whose unique values are held by an object stored in `graph` (and not deleted
    /// here) or by an insert before it turned into an update of that object, and the IDs so replaced: inserted ID →
    /// the holder's ID. Edits and deletes naming a replaced ID name the holder instead. Values that do not fit their
    /// attribute are left for the commit to refuse.
    /// - Complexity: O(i · u · log n) for i inserts with u unique constraints each, plus O(e + d) edits and deletes.
    func mergingUniqueConflicts(on graph: Graph) -> (Transaction, [ObjectID: ObjectID]) {
        let hasUnique = schema.layouts.map { $0.indexes.contains(where: \.isUnique) }
        guard inserts.contains(where: { hasUnique[Int($0.id.entity)] }) else { return (self, [:]) }
        var merged = Transaction(schema: schema, allocator: allocator)
        merged.checks = checks
        var replaced: [ObjectID: ObjectID] = [:]
        var claimed: [UniqueKey: ObjectID] = [:]
        for insert in inserts {
            let e = Int(insert.id.entity)
            guard e < schema.layouts.count, hasUnique[e], insert.values.count == schema.layouts[e].attributes.count
            else {
                merged.insert(existing: insert.id, row: insert.values)
                continue
            }
            let attributes = schema.layouts[e].attributes
            let row = insert.values.indices.map {
                attributes[$0].type.normalized(insert.values[$0]) ?? insert.values[$0]
            }
            var keys: [UniqueKey] = []
            var holder: ObjectID?
            for (i, index) in schema.layouts[e].indexes.enumerated() where index.isUnique {
                let values = index.columns.map { row[$0] }
                // Nulls never conflict.
                guard !values.contains(where: \.isNull) else { continue }
                let key = UniqueKey(entity: insert.id.entity, index: i, values: values)
                keys.append(key)
                if holder == nil {
                    holder = claimed[key] ?? graph.lookup(IndexKey(entity: insert.id.entity, index: i), values)
                    if let h = holder, deleteSet.contains(h) { holder = nil }
                }
            }
            guard let holder else {
                merged.insert(existing: insert.id, row: insert.values)
                for key in keys { claimed[key] = insert.id }
                continue
            }
            replaced[insert.id] = holder
            for a in row.indices { merged.setChecked(holder, a, row[a]) }
            for key in keys { claimed[key] = holder }
        }
        guard !replaced.isEmpty else { return (self, [:]) }
        for update in updates {
            update.forEachValue { a, value in merged.recordUpdate(update.id, a, value) }
        }
        for var edit in edits {
            if let to = replaced[edit.source] { edit.source = to }
            if let to = replaced[edit.target] { edit.target = to }
            merged.edits.append(edit)
        }
        for id in deletes {
            let to = replaced[id] ?? id
            if merged.deleteSet.insert(to).inserted { merged.deletes.append(to) }
        }
        return (merged, replaced)
    }
}
