import TrellisCore
import TrellisGraph
import TrellisJournal

/// What one or more commits changed, as a context that follows the store reports it: inserted objects, updated ones
/// with the names of the properties that changed (attributes and relationships), deleted ones.
///
/// ```swift
/// let token = view.onChange { changes in
///     for (id, names) in changes.updated {
///         print(id.description(in: store.schema), names.sorted())   // Chore#7 ["done", "title"]
///     }
/// }
/// ```
public struct ContextChanges: Sendable, CustomStringConvertible {
    /// The objects inserted.
    public internal(set) var inserted: Set<ObjectID> = []
    /// The objects updated, each with the names of the properties that changed.
    public internal(set) var updated: [ObjectID: Set<String>] = [:]
    /// The objects deleted.
    public internal(set) var deleted: Set<ObjectID> = []
    /// The sequence numbers of the commits covered, lowest first.
    public internal(set) var sequences: [UInt64] = []

    /// Whether nothing was inserted, updated or deleted.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Whether the object was inserted, updated or deleted.
    /// - Complexity: O(1).
    public func contains(_ id: ObjectID) -> Bool {
        inserted.contains(id) || updated[id] != nil || deleted.contains(id)
    }

    /// The counts of each kind and the commits covered.
    public var description: String {
        "inserted \(inserted.count), updated \(updated.count), deleted \(deleted.count) (commits \(sequences))"
    }

    init() {}

    /// The changes of one commit. Relationship edits count as updates of both ends, and objects that lost a deleted
    /// target (nullify) count as updated too.
    /// - Complexity: O(c) for a change set of c elements.
    init(_ changes: ChangeSet, schema: Schema, sequence: UInt64) {
        sequences = [sequence]
        inserted = Set(changes.inserts.map(\.id))
        deleted = Set(changes.deletes.map(\.id))
        for update in changes.updates {
            let layout = schema.layouts[Int(update.id.entity)]
            updated[update.id, default: []].formUnion(update.changes.map { layout.attributes[$0.attribute.index].name })
        }
        func touch(_ id: ObjectID, _ entity: UInt32, _ relationship: Int) {
            guard !inserted.contains(id), !deleted.contains(id) else { return }
            updated[id, default: []].insert(schema.layouts[Int(entity)].relationships[relationship].name)
        }
        for edit in changes.edits {
            let r = schema.layouts[Int(edit.source.entity)].relationships[edit.relationship.index]
            touch(edit.source, edit.source.entity, edit.relationship.index)
            if edit.target.serial != 0 { touch(edit.target, r.target, r.inverse) }
        }
        for delete in changes.deletes {
            let layout = schema.layouts[Int(delete.id.entity)]
            for (k, targets) in delete.relationships.enumerated() where layout.relationships[k].deleteRule != .noAction
            {
                let r = layout.relationships[k]
                for t in targets { touch(t, r.target, r.inverse) }
            }
        }
    }

    /// Folds in the changes of a later commit: an object inserted and then deleted disappears from both lists.
    mutating func merge(_ later: ContextChanges) {
        sequences += later.sequences
        for id in later.inserted { inserted.insert(id) }
        for (id, names) in later.updated where !inserted.contains(id) { updated[id, default: []].formUnion(names) }
        for id in later.deleted {
            updated[id] = nil
            if inserted.remove(id) == nil { deleted.insert(id) }
        }
    }
}
