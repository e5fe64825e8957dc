import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

extension ModelContext {
    /// Calls `handler` on this context's actor each time it follows new commits, with what they changed.
    /// Only the store's `viewContext` follows commits; its own saves are not reported.
    ///
    /// ```swift
    /// let token = store.viewContext.onChange { changes in
    ///     if changes.inserted.contains(id) { reload() }
    /// }
    /// ```
    /// - Complexity: O(1).
    @discardableResult
    public func onChange(_ handler: @escaping (ContextChanges) -> Void) -> ObservationToken {
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
        let flag = CancelFlag()
        let (stream, continuation) = AsyncStream<ContextChanges>.makeStream()
        continuation.onTermination = { _ in flag.cancel() }
        observers.streams.append((flag, continuation))
        return stream
    }

    /// Moves to the newest followed snapshot and reports the commits that are not this context's own saves.
    func follow(_ snapshot: Graph, _ commits: [(sequence: UInt64, changes: ContextChanges)]) {
        advance(to: snapshot)
        var merged = ContextChanges()
        for (sequence, changes) in commits where observers.ownSaves.remove(sequence) == nil {
            merged.merge(changes)
        }
        guard !merged.isEmpty else { return }
        observers.handlers.removeAll { $0.flag.isCancelled }
        observers.streams.removeAll { $0.flag.isCancelled }
        for (_, handler) in observers.handlers { handler(merged) }
        for (_, continuation) in observers.streams { continuation.yield(merged) }
    }
}
