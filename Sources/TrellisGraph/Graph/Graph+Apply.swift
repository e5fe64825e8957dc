import TrellisCore

extension Graph {
    /// The next version: this graph with a resolved change set applied.
    ///
    /// Pure: the receiver is unchanged. Recovery applies journal records this way (in place, through `apply`); a live
    /// commit's resolver applies its phases with the same primitives in the same order, so applying a commit's change
    /// set to the version before it rebuilds the version it published. Inserts are applied first, then attribute
    /// updates, relationship edits in order, and deletes in order (each delete unlinks the deleted object from the
    /// inverse of every relationship whose rule is not `noAction`). A change set that does not fit the graph (an insert of an existing object, an update of a
    /// missing one, a value of the wrong type) throws `TrellisError.corrupt` naming the object.
    /// - Complexity: O(c log n) for a change of c elements in a store of n objects.
    public func applying(_ changes: ChangeSet, sequence: UInt64? = nil) throws -> Snapshot {
        var next = self
        try next.apply(changes, sequence: sequence ?? self.sequence + 1)
        return next
    }

    /// `applying(_:sequence:)` in place. A graph that nothing else shares is changed without copying the leaves and
    /// nodes it touches; but when it throws, the graph is left partly changed and must be discarded.
    package mutating func apply(_ changes: ChangeSet, sequence: UInt64) throws {
        try applyInserts(changes.inserts)
        try applyUpdates(changes.updates)
        for edit in changes.edits { try applyEdit(edit) }
        try applyDeletes(changes.deletes)
        self.sequence = sequence
    }

    /// `apply(_:sequence:)`, also checking the history the change set carries against the graph it applies to: each
    /// update's old values must be the values the object holds (after the inserts and any earlier update of it in
    /// the same change set), and each delete's values and targets those the object holds when the deletes apply
    /// (after the updates and edits). A record that contradicts the state it replays onto is damage, and throws
    /// `TrellisError.corrupt` naming the object. `trellis verify` replays this way; recovery does not (its replay
    /// is the reopen's hot path, and history does not change the state it rebuilds).
    package mutating func applyCheckingHistory(_ changes: ChangeSet, sequence: UInt64) throws {
        try applyInserts(changes.inserts)
        // Values set by an earlier update of the same object in this change set (a writer never emits two).
        var earlier: [ObjectID: [Int: Value]] = [:]
        for update in changes.updates {
            try checkEntity(update.id)
            guard let row = row(update.id) else { throw reject("update of missing object", update.id) }
            for change in update.changes {
                let a = change.attribute.index
                guard change.attribute.entity == update.id.entity, a < row.count else {
                    throw reject("update with a bad attribute or value type for", update.id)
                }
                let held = earlier[update.id]?[a] ?? row[a]
                guard change.old.isIdentical(to: held) else {
                    throw reject(
                        "update says attribute '\(layout(update.id.entity).attributes[a].name)' was \(change.old), "
                            + "but it holds \(held), in", update.id)
                }
                earlier[update.id, default: [:]][a] = change.new
            }
        }
        try applyUpdates(changes.updates)
        for edit in changes.edits { try applyEdit(edit) }
        for delete in changes.deletes {
            try checkEntity(delete.id)
            // A missing object (or one deleted twice) is refused by `applyDeletes` below.
            guard let row = row(delete.id) else { continue }
            let layout = layout(delete.id.entity)
            let values = delete.values
            guard values.count == row.count, zip(values, row).allSatisfy({ $0.0.isIdentical(to: $0.1) }) else {
                let shown =
                    values.count == row.count
                    ? zip(values, row).enumerated().first { !$0.element.0.isIdentical(to: $0.element.1) }.map {
                        "attribute '\(layout.attributes[$0.offset].name)' was \($0.element.0), but it holds "
                            + "\($0.element.1)"
                    } ?? "" : "\(values.count) values for \(row.count) attributes"
                throw reject("delete says \(shown), in", delete.id)
            }
            let links = delete.relationships
            for k in layout.relationships.indices {
                let held = targets(delete.id, RelationshipKey(entity: delete.id.entity, index: k))
                let ordered = layout.relationships[k].isOrdered
                let said = k < links.count ? (ordered ? links[k] : links[k].sorted()) : []
                guard said == held else {
                    throw reject(
                        "delete says relationship '\(layout.relationships[k].name)' held \(said.count) target(s) "
                            + "\(said.prefix(3).map { "\($0)" }.joined(separator: ", ")), but it holds \(held.count)",
                        delete.id)
                }
            }
        }
        try applyDeletes(changes.deletes)
        self.sequence = sequence
    }

