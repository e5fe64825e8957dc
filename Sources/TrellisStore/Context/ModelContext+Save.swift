import TrellisCore
import TrellisGraph
import TrellisJournal

extension ModelContext {
    /// Saves the pending changes: a root context commits them to the store as one transaction (durable when it
    /// returns, in the store's durability mode); a child context pushes them into its parent.
    ///
    /// ```swift
    /// do { try context.save() }
    /// catch let error as TrellisError where error.code == .conflict { print(error.message) }
    /// ```
    ///
    /// Conflicts are found optimistically: each object this context changed is compared between the snapshot it was
    /// read from and the newest one, and `mergePolicy` decides. The commit re-checks those objects and the save
    /// retries if a commit slipped in between. On a thrown error nothing is saved and the changes stay pending.
    /// Assigning to an object after it was deleted (in this context or by a save it followed) is not kept: the next
    /// save throws `.missingObject` naming each such assignment, once (as Core Data refuses to save a change to a
    /// deleted object).
    ///
    /// A root context moves to its commit's version: the observers of its model objects hear of what the other
    /// contexts' commits since its last move changed (and `onChange(_:)` handlers get them), as at `refresh()`. A
    /// child's save tells the observers of the parent's objects what it changes there.
    /// - Complexity: O(c) for c pending changes (plus the commit's own cost, and the changes of the commits it moves
    ///   past); O(c) into a parent.
    public func save() throws { try save(onConflict: .error) }

    /// Saves as `save()` does, choosing what an inserted object whose unique values another object already holds
    /// does: `.error` (what `save()` does) refuses the save; `.update` updates that object with the inserted one's
    /// attribute values and relationship changes instead (an upsert, SwiftData's behaviour made explicit), and the
    /// inserted model object then stands for that object: its `objectID` becomes the existing one's.
    ///
    /// ```swift
    /// let tag = Tag(name: "home", color: "red")     // a Tag named "home" is already saved
    /// context.insert(tag)
    /// try context.save(onConflict: .update)         // that Tag's color is now red; tag is that Tag
    /// ```
    ///
    /// The holder is an object saved before, or one inserted earlier in the same save (two inserts with one key
    /// become one object). A child context's save pushes its changes into its parent, and the choice is the one the
    /// root context's save makes.
    /// - Complexity: as `save()`, plus O(log n) per unique constraint of each inserted object with `.update`.
    public func save(onConflict: UniqueConflictResolution) throws {
        guard hasChanges else { return }
        if !writesToDeleted.isEmpty {
            // Loudly, once: the assignments cannot be kept, and the other changes stay pending for the next save.
            let lost = writesToDeleted
            writesToDeleted.removeAll()
            throw TrellisError(
                .missingObject,
                "assigned after the object was deleted, so not saved: \(lost.joined(separator: ", ")); nothing was "
                    + "saved, and the context's other changes are still pending")
        }
        if let parent {
            pushChanges(into: parent)
            pending.removeAll()
            return
        }
        let store = self.store
        while true {
            let newest = store.snapshot
            var plan = planSave(against: newest)
            if mergePolicy == .error, !plan.conflicts.isEmpty {
                throw TrellisError(
                    .conflict,
                    "save found \(plan.conflicts.count) conflict(s): "
                        + plan.conflicts.map(\.description).joined(separator: "; "), object: plan.conflicts[0].object)
            }
            let watched = (plan.watchedUpdates + plan.watched).sorted()
            plan.transaction.checks.append { head in
                try Self.check(head, unchangedSince: newest, watched)
            }
            let commit: Commit
            do {
                commit = try store.commit(plan.transaction, onConflict: onConflict)
            } catch let error as TrellisError where error.code == .staleSnapshot {
                continue
            }
            repoint(commit.merged)
            didSave(commit, resolvedConflicts: !plan.conflicts.isEmpty || !commit.merged.isEmpty)
            return
        }
    }

    /// The conflicts saving now would meet, without saving.
    ///
    /// ```swift
    /// for conflict in context.conflicts() { print(conflict) }   // Chore#4: this context changed title, ...
    /// ```
    /// - Complexity: O(c) for c pending changes.
    public func conflicts() -> [SaveConflict] {
        guard parent == nil else { return [] }
        return planSave(against: store.snapshot).conflicts
    }

