import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// One version of an app's schema, for a `SchemaMigrationPlan`.
///
/// ```swift
/// enum NotesV1: VersionedSchema {
///     static let versionIdentifier = "1.0.0"
///     static func makeSchema() throws -> Schema { try Schema([EntityDescription("Note", attributes: [...])]) }
/// }
/// enum NotesV2: VersionedSchema {
///     static let versionIdentifier = "2.0.0"
///     static var models: [Model.Type] { [Note.self] }   // the schema comes from the model classes
/// }
/// ```
public protocol VersionedSchema {
    /// The version's name, recorded in the store's migration history (`"1.0.0"`).
    static var versionIdentifier: String { get }
    /// The model classes of this version; empty when `makeSchema()` describes it by names instead.
    static var models: [Model.Type] { get }
    /// The schema of this version: by default, the one derived from `models`.
    static func makeSchema() throws -> Schema
}

extension VersionedSchema {
    /// No model classes: a version that describes its schema in `makeSchema()` by names.
    public static var models: [Model.Type] { [] }
    /// The schema derived from `models`.
    public static func makeSchema() throws -> Schema { try Schema(models: models) }
}

/// How a store moves through an app's schema versions, in the shape SwiftData users know: the versions, oldest first,
/// and the stages between them. Opening a store with a plan finds the version the store holds and runs every stage
/// from there to the last version in one atomic step; consecutive versions without a stage between them migrate
/// lightweight.
///
/// ```swift
/// enum NotesPlan: SchemaMigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
///     static var stages: [MigrationStage] {
///         [.lightweight(fromVersion: NotesV1.self, toVersion: NotesV2.self),
///          .custom(fromVersion: NotesV2.self, toVersion: NotesV3.self) { context in
///              for id in try context.old.fetch(DynamicQuery("Note")) { ... }   // see `MigrationContext`
///          }]
///     }
/// }
/// let store = try Store(directory: url, migrationPlan: NotesPlan.self)
/// ```
public protocol SchemaMigrationPlan {
    /// Every version of the schema, oldest first; the last is the one the app runs.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions; a pair without one migrates lightweight.
    static var stages: [MigrationStage] { get }
}

/// A step between two versions of a `SchemaMigrationPlan`.
public struct MigrationStage: Sendable {
    /// A custom stage's code; see `MigrationContext`. In a custom stage a type change that could lose data replaces
    /// the attribute with a column of its default, for the code to fill.
    public typealias Migrate = @Sendable (_ context: inout MigrationContext) throws -> Void

    let from: String
    let to: String
    let migrate: Migrate?

    /// A stage inferred from the two schemas; it runs only when every change loses nothing.
    public static func lightweight(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type
    ) -> MigrationStage {
        MigrationStage(from: fromVersion.versionIdentifier, to: toVersion.versionIdentifier, migrate: nil)
    }

    /// A stage whose structural changes are inferred and whose code then moves the data.
    public static func custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type, migrate: @escaping Migrate
    ) -> MigrationStage {
        MigrationStage(from: fromVersion.versionIdentifier, to: toVersion.versionIdentifier, migrate: migrate)
    }
}

/// What a custom stage's code works with: the store before the stage, read by names in the old schema (old model
/// classes are not needed), and a transaction on the new schema over the store with the stage's structural changes
/// applied, which may insert, update, delete and relink.
///
/// ```swift
/// .custom(fromVersion: V1.self, toVersion: V2.self) { context in
///     for id in try context.old.fetch(DynamicQuery("Person")) {
///         let name = try context.old.value(id, "name")
///         try context.transaction.set(context.newID(id)!, "first", name ?? "")
///     }
/// }
/// ```
public struct MigrationContext {
    /// The store before this stage.
    public let old: Snapshot
    /// Changes on the new schema, committed with the migration.
    public var transaction: Transaction
    let entityNumbers: [UInt32: UInt32]

    /// The ID an object of the old version has in the new one: the same, unless its entity was removed (nil). IDs
    /// keep their entity numbers through every migration (a removed entity stays as a retired placeholder), so this
    /// is the identity for every surviving object.
    public func newID(_ id: ObjectID) -> ObjectID? {
        entityNumbers[id.entity].map { ObjectID(entity: $0, serial: id.serial) }
    }
}

