import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Hands out permanent serial numbers, one counter per entity; shared by every transaction of a store.
///
/// The counters are atomics, not an array under a lock: a bulk insert takes a serial per object, and one atomic add
/// costs less than a lock, an array write (with its uniqueness check) and an unlock.
final class SerialAllocator: Sendable {
    /// `entities` counters, each the next serial of its entity; allocated and freed with the allocator, only ever
    /// reached through atomic operations.
    private nonisolated(unsafe) let next: UnsafeMutablePointer<Atomic<UInt64>>
    private let entities: Int

    init(after maxSerials: [UInt64]) {
        entities = maxSerials.count
        next = .allocate(capacity: max(entities, 1))
        for (i, m) in maxSerials.enumerated() { (next + i).initialize(to: Atomic(m + 1)) }
    }

    deinit {
        next.deinitialize(count: entities)
        next.deallocate()
    }

    func allocate(_ entity: UInt32, count: UInt64 = 1) -> UInt64 {
        precondition(Int(entity) < entities, "entity \(entity) is not in the schema")
        return next[Int(entity)].wrappingAdd(count, ordering: .relaxed).oldValue
    }

    /// Makes sure future serials stay above those a recovered or committed graph holds.
    func raise(to maxSerials: [UInt64]) {
        precondition(maxSerials.count <= entities, "more entities than the schema has")
        for (i, m) in maxSerials.enumerated() { next[i].max(m + 1, ordering: .relaxed) }
    }
}

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

/// The new values a transaction sets on one stored object: the first attribute inline, so that the common update of
/// one attribute allocates nothing beyond the value itself.
struct PendingUpdate: Sendable {
    let id: ObjectID
    private var attribute: Int
    private var value: Value
    private var more: [(attribute: Int, value: Value)] = []

    init(id: ObjectID, attribute: Int, value: Value) {
        self.id = id
        self.attribute = attribute
        self.value = value
    }

    mutating func set(_ attribute: Int, _ value: Value) {
        if attribute == self.attribute {
            self.value = value
        } else if let i = more.firstIndex(where: { $0.attribute == attribute }) {
            more[i].value = value
        } else {
            more.append((attribute, value))
        }
    }

    /// Calls `body` with the attributes set, each once with its last value, in ascending attribute order.
    func forEachValue(_ body: (Int, Value) throws -> Void) rethrows {
        guard !more.isEmpty else { return try body(attribute, value) }
        for (a, v) in ([(attribute, value)] + more).sorted(by: { $0.attribute < $1.attribute }) { try body(a, v) }
    }
}

/// Where each object a transaction inserts (or updates) sits in its `inserts` (or `updates`).
///
/// The allocator hands out serials in ascending order and rows are read in ascending order, so each entity's
/// serials usually arrive ascending, most often one after another at consecutive positions: they are kept as runs
/// (a bulk insert is one run), found by a binary search without hashing. An ID that arrives out of order goes to a
/// dictionary instead.
struct ObjectPositions: Sendable {
    /// Serials `serial ..< serial + count` sit at positions `position ..< position + count`.
    private struct Run: Sendable {
        var serial: UInt64
        var position: Int
        var count: Int
    }

    private var runs: [[Run]] = []
    private var others: [ObjectID: Int] = [:]

    mutating func add(_ id: ObjectID, at position: Int) {
        let e = Int(id.entity)
        while runs.count <= e { runs.append([]) }
        guard let last = runs[e].last else {
            return runs[e].append(Run(serial: id.serial, position: position, count: 1))
        }
        let end = last.serial + UInt64(last.count)
        if id.serial < end {
            others[id] = position
        } else if id.serial == end, position == last.position + last.count {
            runs[e][runs[e].count - 1].count += 1
        } else {
            runs[e].append(Run(serial: id.serial, position: position, count: 1))
        }
    }

    /// The position of the newest insert of `id`, or nil when the transaction does not insert it.
    func position(of id: ObjectID) -> Int? {
        if !others.isEmpty, let p = others[id] { return p }
        let e = Int(id.entity)
        guard e < runs.count else { return nil }
        return runs[e].withUnsafeBufferPointer { runs -> Int? in
            // The last run starting at or below the serial.
            var low = 0
            var high = runs.count
            while low < high {
                let middle = (low + high) / 2
                if runs[middle].serial <= id.serial { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let run = runs[low - 1]
            let offset = id.serial - run.serial
            return offset < UInt64(run.count) ? run.position + Int(offset) : nil
        }
    }
}
