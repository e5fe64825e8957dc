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
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    /// The value an insert gets when it names none. A required attribute without a default must be given.
    /// Defaults are not part of a store's structure: changing one never stops a store from opening.
    public var defaultValue: Value?
    /// The name this attribute had in the schema a store was written with, when it was renamed (as SwiftData's
    /// `@Attribute(originalName:)`): opening that store renames it and keeps its values.
    public var originalName: String?

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
    public var name: String
    public var target: String
    public var inverse: String
    public var isToMany: Bool
    public var deleteRule: DeleteRule
    /// The fewest targets a live object must have (1 makes a to-one relationship required).
    public var minCount: Int
    /// The most targets a live object may have (nil: no limit).
    public var maxCount: Int?
    /// The name this relationship had in the schema a store was written with, when it was renamed.
    public var originalName: String?

    public init(
        _ name: String, to target: String, inverse: String, toMany: Bool = false, deleteRule: DeleteRule = .nullify,
        optional: Bool = true, minCount: Int? = nil, maxCount: Int? = nil, originalName: String? = nil
    ) {
        self.originalName = originalName
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
    public var attributes: [String]
    public var isUnique: Bool

    public init(_ attributes: [String], unique: Bool = false) {
        self.attributes = attributes
        self.isUnique = unique
    }

    public static func unique(_ attributes: String...) -> IndexDescription {
        IndexDescription(attributes, unique: true)
    }
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
    public var name: String
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    public var indexes: [IndexDescription]
    /// The name this entity had in the schema a store was written with, when it was renamed: its objects keep their
    /// IDs.
    public var originalName: String?
    /// An entity a migration removed: kept in the store's schema with no properties and no objects, so that the
    /// entities after it keep their numbers (and their objects' IDs) and its own IDs are never given out again. Name
    /// lookups do not find it; a later schema that declares an entity of its name brings it back, empty.
    public package(set) var isRetired = false

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
