import TrellisCore
import TrellisGraph
import TrellisJournal

/// Turns a root context's pending changes into one transaction against the newest snapshot: finds the conflicts,
/// applies the merge policy, and says which objects the result depends on (the commit re-checks those).
struct SavePlanner {
    let view: ContextView
    let pending: PendingChanges
    let newest: Graph
    let origin: (ObjectID) -> Graph
    /// Whether every changed object's origin is the view's base (the context has not moved since its last save).
    let originsAreBase: Bool
    let policy: MergePolicy

    struct Plan {
        var conflicts: [SaveConflict] = []
        var transaction: Transaction
        /// Objects whose rows and to-one targets in `newest` the plan relied on: the updated ones, and the others.
        var watchedUpdates: [ObjectID] = []
        var watched: Set<ObjectID> = []
    }

    /// What one changed object conflicts on, by attribute and relationship position.
    private struct Clash {
        var kind: SaveConflict.Kind
        var storeAttributes: Set<Int> = []
        var storeLinks: Set<Int> = []
    }

    private var schema: Schema { newest.schema }

    /// Whether `id` can be named in the commit: inserted by this context or still in the store, and not deleted here.
    private func isLive(_ id: ObjectID) -> Bool {
        view.exists(id) && (pending.isInserted(id) || newest.contains(id))
    }

    private func toOneLinks(_ entity: UInt32) -> [Int] {
        schema.layouts[Int(entity)].relationships.indices.filter {
            !schema.layouts[Int(entity)].relationships[$0].isToMany
        }
    }

    private func changedLinks(_ id: ObjectID) -> [Int] {
        toOneLinks(id.entity).filter { pending.link(id, $0) != nil }
    }

    func plan(_ transaction: Transaction) -> Plan {
        var plan = Plan(transaction: transaction)
        var clashes: [ObjectID: Clash] = [:]
        let updates = pending.allUpdates
        plan.watchedUpdates = updates.map(\.id)
        // The other candidates: objects with to-one changes or deleted, and no updates (those are listed already).
        var others = Set<ObjectID>()
        for (slot, state) in pending.allLinks where !pending.isInserted(slot.id) && !pending.isDiscarded(slot.id) {
            // To-many membership merges as a set and never conflicts; to-one targets do.
            if case .toOne = state, pending.changes(slot.id) == nil { others.insert(slot.id) }
        }
        for id in pending.deleteRoots { others.insert(id) }
        plan.watched = others
        func check(_ id: ObjectID) {
            guard newest.contains(id) else {
                if !pending.isDeleted(id) { clashes[id] = Clash(kind: .deletedInStore) }
                return
            }
            let before = origin(id)
            // Read from the newest version: no commit since can have changed it.
            if before.sequence == newest.sequence { return }
            guard let now = newest.row(id), let then = before.row(id) else { return }
            var clash = Clash(kind: .updatedInStore)
            clash.storeAttributes = Set(now.indices.filter { now[$0] != then[$0] })
            clash.storeLinks = Set(
                toOneLinks(id.entity).filter { k in
                    let key = RelationshipKey(entity: id.entity, index: k)
                    return before.targets(id, key) != newest.targets(id, key)
                })
            if !clash.storeAttributes.isEmpty || !clash.storeLinks.isEmpty { clashes[id] = clash }
        }
        // Every updated object was read from the base (its entry exists only while it does there), so when the base
        // is the newest version and every origin is the base, none of them can clash.
        if !(originsAreBase && view.base.sequence == newest.sequence) {
            for update in updates { check(update.id) }
        }
        for id in others { check(id) }
        // Targets this context links to must still exist.
        var linkedFrom: [ObjectID: (ObjectID, Int)] = [:]
        for (slot, state) in pending.allLinks where view.exists(slot.id) {
            var targets: [ObjectID] = []
            switch state {
            case .toOne(let t): if let t { targets = [t] }
            case .toMany(let added, _): targets = Array(added)
            case .ordered(let list): targets = list
            }
            for t in targets where !pending.isInserted(t) && view.exists(t) {
                plan.watched.insert(t)
                if !newest.contains(t) { linkedFrom[t] = (slot.id, slot.relationship) }
            }
        }
        for (t, _) in linkedFrom where clashes[t] == nil { clashes[t] = Clash(kind: .deletedInStore) }
        plan.conflicts = clashes.map { describe($0.key, $0.value, linkedFrom[$0.key]) }.sorted { $0.object < $1.object }
        if policy != .error || clashes.isEmpty { fill(&plan.transaction, clashes) }
        return plan
    }

    private func describe(_ id: ObjectID, _ clash: Clash, _ linkedFrom: (ObjectID, Int)?) -> SaveConflict {
        let layout = schema.layouts[Int(id.entity)]
        var mine = (pending.changes(id)?.attributes ?? []).map { layout.attributes[$0].name }
        mine += changedLinks(id).map { layout.relationships[$0].name }
        if pending.isDeleted(id) { mine.append("(deleted)") }
        if let (source, rel) = linkedFrom {
            mine.append(
                "(linked from \(schema.describe(source)).\(schema.layouts[Int(source.entity)].relationships[rel].name))"
            )
        }
        let theirs =
            clash.storeAttributes.sorted().map { layout.attributes[$0].name }
            + clash.storeLinks.sorted().map { layout.relationships[$0].name }
        return SaveConflict(
            object: id, entity: layout.name, kind: clash.kind, contextChanges: mine, storeChanges: theirs)
    }

