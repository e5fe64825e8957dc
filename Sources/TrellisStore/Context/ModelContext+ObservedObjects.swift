import TrellisCore
import TrellisGraph
import TrellisJournal

/// Tells the observers of the context's model objects (they are `Observable`) about changes that reach the objects by
/// some other way than their own setters: commits the context moves to, the other ends of relationship edits, deletes,
/// rollbacks and child contexts' saves.
///
/// Each change is turned into the properties of registered objects it reaches (`ObservedChanges`), then into the
/// `PropertyNotifier`s of those properties, which call the objects' registrars: `willSet` before the change and
/// `didSet` after it, as a setter does.
extension ModelContext {
    /// Runs `change`, telling the observers of the registered objects' properties in `observed` before and after.
    func notifying<R>(_ observed: ObservedChanges, _ change: () throws -> R) rethrows -> R {
        guard !observed.isEmpty else { return try change() }
        let notifications = self.notifications(for: observed)
        for (object, notifiers) in notifications { for n in notifiers { n.willSet(object) } }
        defer { for (object, notifiers) in notifications { for n in notifiers { n.didSet(object) } } }
        return try change()
    }

    /// The objects `observed` keeps, each with the notifiers of the properties it names that were read on the object
    /// (a property never read on an object has no observers there).
    /// - Complexity: O(p) for the p properties named.
    private func notifications(for observed: ObservedChanges) -> [(Model, [PropertyNotifier])] {
        var classes: [ObjectIdentifier: ClassNotifiers] = [:]
        var out: [(Model, [PropertyNotifier])] = []
        for (id, object) in observed.objects {
            guard let binding = object.binding else { continue }
            let key = ObjectIdentifier(type(of: object))
            let known = classes[key] ?? PropertyNotifier.recorded(for: type(of: object))
            classes[key] = known
            var found: [PropertyNotifier]
            if observed.everything.contains(id) {
                found = known.all
            } else {
                found = observed.relationships.contains(id) ? known.relationships : []
                // The single properties named (a relationship among them is in `found` already, if all are).
                let ordinals = Set((observed.properties[id] ?? []).compactMap { Self.ordinal(of: $0, binding) })
                for ordinal in ordinals.sorted() {
                    guard let n = known.byOrdinal[ordinal], !found.contains(where: { $0.ordinal == ordinal }) else {
                        continue
                    }
                    found.append(n)
                }
            }
            found.removeAll { !$0.wasRead(on: object) }
            if !found.isEmpty { out.append((object, found)) }
        }
        return out
    }

    /// The ordinal of a property in a class bound to the schema, or nil when the class does not declare it.
    private static func ordinal(of property: ObservedChanges.Property, _ binding: EntityBinding) -> Int? {
        switch property {
        case .attribute(let a): a < binding.attributeOrdinals.count ? binding.attributeOrdinals[a] : nil
        case .relationship(let r): r < binding.relationshipOrdinals.count ? binding.relationshipOrdinals[r] : nil
        case .named(let name): binding.metadata.ordinal(named: name)
        }
    }

    /// An empty set of changes to fill, for this context's registered objects.
    func observedChanges() -> ObservedChanges { ObservedChanges(registered: registered) }

    /// What moving this root context from `old` to `new` changes in its registered objects: read from the commits in
    /// between that the inbox filed, except the ones in `skipping` (its own saves, which change nothing it sees), or,
    /// when some other commit in between is missing (the inbox dropped it, or it was published but not filed yet),
    /// found by comparing the objects in the two versions.
    /// - Complexity: O(c) for c changes filed; O(r) for r registered objects (and their targets) when comparing.
    func observedChanges(
        from old: Graph, to new: Graph, filed: [FiledCommit], skipping: Set<UInt64>
    ) -> ObservedChanges {
        var observed = observedChanges()
        guard new.sequence > old.sequence, !registered.isEmpty else { return observed }
        let range = (old.sequence + 1)...new.sequence
        var covered = Set(skipping.filter { range.contains($0) })
        var report = ContextChanges()
        for commit in filed where range.contains(commit.sequence) && covered.insert(commit.sequence).inserted {
            report.merge(commit.changes)
        }
        guard covered.count == range.count else { return comparison(from: old, to: new) }
        observed.insert(report)
        return observed
    }

    /// The registered objects' properties that differ between two versions of the store.
    /// - Complexity: O(r · (a + t)) for r registered objects, a attributes and t targets each.
    private func comparison(from old: Graph, to new: Graph) -> ObservedChanges {
        var observed = observedChanges()
        for (id, entry) in registered where entry.object != nil && old.contains(id) {
            guard new.contains(id) else {
                observed.insertEverything(of: id)
                continue
            }
            if let before = old.row(id), let after = new.row(id), before != after {
                for a in before.indices where a < after.count && before[a] != after[a] {
                    observed.insert(.attribute(a), of: id)
                }
            }
            for k in new.schema.layouts[Int(id.entity)].relationships.indices {
                let key = RelationshipKey(entity: id.entity, index: k)
                if old.targets(id, key) != new.targets(id, key) { observed.insert(.relationship(k), of: id) }
            }
        }
        return observed
    }
}
