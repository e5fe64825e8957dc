import TrellisCore
import TrellisGraph

/// What opening a store from its directory found and did: the checkpoint and records it loaded, the torn tail it
/// dropped (and where it backed the bytes up), what salvage skipped, and which leftover files it removed.
///
/// ```swift
/// let store = try Store(directory: url, schema: schema)
/// if let report = store.recoveryReport, report.droppedBytes > 0 {
///     log("dropped a torn tail of \(report.droppedBytes) bytes; backup in \(report.tailBackup ?? "-")")
/// }
/// ```
public struct RecoveryReport: Sendable, CustomStringConvertible {
    /// Whether the directory held no store and a new one was created.
    public var created = false
    /// The sequence number of the checkpoint loaded (0: none).
    public var checkpointSequence: UInt64 = 0
    /// Journal records replayed after the checkpoint.
    public var replayedRecords = 0
    /// The sequence number of the last commit recovered.
    public var lastSequence: UInt64 = 0
    /// The torn tail found at the end of the last segment, if any.
    public var tornTail: JournalProblem?
    /// The unacknowledged hole `.pointInTime` recovery dropped with everything after it, if any (`tornTail` is
    /// nil then): damage followed by valid records that were never acknowledged.
    public var hole: JournalProblem?
    /// Valid records after the hole that were dropped with it (each written before the first missing record was
    /// durable, so none was acknowledged); 0 without a hole.
    public var droppedRecords = 0
    /// Bytes dropped from the end of the last segment (0 when there was no torn tail or hole).
    public var droppedBytes = 0
    /// The file holding a copy of the dropped bytes: its name in the store directory, or its path when
    /// `StoreOptions.tailBackupDirectory` put it elsewhere.
    public var tailBackup: String?
    /// Damage that `.salvage` skipped; each skipped range or record is lost.
    public var skipped: [JournalProblem] = []
    /// Files in the store directory kept under a `*.damaged` name by a repair or salvage (this open's or an earlier
    /// one's): the bytes they skipped or replaced, which nothing removes. Delete them by hand once nothing in them
    /// is wanted.
    public var damagedFiles: [String] = []
    /// Temporary and unreferenced files removed after the open succeeded.
    public var removedFiles: [String] = []

    /// Bytes of the last segment a writable open wrote again and synced before it returned: the records after the
    /// manifest's durable sequence, which a failed sync may have left in the page cache only (journal-format.md,
    /// Recovery). Zero after a clean close.
    public var rewrittenBytes = 0

    /// What went wrong without stopping the open, each naming the file and the system error: a leftover file that
    /// could not be removed (it stays unreferenced; the next open tries again). `Store.warnings` adds what went wrong
    /// later.
    public var warnings: [String] = []

    package init() {}

    /// One line for a log: what was loaded, dropped, skipped and removed.
    public var description: String {
        var parts = [created ? "created" : "recovered through sequence \(lastSequence)"]
        if checkpointSequence > 0 { parts.append("checkpoint \(checkpointSequence)") }
        parts.append("\(replayedRecords) records replayed")
        if let hole {
            parts.append(
                "dropped an unacknowledged hole at offset \(hole.offset) of \(hole.file) and the \(droppedRecords) "
                    + "unacknowledged record\(droppedRecords == 1 ? "" : "s") after it (\(droppedBytes) bytes)")
        } else if droppedBytes > 0 {
            parts.append("dropped a torn tail of \(droppedBytes) bytes")
        }
        if rewrittenBytes > 0 { parts.append("wrote the last \(rewrittenBytes) bytes again") }
        if !skipped.isEmpty { parts.append("salvage skipped \(skipped.count) problems") }
        if !damagedFiles.isEmpty {
            parts.append("kept \(damagedFiles.count) damaged files (\(damagedFiles.joined(separator: ", ")))")
        }
        if !removedFiles.isEmpty { parts.append("removed \(removedFiles.count) leftover files") }
        if !warnings.isEmpty { parts.append("\(warnings.count) warnings: \(warnings.joined(separator: "; "))") }
        return parts.joined(separator: "; ")
    }
}
