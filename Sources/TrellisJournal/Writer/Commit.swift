import Foundation
import TrellisCore
import TrellisGraph

/// What one commit did: its sequence number, its resolved change set and the version it published.
public struct Commit: Sendable {
    /// The commit's sequence number: one more than the commit before it.
    public let sequence: UInt64
    /// What the commit changed, resolved (cascades expanded, old values included).
    public let changes: ChangeSet
    /// The version the commit published.
    public let snapshot: Snapshot
    /// Who made the commit (`Transaction.author`, `ModelContext.transactionAuthor`), stored in its record; nil for
    /// none.
    public let author: String?
    /// When the commit was made, to the microsecond its journal record stores.
    public let time: Date
    /// The inserts that `UniqueConflictResolution.update` merged into the object already holding their unique values:
    /// each inserted ID, and the ID of the object it updated instead (empty otherwise).
    public package(set) var merged: [ObjectID: ObjectID] = [:]
    /// The version `changes` apply to: `sequence - 1` for a commit, and for a refresh (`isRefresh`) the version the
    /// store showed before it.
    public let baseSequence: UInt64
    /// Whether this stands for records a follower (`StoreOptions.follow`) did not publish one by one: it missed a
    /// whole compaction and loaded the new checkpoint, read a migration by the writer, or shows the store migrated in
    /// memory. `changes` is then the difference between the version at `baseSequence` and `snapshot`, computed from
    /// the two versions (inserts, updates with old and new values, links and unlinks, deletes), with no author; the
    /// records themselves, where retained, are in the store's history (`Store.history(since:)`).
    public let isRefresh: Bool

    /// A commit made now (`time` nil) or at `time` (a follower passes its record's frame time), applying to the
    /// version before it; or a refresh from `baseSequence`.
    package init(
        sequence: UInt64, changes: ChangeSet, snapshot: Snapshot, author: String? = nil, time: Date? = nil,
        refreshingFrom baseSequence: UInt64? = nil
    ) {
        self.sequence = sequence
        self.changes = changes
        self.snapshot = snapshot
        self.author = author
        self.time = time ?? RecordFrame.date(RecordFrame.microseconds(Date()))
        self.baseSequence = baseSequence ?? (sequence == 0 ? 0 : sequence - 1)
        self.isRefresh = baseSequence != nil
    }
}