    func reject(_ message: String, _ id: ObjectID) -> TrellisError {
        TrellisError(.corrupt, "change set does not fit the graph: \(message) \(schema.describe(id))", object: id)
    }

    func checkEntity(_ id: ObjectID) throws {
        guard Int(id.entity) < tables.count, id.serial != 0 else {
            throw TrellisError(.corrupt, "change set names an object of unknown entity \(id)", object: id)
        }
    }

    /// Commits with at least this many inserts, updates or deletes apply them a leaf at a time with one index merge
    /// per index (the same result as one at a time; tests compare the two).
    static let batchFrom = 8

    /// Batches of at least this many inserts (or updates, see `applyUpdates`) build their index trees on another
    /// thread while the leaves are written; below it, handing the work over costs more than it saves.
    static let parallelIndexesFrom = 512

    /// Every entity's index changes for `inserts` (all of them valid), netted: what `insertRun` records, ready for
    /// `applyNetted`. Reads only the inserted values, so it can run while another thread writes the leaves.
    func nettedIndexChanges(after inserts: [ChangeSet.Insert]) -> [[NettedChanges]] {
        var changes = tables.map { Array(repeating: IndexChanges(), count: $0.indexes.count) }
        // One pass over the inserts per index, reading values in place: copying each row's array and the index's
        // column list per row cost more than the entries.
        inserts.withUnsafeBufferPointer { inserts in
            for e in tables.indices where !tables[e].indexes.isEmpty {
                let width = schema.layouts[e].attributes.count
                for (i, index) in schema.layouts[e].indexes.enumerated() {
                    let encoder = tables[e].indexes[i].encoder(index)
                    var list = IndexChanges()
                    if let coding = encoder.coding, let second = encoder.second {
                        let (c0, c1) = (index.columns[0], index.columns[1])
                        list.pair.reserveCapacity(inserts.count)
                        for k in inserts.indices where Int(inserts[k].id.entity) == e {
                            inserts[k].values.withUnsafeBufferPointer { values in
                                guard values.count == width else { return }
                                let entry = PairEntry(
                                    first: coding.encode(values[c0]) ?? 0, second: second.encode(values[c1]) ?? 0,
                                    serial: inserts[k].id.serial)
                                list.pair.append((entry, true))
                            }
                        }
                    } else if let coding = encoder.coding {
                        let c = index.columns[0]
                        list.scalar.reserveCapacity(inserts.count)
                        for k in inserts.indices where Int(inserts[k].id.entity) == e {
                            inserts[k].values.withUnsafeBufferPointer { values in
                                guard values.count == width else { return }
                                // A value of the wrong case cannot reach a scalar index: commits check types first.
                                let bits = coding.encode(values[c]) ?? 0
                                list.scalar.append((ScalarEntry(bits: bits, serial: inserts[k].id.serial), true))
                            }
                        }
                    } else {
                        for k in inserts.indices where Int(inserts[k].id.entity) == e {
                            guard inserts[k].values.count == width else { continue }
                            encoder.record(index.columns, serial: inserts[k].id.serial, adding: true, into: &list) {
                                inserts[k].values[$0]
                            }
                        }
                    }
                    changes[e][i] = list
                }
            }
        }
        return NettedChanges.netting(&changes)
    }

