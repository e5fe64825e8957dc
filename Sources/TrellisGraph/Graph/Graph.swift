import TrellisCore

/// One immutable version of the whole object graph.
///
/// A `Graph` is a value: copying it is O(1) and every later change makes a new version that shares all unchanged
/// structure with this one. Commits make the next version with `applying(_:)`; snapshots hand versions to readers.
///
/// ```swift
/// let next = try graph.applying(changeSet)   // graph itself is unchanged
/// ```
public struct Graph: Sendable {
    public let schema: Schema
    /// The sequence number of the last commit this version contains (0 for an empty store).
    public package(set) var sequence: UInt64
    @usableFromInline package var tables: [EntityTable]

    public init(schema: Schema) {
        self.schema = schema
        self.sequence = 0
        self.tables = schema.layouts.map(EntityTable.init)
    }

    @inlinable @inline(__always)
    package func layout(_ entity: UInt32) -> EntityLayout { schema.layouts[Int(entity)] }

    func table(_ id: ObjectID) -> EntityTable? {
        Int(id.entity) < tables.count ? tables[Int(id.entity)] : nil
    }

    /// The highest serial stored for each entity, in schema order.
    package var maxSerials: [UInt64] { tables.map(\.maxSerial) }

    /// Whether the object exists in this version.
    /// - Complexity: O(log n), a few node hops.
    @inlinable public func contains(_ id: ObjectID) -> Bool {
        Int(id.entity) < tables.count && tables[Int(id.entity)].contains(id.serial)
    }

    /// The number of live objects of the entity with this number.
    /// - Complexity: O(1).
    public func count(entity: UInt32) -> Int {
        Int(entity) < tables.count ? tables[Int(entity)].count : 0
    }

    /// The total number of live objects.
    public var objectCount: Int { tables.reduce(0) { $0 + $1.count } }

    /// The value of one attribute, or nil when the object does not exist.
    public func value(_ id: ObjectID, _ attribute: AttributeKey) -> Value? {
        guard attribute.entity == id.entity else { return nil }
        return table(id)?.value(id.serial, attribute.index)
    }

    /// An object read in place, or nil when it does not exist: one lookup for any number of typed reads
    /// (`value(_:_:)` looks the object up again for each attribute).
    ///
    /// ```swift
    /// if let item = snapshot.object(id) { total += item.double(score) ?? 0; names.append(item.string(title) ?? "") }
    /// ```
    public func object(_ id: ObjectID) -> Row? {
        // Reached in place: `table(id)` would copy the entity's table (and retain its trie and index list) first.
        let e = Int(id.entity)
        guard e < tables.count else { return nil }
        let (l, r) = EntityTable.split(id.serial)
        guard let leaf = tables[e].leaves[l], leaf.contains(r) else { return nil }
        return Row(leaf: leaf, index: r, id: id)
    }

    /// All attribute values of an object in schema order, or nil when it does not exist.
    public func row(_ id: ObjectID) -> [Value]? {
        table(id)?.row(id.serial)
    }

    /// The targets of a relationship, in ascending serial order (dangling ones included, see `DeleteRule.noAction`).
    public func targets(_ id: ObjectID, _ relationship: RelationshipKey) -> [ObjectID] {
        guard relationship.entity == id.entity, let (leaf, r) = table(id)?.locate(id.serial) else { return [] }
        let target = layout(id.entity).relationships[relationship.index].target
        return leaf.targets(r, relationship.index).map { ObjectID(entity: target, serial: $0) }
    }

    /// The number of targets of a relationship.
    /// - Complexity: O(1).
    @inlinable public func targetCount(_ id: ObjectID, _ relationship: RelationshipKey) -> Int {
        guard relationship.entity == id.entity, Int(id.entity) < tables.count else { return 0 }
        return tables[Int(id.entity)].targetCount(id.serial, relationship.index)
    }

    /// Every live object of an entity, in ascending serial order, as rows that read columns without lookups.
    public func rows(entity: UInt32) -> RowSequence {
        RowSequence(entity: entity, leaves: Int(entity) < tables.count ? tables[Int(entity)].leaves : SerialTrie())
    }

    /// The IDs of every live object of an entity, in ascending serial order.
    public func objectIDs(entity: UInt32) -> [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(count(entity: entity))
        for row in rows(entity: entity) { ids.append(row.id) }
        return ids
    }
}

/// A published version of the graph: immutable, shareable across threads, readable without locks for as long as
/// you hold it.
public typealias Snapshot = Graph
