import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// One wrapped property of a model class, as the schema derivation needs it.
enum PropertyDescription: Sendable {
    case attribute(AttributeDescription, unique: Bool, indexed: Bool)
    case relationship(ModelRelationship)
}

/// A declared relationship before its inverse is paired.
struct ModelRelationship: Sendable {
    var name: String
    var target: Model.Type
    var isToMany: Bool
    var deleteRule: DeleteRule
    /// The key path on the target that the declaration names as its inverse.
    var inverse: KeyPathKey?
    var originalName: String?
}
