import Foundation

/// A validated set of entities: the shape of every object a store holds.
///
/// Building a `Schema` checks it: duplicate names, relationships whose target or inverse is missing or does not point
/// back, indexes over missing attributes are refused with an error naming the culprit.
///
/// ```swift
/// let schema = try Schema([
///     EntityDescription("Folder", attributes: [AttributeDescription("name", .string)], relationships: [
///         RelationshipDescription("parent", to: "Folder", inverse: "children"),
///         RelationshipDescription("children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
///     ]),
/// ])
/// ```
public struct Schema: Sendable, Equatable {
    /// Everything a schema holds, behind one reference: a graph (and so every snapshot) carries its schema, and
    /// copying a snapshot should cost one retain for it, not one per array.
    @usableFromInline package final class Storage: Sendable {
        let entities: [EntityDescription]
        let fingerprint: UInt64
        @usableFromInline package let layouts: [EntityLayout]
        let entityNumbers: [String: UInt32]
        let history: [SchemaMigration]

        init(
            _ entities: [EntityDescription], _ layouts: [EntityLayout], _ numbers: [String: UInt32],
            history: [SchemaMigration], fingerprint: UInt64? = nil
        ) {
            self.entities = entities
            self.layouts = layouts
            self.entityNumbers = numbers
            self.history = history
            self.fingerprint = fingerprint ?? SchemaFingerprint.digest(of: entities)
        }
    }

    @usableFromInline package let storage: Storage

    /// The entities, in stored order: an entity's position is the number its object IDs carry.
    public var entities: [EntityDescription] { storage.entities }
    /// A stable 64-bit digest of the structure of stored data, in stored order: entity, attribute and relationship
    /// names and positions, types, optionality, inverses, delete rules, counts and indexes. Default values and
    /// original names are not part of it: two schemas with the same fingerprint read and write the same bytes.
    public var fingerprint: UInt64 { storage.fingerprint }
    /// The migrations the store this schema was read from went through, oldest first (empty for a schema built in
    /// code). Not part of the fingerprint or of equality.
    public var history: [SchemaMigration] { storage.history }
    @inlinable package var layouts: [EntityLayout] { storage.layouts }
    private var entityNumbers: [String: UInt32] { storage.entityNumbers }

    /// A schema of these entities, validated: throws `TrellisError.Code.invalidSchema` naming the first problem found.
    public init(_ entities: [EntityDescription]) throws {
        var numbers: [String: UInt32] = [:]
        for (i, entity) in entities.enumerated() {
            guard !entity.name.isEmpty else { throw TrellisError(.invalidSchema, "entity \(i) has an empty name") }
            guard numbers.updateValue(UInt32(i), forKey: entity.name) == nil else {
                throw TrellisError(.invalidSchema, "duplicate entity name '\(entity.name)'")
            }
        }
        for entity in entities where entity.isRetired {
            guard entity.attributes.isEmpty, entity.relationships.isEmpty, entity.indexes.isEmpty else {
                throw TrellisError(.invalidSchema, "retired entity '\(entity.name)' has properties")
            }
        }
        for entity in entities {
            for r in entity.relationships where numbers[r.target].map({ entities[Int($0)].isRetired }) ?? false {
                throw TrellisError(
                    .invalidSchema, "relationship '\(entity.name).\(r.name)' targets the retired entity '\(r.target)'")
            }
        }
        var layouts: [EntityLayout] = []
        for (i, entity) in entities.enumerated() {
            layouts.append(try EntityLayout(entity, number: UInt32(i), in: entities, numbers: numbers))
        }
        storage = Storage(entities, layouts, numbers, history: [])
    }

    private init(storage: Storage) { self.storage = storage }

    /// This schema with another migration history; layouts and fingerprint are shared.
    package func withHistory(_ history: [SchemaMigration]) -> Schema {
        Schema(
            storage: Storage(
                storage.entities, storage.layouts, storage.entityNumbers, history: history,
                fingerprint: storage.fingerprint))
    }

    /// This schema with no index in its layouts, under the same fingerprint, entities and history: a graph of it keeps
    /// rows and links but maintains no index. Recovery replays a long journal onto such a graph and then builds every
    /// index once from the rows (`Graph.rebuildingIndexes`); nothing else may use it.
    package func withoutIndexes() -> Schema {
        Schema(
            storage: Storage(
                storage.entities, storage.layouts.map { $0.withoutIndexes() }, storage.entityNumbers,
                history: storage.history, fingerprint: storage.fingerprint))
    }

