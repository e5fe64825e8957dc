/// An entity resolved to numbers: attribute and relationship positions, inverse links, index columns.
@usableFromInline package struct EntityLayout: Sendable {
    package struct RelationshipLayout: Sendable {
        package var name: String
        package var target: UInt32
        /// The position of the inverse relationship in the target entity.
        package var inverse: Int
        package var isToMany: Bool
        /// Whether the targets keep an order (a to-many relationship only).
        package var isOrdered: Bool = false
        package var deleteRule: DeleteRule
        package var minCount: Int
        package var maxCount: Int?
    }

    package struct IndexLayout: Sendable {
        package var columns: [Int]
        package var isUnique: Bool
        /// An index on one collection attribute: one entry per distinct element of each object's collection (none for
        /// null or empty), for `contains`.
        package var isElements = false
        /// An element index on a `[String: String]` attribute: one entry per key–value pair, keyed by key then value,
        /// so equality on a key's value and the presence of a key are prefixes.
        package var isPairs = false
    }

    let number: UInt32
    package let name: String
    package let attributes: [AttributeDescription]
    package let relationships: [RelationshipLayout]
    package private(set) var indexes: [IndexLayout]
    private let attributeNumbers: [String: Int]
    private let relationshipNumbers: [String: Int]

    init(
        _ entity: EntityDescription, number: UInt32, in entities: [EntityDescription], numbers: [String: UInt32]
    ) throws {
        self.number = number
        self.name = entity.name
        self.attributes = entity.attributes
        var attributeNumbers: [String: Int] = [:]
        var relationshipNumbers: [String: Int] = [:]
        for (i, a) in entity.attributes.enumerated() {
            guard !a.name.isEmpty else { throw Self.invalid(entity, "attribute \(i) has an empty name") }
            guard attributeNumbers.updateValue(i, forKey: a.name) == nil else {
                throw Self.invalid(entity, "duplicate attribute name '\(a.name)'")
            }
            if let d = a.defaultValue, !d.isNull, a.type.normalized(d) == nil {
                throw Self.invalid(entity, "default value \(d) of '\(a.name)' is not a \(a.type)")
            }
        }
        var relationships: [RelationshipLayout] = []
        for (i, r) in entity.relationships.enumerated() {
            guard !r.name.isEmpty else { throw Self.invalid(entity, "relationship \(i) has an empty name") }
            guard attributeNumbers[r.name] == nil, relationshipNumbers.updateValue(i, forKey: r.name) == nil else {
                throw Self.invalid(entity, "duplicate property name '\(r.name)'")
            }
            guard let target = numbers[r.target] else {
                throw Self.invalid(entity, "relationship '\(r.name)' targets unknown entity '\(r.target)'")
            }
            let targetEntity = entities[Int(target)]
            guard let inverse = targetEntity.relationships.firstIndex(where: { $0.name == r.inverse }) else {
                throw Self.invalid(
                    entity, "relationship '\(r.name)' names inverse '\(r.target).\(r.inverse)', which does not exist")
            }
            let back = targetEntity.relationships[inverse]
            guard back.target == entity.name, back.inverse == r.name else {
                throw Self.invalid(
                    entity,
                    "relationship '\(r.name)' and its inverse '\(r.target).\(r.inverse)' do not point at each other "
                        + "('\(r.target).\(r.inverse)' has target '\(back.target)' and inverse '\(back.inverse)')")
            }
            if r.isOrdered && !r.isToMany {
                throw Self.invalid(entity, "relationship '\(r.name)' is ordered but not to-many")
            }
            if r.minCount < 0 || (r.maxCount.map { $0 < max(r.minCount, 1) } ?? false) {
                throw Self.invalid(entity, "relationship '\(r.name)' has an impossible count range")
            }
            relationships.append(
                RelationshipLayout(
                    name: r.name, target: target, inverse: inverse, isToMany: r.isToMany, isOrdered: r.isOrdered,
                    deleteRule: r.deleteRule,
                    minCount: r.minCount, maxCount: r.maxCount))
        }
        var indexes: [IndexLayout] = []
        for index in entity.indexes {
            guard !index.attributes.isEmpty else { throw Self.invalid(entity, "an index names no attributes") }
            let columns = try index.attributes.map { name -> Int in
                guard let c = attributeNumbers[name] else {
                    throw Self.invalid(
                        entity,
                        "index on (\(index.attributes.joined(separator: ", "))) names missing "
                            + "attribute '\(name)'")
                }
                return c
            }
            guard Set(columns).count == columns.count else {
                throw Self.invalid(
                    entity, "index on (\(index.attributes.joined(separator: ", "))) repeats an attribute")
            }
            let collections = columns.filter { entity.attributes[$0].type.isCollection }
            if !collections.isEmpty && (columns.count > 1 || index.isUnique) {
                throw Self.invalid(
                    entity,
                    "index on (\(index.attributes.joined(separator: ", "))): a collection attribute is indexed alone "
                        + "and not unique (its index holds each element)")
            }
            if let same = indexes.firstIndex(where: { $0.columns == columns }) {
                // One tree serves both: a unique constraint is also an ordered index.
                indexes[same].isUnique = indexes[same].isUnique || index.isUnique
                continue
            }
            indexes.append(
                IndexLayout(
                    columns: columns, isUnique: index.isUnique, isElements: !collections.isEmpty,
                    isPairs: collections.contains { entity.attributes[$0].type.isDictionary }))
        }
        self.relationships = relationships
        self.indexes = indexes
        self.attributeNumbers = attributeNumbers
        self.relationshipNumbers = relationshipNumbers
    }

    /// This layout without its indexes: what recovery replays a long journal with, building the indexes once at the
    /// end instead of maintaining them record by record (`Schema.withoutIndexes`).
    package func withoutIndexes() -> EntityLayout {
        var copy = self
        copy.indexes = []
        return copy
    }

    private static func invalid(_ entity: EntityDescription, _ message: String) -> TrellisError {
        TrellisError(.invalidSchema, "entity '\(entity.name)': \(message)")
    }

    package func attributeIndex(_ name: String) throws -> Int {
        guard let i = attributeNumbers[name] else {
            throw TrellisError(.unknownAttribute, "entity '\(self.name)' has no attribute '\(name)'")
        }
        return i
    }

    package func relationshipIndex(_ name: String) throws -> Int {
        guard let i = relationshipNumbers[name] else {
            throw TrellisError(.unknownRelationship, "entity '\(self.name)' has no relationship '\(name)'")
        }
        return i
    }
}