    /// Every entity's index changes for `updates`, netted, for one-attribute and pair indexes and updates whose `old`
    /// values are the stored ones: what `updateRun` records, from the updates (and, for a pair index whose other value
    /// an update leaves alone, that value as this graph holds it).
    func nettedIndexChanges(after updates: [ChangeSet.Update], feeding: [[[Int]]]) -> [[NettedChanges]] {
        var changes = tables.map { Array(repeating: IndexChanges(), count: $0.indexes.count) }
        let encoders = tables.indices.map { e in
            zip(tables[e].indexes, schema.layouts[e].indexes).map { $0.encoder($1) }
        }
        let pairIndexes = encoders.map { list in list.indices.filter { list[$0].second != nil } }
        // Read in place: copying each update's change list (and the values in it) cost more than the entries.
        updates.withUnsafeBufferPointer { updates in
            for u in updates.indices {
                let e = Int(updates[u].id.entity)
                guard e < tables.count else { continue }
                let serial = updates[u].id.serial
                updates[u].changes.withUnsafeBufferPointer { list in
                    for c in list.indices {
                        let a = list[c].attribute.index
                        guard a < feeding[e].count, !feeding[e][a].isEmpty,
                            !list[c].old.isIdentical(to: list[c].new)
                        else { continue }
                        for i in feeding[e][a] where encoders[e][i].second == nil {
                            if let coding = encoders[e][i].coding {
                                // Values of the wrong case cannot reach a scalar index: commits check types first.
                                let old = ScalarEntry(bits: coding.encode(list[c].old) ?? 0, serial: serial)
                                let new = ScalarEntry(bits: coding.encode(list[c].new) ?? 0, serial: serial)
                                changes[e][i].scalar.append((old, false))
                                changes[e][i].scalar.append((new, true))
                            } else if encoders[e][i].elements {
                                let pairs = encoders[e][i].pairs
                                for entry in IndexEntry.elementEntries(list[c].old, serial: serial, pairs: pairs) {
                                    changes[e][i].general.append((entry, false))
                                }
                                for entry in IndexEntry.elementEntries(list[c].new, serial: serial, pairs: pairs) {
                                    changes[e][i].general.append((entry, true))
                                }
                            } else {
                                changes[e][i].general.append((IndexEntry([list[c].old], serial: serial), false))
                                changes[e][i].general.append((IndexEntry([list[c].new], serial: serial), true))
                            }
                        }
                    }
                }
            }
        }
        for e in pairIndexes.indices {
            for i in pairIndexes[e] {
                changes[e][i].pair = pairChanges(after: updates, entity: e, index: i, encoder: encoders[e][i])
            }
        }
        return NettedChanges.netting(&changes)
    }

