import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Where the store files the commits a context reports, until the context takes them on its own actor.
///
/// The store's observer runs on the committing thread (or the flusher's); it computes the commit's change report
/// there, off the context's actor, and files it with the newest snapshot. The context takes everything at once when
/// it moves: the view context on its own, any root context at `refresh()`.
final class CommitInbox: Sendable {
    private struct Contents {
        var snapshot: Graph?
        var commits: [(sequence: UInt64, changes: ContextChanges)] = []
        var scheduled = false
    }

    /// Commits up to this sequence were visible before the inbox existed and are not reported.
    private let after: UInt64
    private let contents = Mutex(Contents())

    init(after sequence: UInt64) { after = sequence }

    /// Files a commit; returns whether the caller should schedule a delivery (none is scheduled yet).
    func file(_ commit: Commit) -> Bool {
        guard commit.sequence > after else { return false }
        let changes = ContextChanges(commit.changes, schema: commit.snapshot.schema, sequence: commit.sequence)
        return contents.locked { inbox -> Bool in
            if inbox.snapshot.map({ $0.sequence < commit.sequence }) ?? true { inbox.snapshot = commit.snapshot }
            inbox.commits.append((commit.sequence, changes))
            defer { inbox.scheduled = true }
            return !inbox.scheduled
        }
    }

    /// Empties the inbox: the newest filed snapshot and the filed commits in sequence order.
    func take() -> (snapshot: Graph?, commits: [(sequence: UInt64, changes: ContextChanges)]) {
        let taken = contents.locked { inbox in
            defer { inbox = Contents() }
            return inbox
        }
        return (taken.snapshot, taken.commits.sorted { $0.sequence < $1.sequence })
    }
}
