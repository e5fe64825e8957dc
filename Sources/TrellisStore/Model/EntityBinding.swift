import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// A model class bound to one store's schema: its entity number and, per property ordinal, the attribute or
/// relationship position in that entity.
final class EntityBinding: Sendable {
    enum Column: Sendable {
        case attribute(Int)
        case relationship(Int)
        /// A composite attribute's leaf columns, in `CompositeShape` order.
        case composite([Int])
    }

    let metadata: ModelMetadata
    let entity: UInt32
    let columns: [Column]
    /// The ordinal of the property at each attribute position, and at each relationship position (nil for what the
    /// class does not declare: a hidden inverse, a retired attribute).
    let attributeOrdinals: [Int?]
    let relationshipOrdinals: [Int?]

    init(_ metadata: ModelMetadata, schema: Schema) throws {
        self.metadata = metadata
        let entity = try schema.entityNumber(metadata.entityName)
        let layout = schema.layouts[Int(entity)]
        self.entity = entity
        self.columns = try zip(metadata.names, metadata.properties).map { name, property in
            switch property {
            case .attribute: return .attribute(try layout.attributeIndex(name))
            case .relationship: return .relationship(try layout.relationshipIndex(name))
            case .composite(let leaves): return .composite(try leaves.map { try layout.attributeIndex($0.name) })
            case .invalid(let message): throw TrellisError(.invalidSchema, message)
            }
        }
        var attributeOrdinals = [Int?](repeating: nil, count: layout.attributes.count)
        var relationshipOrdinals = [Int?](repeating: nil, count: layout.relationships.count)
        for (ordinal, column) in columns.enumerated() {
            switch column {
            case .attribute(let a): attributeOrdinals[a] = ordinal
            case .relationship(let r): relationshipOrdinals[r] = ordinal
            case .composite(let leaves): for a in leaves { attributeOrdinals[a] = ordinal }
            }
        }
        self.attributeOrdinals = attributeOrdinals
        self.relationshipOrdinals = relationshipOrdinals
    }

    func attribute(_ ordinal: Int) -> Int {
        guard case .attribute(let a) = columns[ordinal] else { preconditionFailure("not an attribute") }
        return a
    }

    /// The attribute position a resolved key path reads: a scalar attribute, or one leaf of a composite; nil for
    /// anything else (a relationship, a whole composite, `objectID`).
    func attribute(at target: KeyPathProbe.Target?) -> Int? {
        switch target {
        case .property(let o)?:
            guard case .attribute(let a) = columns[o] else { return nil }
            return a
        case .leaf(let o, let leaf)?:
            guard case .composite(let leaves) = columns[o] else { return nil }
            return leaves[leaf]
        default: return nil
        }
    }

    func relationship(_ ordinal: Int) -> Int {
        guard case .relationship(let r) = columns[ordinal] else { preconditionFailure("not a relationship") }
        return r
    }
}
