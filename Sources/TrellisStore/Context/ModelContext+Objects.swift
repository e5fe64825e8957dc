import TrellisCore
import TrellisGraph
import TrellisJournal

extension ModelContext {
    /// Inserts an unmanaged object, and the unmanaged objects its relationships reach; each gets a permanent
    /// `objectID` now. Inserting an object this context already manages does nothing.
    ///
    /// ```swift
    /// let chore = Chore(title: "Plan", project: launch)
    /// context.insert(chore)
    /// print(chore.objectID!)          // Chore#1: permanent, usable before save
    /// ```
    /// - Complexity: O(p + r) for p properties and r related objects.
    public func insert(_ model: Model) {
        if model.modelContext === self { return }
        precondition(model.modelContext == nil, "Trellis: \(model) belongs to another context")
        let binding = binding(for: type(of: model))
        let layout = schema.layouts[Int(binding.entity)]
        let properties = ModelMirror.properties(of: model)
        var row = layout.attributes.map { $0.defaultValue ?? .null }
        var related: [(ordinal: Int, targets: [Model])] = []
        for (ordinal, property) in properties.enumerated() {
            switch binding.columns[ordinal] {
            case .attribute(let a):
                row[a] = normalized(property.storage.unmanagedValue ?? .null, layout.attributes[a], layout.name)
            case .composite(let leaves):
                for (a, value) in zip(leaves, property.storage.unmanagedLeaves ?? []) {
                    row[a] = normalized(value, layout.attributes[a], layout.name)
                }
            case .relationship:
                if let targets = property.storage.unmanagedTargets, !targets.isEmpty {
                    related.append((ordinal, targets))
                }
            }
        }
        let id = ObjectID(entity: binding.entity, serial: store.allocator.allocate(binding.entity))
        pending.insert(id, row: row)
        adopt(model, id, binding)
        for (ordinal, targets) in related {
            setTargets(id, binding, ordinal, targets)
        }
    }

    /// Deletes an object, and what its cascade rules reach, from this context's view at once; the store deletes them
    /// at `save()`, applying the delete rules against its newest version. Deleting an object inserted since the last
    /// save simply drops it.
    ///
    /// The observers of the deleted objects, and of the relationship ends that pointed at them, hear of it at once.
    /// - Complexity: O(c + t) for c objects the cascade reaches and their t targets.
    public func delete(_ model: Model) {
        guard let id = model.storedID else { return }
        precondition(model.modelContext === self, "Trellis: \(model) belongs to another context")
        delete(id)
    }

    /// Deletes the object with this ID (see `delete(_:)`).
    /// - Complexity: O(c + t) for c objects the cascade reaches and their t targets.
    public func delete(_ id: ObjectID) {
        let view = self.view
        guard view.exists(id) else { return }
        var doomed = [id]
        var seen: Set<ObjectID> = [id]
        var next = 0
        while next < doomed.count {
            let x = doomed[next]
            next += 1
            for (k, rel) in schema.layouts[Int(x.entity)].relationships.enumerated() where rel.deleteRule == .cascade {
                for t in view.rawTargets(x, k, depth: view.layers.count) where !seen.contains(t) && view.exists(t) {
                    seen.insert(t)
                    doomed.append(t)
                }
            }
        }
        // The observers of what the objects lose (their targets, their pending values), and of the relationship ends
        // that lose them, hear of it.
        var observed = observedChanges()
        if !registered.isEmpty { observed.insert(deleting: doomed, in: view) }
        notifying(observed) {
            noteOrigin(id)
            for (n, x) in doomed.enumerated() {
                pending.delete(x, requested: n == 0)
            }
        }
    }

    /// The object with this ID as a model of type `T`, or nil when it does not exist in this context's view or is of
    /// another entity (a `Folder`'s ID asked for as a `Doc`).
    ///
    /// ```swift
    /// let id = chore.objectID!                       // on one thread
    /// let same = other.model(for: id, as: Chore.self)   // in another context
    /// ```
    /// - Complexity: O(depth), a few hash lookups.
    public func model<T: Model>(for id: ObjectID, as type: T.Type = T.self) -> T? {
        guard view.exists(id) else { return nil }
        if let existing = registered[id]?.object { return existing as? T }
        guard binding(for: type).entity == id.entity else { return nil }
        return materialize(id, as: type)
    }

    /// The one object of this context for `id`, made with `init()` the first time it is asked for.
    func materialize<T: Model>(_ id: ObjectID, as type: T.Type) -> T {
        if let existing = registered[id]?.object {
            guard let typed = existing as? T else {
                preconditionFailure("Trellis: \(schema.describe(id)) is a \(Swift.type(of: existing)), not a \(T.self)")
            }
            return typed
        }
        let binding = binding(for: type)
        precondition(binding.entity == id.entity, "Trellis: \(schema.describe(id)) is not a \(T.self)")
        let object = T()
        adopt(object, id, binding)
        return object
    }