    /// What `updates` change in pair index `index` of entity `e`: for each update that changes either of its values,
    /// the entry it had goes and the one it has comes. Relies on `oldValuesStored`: one update per object, whose `old`
    /// values are the stored ones. A value the update leaves alone is read from this graph, once
    /// per run of updates in the same leaf rather than by a descent per update.
    private func pairChanges(
        after updates: [ChangeSet.Update], entity e: Int, index: Int, encoder: IndexEncoder
    ) -> [(entry: PairEntry, adding: Bool)] {
        guard let a = encoder.coding, let b = encoder.second else { return [] }
        let columns = schema.layouts[e].indexes[index].columns
        var list: [(entry: PairEntry, adding: Bool)] = []
        updates.withUnsafeBufferPointer { updates in
            /// Records update `u`'s entries, reading a kept value from `leaf` (nil: none can be read).
            func record(_ u: Int, _ leaf: UnsafePointer<Leaf>?) {
                var old: (UInt64?, UInt64?) = (nil, nil)
                var new: (UInt64?, UInt64?) = (nil, nil)
                updates[u].changes.withUnsafeBufferPointer { list in
                    for c in list.indices where !list[c].old.isIdentical(to: list[c].new) {
                        // Values of the wrong case cannot reach a pair index: commits check types first.
                        if columns[0] == list[c].attribute.index {
                            old.0 = a.encode(list[c].old) ?? 0
                            new.0 = a.encode(list[c].new) ?? 0
                        }
                        if columns[1] == list[c].attribute.index {
                            old.1 = b.encode(list[c].old) ?? 0
                            new.1 = b.encode(list[c].new) ?? 0
                        }
                    }
                }
                guard old.0 != nil || old.1 != nil else { return }
                let serial = updates[u].id.serial
                if old.0 == nil || old.1 == nil {
                    let k = old.0 == nil ? 0 : 1
                    let row = Int(serial & Leaf.mask)
                    let kept = leaf.flatMap { (k == 0 ? a : b).encode($0.pointee.value(column: columns[k], row: row)) }
                    if k == 0 {
                        (old.0, new.0) = (kept ?? 0, kept ?? 0)
                    } else {
                        (old.1, new.1) = (kept ?? 0, kept ?? 0)
                    }
                }
                list.append((PairEntry(first: old.0 ?? 0, second: old.1 ?? 0, serial: serial), false))
                list.append((PairEntry(first: new.0 ?? 0, second: new.1 ?? 0, serial: serial), true))
            }
            var start = 0
            while start < updates.count {
                let id = updates[start].id
                guard Int(id.entity) == e else {
                    start += 1
                    continue
                }
                var end = start + 1
                while end < updates.count, updates[end].id.entity == id.entity,
                    updates[end].id.serial >> Leaf.shift == id.serial >> Leaf.shift
                {
                    end += 1
                }
                // Updated objects are live (`applyUpdates` refuses the batch otherwise), so the run's leaf exists.
                let run = start..<end
                let found: Bool? = withLeaf(id) { leaf, _ in
                    for u in run { record(u, leaf) }
                    return true
                }
                if found == nil {
                    for u in run { record(u, nil) }
                }
                start = end
            }
        }
        return list
    }

    /// Applies index changes netted on another thread. Only the sorting happens there; the trees are built here, on
    /// the thread that writes the leaves: nodes allocated on another thread came from another malloc arena, and
    /// every later small commit into the store that copied and freed them was half as slow again.
    private mutating func applyNetted(_ netted: consuming [[NettedChanges]]) {
        for e in tables.indices {
            for i in netted[e].indices {
                // Handed over, so each tree's merge can let its changes go before it builds the new nodes.
                let changes = netted[e][i]
                netted[e][i] = NettedChanges()
                tables[e].indexes[i].apply(consume changes)
            }
        }
    }

    /// Inserts rows; from `batchFrom` inserts on, a leaf at a time with one index merge per index (the same result).
    ///
    /// `alongside`: as `applyUpdates(_:oldValuesStored:alongside:)`'s.
    package mutating func applyInserts(
        _ inserts: [ChangeSet.Insert], alongside: BackgroundWork<[[UInt8]]>? = nil
    ) throws {
        guard inserts.count < Self.batchFrom else { return try applyInsertBatch(inserts, alongside: alongside) }
        alongside?.queue()
        for insert in inserts {
            try checkEntity(insert.id)
            let layout = layout(insert.id.entity)
            guard insert.values.count == layout.attributes.count else {
                throw reject("wrong number of values for insert of", insert.id)
            }
            guard tables[Int(insert.id.entity)].insertRow(insert.id.serial, insert.values, layout: layout) else {
                throw reject("insert of an existing object or a value of the wrong type:", insert.id)
            }
        }
    }

