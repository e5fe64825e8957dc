import TrellisCore
import TrellisGraph
import TrellisJournal

/// Turns a transaction into a resolved change set and the graph it produces, checking everything a commit promises:
/// types, required values, relationship targets and counts, unique constraints, and the delete rules (deny refuses,
/// cascade expands, nullify unlinks).
///
/// It applies each phase through the same primitives as `Graph.applying(_:)`, in the same order, so that
/// `base.applying(changes)` rebuilds exactly `graph`: replay equals live by construction.
struct CommitResolver {
    private(set) var graph: Graph
    private(set) var changes = ChangeSet()
    private var schema: Schema { graph.schema }
    /// Objects whose relationship counts may have changed.
    private var touched = Set<ObjectID>()
    /// Objects whose unique-constrained values are new.
    private var uniqueChecks: [ObjectID] = []

    /// Sections encoded for the journal as background work while they are applied (see
    /// `resolve(_:on:encodingAhead:)`).
    private var ahead = SectionsAhead()
    private var encodesAhead = false

    static func resolve(_ tx: Transaction, on base: Graph) throws -> (Graph, ChangeSet) {
        let (graph, changes, _) = try resolve(tx, on: base, encodingAhead: false)
        return (graph, changes)
    }

    /// `resolve(_:on:)`; with `encodingAhead`, a commit of many inserts (or updates) also encodes them for the
    /// journal as background work beside applying them (`BackgroundWork`: on another thread, or on this one while it
    /// waits for the index changes), and returns that work (`ChangeSetCodec.encodeInserts` of `changes.inserts`,
    /// `encodeUpdates` of `changes.updates`).
    static func resolve(
        _ tx: Transaction, on base: Graph, encodingAhead: Bool
    ) throws -> (
        Graph, ChangeSet, SectionsAhead
    ) {
        for check in tx.checks { try check(base) }
        var resolver = CommitResolver(graph: base)
        resolver.encodesAhead = encodingAhead
        try resolver.resolveInserts(tx)
        try resolver.resolveUpdates(tx)
        try resolver.resolveEdits(tx)
        try resolver.resolveDeletes(tx)
        try resolver.checkUniqueConstraints()
        try resolver.checkRelationshipCounts()
        resolver.graph.sequence = base.sequence + 1
        return (resolver.graph, resolver.changes, resolver.ahead)
    }

    private init(graph: Graph) { self.graph = graph }

    private func describe(_ id: ObjectID) -> String { schema.describe(id) }

    // MARK: Phases

    private mutating func resolveInserts(_ tx: Transaction) throws {
        var inserts = tx.inserts
        for i in inserts.indices {
            let id = inserts[i].id
            guard Int(id.entity) < schema.layouts.count else {
                throw TrellisError(.unknownEntity, "insert of \(id) names no entity of this schema", object: id)
            }
            // Most rows arrive complete and in stored form: one pass over them, reading the values and the types in
            // place, settles that.
            let e = Int(id.entity)
            let ready = inserts[i].values.withUnsafeBufferPointer { values in
                values.count == schema.layouts[e].attributes.count
                    && values.indices.allSatisfy {
                        Self.isStoredForm(values[$0], schema.layouts[e].attributes[$0].type)
                    }
            }
            if ready {
                if !schema.layouts[Int(id.entity)].indexes.isEmpty { uniqueChecks.append(id) }
                if !schema.layouts[Int(id.entity)].relationships.isEmpty { touched.insert(id) }
                continue
            }
            // The layout's parts are read one at a time: copying the whole layout out of another module's array
            // retains every one of its fields.
            let attributes = schema.layouts[e].attributes
            guard inserts[i].values.count == attributes.count else {
                throw TrellisError(
                    .invalidArgument,
                    "insert of \(describe(id)) gives \(inserts[i].values.count) values; \(schema.layouts[e].name) has "
                        + "\(attributes.count) attributes", object: id)
            }
            for a in attributes.indices {
                let given = inserts[i].values[a]
                let value = try Transaction.normalize(given, attributes[a], entity: schema.layouts[e].name)
                if value.isNull && !attributes[a].isOptional {
                    throw TrellisError(
                        .missingValue, "\(describe(id)) has no value for required attribute '\(attributes[a].name)'",
                        object: id)
                }
                // Writing back only what changed keeps the row shared with the transaction (no copy per insert).
                if !value.isIdentical(to: given) { inserts[i].values[a] = value }
            }
            if !schema.layouts[e].indexes.isEmpty { uniqueChecks.append(id) }
            if !schema.layouts[e].relationships.isEmpty { touched.insert(id) }
        }
        if encodesAhead, inserts.count >= EncodingAhead.minimumChanges {
            // `inserts` is final here: what is encoded ahead is what `changes.inserts` will hold. Queued by
            // `applyInserts`, behind the index changes it needs first.
            let final = inserts
            ahead.inserts = EncodingAhead(queued: false) { ChangeSetCodec.encodeInserts(final) }
        }
        try graph.applyInserts(inserts, alongside: ahead.inserts)
        changes.inserts = inserts
    }

