import TrellisCore
import TrellisGraph
import TrellisJournal

/// What contexts need of a transaction beyond the name-based API: inserts under IDs allocated earlier, and writes of
/// values and edits already resolved to positions.
extension Transaction {
    /// Inserts an object whose ID a context allocated when it was inserted there.
    mutating func insert(existing id: ObjectID, row: [Value]) {
        insertPositions.add(id, at: inserts.count)
        inserts.append(ChangeSet.Insert(id: id, values: row))
    }

    mutating func appendEdit(_ edit: ChangeSet.RelationshipEdit) {
        edits.append(edit)
    }

    /// Sets an attribute the context already normalized.
    mutating func setChecked(_ id: ObjectID, _ attribute: Int, _ value: Value) {
        if let p = insertPositions.position(of: id) {
            inserts[p].values[attribute] = value
            return
        }
        recordUpdate(id, attribute, value)
    }

    /// Adds a context's pending updates, already normalized, one entry per object: taken whole when the transaction
    /// has no updates yet.
    mutating func appendUpdates(_ list: [PendingUpdate]) {
        guard updates.isEmpty else {
            for update in list { update.forEachValue { a, v in recordUpdate(update.id, a, v) } }
            return
        }
        updates = list
        for (i, update) in list.enumerated() { updatePositions.add(update.id, at: i) }
    }

    /// Sets a to-one relationship, or clears it with nil (the commit resolves serial 0 to the current target).
    mutating func setTarget(_ source: ObjectID, _ relationship: Int, _ target: ObjectID?, _ schema: Schema) {
        let targetEntity = schema.layouts[Int(source.entity)].relationships[relationship].target
        let edit: ChangeSet.RelationshipEdit =
            target.map { .init(.link, source: source, relationship: relationship, target: $0) }
            ?? .init(
                .unlink, source: source, relationship: relationship, target: ObjectID(entity: targetEntity, serial: 0))
        edits.append(edit)
    }
}
