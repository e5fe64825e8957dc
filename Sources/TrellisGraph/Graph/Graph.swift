import TrellisCore

/// One immutable version of the whole object graph: what `Store.snapshot` publishes and readers fetch from.
///
/// A snapshot is a value: copying it is O(1), reading it takes no lock on any thread, and it never changes while you
/// hold it; every commit makes a new version that shares all unchanged structure with this one (path copying).
///
/// ```swift
/// let snapshot = store.snapshot                        // O(1)
/// let folders = try snapshot.count("Folder")           // O(1)
/// let next = try snapshot.applying(changeSet)          // snapshot itself is unchanged
/// ```
///
/// Inside the package the same type is called `Graph` (the layers build, apply and migrate graphs); apps see one name.
public struct Snapshot: Sendable {
    /// The schema every object of this version conforms to.
    public let schema: Schema
    /// The sequence number of the last commit this version contains (0 for an empty store).
    public package(set) var sequence: UInt64
    @usableFromInline package var tables: [EntityTable]

    /// An empty version of `schema`, at sequence 0: the start a journal replays onto (see `JournalRecord.applied(to:)`).
    public init(schema: Schema) {
        self.schema = schema
        self.sequence = 0
        self.tables = schema.layouts.map(EntityTable.init)
    }

    @inlinable @inline(__always)
    package func layout(_ entity: UInt32) -> EntityLayout { schema.layouts[Int(entity)] }

    /// The highest serial stored for each entity, in schema order.
    package var maxSerials: [UInt64] { tables.map(\.maxSerial) }

    /// Whether the object exists in this version.
    /// - Complexity: O(log n), a few node hops.
    @inlinable public func contains(_ id: ObjectID) -> Bool {
        Int(id.entity) < tables.count && tables[Int(id.entity)].contains(id.serial)
    }

    /// The number of live objects of an entity.
    /// - Complexity: O(1).
    public func count(entity: EntityKey) -> Int { count(entity: entity.number) }

    /// The number of live objects of the entity with this number.
    /// - Complexity: O(1).
    package func count(entity: UInt32) -> Int {
        Int(entity) < tables.count ? tables[Int(entity)].count : 0
    }

    /// The total number of live objects.
    /// - Complexity: O(e) for e entities.
    public var objectCount: Int { tables.reduce(0) { $0 + $1.count } }

    /// The value of one attribute, or nil when the object does not exist (or `attribute` is of another entity).
    /// - Complexity: O(log n), a few node hops; `object(_:)` is cheaper for several attributes of one object.
    public func value(_ id: ObjectID, _ attribute: AttributeKey) -> Value? {
        guard attribute.entity == id.entity, let (leaf, r) = locate(id) else { return nil }
        return leaf.columns[attribute.index].value(r)
    }

    /// An object read in place, or nil when it does not exist: one lookup for any number of typed reads
    /// (`value(_:_:)` looks the object up again for each attribute).
    ///
    /// ```swift
    /// if let item = snapshot.object(id) { total += item.double(score) ?? 0; names.append(item.string(title) ?? "") }
    /// ```
    /// - Complexity: O(log n) for the lookup; each read of the row is O(1).
    public func object(_ id: ObjectID) -> Row? {
        withLeaf(id) { leaf, _ in Row(at: leaf, id: id) }
    }

    /// The leaf that holds a live object and its row in it, or nil.
    /// - Complexity: O(log n), a few node hops.
    @inline(__always)
    func locate(_ id: ObjectID) -> (Leaf, Int)? {
        withLeaf(id) { leaf, r in (leaf.pointee, r) }
    }

    /// Calls `body` with the address of the leaf that holds a live object and its row in it; nil when the object does
    /// not exist. A leaf of the trie's nodes is read where its node holds it, not copied (a copy retains its column
    /// and link arrays); the newest leaf, held beside the nodes, is copied first.
    ///
    /// The entity's trie is read field by field in place: copying `tables[e]` or `tables[e].leaves` whole to call a
    /// method on it retains and releases the trie's root and its tail's leaf, through the generic type's value
    /// witnesses, which cost a lookup more than its descent.
    /// - Complexity: O(log n), a few node hops.
    @inline(__always)
    func withLeaf<R>(_ id: ObjectID, _ body: (UnsafePointer<Leaf>, Int) -> R) -> R? {
        let e = Int(id.entity)
        guard e < tables.count else { return nil }
        let (l, r) = EntityTable.split(id.serial)
        // The tail's key is compared before the tail is read: `if let tail` would copy its leaf for every lookup.
        if tables[e].leaves.tail?.key == l {
            guard let tail = tables[e].leaves.tail?.value, tail.contains(r) else { return nil }
            return withUnsafePointer(to: tail) { body($0, r) }
        }
        guard let root = tables[e].leaves.root else { return nil }
        return withExtendedLifetime(root) {
            guard let leaf = SerialTrie<Leaf>.itemAddress(forKey: l, root: root, height: tables[e].leaves.height),
                leaf.pointee.contains(r)
            else { return nil }
            return body(leaf, r)
        }
    }

    /// All attribute values of an object in schema order, or nil when it does not exist.
    /// - Complexity: O(log n + a) for a attributes.
    public func row(_ id: ObjectID) -> [Value]? {
        guard let (leaf, r) = locate(id) else { return nil }
        return leaf.columns.map { $0.value(r) }
    }

    /// The targets of a relationship, in ascending serial order (dangling ones included, see `DeleteRule.noAction`).
    /// - Complexity: O(log n + k) for k targets.
    public func targets(_ id: ObjectID, _ relationship: RelationshipKey) -> [ObjectID] {
        guard relationship.entity == id.entity, let (leaf, r) = locate(id) else { return [] }
        let target = layout(id.entity).relationships[relationship.index].target
        return leaf.targets(r, relationship.index).map { ObjectID(entity: target, serial: $0) }
    }

    /// The number of targets of a relationship, without reading them.
    /// - Complexity: O(log n) to find the object, a few node hops; the count itself is stored.
    @inlinable public func targetCount(_ id: ObjectID, _ relationship: RelationshipKey) -> Int {
        guard relationship.entity == id.entity, Int(id.entity) < tables.count else { return 0 }
        return tables[Int(id.entity)].targetCount(id.serial, relationship.index)
    }

    /// Every live object of an entity, in ascending serial order, as rows that read columns without lookups.
    /// - Complexity: O(1) to make; iterating is O(n), with no allocation per row.
    public func rows(entity: EntityKey) -> RowSequence { rows(entity: entity.number) }

    /// Every live object of the entity with this number, as `rows(entity:)` gives them.
    package func rows(entity: UInt32) -> RowSequence {
        RowSequence(entity: entity, leaves: Int(entity) < tables.count ? tables[Int(entity)].leaves : SerialTrie())
    }

    /// The IDs of every live object of an entity, in ascending serial order.
    /// - Complexity: O(n).
    public func objectIDs(entity: EntityKey) -> [ObjectID] { objectIDs(entity: entity.number) }

    /// The IDs of every live object of the entity with this number, in ascending serial order.
    package func objectIDs(entity: UInt32) -> [ObjectID] {
        var ids: [ObjectID] = []
        ids.reserveCapacity(count(entity: entity))
        for row in rows(entity: entity) { ids.append(row.id) }
        return ids
    }
}

/// The package's name for `Snapshot`: the layers build, apply and migrate graphs; apps only ever hold snapshots of one.
package typealias Graph = Snapshot
