import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Where the store files the commits a root context follows, until the context takes them on its own actor.
///
/// The store's observer runs on the committing thread (or the flusher's). For a context that reports changes (the
/// view context, or any root context once `onChange(_:)` or `changes()` is called) it computes each commit's change
/// report there, off the context's actor, and keeps every one. Every other root context has an inbox too, so that it
/// can tell its objects' observers what the commits it moves to change: that inbox keeps the commits' change sets as
/// they are (filing costs O(1)), and only up to `heldLimit` elements of them, so that a context that never moves
/// holds bounded memory: the commit that would pass the limit, and every later one until the context moves past it,
/// is dropped, and the context then compares its objects instead of reading the commits it lacks.
/// The context takes everything at once when it moves: the view context on its own, any root context at `refresh()`,
/// and up to its own commit at `save()`.
final class CommitInbox: Sendable {
    private struct Contents {
        var snapshot: Graph?
        var commits: [FiledCommit] = []
        var scheduled = false
        /// Change-set elements held by the commits that are not reported.
        var held = 0
        /// Set when a change set would have taken `held` past the limit: from that commit on, none is held until
        /// the context takes the commits after it.
        var dropping = false
        /// The newest commit filed or dropped.
        var newest: UInt64 = 0
    }

    /// The change-set elements (inserts, updates, edits, deletes) an inbox that does not report holds at most.
    static let heldLimit = 10_000

    /// Commits up to this sequence were visible before the inbox existed and are not filed.
    private let after: UInt64
    private let reports: Atomic<Bool>
    private let contents = Mutex(Contents())

    init(after sequence: UInt64, reports: Bool) {
        after = sequence
        self.reports = Atomic(reports)
    }

    /// From now on, files each commit's change report, and keeps every one.
    func startReporting() { reports.store(true, ordering: .relaxed) }

    /// Files a commit; returns whether the caller should schedule a delivery (none is scheduled yet).
    func file(_ commit: Commit) -> Bool {
        guard commit.sequence > after else { return false }
        let filed: FiledCommit
        if reports.load(ordering: .relaxed) {
            let report = ContextChanges(commit.changes, schema: commit.snapshot.schema, sequence: commit.sequence)
            filed = FiledCommit(sequence: commit.sequence, contents: .report(report))
        } else {
            filed = FiledCommit(sequence: commit.sequence, contents: .changeSet(commit.changes, commit.snapshot.schema))
        }
        return contents.locked { inbox -> Bool in
            if inbox.snapshot.map({ $0.sequence < commit.sequence }) ?? true { inbox.snapshot = commit.snapshot }
            inbox.newest = max(inbox.newest, commit.sequence)
            let size = filed.heldSize
            if size == 0 {
                inbox.commits.append(filed)
            } else if !inbox.dropping {
                if inbox.held + size > Self.heldLimit {
                    inbox.dropping = true
                } else {
                    inbox.commits.append(filed)
                    inbox.held += size
                }
            }
            defer { inbox.scheduled = true }
            return !inbox.scheduled
        }
    }

    /// Empties the inbox: the newest filed snapshot and the filed commits in sequence order.
    func take() -> (snapshot: Graph?, commits: [FiledCommit]) {
        let taken = contents.locked { inbox in
            defer { inbox = Contents() }
            return inbox
        }
        return (taken.snapshot, taken.commits.sorted { $0.sequence < $1.sequence })
    }

    /// The sequences of the commits filed, without taking them.
    var filed: [UInt64] { contents.locked { $0.commits.map(\.sequence) } }

    /// Takes the filed commits up to `sequence`, in sequence order, and leaves the later ones (and a scheduled
    /// delivery) in place.
    func take(through sequence: UInt64) -> [FiledCommit] {
        let taken = contents.locked { inbox -> [FiledCommit] in
            let taken = inbox.commits.filter { $0.sequence <= sequence }
            inbox.commits.removeAll { $0.sequence <= sequence }
            inbox.held = inbox.commits.reduce(0) { $0 + $1.heldSize }
            // The taker sees what was dropped as a gap; when no later commit came, nothing more is missing.
            if inbox.newest <= sequence { inbox.dropping = false }
            return taken
        }
        return taken.sorted { $0.sequence < $1.sequence }
    }
}

/// One commit in an inbox: its change report when the context reports changes, otherwise its change set as it is.
struct FiledCommit: Sendable {
    enum Contents: Sendable {
        case report(ContextChanges)
        case changeSet(ChangeSet, Schema)
    }

    let sequence: UInt64
    let contents: Contents

    /// Whether it was filed for the context's `onChange(_:)` handlers and `changes()` streams.
    var isReported: Bool {
        if case .report = contents { return true }
        return false
    }

    /// The commit's change report, computed now for a change set.
    /// - Complexity: O(1) for a report; O(c) for a change set of c elements.
    var changes: ContextChanges {
        switch contents {
        case .report(let report): return report
        case .changeSet(let changes, let schema): return ContextChanges(changes, schema: schema, sequence: sequence)
        }
    }

    /// The change-set elements the entry holds (0 for a report, which is never dropped).
    var heldSize: Int {
        guard case .changeSet(let c, _) = contents else { return 0 }
        return max(1, c.inserts.count + c.updates.count + c.edits.count + c.deletes.count)
    }
}
