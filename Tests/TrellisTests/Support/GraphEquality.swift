@testable import Trellis

/// Compares two graphs object for object: every entity's live objects, each attribute value (with its case, so
/// `.int(1)` and `.double(1)` differ here), every relationship's targets, the highest serials and the sequence number.
enum GraphEquality {
    /// The differences, described for people; empty when the graphs are equal.
    static func differences(_ a: Graph, _ b: Graph, limit: Int = 10) -> [String] {
        var out: [String] = []
        func note(_ s: String) { if out.count < limit { out.append(s) } }
        if a.schema != b.schema { return ["schemas differ"] }
        if a.sequence != b.sequence { note("sequence \(a.sequence) vs \(b.sequence)") }
        if a.maxSerials != b.maxSerials { note("max serials \(a.maxSerials) vs \(b.maxSerials)") }
        for (e, layout) in a.schema.layouts.enumerated() {
            let entity = UInt32(e)
            let ids = a.objectIDs(entity: entity)
            let otherIDs = b.objectIDs(entity: entity)
            if ids != otherIDs {
                let missing = Set(ids).subtracting(otherIDs).sorted().prefix(5)
                let extra = Set(otherIDs).subtracting(ids).sorted().prefix(5)
                note(
                    "\(layout.name): \(ids.count) vs \(otherIDs.count) objects; only left \(missing), only right \(extra)"
                )
                continue
            }
            for id in ids {
                let left = a.row(id)!
                let right = b.row(id)!
                for (i, (x, y)) in zip(left, right).enumerated() where !identical(x, y) {
                    note("\(a.schema.describe(id)).\(layout.attributes[i].name): \(x) vs \(y)")
                }
                for k in layout.relationships.indices {
                    let key = RelationshipKey(entity: entity, index: k)
                    let (tx, ty) = (a.targets(id, key), b.targets(id, key))
                    if tx != ty { note("\(a.schema.describe(id)).\(layout.relationships[k].name): \(tx) vs \(ty)") }
                }
            }
        }
        return out
    }

    /// Equal values of the same case (NaN equals NaN; dates and doubles bit for bit).
    static func identical(_ x: Value, _ y: Value) -> Bool {
        switch (x, y) {
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        default: return x.typeRank == y.typeRank && x == y && "\(x)" == "\(y)"
        }
    }
}
