import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What makes a store's commits visible: the published version, the versions readers may still hold, the observers
/// and what waits for syncs. The journal and a follower publish through it and hold it strongly; it holds neither
/// them nor the store. They used to hold the store itself weakly, and a weak reference gives an object a side table
/// for good: every retain and release of the store (each `store.snapshot` in a loop) then took the runtime's slow path.
final class StorePublication: Sendable, DurablePublisher {
    /// The newest published version. Readers copy it out under the lock (a few retains) and read outside it.
    let published: Mutex<Graph>
    let reclaimer = VersionReclaimer()
    /// The observers and the sync watchers, apart: a token holds only them, so a token kept after its store is gone
    /// keeps no version of the store's data.
    let handlers = StoreHandlers()
    /// The threads inside an observer's handler now, so that a commit from one throws instead of deadlocking.
    let observerThreads = ObserverThreads()

    init(_ graph: Graph) { published = Mutex(graph) }

    /// About how many objects a commit wrote, counted as far as the reclaimer's bound (`ChangeSet.footprint`).
    static func footprint(_ changes: ChangeSet) -> Int {
        changes.footprint(upTo: VersionReclaimer.freedInlineBelow)
    }

    /// Makes `graph` the version readers get; the one it replaces goes to the reclaimer, so no reader frees it.
    /// `changes`: about how many objects the changes from the replaced version to `graph` wrote (`footprint`), so
    /// about how much only the replaced one holds. Returns a version the reclaimer let go, for the caller to drop
    /// outside its locks.
    func publish(_ graph: Graph, changes: Int) -> Graph? {
        let replaced = published.locked { current -> Graph in
            defer { current = graph }
            return current
        }
        return reclaimer.retire(replaced, replacedBy: changes)
    }

    /// Publishes a commit that needs no sync first (memory, relaxed durability) and tells the observers; returns what
    /// `publish` returns.
    func publish(_ commit: Commit) -> Graph? {
        let released = publish(commit.snapshot, changes: Self.footprint(commit.changes))
        notify(commit)
        return released
    }

    /// Calls the observers registered now with `commit`, in registration order.
    func notify(_ commit: Commit) {
        let handlers = handlers.observers.locked { $0.handlers }
        if handlers.isEmpty { return }
        observerThreads.run { for handler in handlers { handler(commit) } }
    }

    /// Publishes commits the journal made durable (`.perCommit`), in order, on the thread that synced them (the
    /// flusher, or a committing thread that took the turn).
    package func publishDurable(_ commits: [Commit]) {
        guard let last = commits.last else { return }
        // A refresh publishes a version that shares nothing with the one it replaces, whatever its change count.
        let changes =
            commits.contains(where: \.isRefresh) ? Int.max : commits.reduce(0) { $0 + Self.footprint($1.changes) }
        let released = publish(last.snapshot, changes: changes)
        for (k, commit) in commits.enumerated() {
            // A follower released by an observer on its own thread closes inside its step: the step's later commits
            // reach no observer of the closed store. (A writer's store tells its handlers it closed only after the
            // journal's last turn, deliveries included.)
            if k > 0, handlers.isClosed { break }
            notify(commit)
        }
        withExtendedLifetime(released) {}
    }

    /// Tells what waits for durability that the journal synced through `sequence` (on the thread that synced).
    package func synced(through sequence: UInt64) {
        let handlers = handlers.syncWatchers.locked { $0.handlers }
        for handler in handlers { handler(sequence) }
    }

    /// The journal's last turn is over: what watches for the store's close is told (once; `close()` and `deinit`
    /// tell it too, for a store without a journal).
    package func closed() { handlers.storeClosed() }
}

/// A store's observers and what waits for its syncs; what observation tokens hold.
final class StoreHandlers: Sendable {
    let observers = Mutex<ObserverList>(ObserverList())
    /// What waits for the journal's syncs: the history feeds of a store that publishes before the sync.
    let syncWatchers = Mutex(WatcherList<UInt64>())
    /// What ends when the store closes or is released (the history feeds), and whether it has.
    let closeWatchers = Mutex(CloseWatchers())

    struct CloseWatchers: Sendable {
        var list = WatcherList<Void>()
        var closed = false
    }

    /// Adds `handler`, to be called once when the store closes; returns its id for `removeCloseWatcher`, or nil when
    /// the store has closed already (the handler is not kept).
    func addCloseWatcher(_ handler: @escaping @Sendable (()) -> Void) -> Int? {
        closeWatchers.locked { w in w.closed ? nil : w.list.add(handler) }
    }

    func removeCloseWatcher(_ id: Int) { closeWatchers.locked { $0.list.remove(id) } }

    /// Whether the store has closed (`storeClosed()`).
    var isClosed: Bool { closeWatchers.locked { $0.closed } }

    /// Calls, once, what watches for the store's close; later calls, and watchers added later, find it closed.
    func storeClosed() {
        let handlers = closeWatchers.locked { w -> [@Sendable (()) -> Void] in
            w.closed = true
            defer { w.list.removeAll() }
            return w.list.handlers
        }
        for handler in handlers { handler(()) }
    }
}
