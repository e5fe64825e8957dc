import TrellisCore

/// The objects a delete takes with it through the cascade rules, and what the other rules found on the way: the
/// commit resolver's first step of a delete, done in the graph's module so that its per-row loop runs specialized.
package struct DeleteCascade {
    /// A deny rule's target found during the walk: `object`'s relationship `relationship` still holds `blocker`
    /// (`count` targets in all). It refuses the delete unless the cascade reaches `blocker` too.
    package struct Denial {
        package let object: ObjectID
        package let relationship: Int
        package let blocker: ObjectID
        package let count: Int
    }

    /// Every deleted object, in the walk's order (requested ones first, then breadth-first through cascades).
    package private(set) var deletes: [ChangeSet.Delete] = []
    /// The IDs of `deletes`.
    package private(set) var doomed = ObjectIDSet()
    /// Targets of nullify rules, possibly doomed themselves: the caller keeps those that survive.
    package private(set) var unlinked: [ObjectID] = []
    package private(set) var denials: [Denial] = []
    /// The first requested object that is not live (a cascade's dangling targets are skipped instead).
    package private(set) var missing: ObjectID?

    /// The delete rule and target entity of each relationship, per entity: a plain copy of what the walk reads, so
    /// that it does not copy the schema's relationship layouts (which hold names) once per row.
    private struct Rule {
        let rule: DeleteRule
        let target: UInt32
    }

    /// Walks the cascade from `requested` over `graph`; stops at the first requested object that is not live.
    package init(deleting requested: [ObjectID], in graph: Graph) {
        let layouts = graph.schema.layouts.map(\.relationships)
        let rules = layouts.map { links in links.map { Rule(rule: $0.deleteRule, target: $0.target) } }
        var cursor = LeafCursor()
        var queue = requested
        var next = 0
        while next < queue.count {
            let id = queue[next]
            let isRequested = next < requested.count
            next += 1
            guard !doomed.contains(id) else { continue }
            let e = Int(id.entity)
            guard e < rules.count else {
                if isRequested { missing = id; return }
                continue
            }
            let row = cursor.withRow(id, in: graph.tables) { leaf, r -> DeletedRow in
                rules[e].withUnsafeBufferPointer { links in
                    for k in links.indices {
                        let target = links[k].target
                        switch links[k].rule {
                        case .cascade:
                            leaf.forEachTarget(r, k) { queue.append(ObjectID(entity: target, serial: $0)) }
                        case .nullify:
                            leaf.forEachTarget(r, k) { serial in
                                let t = ObjectID(entity: target, serial: serial)
                                if !doomed.contains(t) { unlinked.append(t) }
                            }
                        case .deny:
                            leaf.forEachTarget(r, k) { serial in
                                let t = ObjectID(entity: target, serial: serial)
                                if !doomed.contains(t), graph.contains(t) {
                                    denials.append(
                                        Denial(object: id, relationship: k, blocker: t, count: leaf.targetCount(r, k)))
                                }
                            }
                        case .noAction:
                            break
                        }
                    }
                }
                return DeletedRow(leaf: leaf, row: r, links: layouts[e])
            }
            guard let row else {
                if isRequested { missing = id; return }
                continue  // a dangling target left by a no-action rule
            }
            doomed.insert(id)
            deletes.append(ChangeSet.Delete(id: id, row: row))
        }
    }
}
