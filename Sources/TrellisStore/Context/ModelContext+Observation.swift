import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

extension ModelContext {
    /// Calls `handler` on this context's actor each time it moves to newer commits, with what they changed: the
    /// store's `viewContext` moves by itself (when the main actor runs), any root context when it `refresh()`es, and
    /// when a `save()` brings in commits other contexts made since it last moved. Its own saves are not reported. A
    /// root context reports the commits made after its first `onChange(_:)` or `changes()`; a child context reports
    /// nothing (it reads its parent). Keep the token: the calls stop when it is cancelled or released (so an unused
    /// result is a warning, not a silent no-op).
    ///
    /// ```swift
    /// let token = store.viewContext.onChange { changes in
    ///     if changes.inserted.contains(id) { reload() }
    /// }
    /// ```
    /// - Complexity: O(1).
    public func onChange(_ handler: @escaping (ContextChanges) -> Void) -> ObservationToken {
        subscribe()
        let flag = CancelFlag()
        observers.handlers.append((flag, handler))
        return ObservationToken { flag.cancel() }
    }

    /// The same reports as `onChange(_:)`, as an asynchronous sequence; each call makes a new stream, which ends when
    /// its consumer stops iterating (or the context goes away).
    ///
    /// ```swift
    /// for await changes in store.viewContext.changes() where changes.contains(id) { break }
    /// ```
    /// - Complexity: O(1).
    public func changes() -> AsyncStream<ContextChanges> {
        subscribe()
        let flag = CancelFlag()
        let (stream, continuation) = AsyncStream<ContextChanges>.makeStream()
        continuation.onTermination = { _ in flag.cancel() }
        observers.streams.append((flag, continuation))
        return stream
    }

    /// Has the store file change reports for this root context from now on (the view context's box does its own).
    private func subscribe() {
        guard parent == nil else { return }
        if let inbox = observers.inbox {
            inbox.startReporting()
            return
        }
        let inbox = CommitInbox(after: ownBase.sequence, reports: true)
        observers.inbox = inbox
        observers.subscription = store.observe { commit in _ = inbox.file(commit) }
    }

    /// Moves to the newest snapshot (filed or published), telling the observers of the registered objects what the
    /// commits in between change, and reports the filed commits that are not this context's own saves, merged into
    /// one report.
    func deliver(newest published: Graph?) {
        let (filed, commits) = observers.inbox?.take() ?? (nil, [])
        let newest = [filed, published].compactMap { $0 }.max { $0.sequence < $1.sequence }
        if let newest {
            let observed = observedChanges(from: ownBase, to: newest, filed: commits, skipping: observers.ownSaves)
            notifying(observed) { advance(to: newest) }
        }
        report(commits)
    }

    /// Calls the handlers and streams with the reported commits that are not this context's own saves, merged.
    func report(_ commits: [FiledCommit]) {
        var merged = ContextChanges()
        for commit in commits where observers.ownSaves.remove(commit.sequence) == nil && commit.isReported {
            merged.merge(commit.changes)
        }
        guard !merged.isEmpty else { return }
        observers.handlers.removeAll { $0.flag.isCancelled }
        observers.streams.removeAll { $0.flag.isCancelled }
        for (_, handler) in observers.handlers { handler(merged) }
        for (_, continuation) in observers.streams { continuation.yield(merged) }
    }
}