    private func adopt(_ object: Model, _ id: ObjectID, _ binding: EntityBinding) {
        object.modelContext = self
        object.storedID = id
        object.binding = binding
        register(object, id)
    }

    func normalized(_ value: Value, _ attribute: AttributeDescription, _ entity: String) -> Value {
        guard let v = attribute.type.normalized(value) else {
            preconditionFailure("Trellis: \(entity).\(attribute.name) is \(attribute.type); \(value) does not fit")
        }
        return v
    }

    // MARK: Property access from the wrappers

    /// The value a managed object's attribute has in this context's view. An object deleted here but not yet saved
    /// keeps reading its last values; nil when nothing holds the object any more.
    func attributeValue(_ id: ObjectID, _ binding: EntityBinding, _ ordinal: Int) -> Value? {
        view.value(id, binding.attribute(ordinal))
    }

    /// A composite attribute's value: decoded from the leaves the object's slot holds, read again only when the
    /// view may have changed since (`compositeStamp`). Initializes the pointee and returns true, or returns false when
    /// nothing holds the object.
    func compositeValue<V>(_ id: ObjectID, _ slot: CompositeSlot, into pointer: UnsafeMutablePointer<V>) -> Bool {
        let stamp = compositeStamp
        if slot.stamp != stamp {
            let view = self.view
            // One lookup of the object rather than one per leaf.
            if let leaves = view.values(id, slot.property.columns) {
                slot.leaves = leaves
                slot.stamp = stamp
            } else {
                // An object deleted here reads its last values leaf by leaf, and its slot stays invalid: a write to it
                // must find it deleted.
                var leaves: [Value] = []
                leaves.reserveCapacity(slot.property.columns.count)
                for a in slot.property.columns {
                    guard let v = view.value(id, a) else { return false }
                    leaves.append(v)
                }
                slot.leaves = leaves
                slot.stamp = nil
            }
        }
        guard slot.coder(as: V.self).value(slot.leaves, pointer) else {
            preconditionFailure("Trellis: \(schema.describe(id)) holds \(slot.leaves), which do not make a \(V.self)")
        }
        return true
    }

    /// Sets a composite attribute: its new leaves are compared with the cached (or read) ones, and only those that
    /// change become pending changes (and reach the journal); the cache then holds the new leaves.
    func setCompositeValue<V>(_ id: ObjectID, _ slot: CompositeSlot, _ newValue: V) {
        let columns = slot.property.columns
        let stamp = compositeStamp
        if slot.stamp != stamp {
            // One read of the object's leaves (nil: it does not exist in this view) for every leaf's comparison.
            guard let leaves = view.values(id, columns) else {
                let name = schema.layouts[Int(id.entity)].attributes[columns[0]].name
                writesToDeleted.append("\(schema.describe(id)).\(name)")
                return
            }
            slot.leaves = leaves
            slot.stamp = stamp
        }
        let e = Int(id.entity)
        for (k, leaf) in slot.coder(as: V.self).changes(newValue, slot.leaves) {
            let a = columns[k]
            // The leaf's type alone normalizes; the whole description (for the message) only when it does not fit.
            guard let value = schema.layouts[e].attributes[a].type.normalized(leaf) else {
                _ = normalized(leaf, schema.layouts[e].attributes[a], schema.layouts[e].name)
                continue
            }
            guard value != slot.leaves[k] else { continue }
            pending.set(id, a, value, origin: updateEpoch, quiet: true)
            slot.leaves[k] = value
        }
    }

    /// A flat composite's value for an in-place change, initialized at `base` (memory laid out as its type): decoded
    /// from the object's slot while its leaves are current, or else read field by field from the base's row when no
    /// layer of this context's view touches the object (no slot needed). False, leaving it uninitialized, when neither
    /// applies (the caller takes the general path). Untyped: generic code here would look up metadata on every call.
    func directCompositeValue(
        _ id: ObjectID, _ property: AnyCompositeProperty, _ slot: CompositeSlot?, _ direct: DirectFields,
        into base: UnsafeMutableRawPointer
    ) -> Bool {
        guard direct.fitsMask else { return false }
        if let slot, slot.stamp == compositeStamp { return direct.build(slot.leaves, into: base) }
        guard parent == nil, !pending.touches(id), let row = ownBase.object(id) else { return false }
        return direct.build(row, property.columns, into: base)
    }