    private mutating func applyInsertBatch(
        _ inserts: [ChangeSet.Insert], alongside: BackgroundWork<[[UInt8]]>?
    ) throws {
        // A large batch has its index changes sorted on another thread from the inserted values while the leaves are
        // written here: the same changes `insertRun` would record. Only then is a copy of the graph kept, for that
        // thread to read: while it lives, every node written here is copied first.
        var indexes: BackgroundWork<[[NettedChanges]]>?
        if inserts.count >= Self.parallelIndexesFrom, tables.contains(where: { !$0.indexes.isEmpty }) {
            let before = self
            indexes = BackgroundWork { before.nettedIndexChanges(after: inserts) }
        }
        alongside?.queue()
        var changes = tables.map { Array(repeating: IndexChanges(), count: indexes == nil ? $0.indexes.count : 0) }
        var start = 0
        while start < inserts.count {
            let id = inserts[start].id
            try checkEntity(id)
            // A run: consecutive inserts into one leaf of one entity.
            var end = start + 1
            while end < inserts.count, inserts[end].id.entity == id.entity, inserts[end].id.serial != 0,
                inserts[end].id.serial >> Leaf.shift == id.serial >> Leaf.shift
            {
                end += 1
            }
            let e = Int(id.entity)
            switch tables[e].insertRun(inserts, start..<end, layout: layout(id.entity), changes: &changes[e]) {
            case nil: break
            case .wrongValueCount(let p): throw reject("wrong number of values for insert of", inserts[p].id)
            case .refused(let p), .missing(let p):
                throw reject("insert of an existing object or a value of the wrong type:", inserts[p].id)
            }
            start = end
        }
        if let indexes {
            applyNetted(indexes.wait(helping: alongside))
        } else {
            for e in tables.indices { tables[e].applyIndexChanges(changes[e]) }
        }
    }

    /// Applies attribute updates; from `batchFrom` updates on, a leaf at a time with one index merge per index (the
    /// same result).
    ///
    /// `oldValuesStored`: each object has one update, and each change's `old` is the value the graph holds (what
    /// `CommitResolver` produces). A large batch may then have its index trees built on another thread from the old and
    /// new values (and, for a pair index, the value an update leaves alone, read from this version) while the leaves
    /// are written here, when every index of the store is on one attribute or is a pair index.
    ///
    /// `alongside`: work made unqueued (the journal encoding of the same changes), queued here behind the index changes
    /// this thread needs first; when another thread has taken the index changes, this thread does it (unless that
    /// thread got to it first) before waiting for them.
    package mutating func applyUpdates(
        _ updates: [ChangeSet.Update], oldValuesStored: Bool = false, alongside: BackgroundWork<[[UInt8]]>? = nil
    ) throws {
        guard updates.count >= Self.batchFrom else {
            alongside?.queue()
            for update in updates { try applyUpdate(update) }
            return
        }
        // Per entity and attribute, the indexes the attribute feeds.
        let feeding = schema.layouts.map { layout in
            layout.attributes.indices.map { a in
                layout.indexes.indices.filter { layout.indexes[$0].columns.contains(a) }
            }
        }
        var indexes: BackgroundWork<[[NettedChanges]]>?
        if oldValuesStored, updates.count >= Self.parallelIndexesFrom,
            zip(tables, schema.layouts).allSatisfy({ table, layout in
                zip(table.indexes, layout.indexes).allSatisfy { $1.columns.count == 1 || $0.isPair }
            }),
            tables.contains(where: { !$0.indexes.isEmpty })
        {
            let before = self
            indexes = BackgroundWork { before.nettedIndexChanges(after: updates, feeding: feeding) }
        }
        alongside?.queue()
        // Empty when the other thread sorts the index changes: `updateRun` then records none.
        var changes = tables.map { Array(repeating: IndexChanges(), count: indexes == nil ? $0.indexes.count : 0) }
        var start = 0
        while start < updates.count {
            let id = updates[start].id
            try checkEntity(id)
            var end = start + 1
            while end < updates.count, updates[end].id.entity == id.entity, updates[end].id.serial != 0,
                updates[end].id.serial >> Leaf.shift == id.serial >> Leaf.shift
            {
                end += 1
            }
            let e = Int(id.entity)
            let run = start..<end
            switch tables[e].updateRun(
                updates, run, layout: layout(id.entity), feeding: feeding[e], changes: &changes[e])
            {
            case nil: break
            case .missing(let p): throw reject("update of missing object", updates[p].id)
            case .refused(let p), .wrongValueCount(let p):
                throw reject("update with a bad attribute or value type for", updates[p].id)
            }
            start = end
        }
        if let indexes {
            applyNetted(indexes.wait(helping: alongside))
        } else {
            for e in tables.indices { tables[e].applyIndexChanges(changes[e]) }
        }
    }

