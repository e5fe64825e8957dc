/// How deleting an object treats the objects its relationship points to.
public enum DeleteRule: UInt8, Sendable, Codable, CustomStringConvertible {
    /// Remove the deleted object from each target's inverse relationship.
    case nullify = 1
    /// Delete every target too, in the same commit.
    case cascade = 2
    /// Refuse the delete while the relationship has any target.
    case deny = 3
    /// Leave the targets alone: their inverse keeps naming the deleted object (a dangling reference).
    case noAction = 4

    /// The rule's name as people and the `trellis` tool write it (`"cascade"`, `"no action"`…).
    public var description: String {
        switch self {
        case .nullify: return "nullify"
        case .cascade: return "cascade"
        case .deny: return "deny"
        case .noAction: return "no action"
        }
    }
}

/// A typed attribute of an entity.
///
/// ```swift
/// AttributeDescription("due", .date, optional: true)
/// ```
public struct AttributeDescription: Sendable, Equatable {
    /// The attribute's name, unique among the entity's attributes and relationships.
    public var name: String
    /// The declared type: what values it takes and how they are checked and converted.
    public var type: AttributeType
    /// Whether the attribute may hold null.
    public var isOptional: Bool
    /// The value an insert gets when it names none. A required attribute without a default must be given.
    /// Defaults are not part of a store's structure: changing one never stops a store from opening.
    public var defaultValue: Value?
    /// The name this attribute had in the schema a store was written with, when it was renamed (as SwiftData's
    /// `@Attribute(originalName:)`): opening that store renames it and keeps its values.
    public var originalName: String?

    /// An attribute named `name` of type `type`; `originalName` is its name in an older schema when it was renamed.
    public init(
        _ name: String, _ type: AttributeType, optional: Bool = false, default defaultValue: Value? = nil,
        originalName: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.originalName = originalName
    }
}

/// One end of a relationship; its `inverse` names the other end, declared on the target entity.
///
/// ```swift
/// RelationshipDescription("children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Equatable {
    /// The relationship's name, unique among the entity's attributes and relationships.
    public var name: String
    /// The name of the entity it points to.
    public var target: String
    /// The name of the relationship on `target` that points back; both ends are kept in step.
    public var inverse: String
    /// Whether it holds any number of targets (otherwise at most one).
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its targets in an order of the app's choosing (inserted, moved and removed
    /// at positions) rather than as a set.
    public var isOrdered: Bool = false
    /// What deleting an object does to the targets of this relationship.
    public var deleteRule: DeleteRule
    /// The fewest targets a live object must have (1 makes a to-one relationship required).
    public var minCount: Int
    /// The most targets a live object may have (nil: no limit).
    public var maxCount: Int?
    /// The name this relationship had in the schema a store was written with, when it was renamed.
    public var originalName: String?

    /// A relationship named `name` to `target`, whose other end is `target`'s `inverse`. `optional: false` requires a
    /// target (a minimum count of 1); `minCount` and `maxCount` bound a to-many relationship; `ordered: true` keeps a
    /// to-many relationship's targets in order.
    public init(
        _ name: String, to target: String, inverse: String, toMany: Bool = false, ordered: Bool = false,
        deleteRule: DeleteRule = .nullify, optional: Bool = true, minCount: Int? = nil, maxCount: Int? = nil,
        originalName: String? = nil
    ) {
        self.originalName = originalName
        self.isOrdered = ordered
        self.name = name
        self.target = target
        self.inverse = inverse
        self.isToMany = toMany
        self.deleteRule = deleteRule
        self.minCount = minCount ?? (optional ? 0 : 1)
        self.maxCount = toMany ? maxCount : 1
    }
}

/// An index or unique constraint over one or several attributes of an entity.
public struct IndexDescription: Sendable, Equatable {
    /// The indexed attributes' names, in key order.
    public var attributes: [String]
    /// Whether the index is a unique constraint: no two live objects with the same values (nulls never conflict).
    public var isUnique: Bool

    /// An index over `attributes`, in that order; `unique: true` makes it a unique constraint.
    public init(_ attributes: [String], unique: Bool = false) {
        self.attributes = attributes
        self.isUnique = unique
    }

    /// A unique constraint over these attributes: `.unique("email")`.
    public static func unique(_ attributes: String...) -> IndexDescription {
        IndexDescription(attributes, unique: true)
    }
    /// A plain index over these attributes: `.on("due")`, `.on("last", "first")`.
    public static func on(_ attributes: String...) -> IndexDescription { IndexDescription(attributes, unique: false) }
}

/// An entity: a kind of object with attributes, relationships, indexes and unique constraints.
///
/// ```swift
/// EntityDescription(
///     "Item", attributes: [AttributeDescription("id", .int64), AttributeDescription("score", .double)],
///     indexes: [.unique("id"), .on("score")])
/// ```
public struct EntityDescription: Sendable, Equatable {
    /// The entity's name, unique in the schema.
    public var name: String
    /// Its attributes, in stored order (the order of `ChangeSet.Insert.values` and `Row.values`).
    public var attributes: [AttributeDescription]
    /// Its relationships, in stored order.
    public var relationships: [RelationshipDescription]
    /// Its indexes and unique constraints.
    public var indexes: [IndexDescription]
    /// The name this entity had in the schema a store was written with, when it was renamed: its objects keep their
    /// IDs.
    public var originalName: String?
    /// An entity a migration removed: kept in the store's schema with no properties and no objects, so that the
    /// entities after it keep their numbers (and their objects' IDs) and its own IDs are never given out again. Name
    /// lookups do not find it; a later schema that declares an entity of its name brings it back, empty.
    public package(set) var isRetired = false

    /// An entity named `name`; `originalName` is its name in an older schema when it was renamed.
    public init(
        _ name: String, attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        indexes: [IndexDescription] = [], originalName: String? = nil
    ) {
        self.originalName = originalName
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
    }
}
