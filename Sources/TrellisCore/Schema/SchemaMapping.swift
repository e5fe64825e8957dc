/// How each entity, attribute and relationship of a new schema is made from a stored one: the machine-readable part
/// of a migration, recorded in the journal so that replay repeats exactly what the migration did.
package struct SchemaMapping: Sendable, Equatable {
    /// Where a new attribute's values come from.
    package struct AttributeSource: Sendable, Equatable {
        /// The stored attribute's position; nil: a new column, every object gets the attribute's default (or null).
        package var source: Int?
        /// Integers become doubles (a widening from an integer type to `Double`).
        package var toDouble = false
        /// Nulls become the attribute's default (an optional attribute made required).
        package var fillNulls = false

        package var isPlainCopy: Bool { source != nil && !toDouble && !fillNulls }

        package init(source: Int?, toDouble: Bool = false, fillNulls: Bool = false) {
            self.source = source
            self.toDouble = toDouble
            self.fillNulls = fillNulls
        }
    }

    package struct EntityMap: Sendable, Equatable {
        /// The stored entity's number; nil for a new entity (no objects).
        package var source: Int?
        package var attributes: [AttributeSource]
        /// The stored relationship's position for each new one; nil: a new relationship, empty for every object.
        package var relationships: [Int?]

        package init(source: Int?, attributes: [AttributeSource], relationships: [Int?]) {
            self.source = source
            self.attributes = attributes
            self.relationships = relationships
        }
    }

    /// One per entity of the new schema, in its order.
    package var entities: [EntityMap]

    package init(entities: [EntityMap]) {
        self.entities = entities
    }

    /// Whether an entity's leaves can be kept as they are: same columns in the same places, nothing converted.
    package func keepsLeaves(_ map: EntityMap, sourceAttributes: Int, sourceRelationships: Int) -> Bool {
        map.attributes.count == sourceAttributes && map.relationships.count == sourceRelationships
            && map.attributes.enumerated().allSatisfy { $0.element.isPlainCopy && $0.element.source == $0.offset }
            && map.relationships.enumerated().allSatisfy { $0.element == $0.offset }
    }
}