    mutating func applyUpdate(_ update: ChangeSet.Update) throws {
        try checkEntity(update.id)
        let e = Int(update.id.entity)
        let layout = layout(update.id.entity)
        guard tables[e].contains(update.id.serial) else { throw reject("update of missing object", update.id) }
        for change in update.changes {
            guard change.attribute.entity == update.id.entity, change.attribute.index < layout.attributes.count,
                tables[e].setValue(update.id.serial, change.attribute.index, change.new, layout: layout) != nil
            else { throw reject("update with a bad attribute or value type for", update.id) }
        }
    }

    /// Links or unlinks both ends of a relationship, or places a target in an ordered one. Linking a to-one end that
    /// points elsewhere first unlinks the old target's inverse, so both ends always agree.
    package mutating func applyEdit(_ edit: ChangeSet.RelationshipEdit) throws {
        try checkEntity(edit.source)
        try checkEntity(edit.target)
        let sourceLayout = layout(edit.source.entity)
        let k = edit.relationship.index
        guard edit.relationship.entity == edit.source.entity, k < sourceLayout.relationships.count else {
            throw reject("edit of an unknown relationship of", edit.source)
        }
        let rel = sourceLayout.relationships[k]
        guard rel.target == edit.target.entity else { throw reject("edit links the wrong entity to", edit.source) }
        let s = Int(edit.source.entity)
        let t = Int(edit.target.entity)
        let targetLayout = layout(edit.target.entity)
        switch edit.kind {
        case .link:
            guard tables[s].contains(edit.source.serial) else { throw reject("link from missing object", edit.source) }
            guard tables[t].contains(edit.target.serial) else { throw reject("link to missing object", edit.target) }
            let displaced = tables[s].addTarget(
                edit.source.serial, k, edit.target.serial, layout: sourceLayout)
            if displaced != 0 {
                tables[t].removeTarget(displaced, rel.inverse, edit.source.serial, layout: targetLayout)
            }
            let previousOwner = tables[t].addTarget(
                edit.target.serial, rel.inverse, edit.source.serial, layout: targetLayout)
            if previousOwner != 0 {
                tables[s].removeTarget(previousOwner, k, edit.target.serial, layout: sourceLayout)
            }
        case .place:
            guard rel.isOrdered else { throw reject("place edit of an unordered relationship of", edit.source) }
            guard tables[s].contains(edit.source.serial) else { throw reject("place from missing object", edit.source) }
            guard tables[t].contains(edit.target.serial) else { throw reject("place of missing object", edit.target) }
            guard
                tables[s].placeTarget(
                    edit.source.serial, k, edit.target.serial, at: edit.position, layout: sourceLayout)
            else { throw reject("place edit at position \(edit.position), out of range, in", edit.source) }
            let previousOwner = tables[t].addTarget(
                edit.target.serial, rel.inverse, edit.source.serial, layout: targetLayout)
            if previousOwner != 0 {
                tables[s].removeTarget(previousOwner, k, edit.target.serial, layout: sourceLayout)
            }
        case .unlink:
            if tables[s].contains(edit.source.serial) {
                tables[s].removeTarget(edit.source.serial, k, edit.target.serial, layout: sourceLayout)
            }
            if tables[t].contains(edit.target.serial) {
                tables[t].removeTarget(edit.target.serial, rel.inverse, edit.source.serial, layout: targetLayout)
            }
        }
    }

