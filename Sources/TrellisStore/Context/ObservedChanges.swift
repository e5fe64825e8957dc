import TrellisCore
import TrellisGraph
import TrellisJournal

/// The properties of a context's registered objects that a change reaches, in the schema's terms: what the context
/// tells the objects' observers about (`ModelContext.notifying(_:_:)`).
///
/// Only objects the context has registered are kept (the others have no model object, so no observers), which keeps
/// the cost of a change in proportion to the objects on screen, not to the change's reach.
struct ObservedChanges {
    /// A property named by schema position, or by name as a change report names it.
    enum Property: Hashable {
        case attribute(Int)
        case relationship(Int)
        case named(String)
    }

    private let registered: [ObjectID: WeakModel]
    private(set) var properties: [ObjectID: Set<Property>] = [:]
    /// Objects all of whose properties change (deleted ones, ones that appear or vanish).
    private(set) var everything: Set<ObjectID> = []

    init(registered: [ObjectID: WeakModel]) { self.registered = registered }

    var isEmpty: Bool { properties.isEmpty && everything.isEmpty }

    mutating func insert(_ property: Property, of id: ObjectID) {
        guard registered[id] != nil, !everything.contains(id) else { return }
        properties[id, default: []].insert(property)
    }

    mutating func insertEverything(of id: ObjectID) {
        guard registered[id] != nil else { return }
        everything.insert(id)
        properties[id] = nil
    }

    /// What the commits of a change report do: the properties it names as updated, everything of deleted objects.
    /// - Complexity: O(c) for a report of c entries.
    mutating func insert(_ report: ContextChanges) {
        for (id, names) in report.updated where registered[id] != nil {
            for name in names { insert(.named(name), of: id) }
        }
        for id in report.deleted { insertEverything(of: id) }
    }

    /// The other ends of `id`'s relationships in `view`: they gain or lose `id` when it is deleted or comes back.
    /// - Complexity: O(t) for t targets.
    mutating func insertPartners(of id: ObjectID, in view: ContextView) {
        let relationships = view.schema.layouts[Int(id.entity)].relationships
        for (k, relationship) in relationships.enumerated() {
            for target in view.rawTargets(id, k, depth: view.layers.count) {
                insert(.relationship(relationship.inverse), of: target)
            }
        }
    }

    /// What adding `layer` over `view` (a child's save) or dropping it from `view` (a rollback) changes: its updated
    /// attributes, its relationship ends, everything of the objects it inserts or deletes, and the relationship ends
    /// that point at the deleted ones.
    /// - Complexity: O(c) for c pending changes, plus the targets of deleted objects.
    mutating func insert(layer: PendingChanges, over view: ContextView) {
        for (id, changes) in layer.allUpdates where registered[id] != nil {
            for attribute in changes.keys { insert(.attribute(attribute), of: id) }
        }
        for slot in layer.allLinks.keys { insert(.relationship(slot.relationship), of: slot.id) }
        for (id, _) in layer.liveInserts { insertEverything(of: id) }
        for id in layer.deleted {
            insertEverything(of: id)
            insertPartners(of: id, in: view)
        }
    }
}
