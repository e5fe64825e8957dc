import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The changes one commit will make, gathered before the store's writer sees them.
///
/// A transaction is a value you fill in on any thread; `Store.commit(_:)` validates it against the newest version of
/// the graph, expands delete rules and makes it one atomic commit. Object IDs are allocated at insert and permanent.
///
/// ```swift
/// var tx = store.transaction()
/// let inbox = try tx.insert("Folder", ["name": "Inbox"])
/// let note = try tx.insert("Note", ["title": "Call Ann"])
/// try tx.link(note, "folder", inbox)
/// try store.commit(tx)
/// ```
public struct Transaction: Sendable {
    /// The schema the transaction's changes are checked against.
    public let schema: Schema
    /// Who makes the commit (a user, a device, "sync", "import"…): stored in its journal record and read back in
    /// the store's history (`Store.history(since:)`); nil for none.
    public var author: String?
    let allocator: SerialAllocator
    var inserts: [ChangeSet.Insert] = []
    var insertPositions = ObjectPositions()
    /// One entry per updated object, in the order of its first update.
    var updates: [PendingUpdate] = []
    var updatePositions = ObjectPositions()
    var edits: [ChangeSet.RelationshipEdit] = []
    var deletes: [ObjectID] = []
    var deleteSet: Set<ObjectID> = []
    /// Preconditions the commit checks against the newest version before applying anything (contexts use them for
    /// optimistic conflict detection); a throwing check fails the commit.
    var checks: [@Sendable (Graph) throws -> Void] = []

    init(schema: Schema, allocator: SerialAllocator) {
        self.schema = schema
        self.allocator = allocator
    }

    /// Whether the transaction changes nothing yet.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && edits.isEmpty && deletes.isEmpty }

    /// Inserts a new object; attributes not named get their default value (or null, checked at commit).
    @discardableResult
    public mutating func insert(_ entity: String, _ values: [String: Value] = [:]) throws -> ObjectID {
        let number = try schema.entityNumber(entity)
        let layout = schema.layouts[Int(number)]
        var row = layout.attributes.map { $0.defaultValue ?? .null }
        for (name, value) in values {
            let index = try layout.attributeIndex(name)
            row[index] = try Self.normalize(value, layout.attributes[index], entity: layout.name)
        }
        return insert(entity: number, row: row)
    }

    /// Inserts a new object from a full row of values in schema order (checked at commit): the fast path for bulk
    /// loads.
    /// - Complexity: O(1) amortized.
    @discardableResult
    public mutating func insert(entity: EntityKey, row: [Value]) -> ObjectID { insert(entity: entity.number, row: row) }

    /// Inserts a new object of the entity with this number from a full row, as `insert(entity:row:)` does.
    @discardableResult
    package mutating func insert(entity: UInt32, row: [Value]) -> ObjectID {
        let id = ObjectID(entity: entity, serial: allocator.allocate(entity))
        insertPositions.add(id, at: inserts.count)
        inserts.append(ChangeSet.Insert(id: id, values: row))
        return id
    }

    /// Sets one attribute of an object (inserted in this transaction or already stored).
    public mutating func set(_ id: ObjectID, _ attribute: String, _ value: Value) throws {
        let layout = try entityLayout(id)
        try set(id, AttributeKey(entity: id.entity, index: try layout.attributeIndex(attribute)), value)
    }

    /// Sets one attribute by a resolved key (`Schema.attribute(_:_:)`): no name lookup. Throws when the key is of another
    /// entity or the value does not fit the attribute's type.
    public mutating func set(_ id: ObjectID, _ attribute: AttributeKey, _ value: Value) throws {
        guard Int(id.entity) < schema.layouts.count, id.serial != 0 else {
            throw TrellisError(.unknownEntity, "object \(id) does not belong to this schema", object: id)
        }
        // Reached through the schema in place: a local copy of the layout would retain all its arrays per call.
        let e = Int(id.entity)
        guard attribute.entity == id.entity, attribute.index < schema.layouts[e].attributes.count else {
            throw TrellisError(.unknownAttribute, "attribute key does not belong to \(schema.describe(id))", object: id)
        }
        guard let normalized = schema.layouts[e].attributes[attribute.index].type.normalized(value) else {
            // Throws the type mismatch.
            _ = try Self.normalize(value, schema.layouts[e].attributes[attribute.index], entity: schema.layouts[e].name)
            return
        }
        if let p = insertPositions.position(of: id) {
            inserts[p].values[attribute.index] = normalized
            return
        }
        recordUpdate(id, attribute.index, normalized)
    }

    /// Notes a new value for an attribute of a stored object (the last one set wins).
    mutating func recordUpdate(_ id: ObjectID, _ attribute: Int, _ value: Value) {
        if let p = updatePositions.position(of: id) {
            updates[p].set(attribute, value)
        } else {
            updatePositions.add(id, at: updates.count)
            updates.append(PendingUpdate(id: id, attribute: attribute, value: value))
        }
    }

    /// Adds `target` to a relationship of `source` (for to-one, replaces the current target); the inverse follows.
    public mutating func link(_ source: ObjectID, _ relationship: String, _ target: ObjectID) throws {
        let index = try relationshipIndex(source, relationship)
        try checkTarget(source, index, target)
        edits.append(.init(.link, source: source, relationship: index, target: target))
    }