    /// Same entities, attributes, relationships and indexes; the migration history is not compared.
    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.storage === rhs.storage || lhs.entities == rhs.entities
    }

    /// A resolved handle on the entity named `name`; throws `TrellisError.Code.unknownEntity` when there is none.
    /// - Complexity: O(1).
    public func entity(_ name: String) throws -> EntityKey { EntityKey(number: try entityNumber(name)) }

    /// The number of the entity named `name`, as carried in `ObjectID.entity`.
    package func entityNumber(_ name: String) throws -> UInt32 {
        guard let n = entityNumbers[name], !entities[Int(n)].isRetired else {
            throw TrellisError(.unknownEntity, "no entity named '\(name)'")
        }
        return n
    }

    /// The name of the entity an ID belongs to (`"entity7"` for a number the schema does not have).
    public func entityName(of id: ObjectID) -> String {
        Int(id.entity) < entities.count ? entities[Int(id.entity)].name : "entity\(id.entity)"
    }

    /// A resolved handle on an attribute, for reads and writes that skip name lookups.
    public func attribute(_ entity: String, _ name: String) throws -> AttributeKey {
        let e = try entityNumber(entity)
        return AttributeKey(entity: e, index: try layouts[Int(e)].attributeIndex(name))
    }

    /// A resolved handle on a relationship.
    public func relationship(_ entity: String, _ name: String) throws -> RelationshipKey {
        let e = try entityNumber(entity)
        return RelationshipKey(entity: e, index: try layouts[Int(e)].relationshipIndex(name))
    }

    /// A resolved handle on an index or unique constraint, named by its attributes.
    public func index(_ entity: String, _ attributes: [String]) throws -> IndexKey {
        let e = try entityNumber(entity)
        let layout = layouts[Int(e)]
        let columns = try attributes.map { try layout.attributeIndex($0) }
        guard let i = layout.indexes.firstIndex(where: { $0.columns == columns }) else {
            throw TrellisError(
                .invalidArgument, "entity '\(entity)' has no index on (\(attributes.joined(separator: ", ")))")
        }
        return IndexKey(entity: e, index: i)
    }

    /// A string that names an object for people: `Folder#12` (`id.description(in: schema)`).
    public func describe(_ id: ObjectID) -> String { id.description(in: self) }
}

extension ObjectID {
    /// `Entity#serial` with the entity's name in `schema`: `Folder#12` (`entity7#12` for a number the schema does
    /// not have). `description` alone has no schema and prints the number: `0#12`.
    ///
    /// ```swift
    /// print(id.description(in: store.schema))   // Folder#12
    /// ```
    public func description(in schema: Schema) -> String { "\(schema.entityName(of: self))#\(serial)" }
}

/// An entity resolved against a schema, for reads that skip the name lookup (`Snapshot.rows(entity:)`,
/// `Snapshot.count(entity:)`, `Transaction.insert(entity:row:)`). Get one from `Schema.entity(_:)`.
public struct EntityKey: Hashable, Sendable {
    /// The entity's number in its schema, as carried in `ObjectID.entity`.
    @usableFromInline package let number: UInt32

    @inlinable package init(number: UInt32) { self.number = number }
}

/// An attribute resolved against a schema, for reads and writes that skip name lookups (`Row.int(_:)`,
/// `Snapshot.value(_:_:)`, `Transaction.set(_:_:_:)`). Get one from `Schema.attribute(_:_:)`; it is valid for the
/// schema it came from.
public struct AttributeKey: Hashable, Sendable {
    /// The number of the attribute's entity.
    @usableFromInline package let entity: UInt32
    /// The attribute's position in its entity, 32 bits so that a key is as small as the `Int` it replaced.
    @usableFromInline let position: UInt32
    /// The attribute's position in its entity, in schema order (the column of the entity's leaves).
    @inlinable package var index: Int { Int(position) }

    @inlinable package init(entity: UInt32, index: Int) {
        self.entity = entity
        self.position = UInt32(truncatingIfNeeded: index)
    }
}

/// A relationship resolved against a schema, for reads and edits that skip name lookups (`Snapshot.targets(_:_:)`,
/// `Row.targetSerials(_:)`, `ChangeSet.RelationshipEdit`). Get one from `Schema.relationship(_:_:)`.
public struct RelationshipKey: Hashable, Sendable {
    /// The number of the relationship's (source) entity.
    @usableFromInline package let entity: UInt32
    /// The relationship's position in its entity, 32 bits so that a key is as small as the `Int` it replaced.
    @usableFromInline let position: UInt32
    /// The relationship's position in its entity, in schema order.
    @inlinable package var index: Int { Int(position) }

    @inlinable package init(entity: UInt32, index: Int) {
        self.entity = entity
        self.position = UInt32(truncatingIfNeeded: index)
    }
}

/// An index or unique constraint resolved against a schema, for lookups and range reads (`Snapshot.lookup(_:_:)`,
/// `Snapshot.scan(_:from:to:)`, `Snapshot.count(_:from:to:)`). Get one from `Schema.index(_:_:)`.
public struct IndexKey: Hashable, Sendable {
    /// The number of the indexed entity.
    @usableFromInline package let entity: UInt32
    /// The index's position among its entity's indexes.
    @usableFromInline let position: UInt32
    /// The index's position among its entity's indexes, in schema order.
    @inlinable package var index: Int { Int(position) }

    @inlinable package init(entity: UInt32, index: Int) {
        self.entity = entity
        self.position = UInt32(truncatingIfNeeded: index)
    }
}

/// One migration a store went through, as its journal records it.
public struct SchemaMigration: Sendable, Equatable {
    /// The commit sequence number of the migration record.
    public var sequence: UInt64
    /// When the migration was committed.
    public var date: Date
    /// The fingerprint of the schema before (`Schema.fingerprint`).
    public var fromFingerprint: UInt64
    /// The fingerprint of the schema after.
    public var toFingerprint: UInt64
    /// The version identifier of the `VersionedSchema` the migration started from, when it ran a
    /// `SchemaMigrationPlan`.
    public var fromVersion: String?
    /// The version identifier of the `VersionedSchema` it led to, when it ran a `SchemaMigrationPlan`.
    public var toVersion: String?
    /// What was done, one line a step (`"Note: add attribute 'pinned' (Bool, default false)"`).
    public var steps: [String]

    package init(
        sequence: UInt64, date: Date, fromFingerprint: UInt64, toFingerprint: UInt64, fromVersion: String? = nil,
        toVersion: String? = nil, steps: [String]
    ) {
        self.sequence = sequence
        self.date = date
        self.fromFingerprint = fromFingerprint
        self.toFingerprint = toFingerprint
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.steps = steps
    }
}
