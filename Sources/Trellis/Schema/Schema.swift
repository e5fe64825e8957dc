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
    private final class Storage: Sendable {
        let entities: [EntityDescription]
        let fingerprint: UInt64
        let layouts: [EntityLayout]
        let entityNumbers: [String: UInt32]

        init(_ entities: [EntityDescription], _ layouts: [EntityLayout], _ numbers: [String: UInt32]) {
            self.entities = entities
            self.layouts = layouts
            self.entityNumbers = numbers
            self.fingerprint = SchemaFingerprint.digest(of: entities)
        }
    }

    private let storage: Storage

    public var entities: [EntityDescription] { storage.entities }
    /// A stable 64-bit digest of everything that shapes stored data (names, types, optionality, defaults,
    /// relationships, indexes), for recognising the schema a file was written with.
    public var fingerprint: UInt64 { storage.fingerprint }
    var layouts: [EntityLayout] { storage.layouts }
    private var entityNumbers: [String: UInt32] { storage.entityNumbers }

    public init(_ entities: [EntityDescription]) throws {
        var numbers: [String: UInt32] = [:]
        for (i, entity) in entities.enumerated() {
            guard !entity.name.isEmpty else { throw TrellisError(.invalidSchema, "entity \(i) has an empty name") }
            guard numbers.updateValue(UInt32(i), forKey: entity.name) == nil else {
                throw TrellisError(.invalidSchema, "duplicate entity name '\(entity.name)'")
            }
        }
        var layouts: [EntityLayout] = []
        for (i, entity) in entities.enumerated() {
            layouts.append(try EntityLayout(entity, number: UInt32(i), in: entities, numbers: numbers))
        }
        storage = Storage(entities, layouts, numbers)
    }

    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.storage === rhs.storage || lhs.entities == rhs.entities
    }

    /// The number of the entity named `name`, as carried in `ObjectID.entity`.
    public func entityNumber(_ name: String) throws -> UInt32 {
        guard let n = entityNumbers[name] else { throw TrellisError(.unknownEntity, "no entity named '\(name)'") }
        return n
    }

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

    /// A string that names an object for people: `Folder#12`.
    public func describe(_ id: ObjectID) -> String { "\(entityName(of: id))#\(id.serial)" }
}

/// An attribute resolved against a schema.
public struct AttributeKey: Hashable, Sendable {
    public let entity: UInt32
    public let index: Int
}

/// A relationship resolved against a schema.
public struct RelationshipKey: Hashable, Sendable {
    public let entity: UInt32
    public let index: Int
}

/// An index resolved against a schema.
public struct IndexKey: Hashable, Sendable {
    public let entity: UInt32
    public let index: Int
}

/// A 64-bit FNV-1a digest of a canonical text of the schema; stable across runs, processes and platforms.
enum SchemaFingerprint {
    static func digest(of entities: [EntityDescription]) -> UInt64 {
        var text = ""
        for e in entities {
            text += "E:\(e.name);"
            for a in e.attributes {
                text += "A:\(a.name):\(a.type.rawValue):\(a.isOptional ? 1 : 0):\(a.defaultValue?.description ?? "-");"
            }
            for r in e.relationships {
                text += "R:\(r.name):\(r.target):\(r.inverse):\(r.isToMany ? 1 : 0):\(r.deleteRule.rawValue)"
                text += ":\(r.minCount):\(r.maxCount.map(String.init) ?? "-");"
            }
            for i in e.indexes { text += "I:\(i.attributes.joined(separator: ",")):\(i.isUnique ? 1 : 0);" }
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