    /// Deletes objects; from `batchFrom` deletes on, rows go a leaf at a time (in serial order: the result does not
    /// depend on the order) with one index merge per index.
    ///
    /// - Parameter verified: the ids of `deletes`, when the caller has checked that each names a live object and none
    ///   comes twice (a commit's resolver has, and built this set doing it); nil to have them checked here.
    package mutating func applyDeletes(_ deletes: [ChangeSet.Delete], verified: ObjectIDSet? = nil) throws {
        guard deletes.count >= Self.batchFrom else { return try applyDeletesOneByOne(deletes) }
        let doomed = try verified ?? checkedDeletes(deletes)
        var cursor = LeafCursor()
        // Inverse links into objects that this change set deletes too need no cleanup: those objects go entirely.
        // A deleted row's own links never change before its turn (only links of surviving objects are cleaned), so
        // they can all be read first.
        let relations = schema.layouts.map { layout in
            layout.relationships.map { (target: $0.target, inverse: $0.inverse, cleans: $0.deleteRule != .noAction) }
        }
        for i in deletes.indices {
            let id = deletes[i].id
            let e = Int(id.entity)
            guard !relations[e].isEmpty else { continue }
            cursor.withRow(id, in: tables) { leaf, r in
                for (k, rel) in relations[e].enumerated() where rel.cleans {
                    let t = Int(rel.target)
                    leaf.forEachTarget(r, k) { serial in
                        // `removeTarget` does nothing for a target that is not live.
                        guard !doomed.contains(ObjectID(entity: rel.target, serial: serial)) else { return }
                        tables[t].removeTarget(serial, rel.inverse, id.serial, layout: layout(rel.target))
                    }
                }
            }
        }
        cursor = LeafCursor()  // drops its hold on a leaf that the removals below write
        var ids = deletes.map(\.id)
        if !zip(ids, ids.dropFirst()).allSatisfy({ $0.0 < $0.1 }) { ids.sort() }
        let serials = ids.map(\.serial)
        var changes = tables.map { Array(repeating: IndexChanges(), count: $0.indexes.count) }
        var start = 0
        while start < ids.count {
            let entity = ids[start].entity
            var end = start + 1
            while end < ids.count, ids[end].entity == entity, serials[end] >> Leaf.shift == serials[start] >> Leaf.shift
            {
                end += 1
            }
            let e = Int(entity)
            tables[e].removeRun(serials[start..<end], layout: layout(entity), changes: &changes[e])
            start = end
        }
        for e in tables.indices { tables[e].applyIndexChanges(changes[e]) }
    }

    /// The ids of `deletes`, each checked to name a live object: one is missing at its turn exactly when it is not
    /// stored or an earlier delete took it.
    private func checkedDeletes(_ deletes: [ChangeSet.Delete]) throws -> ObjectIDSet {
        var doomed = ObjectIDSet()
        var cursor = LeafCursor()
        for i in deletes.indices {
            let id = deletes[i].id
            try checkEntity(id)
            guard cursor.contains(id, in: tables), doomed.insert(id) else {
                throw reject("delete of missing object", id)
            }
        }
        return doomed
    }

    private mutating func applyDeletesOneByOne(_ deletes: [ChangeSet.Delete]) throws {
        // Inverse links into objects that this change set deletes too need no cleanup: those objects go entirely.
        let doomed = deletes.count > 1 ? ObjectIDSet(deletes.lazy.map(\.id)) : ObjectIDSet()
        for delete in deletes {
            try checkEntity(delete.id)
            let e = Int(delete.id.entity)
            let layout = layout(delete.id.entity)
            guard let (leaf, r) = tables[e].locate(delete.id.serial) else {
                throw reject("delete of missing object", delete.id)
            }
            for (k, rel) in layout.relationships.enumerated() where rel.deleteRule != .noAction {
                let targetLayout = self.layout(rel.target)
                for serial in leaf.targets(r, k) {
                    let target = ObjectID(entity: rel.target, serial: serial)
                    if doomed.contains(target) { continue }
                    // `removeTarget` does nothing for a target that is not live.
                    tables[Int(rel.target)].removeTarget(serial, rel.inverse, delete.id.serial, layout: targetLayout)
                }
            }
            tables[e].removeRow(delete.id.serial, layout: layout)
        }
    }
}