    private func planSave(against newest: Graph) -> SavePlanner.Plan {
        let planner = SavePlanner(
            view: view, pending: pending, newest: newest, origin: { [unowned self] in origin(of: $0) },
            originsAreBase: originsAreBase, policy: mergePolicy)
        var transaction = store.transaction()
        transaction.author = transactionAuthor
        return planner.plan(transaction)
    }

    /// Moves to the commit's snapshot with the pending changes gone (they are in it now), telling the observers of
    /// the registered objects what the other contexts' commits before it change (and what its own does, when the
    /// merge policy resolved conflicts: values may then differ from the pending ones), and reporting those commits.
    private func didSave(_ commit: Commit, resolvedConflicts: Bool) {
        // An empty commit has no sequence of its own: it answers with the published one, someone else's commit.
        let own = commit.changes.isEmpty ? nil : commit.sequence
        if let own, observers.inbox != nil { observers.ownSaves.insert(own) }
        // The store filed the commit (and the ones before it) before `commit` returned, unless the inbox dropped them.
        let filed = observers.inbox?.take(through: commit.sequence) ?? []
        let skipping: Set<UInt64> = resolvedConflicts ? [] : own.map { [$0] } ?? []
        let observed = observedChanges(from: ownBase, to: commit.snapshot, filed: filed, skipping: skipping)
        notifying(observed) {
            pending.removeAll()
            advance(to: commit.snapshot)
            resetEpochs()
        }
        report(filed)
    }

    /// Makes each inserted model object that a save merged into an existing object stand for that object (the one
    /// registered for it stays registered when it is still alive).
    private func repoint(_ merged: [ObjectID: ObjectID]) {
        for (inserted, holder) in merged {
            guard let object = registered.removeValue(forKey: inserted)?.object else { continue }
            object.storedID = holder
            if registered[holder]?.object == nil { register(object, holder) }
        }
    }

    /// Throws `staleSnapshot` when a watched object's row or to-one targets differ between the two versions.
    private static func check(_ head: Graph, unchangedSince expected: Graph, _ watched: [ObjectID]) throws {
        guard head.sequence != expected.sequence else { return }
        let schema = head.schema
        for id in watched {
            var same = head.row(id) == expected.row(id)
            for (k, r) in schema.layouts[Int(id.entity)].relationships.enumerated() where same && !r.isToMany {
                let key = RelationshipKey(entity: id.entity, index: k)
                same = head.targets(id, key) == expected.targets(id, key)
            }
            if !same { throw TrellisError(.staleSnapshot, "\(schema.describe(id)) changed during save", object: id) }
        }
    }

    /// A child's save: its layer is folded into the parent's, which then holds the changes pending.
    private func pushChanges(into parent: ModelContext) {
        var observed = parent.observedChanges()
        if !parent.registered.isEmpty { observed.insert(layer: pending, over: view) }
        parent.notifying(observed) { push(into: parent) }
    }

    private func push(into parent: ModelContext) {
        let target = parent.pending
        for (id, row) in pending.liveInserts { target.insert(id, row: row) }
        for changes in pending.allUpdates where view.exists(changes.id) {
            parent.noteOrigin(changes.id)
            changes.forEachValue { a, v in target.set(changes.id, a, v) }
        }
        for (slot, state) in pending.allLinks where !pending.isDiscarded(slot.id) {
            switch state {
            case .toOne:
                parent.noteOrigin(slot.id)
                target.setLink(slot.id, slot.relationship, state)
            case .ordered:
                target.setLink(slot.id, slot.relationship, state)
            case .toMany(let added, let removed):
                for t in added { target.editToMany(slot.id, slot.relationship, t, present: true) }
                for t in removed { target.editToMany(slot.id, slot.relationship, t, present: false) }
            }
        }
        let roots = Set(pending.deleteRoots)
        let parentView = parent.view
        for id in pending.deleted where parentView.exists(id) {
            if roots.contains(id) { parent.noteOrigin(id) }
            target.delete(id, requested: roots.contains(id))
        }
    }
}
