import TrellisCore
import TrellisGraph
import TrellisJournal

extension Schema {
    /// Derives a schema from model classes: one entity per class (named like the class), an attribute per
    /// `@Attribute`, a relationship per `@Relationship` with its inverse paired, indexes from `.indexed`, `.unique` and
    /// `Model.indexes`.
    ///
    /// ```swift
    /// let schema = try Schema(models: [Project.self, Chore.self])
    /// ```
    ///
    /// Inverses: a declared `inverse:` pairs the two ends (and both ends declaring must agree); an undeclared end is
    /// paired with the one relationship of its target that points back and is not yet paired; failing that, the target
    /// gets a hidden to-many inverse named `Source.property`. Every class a relationship targets must be listed.
    /// - Complexity: O(p) for p properties over all classes, after each class's first use.
    public init(models: [Model.Type]) throws {
        let metadata = models.map(ModelMetadata.of)
        var entities: [EntityDescription] = []
        var declared: [[ModelRelationship]] = []
        for m in metadata {
            var entity = EntityDescription(m.entityName, originalName: m.type.originalEntityName)
            var relationships: [ModelRelationship] = []
            for property in m.properties {
                switch property {
                case .attribute(let attribute, let unique, let indexed):
                    entity.attributes.append(attribute)
                    if unique || indexed { entity.indexes.append(IndexDescription([attribute.name], unique: unique)) }
                case .relationship(let relationship):
                    relationships.append(relationship)
                case .composite(let leaves):
                    entity.attributes.append(contentsOf: leaves)
                case .invalid(let message):
                    throw TrellisError(.invalidSchema, "\(m.entityName): \(message)")
                }
            }
            for index in m.type.indexes {
                let names = try index.keyPaths.map { keyPath -> String in
                    guard let name = m.name(of: keyPath.keyPath), entity.attributes.contains(where: { $0.name == name })
                    else {
                        throw TrellisError(
                            .invalidSchema, "an index of \(m.entityName) names a key path that is not an attribute")
                    }
                    return name
                }
                entity.indexes.append(IndexDescription(names, unique: index.isUnique))
            }
            entities.append(entity)
            declared.append(relationships)
        }
        try Self.pairRelationships(declared, metadata: metadata, into: &entities)
        try self.init(entities)
    }

    /// Adds every declared relationship, with its inverse's name, to `entities`.
    private static func pairRelationships(
        _ declared: [[ModelRelationship]], metadata: [ModelMetadata], into entities: inout [EntityDescription]
    ) throws {
        struct End: Hashable {
            var entity: Int
            var index: Int
        }
        let numbers = Dictionary(metadata.enumerated().map { (ObjectIdentifier($1.type), $0) }, uniquingKeysWith: max)
        func targetNumber(_ r: ModelRelationship, of source: Int) throws -> Int {
            guard let t = numbers[ObjectIdentifier(r.target)] else {
                throw TrellisError(
                    .invalidSchema,
                    "relationship '\(metadata[source].entityName).\(r.name)' targets \(r.target), which is not among "
                        + "the models")
            }
            return t
        }
        var inverse: [End: String] = [:]
        // 1. Declared inverses.
        for (e, relationships) in declared.enumerated() {
            for (i, r) in relationships.enumerated() {
                guard let keyPath = r.inverse else { continue }
                let t = try targetNumber(r, of: e)
                guard let name = metadata[t].name(of: keyPath.keyPath),
                    let j = declared[t].firstIndex(where: { $0.name == name })
                else {
                    throw TrellisError(
                        .invalidSchema,
                        "the inverse of '\(metadata[e].entityName).\(r.name)' is not a relationship of "
                            + metadata[t].entityName)
                }
                let other = declared[t][j]
                guard other.target == metadata[e].type else {
                    throw TrellisError(
                        .invalidSchema,
                        "'\(metadata[t].entityName).\(name)' is named as the inverse of "
                            + "'\(metadata[e].entityName).\(r.name)' but targets \(other.target)")
                }
                let here = End(entity: e, index: i)
                let there = End(entity: t, index: j)
                if let previous = inverse[there], previous != r.name || (inverse[here].map { $0 != name } ?? false) {
                    throw TrellisError(
                        .invalidSchema,
                        "'\(metadata[t].entityName).\(name)' is paired with both '\(previous)' and '\(r.name)'")
                }
                inverse[here] = name
                inverse[there] = r.name
            }
        }
        // 2. Undeclared ends: the one unpaired relationship of the target pointing back, else a hidden inverse.
        for (e, relationships) in declared.enumerated() {
            for (i, r) in relationships.enumerated() where inverse[End(entity: e, index: i)] == nil {
                let t = try targetNumber(r, of: e)
                let candidates = declared[t].indices.filter { j in
                    declared[t][j].target == metadata[e].type && inverse[End(entity: t, index: j)] == nil
                        && !(t == e && j == i)
                }
                if candidates.count == 1 {
                    inverse[End(entity: e, index: i)] = declared[t][candidates[0]].name
                    inverse[End(entity: t, index: candidates[0])] = r.name
                } else {
                    let hidden = "\(metadata[e].entityName).\(r.name)"
                    inverse[End(entity: e, index: i)] = hidden
                    entities[t].relationships.append(
                        RelationshipDescription(hidden, to: metadata[e].entityName, inverse: r.name, toMany: true))
                }
            }
        }
        for (e, relationships) in declared.enumerated() {
            var described: [RelationshipDescription] = []
            for (i, r) in relationships.enumerated() {
                described.append(
                    RelationshipDescription(
                        r.name, to: metadata[try targetNumber(r, of: e)].entityName,
                        inverse: inverse[End(entity: e, index: i)]!, toMany: r.isToMany, ordered: r.isOrdered,
                        deleteRule: r.deleteRule,
                        minCount: r.minimumCount, maxCount: r.maximumCount, originalName: r.originalName))
            }
            // Declared relationships first, in declaration order; hidden inverses after them.
            entities[e].relationships.insert(contentsOf: described, at: 0)
        }
    }
}