    /// Removes `target` from a relationship of `source`; the inverse follows.
    public mutating func unlink(_ source: ObjectID, _ relationship: String, _ target: ObjectID) throws {
        let index = try relationshipIndex(source, relationship)
        try checkTarget(source, index, target)
        edits.append(.init(.unlink, source: source, relationship: index, target: target))
    }

    /// Inserts `target` into an ordered to-many relationship of `source` before the target at `position` (at the end
    /// when `position` is the count), or moves it there when the list holds it already (`position` is then its index
    /// after the move). The inverse follows. The position is checked at commit.
    public mutating func link(_ source: ObjectID, _ relationship: String, _ target: ObjectID, at position: Int) throws {
        let index = try orderedIndex(source, relationship)
        try checkTarget(source, index, target)
        try checkPosition(position)
        edits.append(
            .init(
                placing: target, source: source,
                relationship: RelationshipKey(entity: source.entity, index: index), at: position,
                previousPosition: nil))
    }

    /// Moves the target at `source` of an ordered to-many relationship of `object` so that it ends up at
    /// `destination`, as `Array`'s `remove(at:)` then `insert(_:at:)` would. The positions are checked at commit.
    public mutating func move(_ object: ObjectID, _ relationship: String, from source: Int, to destination: Int) throws
    {
        let index = try orderedIndex(object, relationship)
        try checkPosition(source)
        try checkPosition(destination)
        let rel = schema.layouts[Int(object.entity)].relationships[index]
        // Serial 0 names "the target at `previousPosition`"; the commit resolves it.
        edits.append(
            .init(
                placing: ObjectID(entity: rel.target, serial: 0), source: object,
                relationship: RelationshipKey(entity: object.entity, index: index), at: destination,
                previousPosition: source))
    }

    /// Removes the target at `position` of an ordered to-many relationship of `source`; the inverse follows. The
    /// position is checked at commit.
    public mutating func unlink(_ source: ObjectID, _ relationship: String, at position: Int) throws {
        let index = try orderedIndex(source, relationship)
        try checkPosition(position)
        let rel = schema.layouts[Int(source.entity)].relationships[index]
        // Serial 0 names "the target at `position`"; the commit resolves it.
        var edit = ChangeSet.RelationshipEdit(
            .unlink, source: source, relationship: index, target: ObjectID(entity: rel.target, serial: 0))
        edit.position = position
        edits.append(edit)
    }

    /// Sets a to-one relationship to `target`, or clears it with nil.
    public mutating func setTarget(_ source: ObjectID, _ relationship: String, _ target: ObjectID?) throws {
        let index = try relationshipIndex(source, relationship)
        let rel = schema.layouts[Int(source.entity)].relationships[index]
        guard !rel.isToMany else {
            throw TrellisError(
                .invalidArgument, "'\(relationship)' of \(schema.describe(source)) is to-many: use link and unlink",
                object: source)
        }
        if let target {
            try link(source, relationship, target)
        } else {
            // Serial 0 names "whatever the current target is"; the commit resolves it.
            edits.append(
                .init(.unlink, source: source, relationship: index, target: ObjectID(entity: rel.target, serial: 0)))
        }
    }

    /// Deletes an object; its relationships' delete rules apply at commit.
    public mutating func delete(_ id: ObjectID) throws {
        _ = try entityLayout(id)
        if deleteSet.insert(id).inserted { deletes.append(id) }
    }

    // MARK: Checks

    static func normalize(_ value: Value, _ attribute: AttributeDescription, entity: String) throws -> Value {
        guard let v = attribute.type.normalized(value) else {
            throw TrellisError(
                .typeMismatch, "\(entity).\(attribute.name) is \(attribute.type); \(value) does not fit")
        }
        return v
    }

    private func entityLayout(_ id: ObjectID) throws -> EntityLayout {
        guard Int(id.entity) < schema.layouts.count, id.serial != 0 else {
            throw TrellisError(.unknownEntity, "object \(id) does not belong to this schema", object: id)
        }
        return schema.layouts[Int(id.entity)]
    }

    private func relationshipIndex(_ source: ObjectID, _ name: String) throws -> Int {
        try entityLayout(source).relationshipIndex(name)
    }

    private func orderedIndex(_ source: ObjectID, _ name: String) throws -> Int {
        let index = try relationshipIndex(source, name)
        guard schema.layouts[Int(source.entity)].relationships[index].isOrdered else {
            throw TrellisError(
                .invalidArgument, "'\(name)' of \(schema.describe(source)) is not an ordered relationship",
                object: source)
        }
        return index
    }

    private func checkPosition(_ position: Int) throws {
        guard position >= 0 else { throw TrellisError(.invalidArgument, "position \(position) is negative") }
    }

    private func checkTarget(_ source: ObjectID, _ relationship: Int, _ target: ObjectID) throws {
        let rel = schema.layouts[Int(source.entity)].relationships[relationship]
        guard target.entity == rel.target, target.serial != 0 else {
            throw TrellisError(
                .typeMismatch,
                "'\(rel.name)' of \(schema.describe(source)) takes \(schema.entities[Int(rel.target)].name) objects, "
                    + "not \(schema.describe(target))", object: source)
        }
    }
}
