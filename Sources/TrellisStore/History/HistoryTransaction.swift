import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// One entry of a store's history: a commit (its changes with old and new values, its author and time) or a schema
/// migration, in the schema it was written in.
///
/// ```swift
/// for transaction in try store.history(since: token) {
///     for change in transaction.changes(of: Person.self) where change.kind == .update {
///         print(change.oldValue(\Person.name) ?? "", "→", change.newValue(\Person.name) ?? "")
///     }
///     token = transaction.token
/// }
/// ```
public struct HistoryTransaction: Sendable {
    /// The commit's sequence number: one more than the entry before it.
    public let sequence: UInt64
    /// When it was committed (to the microsecond).
    public let time: Date
    /// Who committed it (`ModelContext.transactionAuthor`, `Transaction.author`); nil for none, for a migration, and
    /// for commits written by builds before format version 7.
    public let author: String?
    /// Where a reader that has handled this entry continues from.
    public let token: HistoryToken
    /// The schema it was written in (for a migration: the schema it migrated to).
    public let schema: Schema
    /// What the commit changed, resolved, in `schema`'s numbering; empty for a migration.
    public let changeSet: ChangeSet
    /// For a migration entry: what the migration did; nil for a commit.
    public let migration: SchemaMigration?

    init(
        sequence: UInt64, time: Date, author: String?, storeID: UUID?, schema: Schema, changeSet: ChangeSet,
        migration: SchemaMigration?
    ) {
        self.sequence = sequence
        self.time = time
        self.author = author
        self.token = HistoryToken(sequence: sequence, storeID: storeID)
        self.schema = schema
        self.changeSet = changeSet
        self.migration = migration
    }

    init(_ record: JournalRecord, storeID: UUID?) {
        self.init(
            sequence: record.sequence, time: record.time, author: record.author, storeID: storeID,
            schema: record.schema, changeSet: record.changes, migration: record.migration?.summary)
    }

    init(_ commit: Commit, storeID: UUID?) {
        self.init(
            sequence: commit.sequence, time: commit.time, author: commit.author, storeID: storeID,
            schema: commit.snapshot.schema, changeSet: commit.changes, migration: nil)
    }

    /// Whether the entry is a schema migration rather than a commit.
    public var isMigration: Bool { migration != nil }

    /// The fingerprint of the schema it was written in (`Schema.fingerprint`).
    public var schemaFingerprint: UInt64 { schema.fingerprint }

    /// The version name of the schema it was written in (the last migration's target version), nil when the
    /// schema's history names none.
    public var schemaVersion: String? { schema.history.last?.toVersion }

    /// Every object the commit inserted, updated or deleted: inserts, then updates, then deletes, each in the
    /// order the commit recorded them.
    public var changes: [HistoryChange] {
        var out: [HistoryChange] = []
        out.reserveCapacity(changeSet.inserts.count + changeSet.updates.count + changeSet.deletes.count)
        for insert in changeSet.inserts {
            out.append(HistoryChange(kind: .insert, objectID: insert.id, schema: schema, values: insert.values))
        }
        for update in changeSet.updates {
            out.append(HistoryChange(kind: .update, objectID: update.id, schema: schema, updates: update.changes))
        }
        for delete in changeSet.deletes {
            let layout = schema.layouts[Int(delete.id.entity)]
            var targets: [String: [ObjectID]] = [:]
            for (k, relationship) in layout.relationships.enumerated() where k < delete.relationships.count {
                targets[relationship.name] = delete.relationships[k]
            }
            out.append(
                HistoryChange(
                    kind: .delete, objectID: delete.id, schema: schema, values: delete.values,
                    deletedTargets: targets))
        }
        return out
    }

    /// The changes of objects of model `type`'s entity.
    public func changes<M: Model>(of type: M.Type) -> [HistoryChange] {
        let name = ModelMetadata.of(type).entityName
        return changes.filter { $0.entityName == name }
    }

    /// The links and unlinks the commit made, in the order they applied (an unlink that a to-one reassignment implies
    /// included; the ends a delete removed are in the delete's `deletedTargets` instead).
    public var relationshipChanges: [HistoryRelationshipChange] {
        changeSet.edits.map { edit in
            HistoryRelationshipChange(
                kind: edit.kind, source: edit.source,
                relationship: schema.layouts[Int(edit.source.entity)].relationships[edit.relationship.index].name,
                target: edit.target)
        }
    }
}
