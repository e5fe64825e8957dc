import TrellisCore
import TrellisGraph
import TrellisJournal

/// One context's unsaved changes: a layer over what lies below it (the parent context's view, or for a root context
/// its snapshot).
///
/// Inserted objects carry full rows; updates carry only changed attributes; deletes hide objects of the layers below.
/// Relationship state is kept per (object, relationship) and on both ends of every edit, so either end reads right.
/// To-many state is a pair of "ensure present" and "ensure absent" sets, so that layering composes without reading
/// the (possibly huge) target list below. An ordered to-many end holds its whole list instead (an order cannot be
/// said as sets); a save turns it into edits against the newest version (`SavePlanner.orderedEdits`).
///
/// A reference type: a context and the views it hands to fetches share one instance, so reads always see the newest
/// state without copying it.
final class PendingChanges {
    /// The state of one relationship end at this layer.
    enum LinkState: Equatable {
        case toOne(ObjectID?)
        case toMany(added: Set<ObjectID>, removed: Set<ObjectID>)
        /// An ordered to-many end: its whole list, in order (existence is checked on read).
        case ordered([ObjectID])
    }

    struct Slot: Hashable {
        var id: ObjectID
        var relationship: Int
    }

    /// What a layer says about a read.
    enum Answer<T> {
        case value(T)
        case absent
        case below
    }

    private(set) var inserted: [ObjectID: [Value]] = [:]
    /// Insertion order, for saving parents before children; may name objects deleted since (skip those).
    private(set) var insertOrder: [ObjectID] = []
    private(set) var updated: [ObjectID: [Int: Value]] = [:]
    /// Objects of the layers below that this layer deletes: the requested ones and what their cascades reached.
    private(set) var deleted: Set<ObjectID> = []
    /// The deletes that were asked for, in order; the commit expands cascades again against the newest version.
    private(set) var deleteRoots: [ObjectID] = []
    private(set) var links: [Slot: LinkState] = [:]
    /// Objects inserted here and deleted again before a save: they never reach the store, and the link states left
    /// on their own ends are not changes to save (nor conflicts with a store that never had them).
    private(set) var discarded: Set<ObjectID> = []
    /// Objects with any change at this layer, per entity: the fetches re-evaluate them over the merged view.
    private(set) var touched: [UInt32: Set<ObjectID>] = [:]

    init() {}

    func removeAll() {
        inserted = [:]
        insertOrder = []
        updated = [:]
        deleted = []
        deleteRoots = []
        links = [:]
        discarded = []
        touched = [:]
    }

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && links.isEmpty }

    func isInserted(_ id: ObjectID) -> Bool { inserted[id] != nil }
    func isDeleted(_ id: ObjectID) -> Bool { deleted.contains(id) }
    func isDiscarded(_ id: ObjectID) -> Bool { discarded.contains(id) }

    func touched(entity: UInt32) -> Set<ObjectID> { touched[entity] ?? [] }

    private func touch(_ id: ObjectID) {
        touched[id.entity, default: []].insert(id)
    }

    // MARK: Reads

    func exists(_ id: ObjectID) -> Answer<Void> {
        if inserted[id] != nil { return .value(()) }
        if deleted.contains(id) { return .absent }
        return .below
    }

    func value(_ id: ObjectID, _ attribute: Int) -> Answer<Value> {
        if let row = inserted[id] { return .value(row[attribute]) }
        if let v = updated[id]?[attribute] { return .value(v) }
        return .below
    }

    /// The full row of an object inserted here; absent for one deleted here; below otherwise.
    func full(_ id: ObjectID) -> Answer<[Value]> {
        if let row = inserted[id] { return .value(row) }
        if deleted.contains(id) { return .absent }
        return .below
    }

    /// The changes made here to an object that lies below, if any.
    func changes(_ id: ObjectID) -> [Int: Value]? { updated[id] }

    /// The row of an object inserted here, or the changes made here to one that lies below.
    func row(_ id: ObjectID) -> (full: [Value]?, changes: [Int: Value]?) {
        (inserted[id], updated[id])
    }

    func link(_ id: ObjectID, _ relationship: Int) -> LinkState? {
        links[Slot(id: id, relationship: relationship)]
    }

    /// Applies this layer's state of a relationship end to the targets below it.
    func targets(_ id: ObjectID, _ relationship: Int, below: () -> [ObjectID]) -> [ObjectID] {
        switch links[Slot(id: id, relationship: relationship)] {
        case nil: return inserted[id] != nil ? [] : below()
        case .toOne(let t): return t.map { [$0] } ?? []
        case .ordered(let list): return list
        case .toMany(let added, let removed):
            var out = inserted[id] != nil ? [] : below()
            if !removed.isEmpty { out.removeAll { removed.contains($0) } }
            if !added.isEmpty {
                let present = Set(out)
                out.append(contentsOf: added.filter { !present.contains($0) })
                out.sort()
            }
            return out
        }
    }

    // MARK: Writes

    func insert(_ id: ObjectID, row: [Value]) {
        inserted[id] = row
        insertOrder.append(id)
        touch(id)
    }

    func set(_ id: ObjectID, _ attribute: Int, _ value: Value) {
        if inserted[id] != nil {
            inserted[id]![attribute] = value
        } else {
            updated[id, default: [:]][attribute] = value
        }
        touch(id)
    }

    func setLink(_ id: ObjectID, _ relationship: Int, _ state: LinkState) {
        links[Slot(id: id, relationship: relationship)] = state
        touch(id)
    }

    /// Ensures `target` is (or is not) among the to-many targets of `id`.
    func editToMany(_ id: ObjectID, _ relationship: Int, _ target: ObjectID, present: Bool) {
        let slot = Slot(id: id, relationship: relationship)
        var (added, removed): (Set<ObjectID>, Set<ObjectID>) = ([], [])
        if case .toMany(let a, let r)? = links[slot] { (added, removed) = (a, r) }
        links[slot] = nil  // keep the sets uniquely referenced while they change
        if present {
            added.insert(target)
            removed.remove(target)
        } else {
            removed.insert(target)
            added.remove(target)
        }
        links[slot] = .toMany(added: added, removed: removed)
        touch(id)
    }

    /// Deletes an object: drops it if it was inserted here, hides it from the layers below otherwise.
    func delete(_ id: ObjectID, requested: Bool) {
        touch(id)
        if inserted.removeValue(forKey: id) != nil {
            discarded.insert(id)
            return
        }
        updated[id] = nil
        deleted.insert(id)
        if requested { deleteRoots.append(id) }
    }

    /// Objects inserted here that still exist, in insertion order.
    var liveInserts: [(id: ObjectID, row: [Value])] {
        insertOrder.compactMap { id in inserted[id].map { (id, $0) } }
    }

    var allUpdates: [ObjectID: [Int: Value]] { updated }
    var allLinks: [Slot: LinkState] { links }
}
