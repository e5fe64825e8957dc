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

    /// The tables a model setter's write and a property read touch, in one stored property: each of the class's
    /// stored properties costs a runtime exclusivity check per access, and a write touched eight of them.
    private struct Tables {
        var inserted: [ObjectID: [Value]] = [:]
        /// The changed attributes of objects of the layers below, one entry per object, kept dense (a delete moves
        /// the last entry into its place): a save hands the array to its transaction as it is.
        var updates: [PendingUpdate] = []
        /// Per entry of `updates`, the context's epoch the object was first changed on (-1: none recorded).
        var updateOrigins: [Int] = []
        /// Where each object's entry sits in `updates`.
        var updateIndex = UpdateIndex()
        /// Objects of the layers below that this layer deletes: the requested ones and what their cascades reached.
        var deleted: Set<ObjectID> = []
        /// Objects with any change at this layer, per entity, found when a fetch first asks after a change (a write
        /// only drops it): the fetches re-evaluate them over the merged view.
        var touchedCache: [UInt32: Set<ObjectID>]?
        /// Counts every change to this layer.
        var version: UInt64 = 0
        /// Counts the changes other than the model setters' own writes (`set(_:_:_:origin:quiet:)` with `quiet`):
        /// the composite caches of the context's objects stay valid across those, which update them as they write.
        var foreignVersion: UInt64 = 0

        // The reads skip empty tables: hashing an ID costs more than the rest of a lookup.

        func exists(_ id: ObjectID) -> Answer<Void> {
            if !inserted.isEmpty, inserted[id] != nil { return .value(()) }
            if !deleted.isEmpty, deleted.contains(id) { return .absent }
            return .below
        }

        func value(_ id: ObjectID, _ attribute: Int) -> Answer<Value> {
            if !inserted.isEmpty, let row = inserted[id] { return .value(row[attribute]) }
            if let i = updateIndex.find(id, in: updates), let v = updates[i].value(of: attribute) { return .value(v) }
            return .below
        }

        func full(_ id: ObjectID) -> Answer<[Value]> {
            if !inserted.isEmpty, let row = inserted[id] { return .value(row) }
            if !deleted.isEmpty, deleted.contains(id) { return .absent }
            return .below
        }

        func touches(_ id: ObjectID) -> Bool {
            guard case .below = exists(id) else { return true }
            return updateIndex.find(id, in: updates) != nil
        }

        func changes(_ id: ObjectID) -> PendingUpdate? {
            guard let i = updateIndex.find(id, in: updates) else { return nil }
            return updates[i]
        }

        mutating func set(_ id: ObjectID, _ attribute: Int, _ value: Value, origin: Int, quiet: Bool) {
            version &+= 1
            if !quiet { foreignVersion &+= 1 }
            if touchedCache != nil { touchedCache = nil }
            if !inserted.isEmpty, inserted[id] != nil {
                inserted[id]![attribute] = value
                return
            }
            let next = updates.count
            let i = updateIndex.findOrClaim(id, next: next, in: updates)
            if i == next {
                updates.append(PendingUpdate(id: id, attribute: attribute, value: value))
                updateOrigins.append(origin)
            } else {
                updates[i].set(attribute, value)
            }
        }

        /// Drops an object's entry, if any; the last entry takes its place.
        mutating func removeUpdate(_ id: ObjectID) {
            guard let i = updateIndex.remove(id, in: updates) else { return }
            let last = updates.count - 1
            if i != last {
                updateIndex.repoint(updates[last].id, to: i, in: updates)
                updates.swapAt(i, last)
                updateOrigins.swapAt(i, last)
            }
            updates.removeLast()
            updateOrigins.removeLast()
        }
    }

    private var t = Tables()
    var inserted: [ObjectID: [Value]] { t.inserted }
    /// Insertion order, for saving parents before children; may name objects deleted since (skip those).
    private(set) var insertOrder: [ObjectID] = []
    var updates: [PendingUpdate] { t.updates }
    var deleted: Set<ObjectID> { t.deleted }
    /// The deletes that were asked for, in order; the commit expands cascades again against the newest version.
    private(set) var deleteRoots: [ObjectID] = []
    private(set) var links: [Slot: LinkState] = [:]
    /// Objects inserted here and deleted again before a save: they never reach the store, and the link states left
    /// on their own ends are not changes to save (nor conflicts with a store that never had them).
    private(set) var discarded: Set<ObjectID> = []
    /// Counts every change to this layer.
    var version: UInt64 { t.version }
    /// Counts the changes other than the model setters' own writes: the composite caches stay valid across those.
    var foreignVersion: UInt64 { t.foreignVersion }

    init() {}

    func removeAll() {
        var fresh = Tables()
        fresh.version = t.version
        fresh.foreignVersion = t.foreignVersion
        t = fresh
        insertOrder = []
        deleteRoots = []
        links = [:]
        discarded = []
        changed()
    }

    /// Notes a change that is not a setter's quiet write.
    private func changed() {
        t.touchedCache = nil
        t.version &+= 1
        t.foreignVersion &+= 1
    }

    var isEmpty: Bool { t.inserted.isEmpty && t.updates.isEmpty && t.deleted.isEmpty && links.isEmpty }

    func isInserted(_ id: ObjectID) -> Bool { t.inserted[id] != nil }
    func isDeleted(_ id: ObjectID) -> Bool { t.deleted.contains(id) }
    func isDiscarded(_ id: ObjectID) -> Bool { discarded.contains(id) }

    func touched(entity: UInt32) -> Set<ObjectID> {
        if let known = t.touchedCache { return known[entity] ?? [] }
        var all: [UInt32: Set<ObjectID>] = [:]
        func add(_ id: ObjectID) { all[id.entity, default: []].insert(id) }
        for id in t.inserted.keys { add(id) }
        for update in t.updates { add(update.id) }
        for id in t.deleted { add(id) }
        for id in discarded { add(id) }
        for slot in links.keys { add(slot.id) }
        t.touchedCache = all
        return all[entity] ?? []
    }

    /// The epoch an object of the layers below was first updated on here, when the context recorded one.
    func updateOrigin(_ id: ObjectID) -> Int? {
        guard let i = t.updateIndex.find(id, in: t.updates), t.updateOrigins[i] >= 0 else { return nil }
        return t.updateOrigins[i]
    }

    // MARK: Reads

    func exists(_ id: ObjectID) -> Answer<Void> { t.exists(id) }

    func value(_ id: ObjectID, _ attribute: Int) -> Answer<Value> { t.value(id, attribute) }

    /// The full row of an object inserted here; absent for one deleted here; below otherwise.
    func full(_ id: ObjectID) -> Answer<[Value]> { t.full(id) }

    /// Whether this layer inserts, deletes or changes the object.
    func touches(_ id: ObjectID) -> Bool { t.touches(id) }

    /// The changes made here to an object that lies below, if any.
    func changes(_ id: ObjectID) -> PendingUpdate? { t.changes(id) }

    /// The row of an object inserted here, or the changes made here to one that lies below.
    func row(_ id: ObjectID) -> (full: [Value]?, changes: PendingUpdate?) {
        (t.inserted[id], t.changes(id))
    }

    func link(_ id: ObjectID, _ relationship: Int) -> LinkState? {
        links[Slot(id: id, relationship: relationship)]
    }

    /// Applies this layer's state of a relationship end to the targets below it.
    func targets(_ id: ObjectID, _ relationship: Int, below: () -> [ObjectID]) -> [ObjectID] {
        switch links[Slot(id: id, relationship: relationship)] {
        case nil: return t.inserted[id] != nil ? [] : below()
        case .toOne(let t): return t.map { [$0] } ?? []
        case .ordered(let list): return list
        case .toMany(let added, let removed):
            var out = t.inserted[id] != nil ? [] : below()
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
        t.inserted[id] = row
        insertOrder.append(id)
        changed()
    }

    /// Sets an attribute of an object inserted here, or records it for one that lies below; `origin` is the epoch to
    /// record when this is the object's first update here. A model setter's write is `quiet`: it keeps its own
    /// object's composite cache up to date, so the other objects' caches stay valid.
    func set(_ id: ObjectID, _ attribute: Int, _ value: Value, origin: Int = -1, quiet: Bool = false) {
        t.set(id, attribute, value, origin: origin, quiet: quiet)
    }

    func setLink(_ id: ObjectID, _ relationship: Int, _ state: LinkState) {
        links[Slot(id: id, relationship: relationship)] = state
        changed()
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
        changed()
    }

    /// Deletes an object: drops it if it was inserted here, hides it from the layers below otherwise.
    func delete(_ id: ObjectID, requested: Bool) {
        changed()
        if t.inserted.removeValue(forKey: id) != nil {
            discarded.insert(id)
            return
        }
        t.removeUpdate(id)
        t.deleted.insert(id)
        if requested { deleteRoots.append(id) }
    }

    /// Objects inserted here that still exist, in insertion order.
    var liveInserts: [(id: ObjectID, row: [Value])] {
        insertOrder.compactMap { id in t.inserted[id].map { (id, $0) } }
    }

    /// The changes to objects of the layers below, one entry per object, in the order of their first change (until a
    /// delete moves one).
    var allUpdates: [PendingUpdate] { t.updates }
    var allLinks: [Slot: LinkState] { links }
}