    /// Writes the surviving changes into the transaction.
    private func fill(_ tx: inout Transaction, _ clashes: [ObjectID: Clash]) {
        var dropAttributes: [ObjectID: Set<Int>] = [:]
        var dropLinks: [ObjectID: Set<Int>] = [:]
        var dropAll: Set<ObjectID> = []
        var writeWhole: Set<ObjectID> = []
        for (id, clash) in clashes {
            switch (policy, clash.kind) {
            case (.error, _): break
            case (.storeWins, _), (_, .deletedInStore): dropAll.insert(id)
            case (.contextWins, .updatedInStore): writeWhole.insert(id)
            case (.mergeByProperty(let favoring), .updatedInStore):
                guard favoring == .store else { continue }
                if pending.isDeleted(id) { dropAll.insert(id) }
                dropAttributes[id] = clash.storeAttributes
                dropLinks[id] = clash.storeLinks
            }
        }
        for (id, row) in pending.liveInserts { tx.insert(existing: id, row: row) }
        if clashes.isEmpty {
            // Without clashes every entry names a live object (see `plan`): the entries move over as they are.
            tx.appendUpdates(pending.allUpdates)
        } else {
            for changes in pending.allUpdates where isLive(changes.id) && !dropAll.contains(changes.id) {
                let dropped = dropAttributes[changes.id] ?? []
                changes.forEachValue { a, v in
                    if !dropped.contains(a) { tx.setChecked(changes.id, a, v) }
                }
            }
        }
        for id in writeWhole where isLive(id) {
            if let row = view.row(id) {
                for (a, v) in row.enumerated() { tx.setChecked(id, a, v) }
            }
            for k in toOneLinks(id.entity) { tx.setTarget(id, k, view.target(id, k), schema) }
        }
        for (slot, state) in pending.allLinks.sorted(by: { $0.key.id < $1.key.id }) {
            let (s, k) = (slot.id, slot.relationship)
            // An object the context wins whole has its row and to-one ends written above; its ordered lists here.
            let ordered: Bool
            if case .ordered = state { ordered = true } else { ordered = false }
            guard isLive(s), !dropAll.contains(s), ordered || !writeWhole.contains(s),
                !(dropLinks[s]?.contains(k) ?? false)
            else { continue }
            let r = schema.layouts[Int(s.entity)].relationships[k]
            switch state {
            case .toOne(let t):
                if let t, !isLive(t) || dropAll.contains(t) { continue }
                tx.setTarget(s, k, t, schema)
            case .ordered(let list):
                orderedEdits(&tx, s, k, list.filter { isLive($0) && !dropAll.contains($0) })
            case .toMany(let added, let removed):
                // A to-one inverse end carries the edit; a to-many pair is written from one end only.
                let inverseIsToMany = schema.layouts[Int(r.target)].relationships[r.inverse].isToMany
                guard inverseIsToMany, (s.entity, k) <= (r.target, r.inverse) else { continue }
                for t in added.sorted() where isLive(t) && !dropAll.contains(t) {
                    tx.appendEdit(.init(.link, source: s, relationship: k, target: t))
                }
                for t in removed.sorted() where newest.contains(t) {
                    tx.appendEdit(.init(.unlink, source: s, relationship: k, target: t))
                }
            }
        }
        for id in pending.deleteRoots where newest.contains(id) && !dropAll.contains(id) && pending.isDeleted(id) {
            try? tx.delete(id)
        }
    }

    /// The edits that make an ordered list of `s` in the newest version start with `list`: unlinks of the targets
    /// this context removed (those its base held and `list` lacks), then, left to right, a place of each target not
    /// yet where it belongs (an insert, or a move). Targets another commit added meanwhile stay, after `list`'s.
    /// Edits of other ends in the same commit only append at the end or remove what `list` lacks, so each place
    /// still leaves the list's front right.
    private func orderedEdits(_ tx: inout Transaction, _ s: ObjectID, _ k: Int, _ list: [ObjectID]) {
        let key = RelationshipKey(entity: s.entity, index: k)
        let wanted = Set(list)
        let removed = Set(view.rawTargets(s, k, depth: 0)).subtracting(wanted)
        var working = newest.contains(s) ? newest.targets(s, key) : []
        for t in working where removed.contains(t) {
            tx.appendEdit(.init(.unlink, source: s, relationship: k, target: t))
        }
        working.removeAll { removed.contains($0) }
        for (i, t) in list.enumerated() where i >= working.count || working[i] != t {
            if let from = working.firstIndex(of: t) { working.remove(at: from) }
            working.insert(t, at: i)
            tx.appendEdit(.init(placing: t, source: s, relationship: key, at: i, previousPosition: nil))
        }
    }
}
