import TrellisCore
import TrellisGraph

/// What one commit did: its sequence number, its resolved change set and the version it published.
public struct Commit: Sendable {
    public let sequence: UInt64
    public let changes: ChangeSet
    public let snapshot: Snapshot

    package init(sequence: UInt64, changes: ChangeSet, snapshot: Snapshot) {
        self.sequence = sequence
        self.changes = changes
        self.snapshot = snapshot
    }
}