    private mutating func resolveUpdates(_ tx: Transaction) throws {
        guard !tx.updates.isEmpty else { return }
        var updates: [ChangeSet.Update] = []
        updates.reserveCapacity(tx.updates.count)
        // Updates of distinct objects do not see each other's values, so reading every old value before applying any
        // update reads what applying them one at a time would.
        // Per entity, whether each attribute feeds a unique index.
        let uniqueAttributes =
            tx.updates.count >= 8
            ? schema.layouts.map { layout in
                layout.attributes.indices.map { a in layout.indexes.contains { $0.isUnique && $0.columns.contains(a) } }
            } : []
        // Updates usually come in serial order, so consecutive ones share a leaf: the cursor finds it once.
        var cursor = LeafCursor()
        let tables = graph.tables
        for pending in tx.updates {
            let id = pending.id
            let e = Int(id.entity)
            var update = ChangeSet.Update(id: id, changes: [])
            var changesUnique = false
            let live: Void? = try cursor.withRow(id, in: tables) { leaf, r in
                try pending.forEachValue { a, new in
                    let old = leaf.value(column: a, row: r)
                    if old.isIdentical(to: new) { return }
                    if new.isNull && !schema.layouts[e].attributes[a].isOptional {
                        throw TrellisError(
                            .missingValue,
                            "cannot set required attribute '\(schema.layouts[e].attributes[a].name)' of "
                                + "\(describe(id)) to null", object: id)
                    }
                    let change = ChangeSet.AttributeChange(
                        attribute: AttributeKey(entity: id.entity, index: a), old: old, new: new)
                    // Most updates change one attribute: a one-element array is allocated at its size, where the
                    // first append to an empty one goes through the standard library's general growth path.
                    if update.changes.isEmpty { update.changes = [change] } else { update.changes.append(change) }
                    if uniqueAttributes.isEmpty
                        ? schema.layouts[e].indexes.contains(where: { $0.isUnique && $0.columns.contains(a) })
                        : uniqueAttributes[e][a]
                    {
                        changesUnique = true
                    }
                }
            }
            guard live != nil else {
                throw TrellisError(.missingObject, "cannot update \(describe(id)): it does not exist", object: id)
            }
            guard !update.changes.isEmpty else { continue }
            if changesUnique { uniqueChecks.append(id) }
            updates.append(update)
        }
        if encodesAhead, updates.count >= EncodingAhead.minimumChanges {
            // `updates` is final here: what is encoded ahead is what `changes.updates` will hold. Queued by
            // `applyUpdates`, behind the index changes it needs first.
            let final = updates
            ahead.updates = EncodingAhead(queued: false) { ChangeSetCodec.encodeUpdates(final) }
        }
        cursor = LeafCursor()  // drops its hold on a leaf that the updates write
        try graph.applyUpdates(updates, oldValuesStored: true, alongside: ahead.updates)
        changes.updates = updates
    }

