import TrellisCore
import TrellisGraph
import TrellisJournal

/// The properties of a context's model objects that a change reaches, in the schema's terms: what the context tells
/// the objects' observers about (`ModelContext.notifying(_:_:)`).
///
/// Only live objects on which some property was read are kept (the others have no observers), which keeps the cost
/// of a change in proportion to the objects on screen, not to the change's reach.
struct ObservedChanges {
    /// A property named by schema position, or by name as a change report names it.
    enum Property: Hashable {
        case attribute(Int)
        case relationship(Int)
        case named(String)
    }

    private let registered: [ObjectID: WeakModel]
    /// The objects kept, by ID.
    private(set) var objects: [ObjectID: Model] = [:]
    /// Single properties that change, per object (besides what `everything` and `relationships` say).
    private(set) var properties: [ObjectID: Set<Property>] = [:]
    /// Objects all of whose properties change: deleted by a commit, or appearing or vanishing in the context.
    private(set) var everything: Set<ObjectID> = []
    /// Objects all of whose relationships change: deleted in the context (a deleted object has no targets) or
    /// brought back by a rollback. Their attributes keep reading their saved values.
    private(set) var relationships: Set<ObjectID> = []

    init(registered: [ObjectID: WeakModel]) { self.registered = registered }

    var isEmpty: Bool { objects.isEmpty }

    /// Whether the context has a live object for `id` with a property read on it (keeping it if so).
    private mutating func isObserved(_ id: ObjectID) -> Bool {
        if objects.index(forKey: id) != nil { return true }
        guard let object = registered[id]?.object, object.readProperties != 0 else { return false }
        objects[id] = object
        return true
    }

    mutating func insert(_ property: Property, of id: ObjectID) {
        guard !everything.contains(id), isObserved(id) else { return }
        if case .relationship = property, relationships.contains(id) { return }
        properties[id, default: []].insert(property)
    }

    mutating func insertEverything(of id: ObjectID) {
        guard isObserved(id), everything.insert(id).inserted else { return }
        if !properties.isEmpty { properties[id] = nil }
    }

    /// What the commits of a change report do: the properties it names as updated, everything of deleted objects.
    /// - Complexity: O(c) for a report of c entries.
    mutating func insert(_ report: ContextChanges) {
        for (id, names) in report.updated {
            for name in names { insert(.named(name), of: id) }
        }
        for id in report.deleted { insertEverything(of: id) }
    }

    /// What deleting `doomed` in `view`'s top layer (or bringing them back by dropping it) changes: everything of
    /// an object inserted in that layer (it vanishes), otherwise the object's relationships and the attributes the
    /// layers give values of their own (a delete drops them); and the relationship ends that point at them.
    /// - Complexity: O(d + t) for d objects and their t targets.
    mutating func insert(deleting doomed: some Collection<ObjectID>, in view: ContextView) {
        let top = view.layers.last
        // The objects first: ends among them need no entry of their own.
        for id in doomed where isObserved(id) {
            if top?.isInserted(id) == true {
                insertEverything(of: id)
                continue
            }
            guard relationships.insert(id).inserted else { continue }
            for layer in view.layers {
                guard let changes = layer.row(id).changes else { continue }
                for attribute in changes.attributes { insert(.attribute(attribute), of: id) }
            }
        }
        for id in doomed { insertPartners(of: id, in: view) }
    }

    /// The other ends of `id`'s relationships in `view`: they gain or lose `id` when it is deleted or comes back.
    /// - Complexity: O(t) for t targets.
    private mutating func insertPartners(of id: ObjectID, in view: ContextView) {
        let relationships = view.schema.layouts[Int(id.entity)].relationships
        for (k, relationship) in relationships.enumerated() {
            for target in view.rawTargets(id, k, depth: view.layers.count) {
                insert(.relationship(relationship.inverse), of: target)
            }
        }
    }

    /// What adding `layer` over `view` (a child's save) or dropping it from `view` (a rollback) changes: its updated
    /// attributes, its relationship ends, everything of the objects it inserts, and what its deletes change.
    /// - Complexity: O(c) for c pending changes, plus the targets of deleted objects.
    mutating func insert(layer: PendingChanges, over view: ContextView) {
        for (id, _) in layer.liveInserts { insertEverything(of: id) }
        insert(deleting: layer.deleted, in: view)
        for changes in layer.allUpdates {
            for attribute in changes.attributes { insert(.attribute(attribute), of: changes.id) }
        }
        for slot in layer.allLinks.keys { insert(.relationship(slot.relationship), of: slot.id) }
    }
}
