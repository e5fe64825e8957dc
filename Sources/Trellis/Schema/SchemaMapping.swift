/// How each entity, attribute and relationship of a new schema is made from a stored one: the machine-readable part
/// of a migration, recorded in the journal so that replay repeats exactly what the migration did.
struct SchemaMapping: Sendable, Equatable {
    /// Where a new attribute's values come from.
    struct AttributeSource: Sendable, Equatable {
        /// The stored attribute's position; nil: a new column, every object gets the attribute's default (or null).
        var source: Int?
        /// Integers become doubles (a widening from an integer type to `Double`).
        var toDouble = false
        /// Nulls become the attribute's default (an optional attribute made required).
        var fillNulls = false

        var isPlainCopy: Bool { source != nil && !toDouble && !fillNulls }
    }

    struct EntityMap: Sendable, Equatable {
        /// The stored entity's number; nil for a new entity (no objects).
        var source: Int?
        var attributes: [AttributeSource]
        /// The stored relationship's position for each new one; nil: a new relationship, empty for every object.
        var relationships: [Int?]
    }

    /// One per entity of the new schema, in its order.
    var entities: [EntityMap]

    /// Whether an entity's leaves can be kept as they are: same columns in the same places, nothing converted.
    func keepsLeaves(_ map: EntityMap, sourceAttributes: Int, sourceRelationships: Int) -> Bool {
        map.attributes.count == sourceAttributes && map.relationships.count == sourceRelationships
            && map.attributes.enumerated().allSatisfy { $0.element.isPlainCopy && $0.element.source == $0.offset }
            && map.relationships.enumerated().allSatisfy { $0.element == $0.offset }
    }
}

/// A check a migration must pass against the data before it may be committed.
enum MigrationCheck: Sendable, Equatable {
    /// No object of the entity may hold null in the (required) attribute.
    case noNulls(entity: Int, attribute: Int)
    /// No two objects may share non-null values in the unique index.
    case unique(entity: Int, index: Int)
    /// Every object's relationship must meet the relationship's count bounds.
    case counts(entity: Int, relationship: Int)
}

/// One stage of a migration, planned: the new schema aligned to the stored one, how the data maps, what each step
/// is, what must be checked, and what makes it impossible.
struct PlannedStage: Sendable {
    var schema: Schema
    var mapping: SchemaMapping
    var steps: [MigrationStep]
    var checks: [MigrationCheck]
    var problems: [String]

    var isNeeded: Bool { !steps.isEmpty }
}