/// A migration plan resolved to schemas: what the opener runs.
struct ResolvedMigrationPlan: Sendable {
    struct Version: Sendable {
        var identifier: String
        var schema: Schema
    }

    var versions: [Version]
    /// The custom code from version i to version i + 1, keyed by i.
    var code: [Int: MigrationStage.Migrate]

    init(_ plan: any SchemaMigrationPlan.Type) throws {
        versions = try plan.schemas.map { Version(identifier: $0.versionIdentifier, schema: try $0.makeSchema()) }
        guard !versions.isEmpty else {
            throw TrellisError(.invalidArgument, "the migration plan has no schemas")
        }
        let identifiers = versions.map(\.identifier)
        guard Set(identifiers).count == identifiers.count else {
            throw TrellisError(.invalidArgument, "the migration plan names a version twice")
        }
        code = [:]
        for stage in plan.stages {
            guard let i = identifiers.firstIndex(of: stage.from),
                let j = identifiers.firstIndex(of: stage.to)
            else {
                throw TrellisError(
                    .invalidArgument,
                    "a stage from \(stage.from) to \(stage.to) names a version "
                        + "the plan's schemas do not list")
            }
            guard j == i + 1 else {
                throw TrellisError(
                    .invalidArgument,
                    "a stage must go from one version to the next in `schemas`: \(identifiers[i]) to "
                        + "\(identifiers[j])")
            }
            if let migrate = stage.migrate { code[i] = migrate }
        }
    }

    /// A plan of one version: open with `schema`, inferring the migration from whatever the store holds.
    init(schema: Schema) {
        versions = [Version(identifier: "", schema: schema)]
        code = [:]
    }

    var target: Schema { versions[versions.count - 1].schema }

    /// The schema a new store starts with: the last version, and, for a plan with version identifiers, a first
    /// history entry that records which version it was created at (two versions of the same structure, with a custom
    /// stage between them, are told apart by the history).
    var creationSchema: Schema {
        let last = versions[versions.count - 1]
        guard !last.identifier.isEmpty else { return last.schema }
        let created = SchemaMigration(
            sequence: 0, date: Date(), fromFingerprint: 0, toFingerprint: last.schema.fingerprint,
            toVersion: last.identifier, steps: ["created at version \(last.identifier)"])
        return last.schema.withHistory([created])
    }
}

extension Store {
    /// What opening the store in `directory` with `schema` would do to it, without writing anything: the steps of the
    /// migration it would run (each with the number of objects it touches), or the problems that would refuse it.
    ///
    /// ```swift
    /// let plan = try Store.plannedMigration(directory: url, schema: newSchema)
    /// guard plan.canRun else { print(plan.problems.joined(separator: "\n")); return }
    /// ```
    /// - Complexity: a read-only recovery of the store, then the migration in memory.
    public static func plannedMigration(
        directory: URL, schema: Schema, options: StoreOptions = StoreOptions()
    ) throws -> PlannedMigration {
        try plannedMigration(directory: directory, plan: ResolvedMigrationPlan(schema: schema), options: options)
    }

    /// `plannedMigration(directory:schema:)` for a migration plan; custom stages' code runs, in memory only.
    public static func plannedMigration(
        directory: URL, migrationPlan: any SchemaMigrationPlan.Type, options: StoreOptions = StoreOptions()
    ) throws -> PlannedMigration {
        try plannedMigration(directory: directory, plan: ResolvedMigrationPlan(migrationPlan), options: options)
    }

    private static func plannedMigration(
        directory: URL, plan: ResolvedMigrationPlan, options: StoreOptions
    ) throws -> PlannedMigration {
        var readOnly = options
        readOnly.readOnly = true
        let recovered = try StoreOpener.readWithoutLock(
            layer: options.fileLayer, directory: directory.path, options: readOnly)
        let outcome = try SchemaMigrator.run(recovered.graph, plan: plan, collectingProblems: true)
        return PlannedMigration(
            fromFingerprint: recovered.graph.schema.fingerprint,
            toFingerprint: outcome.problems.isEmpty ? outcome.graph.schema.fingerprint : plan.target.fingerprint,
            steps: outcome.steps, problems: outcome.problems, differences: outcome.differences)
    }
}
