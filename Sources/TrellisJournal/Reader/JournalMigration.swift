import Foundation
import TrellisCore

/// A schema migration as a journal record holds it (record type 6): when it ran, what it did, the schemas before and
/// after, and where each entity's objects went (an object keeps its serial; its entity number changes only when an
/// entity before it was removed).
///
/// ```swift
/// for migration in try JournalReader(directory: url).migrations() {
///     print(migration.summary.sequence, migration.summary.steps)
/// }
/// ```
public struct JournalMigration: Sendable {
    /// Sequence number, time, fingerprints, plan versions and steps, as the store's schema history records them.
    public var summary: SchemaMigration
    /// The schema the store had before the migration (with its defaults and history).
    public var schemaBefore: Schema
    /// The schema after it: the header schema of the segment the record opens.
    public var schemaAfter: Schema
    /// For each entity number of `schemaAfter`, that entity's number in `schemaBefore`; nil for an entity the
    /// migration added.
    package var entitySources: [UInt32?]
    /// The segment file that holds the record.
    public var file: String
    /// The byte offset of the record's frame in `file`.
    public var offset: Int

    init(
        _ record: MigrationRecord, sequence: UInt64, time: Date, before: Schema, after: Schema, file: String,
        offset: Int
    ) {
        summary = record.summary(sequence: sequence, date: time)
        schemaBefore = before
        schemaAfter = after
        // Stages chain: each maps its schema's entities to the stage before it.
        var sources: [UInt32?] = (0..<before.entities.count).map { UInt32($0) }
        for stage in record.stages {
            sources = stage.mapping.entities.map { map in map.source.flatMap { sources[$0] } }
        }
        entitySources = sources
        self.file = file
        self.offset = offset
    }

    /// The ID the object `id` (of `schemaAfter`) had before the migration; nil for an object of an added entity.
    public func idBefore(_ id: ObjectID) -> ObjectID? {
        guard Int(id.entity) < entitySources.count, let source = entitySources[Int(id.entity)] else { return nil }
        return ObjectID(entity: source, serial: id.serial)
    }

    /// The ID the object `id` (of `schemaBefore`) has after the migration; nil when its entity was removed.
    public func idAfter(_ id: ObjectID) -> ObjectID? {
        entitySources.firstIndex(of: id.entity).map { ObjectID(entity: UInt32($0), serial: id.serial) }
    }
}