    /// Records what an in-place change did to a flat composite: the fields that differ between the value before
    /// (`old`) and after (`new`), as `setCompositeValue` records them. A slot whose leaves are current stays current.
    func setDirectCompositeValue(
        _ id: ObjectID, _ property: AnyCompositeProperty, _ slot: CompositeSlot?, _ direct: DirectFields,
        old: UnsafeRawPointer, new: UnsafeRawPointer
    ) {
        var changed = direct.changedFields(from: old, to: new)
        guard changed != 0 else { return }
        let cached = slot.map { $0.stamp == compositeStamp } ?? false
        let e = Int(id.entity)
        while changed != 0 {
            let k = changed.trailingZeroBitCount
            changed &= changed - 1
            let a = property.columns[k]
            let leaf = direct.leaf(k, at: new)
            guard let value = schema.layouts[e].attributes[a].type.normalized(leaf) else {
                _ = normalized(leaf, schema.layouts[e].attributes[a], schema.layouts[e].name)
                continue
            }
            guard value != direct.leaf(k, at: old) else { continue }
            pending.set(id, a, value, origin: updateEpoch, quiet: true)
            if cached, let slot { slot.leaves[k] = value }
        }
    }

    func setAttributeValue(_ id: ObjectID, _ binding: EntityBinding, _ ordinal: Int, _ value: Value) {
        setAttribute(id, binding.attribute(ordinal), value)
    }

    private func setAttribute(_ id: ObjectID, _ a: Int, _ value: Value) {
        let layout = schema.layouts[Int(id.entity)]
        let value = normalized(value, layout.attributes[a], layout.name)
        let view = self.view
        guard view.exists(id) else {
            writesToDeleted.append("\(schema.describe(id)).\(layout.attributes[a].name)")
            return
        }
        guard view.value(id, a) != value else { return }
        // A scalar attribute is no composite's leaf: the composite caches stay valid.
        pending.set(id, a, value, origin: updateEpoch, quiet: true)
    }

    func targetIDs(_ id: ObjectID, _ binding: EntityBinding, _ ordinal: Int) -> [ObjectID] {
        let view = self.view
        guard view.exists(id) else { return [] }
        return view.targets(id, binding.relationship(ordinal))
    }

    /// Makes `targets` the relationship's targets, inserting unmanaged ones; the inverse ends follow. The observers of
    /// every end that changes hear of it (the object's own end, and the other ends that gain or lose it).
    func setTargets(_ id: ObjectID, _ binding: EntityBinding, _ ordinal: Int, _ targets: [Model]) {
        let rel = binding.relationship(ordinal)
        var ids = targets.map { target -> ObjectID in
            if target.modelContext == nil { insert(target) }
            precondition(target.modelContext === self, "Trellis: \(target) belongs to another context")
            return target.storedID!
        }
        let relationship = schema.layouts[Int(id.entity)].relationships[rel]
        if relationship.isOrdered {
            // A target appears once, where it first appears.
            var seen = Set<ObjectID>()
            ids = ids.filter { seen.insert($0).inserted }
        }
        guard view.exists(id) else {
            writesToDeleted.append("\(schema.describe(id)).\(relationship.name)")
            return
        }
        let current = view.targets(id, rel)
        let removed: [ObjectID]
        let added: [ObjectID]
        if relationship.isToMany {
            let wanted = Set(ids)
            let present = Set(current)
            removed = current.filter { !wanted.contains($0) }
            added = ids.filter { !present.contains($0) }
        } else {
            guard current.first != ids.first else { return }
            removed = current
            added = Array(ids.prefix(1))
        }
        let reordered = relationship.isOrdered && current != ids
        guard !removed.isEmpty || !added.isEmpty || reordered else { return }
        var observed = observedChanges()
        if !registered.isEmpty {
            observed.insert(.relationship(rel), of: id)
            for t in removed + added { observed.insert(.relationship(relationship.inverse), of: t) }
            if !schema.layouts[Int(relationship.target)].relationships[relationship.inverse].isToMany {
                // A target with a to-one inverse leaves its previous owner.
                for t in added {
                    if let previous = view.target(t, relationship.inverse), previous != id {
                        observed.insert(.relationship(rel), of: previous)
                    }
                }
            }
        }
        notifying(observed) {
            if relationship.isToMany {
                for t in removed { unlink(id, rel, t) }
                for t in added { link(id, rel, t) }
                // The inverse ends are done; the list takes the order given.
                if relationship.isOrdered { pending.setLink(id, rel, .ordered(ids)) }
            } else {
                setTarget(id, rel, added.first)
            }
        }
    }
}
