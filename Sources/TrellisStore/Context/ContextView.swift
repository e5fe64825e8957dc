import TrellisCore
import TrellisGraph
import TrellisJournal

/// What a context sees: a base snapshot with the pending changes of the context and its ancestors layered on top
/// (root first). Fetches, property reads and saves all read through it, so they agree.
struct ContextView {
    let base: Graph
    let layers: [PendingChanges]

    var schema: Schema { base.schema }

    var hasChanges: Bool { layers.contains { !$0.isEmpty } }

    /// Whether the object exists: inserted in a layer, or in the base and deleted in none.
    func exists(_ id: ObjectID) -> Bool {
        for layer in layers.reversed() {
            switch layer.exists(id) {
            case .value: return true
            case .absent: return false
            case .below: continue
            }
        }
        return base.contains(id)
    }

    /// One attribute of an existing object (whether it exists is not checked).
    func value(_ id: ObjectID, _ attribute: Int) -> Value? {
        for layer in layers.reversed() {
            if case .value(let v) = layer.value(id, attribute) { return v }
        }
        return base.value(id, AttributeKey(entity: id.entity, index: attribute))
    }

    /// Every attribute of an object, or nil when it does not exist.
    func row(_ id: ObjectID) -> [Value]? {
        // One pass from the top: the topmost layer that inserted or deleted the object decides whether it exists and
        // which row the changes of the layers above it apply to (as `exists` decides, without asking twice).
        var start = 0
        var row: [Value]? = nil
        for i in layers.indices.reversed() {
            switch layers[i].full(id) {
            case .value(let full):
                row = full
                start = i + 1
            case .absent: return nil
            case .below: continue
            }
            break
        }
        if row == nil { row = base.row(id) }
        guard var row else { return nil }
        for layer in layers[start...] {
            layer.changes(id)?.forEachValue { a, v in row[a] = v }
        }
        return row
    }

    /// Some attributes of an object (a composite's leaves), in the order asked, or nil when it does not exist: read
    /// in place from the base's row, without building the whole row.
    func values(_ id: ObjectID, _ attributes: [Int]) -> [Value]? {
        var start = 0
        var out: [Value]? = nil
        for i in layers.indices.reversed() {
            switch layers[i].full(id) {
            case .value(let full):
                out = attributes.map { full[$0] }
                start = i + 1
            case .absent: return nil
            case .below: continue
            }
            break
        }
        if out == nil {
            guard let row = base.object(id) else { return nil }
            out = attributes.map { row.value(at: $0) }
        }
        guard var out else { return nil }
        for layer in layers[start...] {
            guard let changes = layer.changes(id) else { continue }
            for (k, a) in attributes.enumerated() {
                if let v = changes.value(of: a) { out[k] = v }
            }
        }
        return out
    }

    /// The live targets of a relationship, in `ObjectID` order.
    func targets(_ id: ObjectID, _ relationship: Int) -> [ObjectID] {
        rawTargets(id, relationship, depth: layers.count).filter(exists)
    }

    /// The targets as the layers below `depth` state them, dangling and deleted ones included.
    func rawTargets(_ id: ObjectID, _ relationship: Int, depth: Int) -> [ObjectID] {
        guard depth > 0 else { return base.targets(id, RelationshipKey(entity: id.entity, index: relationship)) }
        return layers[depth - 1].targets(id, relationship) {
            rawTargets(id, relationship, depth: depth - 1)
        }
    }

    /// The single target of a to-one relationship.
    func target(_ id: ObjectID, _ relationship: Int) -> ObjectID? {
        targets(id, relationship).first
    }

    /// Objects of an entity that any layer changed: fetches evaluate these over the view, the rest over the base.
    func touched(entity: UInt32) -> Set<ObjectID> {
        guard let first = layers.first else { return [] }
        var out = first.touched(entity: entity)
        for layer in layers.dropFirst() { out.formUnion(layer.touched(entity: entity)) }
        return out
    }
}
