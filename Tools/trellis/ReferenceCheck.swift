import Trellis

/// Checks that both ends of every relationship agree in a rebuilt graph: if A's `r` names B, B's inverse of `r`
/// names A. A target that no longer exists is allowed only where a no-action delete rule leaves it (the deleted
/// object's side was declared not to clean up).
///
/// The graph's own invariant checker looks each inverse up one object at a time, which costs the square of a large
/// to-many relationship (100,000 items in one folder); this builds each relationship's pairs once and compares sets,
/// so it stays linear in the number of links.
enum ReferenceCheck {
    static func problems(_ graph: Snapshot, limit: Int = 20) -> [String] {
        let schema = graph.schema
        var out: [String] = []
        // Every link, per (entity, relationship), as (source serial, target serial).
        var pairs: [[Set<Pair>]] = []
        for (e, entity) in schema.entities.enumerated() {
            var perRelationship: [Set<Pair>] = []
            let keys = entity.relationships.compactMap { try? schema.relationship(entity.name, $0.name) }
            for key in keys {
                var set = Set<Pair>()
                for row in graph.rows(entity: UInt32(e)) {
                    for target in row.targetSerials(key) { set.insert(Pair(source: row.id.serial, target: target)) }
                }
                perRelationship.append(set)
            }
            pairs.append(perRelationship)
        }
        for (e, entity) in schema.entities.enumerated() {
            for (k, relationship) in entity.relationships.enumerated() {
                guard let t = try? schema.entityNumber(relationship.target),
                    let inverse = schema.entities[Int(t)].relationships.firstIndex(where: {
                        $0.name == relationship.inverse
                    })
                else { continue }
                let inverseRule = schema.entities[Int(t)].relationships[inverse].deleteRule
                for pair in pairs[e][k] {
                    let target = ObjectID(entity: t, serial: pair.target)
                    let source = ObjectID(entity: UInt32(e), serial: pair.source)
                    if !graph.contains(target) {
                        if inverseRule != .noAction {
                            out.append(
                                "\(schema.describe(source)).\(relationship.name) names \(schema.describe(target)), which does not exist"
                            )
                        }
                    } else if !pairs[Int(t)][inverse].contains(Pair(source: pair.target, target: pair.source)) {
                        out.append(
                            "\(schema.describe(source)).\(relationship.name) → \(schema.describe(target)), but "
                                + "\(schema.describe(target)).\(relationship.inverse) does not name it back")
                    }
                    if out.count >= limit { return out }
                }
            }
        }
        return out
    }

    private struct Pair: Hashable {
        var source: UInt64
        var target: UInt64
    }
}
