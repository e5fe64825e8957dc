import Foundation
import TrellisCore
import TrellisGraph

/// One record of the journal, decoded with the schema it was written with, with where and how it is stored: a
/// commit's change set (record type 1) or a schema migration (record type 6, `migration` is set).
///
/// Records before a migration stay readable: each is decoded with the schema in the header of the segment that holds
/// it, which is the schema it was written with, and carries that schema in `schema`. To rebuild the store, apply each
/// record in order with `applied(to:)`, which runs a migration record's migration as recovery does.
public struct JournalRecord: Sendable {
    /// The commit's sequence number: one more than the record before it.
    public var sequence: UInt64
    /// When the commit was made (microsecond precision); for a migration, when it was committed.
    public var time: Date
    /// The changes of the commit, in `schema`'s entity and attribute numbers; empty for a migration record.
    public var changes: ChangeSet
    /// Who made the commit (`Transaction.author`); nil for none, for a migration, and in files before format
    /// version 7, which did not store it.
    public var author: String? = nil
    /// The schema the record was written with: the one in its segment's header (for a migration, the new schema).
    public var schema: Schema
    /// What a migration record did; nil for a commit.
    public var migration: JournalMigration?
    /// The segment file's name within the store directory.
    public var file: String
    /// The byte offset of the record's frame in `file`.
    public var offset: Int
    /// The payload's size as stored (compressed or not), all its frames together.
    public var storedBytes: Int
    /// The record's whole size on disk: its frame's header (40 bytes from format version 6, 32 before), the stored
    /// payload and the padding to a multiple of 8, or the sum of those of all its frames (`frames`). The next record
    /// starts at `offset + frameBytes`.
    public var frameBytes: Int
    /// The synced-through watermark of the frame (format version 6 on; 0 before): the last record known durable
    /// when this one was written, 0 for none.
    public var syncedThrough: UInt64
    /// The payload's size before compression.
    public var uncompressedBytes: Int
    /// Whether the payload is stored deflated, in any of its frames (a record is compressed only when that pays).
    public var isCompressed: Bool
    /// How many frames the record takes: 1, or more for a record larger than a frame (format version 10).
    public var frames = 1
    /// The decoded migration, for `applied(to:)`.
    var migrationRecord: MigrationRecord?

    /// Whether the record is a schema migration rather than a commit.
    public var isMigration: Bool { migration != nil }

    /// `graph` with this record applied, as a new snapshot: a commit's changes (the graph must be in the record's schema), or a
    /// migration (the graph must be in the schema the migration starts from), exactly as recovery applies it.
    /// Throws `TrellisError.corrupt` when the graph is in another schema.
    public func applied(to graph: Snapshot) throws -> Snapshot {
        if let migrationRecord {
            guard graph.schema.fingerprint == migrationRecord.from else {
                throw TrellisError(
                    .corrupt,
                    "\(file) record \(sequence): a migration from schema \(JournalFormat.hex16(migrationRecord.from)) "
                        + "applied to a graph of schema \(JournalFormat.hex16(graph.schema.fingerprint))")
            }
            return try migrationRecord.apply(to: graph, sequence: sequence)
        }
        guard graph.schema.fingerprint == schema.fingerprint else {
            throw TrellisError(
                .corrupt,
                "\(file) record \(sequence): written with schema \(JournalFormat.hex16(schema.fingerprint)), applied "
                    + "to a graph of schema \(JournalFormat.hex16(graph.schema.fingerprint))")
        }
        return try graph.applying(changes, sequence: sequence)
    }

    /// `applied(to:)`, checking the old values of updates and the values and targets of deletes against the graph
    /// (`Graph.applyCheckingHistory`): what `JournalReader.verify()` replays.
    func appliedCheckingHistory(to graph: Snapshot) throws -> Snapshot {
        guard migrationRecord == nil, graph.schema.fingerprint == schema.fingerprint else {
            return try applied(to: graph)
        }
        var next = graph
        try next.applyCheckingHistory(changes, sequence: sequence)
        return next
    }
}
