import TrellisCore

extension Graph {
    /// The resolved change set that takes `old` to this graph, found by comparing the two (same schema structure):
    /// objects only here are inserts with their values, objects only in `old` deletes with what they held, attribute
    /// values that differ (`Value.isIdentical(to:)`) updates with old and new values, and targets that differ links
    /// and unlinks (unlinks first; each pair of ends once, from the end of the lower entity and relationship number,
    /// the inverse following as in any change set; none to an object deleted here, whose delete unlinks it).
    ///
    /// A follower publishes it when it cannot publish the records in between one by one (`Commit.isRefresh`), so
    /// that the view context, live results and observers read an ordinary change set.
    /// `old.applying(graph.changes(from: old))` holds the same objects as this graph.
    /// - Complexity: O(n) over both graphs.
    package func changes(from old: Graph) -> ChangeSet {
        precondition(schema.fingerprint == old.schema.fingerprint, "a difference between graphs of two structures")
        var out = ChangeSet()
        var unlinks: [ChangeSet.RelationshipEdit] = []
        var links: [ChangeSet.RelationshipEdit] = []
        for (e, layout) in schema.layouts.enumerated() {
            let entity = UInt32(e)
            let keys = layout.relationships.indices.map { RelationshipKey(entity: entity, index: $0) }
            // The end each pair is written from.
            let owned = layout.relationships.enumerated().filter { k, rel in
                (entity, k) <= (rel.target, rel.inverse)
            }.map(\.offset)
            func edit(_ kind: ChangeSet.RelationshipEdit.Kind, _ id: ObjectID, _ k: Int, _ serial: UInt64) {
                let target = ObjectID(entity: layout.relationships[k].target, serial: serial)
                // A deleted object's delete unlinks it; a link to an object that is gone is a dangling end, left.
                guard contains(target) else { return }
                let edit = ChangeSet.RelationshipEdit(kind, source: id, relationship: keys[k], target: target)
                if kind == .link { links.append(edit) } else { unlinks.append(edit) }
            }
            func deleted(_ row: Row) {
                let targets = keys.enumerated().map { k, key in
                    row.targetSerials(key).map { ObjectID(entity: layout.relationships[k].target, serial: $0) }
                }
                out.deletes.append(ChangeSet.Delete(id: row.id, values: row.values, relationships: targets))
            }
            var theirs = old.rows(entity: entity).makeIterator()
            var pending = theirs.next()
            for row in rows(entity: entity) {
                while let before = pending, before.id.serial < row.id.serial {
                    deleted(before)
                    pending = theirs.next()
                }
                guard let before = pending, before.id == row.id else {
                    out.inserts.append(ChangeSet.Insert(id: row.id, values: row.values))
                    for k in owned {
                        for serial in row.targetSerials(keys[k]) { edit(.link, row.id, k, serial) }
                    }
                    continue
                }
                pending = theirs.next()
                var changed: [ChangeSet.AttributeChange] = []
                for a in layout.attributes.indices {
                    let (x, y) = (before.value(at: a), row.value(at: a))
                    if !x.isIdentical(to: y) {
                        changed.append(
                            ChangeSet.AttributeChange(attribute: AttributeKey(entity: entity, index: a), old: x, new: y)
                        )
                    }
                }
                if !changed.isEmpty { out.updates.append(ChangeSet.Update(id: row.id, changes: changed)) }
                for k in owned {
                    let (x, y) = (before.targetSerials(keys[k]), row.targetSerials(keys[k]))
                    guard x != y else { continue }
                    let (was, now) = (Set(x), Set(y))
                    for serial in x where !now.contains(serial) { edit(.unlink, row.id, k, serial) }
                    for serial in y where !was.contains(serial) { edit(.link, row.id, k, serial) }
                }
            }
            while let before = pending {
                deleted(before)
                pending = theirs.next()
            }
        }
        out.edits = unlinks + links
        return out
    }
}