    private mutating func resolveEdits(_ tx: Transaction) throws {
        for edit in tx.edits {
            let rel = schema.layouts[Int(edit.source.entity)].relationships[edit.relationship.index]
            guard graph.contains(edit.source) else {
                throw TrellisError(
                    .missingObject, "cannot change '\(rel.name)' of \(describe(edit.source)): it does not exist",
                    object: edit.source)
            }
            let current = graph.targets(edit.source, edit.relationship)
            switch edit.kind {
            case .unlink:
                var target = edit.target.serial == 0 ? current.first : edit.target
                if edit.target.serial == 0 && rel.isOrdered {
                    try checkPosition(edit.position, below: current.count, rel, edit.source)
                    target = current[edit.position]
                }
                guard let target, current.contains(target) else { continue }
                try emit(.init(.unlink, source: edit.source, relationship: edit.relationship, target: target))
            case .link:
                guard graph.contains(edit.target) else {
                    throw TrellisError(
                        .missingObject,
                        "cannot link \(describe(edit.target)) to '\(rel.name)' of \(describe(edit.source)): "
                            + "it does not exist", object: edit.target)
                }
                if current.contains(edit.target) { continue }
                if !rel.isToMany, let old = current.first {
                    try emit(.init(.unlink, source: edit.source, relationship: edit.relationship, target: old))
                }
                let inverse = RelationshipKey(entity: rel.target, index: rel.inverse)
                let inverseIsToMany = schema.layouts[Int(rel.target)].relationships[rel.inverse].isToMany
                if !inverseIsToMany, let owner = graph.targets(edit.target, inverse).first {
                    try emit(.init(.unlink, source: owner, relationship: edit.relationship, target: edit.target))
                }
                try emit(edit)
            case .place:
                try resolvePlace(edit, rel, current: current)
            }
        }
    }

    /// Resolves a place request: the target (serial 0: the one at `previousPosition`) inserted at, or moved to,
    /// `position`, with its previous position filled in; a to-one inverse that points elsewhere is unlinked first.
    private mutating func resolvePlace(
        _ edit: ChangeSet.RelationshipEdit, _ rel: EntityLayout.RelationshipLayout, current: [ObjectID]
    ) throws {
        guard rel.isOrdered else {
            throw TrellisError(
                .invalidArgument, "'\(rel.name)' of \(describe(edit.source)) is not an ordered relationship",
                object: edit.source)
        }
        var target = edit.target
        if target.serial == 0 {
            try checkPosition(edit.previousPosition ?? -1, below: current.count, rel, edit.source)
            target = current[edit.previousPosition!]
        } else if !graph.contains(target) {
            throw TrellisError(
                .missingObject,
                "cannot link \(describe(target)) to '\(rel.name)' of \(describe(edit.source)): it does not exist",
                object: target)
        }
        if let from = current.firstIndex(of: target) {
            try checkPosition(edit.position, below: current.count, rel, edit.source)
            guard from != edit.position else { return }
            try emit(
                .init(
                    placing: target, source: edit.source, relationship: edit.relationship, at: edit.position,
                    previousPosition: from))
            return
        }
        try checkPosition(edit.position, below: current.count + 1, rel, edit.source)
        let inverse = RelationshipKey(entity: rel.target, index: rel.inverse)
        if !schema.layouts[Int(rel.target)].relationships[rel.inverse].isToMany,
            let owner = graph.targets(target, inverse).first
        {
            try emit(.init(.unlink, source: owner, relationship: edit.relationship, target: target))
        }
        try emit(
            .init(
                placing: target, source: edit.source, relationship: edit.relationship, at: edit.position,
                previousPosition: nil))
    }

    private func checkPosition(
        _ position: Int, below end: Int, _ rel: EntityLayout.RelationshipLayout, _ source: ObjectID
    ) throws {
        guard position >= 0, position < end else {
            throw TrellisError(
                .invalidArgument,
                "position \(position) is out of range for '\(rel.name)' of \(describe(source)), which holds "
                    + "\(end == 0 ? "no targets" : "positions 0 to \(end - 1)")", object: source)
        }
    }

    private mutating func emit(_ edit: ChangeSet.RelationshipEdit) throws {
        try graph.applyEdit(edit)
        changes.edits.append(edit)
        touched.insert(edit.source)
        touched.insert(edit.target)
    }

