import TrellisCore

/// Name-based reads, for tools, migrations and quick scripts; resolved keys (`Schema.attribute(_:_:)`) skip the
/// name lookups on hot paths.
extension Graph {
    /// The value of the attribute named `attribute`, or nil when the object does not exist.
    /// - Complexity: O(log n), plus a hash lookup of the name.
    public func value(_ id: ObjectID, _ attribute: String) throws -> Value? {
        let layout = try entityLayout(id)
        return value(id, AttributeKey(entity: id.entity, index: try layout.attributeIndex(attribute)))
    }

    /// An object's attribute values by name, or nil when it does not exist.
    /// - Complexity: O(log n + a) for a attributes.
    public func values(_ id: ObjectID) -> [String: Value]? {
        guard let row = row(id) else { return nil }
        let layout = layout(id.entity)
        var out: [String: Value] = [:]
        for (i, a) in layout.attributes.enumerated() { out[a.name] = row[i] }
        return out
    }

    /// The targets of the relationship named `relationship`, in ascending serial order.
    /// - Complexity: O(log n + k) for k targets.
    public func targets(_ id: ObjectID, _ relationship: String) throws -> [ObjectID] {
        let layout = try entityLayout(id)
        return targets(id, RelationshipKey(entity: id.entity, index: try layout.relationshipIndex(relationship)))
    }

    /// The target of a to-one relationship, or nil.
    /// - Complexity: O(log n).
    public func target(_ id: ObjectID, _ relationship: String) throws -> ObjectID? {
        try targets(id, relationship).first
    }

    /// The number of live objects of the entity named `entity`.
    /// - Complexity: O(1).
    public func count(_ entity: String) throws -> Int {
        count(entity: try schema.entityNumber(entity))
    }

    /// The IDs of every live object of the entity named `entity`, in serial order.
    /// - Complexity: O(n) for n objects of the entity.
    public func objectIDs(_ entity: String) throws -> [ObjectID] {
        objectIDs(entity: try schema.entityNumber(entity))
    }

    /// The object of `entity` whose unique (or indexed) attributes have these values: `values` must name exactly the
    /// attributes of one of its indexes (in any order).
    /// - Complexity: O(log n).
    public func lookup(_ entity: String, _ values: [String: Value]) throws -> ObjectID? {
        let names = try indexNames(entity, Array(values.keys))
        return lookup(try schema.index(entity, names), names.map { values[$0]! })
    }

    private func entityLayout(_ id: ObjectID) throws -> EntityLayout {
        guard Int(id.entity) < tables.count else {
            throw TrellisError(.unknownEntity, "no entity number \(id.entity) in this schema", object: id)
        }
        return layout(id.entity)
    }

    /// The attribute names of the index of `entity` that covers exactly `names`, in the index's order.
    private func indexNames(_ entity: String, _ names: [String]) throws -> [String] {
        let layout = schema.layouts[Int(try schema.entityNumber(entity))]
        let wanted = Set(try names.map { try layout.attributeIndex($0) })
        guard let index = layout.indexes.first(where: { Set($0.columns) == wanted }) else {
            throw TrellisError(
                .invalidArgument, "entity '\(entity)' has no index on (\(names.sorted().joined(separator: ", ")))")
        }
        return index.columns.map { layout.attributes[$0].name }
    }
}
