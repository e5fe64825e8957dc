/// One change a migration makes to a store, with what it costs.
///
/// ```swift
/// let plan = try Store.plannedMigration(directory: url, schema: newSchema)
/// for step in plan.steps { print(step) }   // "Note: add attribute 'pinned' (Bool, default false): 1200 objects"
/// ```
public struct MigrationStep: Sendable, Equatable, CustomStringConvertible {
    /// What a step changes.
    public enum Kind: String, Sendable, CaseIterable {
        case addEntity, removeEntity, renameEntity
        case addAttribute, removeAttribute, renameAttribute, makeOptional, makeRequired, widenType, replaceAttribute
        case addRelationship, removeRelationship, renameRelationship, changeDeleteRule, changeCount
        case addIndex, removeIndex
    }

    /// What the step changes.
    public var kind: Kind
    /// The entity, by its name in the new schema (by its stored name when it is removed).
    public var entity: String
    /// The attribute, relationship or index the step is about, by its new name (nil for entity steps).
    public var property: String?
    /// What the step does, for people.
    public var detail: String
    /// How many stored objects the step reads or writes; 0 when only the schema changes.
    public var objects: Int

    package init(_ kind: Kind, entity: String, property: String? = nil, detail: String, objects: Int = 0) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.detail = detail
        self.objects = objects
    }

    /// The entity, the detail and the objects touched: `"Task: add attribute 'priority' (12 objects)"`.
    public var description: String {
        objects > 0 ? "\(entity): \(detail) (\(objects) objects)" : "\(entity): \(detail) (schema only)"
    }
}

/// What opening a store with a new schema would do, computed without writing anything
/// (`Store.plannedMigration(directory:schema:)`).
public struct PlannedMigration: Sendable {
    /// The fingerprint of the stored schema (`Schema.fingerprint`).
    public var fromFingerprint: UInt64
    /// The fingerprint of the schema the store would become.
    public var toFingerprint: UInt64
    /// Every step, in the order they apply; empty when the store already has the schema's structure.
    public var steps: [MigrationStep]
    /// Why the migration would be refused: each offending change, or each object that breaks a new constraint.
    /// Empty when it can run.
    public var problems: [String]
    /// How the store's schema and the new one differ, property by property, each refused one with its problem.
    public var differences: [SchemaDifference]

    /// Whether opening would migrate the store.
    public var isNeeded: Bool { !steps.isEmpty }
    /// Whether opening would succeed.
    public var canRun: Bool { problems.isEmpty }

    package init(
        fromFingerprint: UInt64, toFingerprint: UInt64, steps: [MigrationStep], problems: [String],
        differences: [SchemaDifference] = []
    ) {
        self.fromFingerprint = fromFingerprint
        self.toFingerprint = toFingerprint
        self.steps = steps
        self.problems = problems
        self.differences = differences
    }
}
