/// One way the schema a store holds differs from the one it is opened with: an entity, attribute, relationship or
/// index that only one side has, or one setting of it (type, optionality, default…) with both sides' values.
///
/// A refused migration lists them in `TrellisError.schemaDifferences` (and in its message); a dry run in
/// `PlannedMigration.differences`.
///
/// ```swift
/// catch let error as TrellisError where error.code == .migrationRefused {
///     for d in error.schemaDifferences where d.aspect == .type {
///         print(d.entity, d.property!, d.stored!, d.new!)   // Note title String Int
///     }
/// }
/// ```
public struct SchemaDifference: Sendable, Equatable, CustomStringConvertible {
    /// What differs; extendable without breaking anyone's code, as `TrellisError.Code`.
    public struct Aspect: Hashable, Sendable, CustomStringConvertible {
        /// The aspect's text, which is also how it prints (`"type"`).
        public let rawValue: String
        /// An aspect with this text; aspects compare by text.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The aspect's text.
        public var description: String { rawValue }

        /// One side has the entity (`property` is nil); the other side's value is nil.
        public static let entity = Aspect("entity")
        /// One side has the attribute: its type and settings (`"Bool, default false"`); the other side's is nil.
        public static let attribute = Aspect("attribute")
        /// One side has the relationship: its kind and target (`"to-many Chore"`); the other side's is nil.
        public static let relationship = Aspect("relationship")
        /// One side has the index (`property` lists its attributes): `"unique"` or `"index"`; the other side's is nil.
        public static let index = Aspect("index")
        /// The entity or property was renamed: both sides are names (`property` is the new one).
        public static let name = Aspect("name")
        /// The attribute's type: `"String"`, `"Int"`, … (`AttributeType`'s description).
        public static let type = Aspect("type")
        /// Whether the attribute may hold null: `"optional"` or `"required"`.
        public static let optionality = Aspect("optionality")
        /// The attribute's default value: a value's description, or `"none"`. Never refuses a migration.
        public static let defaultValue = Aspect("default")
        /// The entity a relationship points to.
        public static let target = Aspect("target")
        /// `"to-one"` or `"to-many"`.
        public static let cardinality = Aspect("cardinality")
        /// The relationship's delete rule (`DeleteRule`'s description).
        public static let deleteRule = Aspect("delete rule")
        /// The relationship's count bounds: `"0..."`, `"1...3"`.
        public static let count = Aspect("count")
        /// The relationship's inverse, by name.
        public static let inverse = Aspect("inverse")
    }

    /// The entity, by its name in the new schema (by its stored name when the new one has no such entity).
    public let entity: String
    /// The attribute or relationship (by its new name; its stored one when it was removed), or an index's
    /// attributes joined with `", "`; nil when the difference is about the entity itself.
    public let property: String?
    /// What differs.
    public let aspect: Aspect
    /// The store's side: the setting's value, or a description of what it has; nil when it has no such thing.
    public let stored: String?
    /// The new schema's side, as `stored`; nil when it has no such thing.
    public let new: String?
    /// Why this difference refuses the migration (a lossy change, or the first object that breaks a new
    /// constraint); nil when it would migrate.
    public let problem: String?

    /// A difference of `aspect` of `entity`.`property`, from `stored` to `new`; `problem` says why it is refused.
    public init(
        entity: String, property: String?, aspect: Aspect, stored: String?, new: String?, problem: String? = nil
    ) {
        self.entity = entity
        self.property = property
        self.aspect = aspect
        self.stored = stored
        self.new = new
        self.problem = problem
    }

    /// This difference with `problem` (kept when it has one already).
    package func refused(_ problem: String) -> SchemaDifference {
        SchemaDifference(
            entity: entity, property: property, aspect: aspect, stored: stored, new: new,
            problem: self.problem ?? problem)
    }

    /// `"Note.title: type String → Int (refused: …)"`, `"Note.pinned: added attribute (Bool, default false)"`,
    /// `"Note.heading: renamed from title to heading"`.
    public var description: String {
        let subject = property.map { "\(entity).\($0)" } ?? entity
        let change: String
        switch (stored, new) {
        case (nil, let new?): change = "added \(aspect) (\(new))"
        case (let stored?, nil): change = "removed \(aspect) (\(stored))"
        case (let stored?, let new?) where aspect == .name: change = "renamed from \(stored) to \(new)"
        default: change = "\(aspect) \(stored ?? "none") → \(new ?? "none")"
        }
        return "\(subject): \(change)" + (problem.map { " (refused: \($0))" } ?? "")
    }
}
