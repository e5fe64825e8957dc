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

    package init(sequence: UInt64, changes: ChangeSet, snapshot: Snapshot, author: String? = nil) {
        self.sequence = sequence
        self.changes = changes
        self.snapshot = snapshot
        self.author = author
        self.time = RecordFrame.date(RecordFrame.microseconds(Date()))
    }
}