    /// Expands the requested deletes through their cascade rules, checks deny rules, notes what nullify rules will
    /// unlink, records each deleted object, and applies the deletes.
    ///
    /// One walk over the cascade (`DeleteCascade`) does all of it: a target of a nullify or deny rule that the cascade
    /// has not reached yet is kept, and checked again once the walk is over (most have been reached by then: a
    /// folder's parent is deleted before its children).
    private mutating func resolveDeletes(_ tx: Transaction) throws {
        guard !tx.deletes.isEmpty else { return }
        let cascade = DeleteCascade(deleting: tx.deletes, in: graph)
        if let id = cascade.missing {
            throw TrellisError(.missingObject, "cannot delete \(describe(id)): it does not exist", object: id)
        }
        var deletes = cascade.deletes
        let doomed = cascade.doomed
        // The first object, in the cascade's order, whose deny rule holds a target that outlives the commit.
        if let denial = cascade.denials.first(where: { !doomed.contains($0.blocker) }) {
            let name = schema.layouts[Int(denial.object.entity)].relationships[denial.relationship].name
            throw TrellisError(
                .deleteDenied,
                "cannot delete \(describe(denial.object)): relationship '\(name)' has delete rule deny and still "
                    + "holds \(describe(denial.blocker))" + (denial.count > 1 ? " (\(denial.count) targets)" : ""),
                object: denial.object)
        }
        for t in cascade.unlinked where !doomed.contains(t) { touched.insert(t) }
        // A big cascade's deletes read their rows when asked (`DeletedRow`); smaller ones copy their values and
        // targets out, so that a change set kept for long (history, undo) does not keep whole leaves alive.
        if deletes.count < DeletedRow.recordedFrom {
            deletes = deletes.map { ChangeSet.Delete(id: $0.id, values: $0.values, relationships: $0.relationships) }
        }
        if encodesAhead, deletes.count >= EncodingAhead.minimumChanges {
            // The edits were final before this phase, the deletes are now: the journal's last sections.
            let (edits, final) = (changes.edits, deletes)
            ahead.editsAndDeletes = EncodingAhead { ChangeSetCodec.encodeEditsAndDeletes(edits, final) }
        }
        try graph.applyDeletes(deletes, verified: doomed)
        changes.deletes = deletes
    }

    // MARK: Checks on the result

    /// Whether `value` is a non-null value of `type` in the form it is stored in, which normalizing leaves as is.
    @inline(__always)
    private static func isStoredForm(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (.bool, .bool), (.string, .string), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url),
            (.double, .double), (.int, .int), (.int64, .int):
            return true
        default: return false
        }
    }

    /// The entities whose unique indexes hold no two entries with equal values at all, found by walking them when
    /// this commit checks enough of their objects to make one walk cheaper than a probe per object; none of their
    /// objects can conflict.
    /// Empty (nothing cleared) below 64 checks, without allocating for a small commit.
    private func entitiesWithoutDuplicates() -> [Bool] {
        guard uniqueChecks.count >= 64 else { return [] }
        var cleared = [Bool](repeating: false, count: schema.layouts.count)
        var checks = [Int](repeating: 0, count: schema.layouts.count)
        for id in uniqueChecks { checks[Int(id.entity)] += 1 }
        for e in checks.indices where checks[e] > 0 && checks[e] * 32 >= graph.tables[e].count {
            let indexes = schema.layouts[e].indexes
            cleared[e] = indexes.indices.allSatisfy { i in
                !indexes[i].isUnique || !graph.tables[e].indexes[i].holdsDuplicateValues
            }
        }
        return cleared
    }

    private func checkUniqueConstraints() throws {
        let cleared = entitiesWithoutDuplicates()
        for id in uniqueChecks where (cleared.isEmpty || !cleared[Int(id.entity)]) && graph.contains(id) {
            // The layout is read in place until a conflict is found: copying it retains each of its fields.
            let e = Int(id.entity)
            for i in schema.layouts[e].indexes.indices where schema.layouts[e].indexes[i].isUnique {
                guard let (other, values) = graph.uniqueConflict(i, of: id) else { continue }
                let layout = schema.layouts[e]
                let index = layout.indexes[i]
                let names = index.columns.map { layout.attributes[$0].name }
                let shown = zip(names, values).map { "\($0) = \($1)" }.joined(separator: ", ")
                throw TrellisError(
                    .uniqueViolation,
                    "\(describe(id)) breaks the unique constraint on \(layout.name)(\(names.joined(separator: ", "))): "
                        + "\(describe(other)) already has \(shown)", object: id,
                    uniqueViolation: .init(entity: layout.name, attributes: names, values: values, existing: other))
            }
        }
    }

    private func checkRelationshipCounts() throws {
        for id in touched.sorted() where graph.contains(id) {
            for (k, rel) in schema.layouts[Int(id.entity)].relationships.enumerated() {
                let n = graph.targetCount(id, RelationshipKey(entity: id.entity, index: k))
                if n < rel.minCount || rel.maxCount.map({ n > $0 }) ?? false {
                    let bounds = "\(rel.minCount)...\(rel.maxCount.map(String.init) ?? "")"
                    throw TrellisError(
                        .relationshipCount,
                        "\(describe(id)) would have \(n) target(s) in '\(rel.name)'; it must have \(bounds)", object: id
                    )
                }
            }
        }
    }
}
