import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// One wrapped property of a model class, as the schema derivation needs it.
enum PropertyDescription: Sendable {
    case attribute(AttributeDescription, unique: Bool, indexed: Bool)
    case relationship(ModelRelationship)
    /// A composite attribute: its leaf columns, in order.
    case composite([AttributeDescription])
    /// A property that cannot be stored, and why (reported when the schema is derived).
    case invalid(String)
}

/// A declared relationship before its inverse is paired.
struct ModelRelationship: Sendable {
    var name: String
    var target: Model.Type
    var isToMany: Bool
    /// Whether a to-many relationship keeps its targets in the order the app gives them.
    var isOrdered = false
    var deleteRule: DeleteRule
    /// The key path on the target that the declaration names as its inverse.
    var inverse: KeyPathKey?
    /// The declared count bounds (nil: the defaults, none).
    var minimumCount: Int?
    var maximumCount: Int?
    var originalName: String?
}
