import Synchronization

/// A published version of the graph: immutable, shareable across threads, readable without locks for as long as
/// you hold it.
public typealias Snapshot = Graph

/// What one commit did: its sequence number, its resolved change set and the version it published.
public struct Commit: Sendable {
    public let sequence: UInt64
    public let changes: ChangeSet
    public let snapshot: Snapshot
}

/// An object-graph store: one writer commits at a time, readers take snapshots and never wait.
///
/// ```swift
/// let store = try Store(schema: schema)                  // in memory
/// var tx = store.transaction()
/// let inbox = try tx.insert("Folder", ["name": "Inbox"])
/// try store.commit(tx)
/// let snapshot = store.snapshot                          // O(1); read it on any thread
/// print(try snapshot.value(inbox, "name") ?? .null)
/// ```
public final class Store: Sendable {
    public let schema: Schema
    let allocator: SerialAllocator
    /// The newest published version. Readers copy it out under the lock (a few retains) and read outside it.
    private let published: Mutex<Graph>
    /// Serialises commits; holds the newest committed version.
    private let writer: Mutex<Graph>
    private let observers = Mutex<ObserverList>(ObserverList())
    /// Model bindings and the view context (see Store+Contexts.swift).
    let contexts = StoreContexts()

    /// Opens an empty store that lives in memory only.
    public init(schema: Schema) {
        let graph = Graph(schema: schema)
        self.schema = schema
        self.allocator = SerialAllocator(after: graph.maxSerials)
        self.published = Mutex(graph)
        self.writer = Mutex(graph)
    }

    /// The newest published version of the graph.
    /// - Complexity: O(1); never waits for a commit in progress.
    public var snapshot: Snapshot { published.withLock { $0 } }

    /// A new, empty transaction against this store's schema.
    public func transaction() -> Transaction { Transaction(schema: schema, allocator: allocator) }

    /// Validates and applies a transaction as one atomic commit, then publishes the new version.
    ///
    /// A failed commit changes nothing and throws a `TrellisError` saying what was wrong with which object.
    /// - Complexity: in proportion to the transaction's change (after delete rules), not to the store.
    @discardableResult
    public func commit(_ transaction: Transaction) throws -> Commit {
        precondition(transaction.schema == schema, "transaction belongs to another store")
        let commit: Commit = try writer.withLock { head in
            if transaction.isEmpty {
                return Commit(sequence: head.sequence, changes: ChangeSet(), snapshot: head)
            }
            let (next, changes) = try CommitResolver.resolve(transaction, on: head)
            if changes.isEmpty {
                // Nothing to do after resolution (a link that already exists): no sequence number is spent.
                return Commit(sequence: head.sequence, changes: changes, snapshot: head)
            }
            head = next
            published.withLock { $0 = next }
            let commit = Commit(sequence: next.sequence, changes: changes, snapshot: next)
            notify(commit)
            return commit
        }
        return commit
    }

    /// Fills a transaction in `body` and commits it; returns what `body` returned.
    @discardableResult
    public func write<R>(_ body: (inout Transaction) throws -> R) throws -> R {
        var tx = transaction()
        let result = try body(&tx)
        try commit(tx)
        return result
    }

    // MARK: Observers

    /// Calls `handler` after every commit, in commit order, on the committing thread; keep it short (hop to your
    /// own actor or queue). Observation ends when the returned token is cancelled or released.
    public func observe(_ handler: @escaping @Sendable (Commit) -> Void) -> ObservationToken {
        let id = observers.withLock { $0.add(handler) }
        return ObservationToken { [weak self] in self?.observers.withLock { $0.remove(id) } }
    }

    private func notify(_ commit: Commit) {
        let handlers = observers.withLock { $0.handlers }
        for handler in handlers { handler(commit) }
    }
}

struct ObserverList: Sendable {
    private var next = 0
    private var entries: [(Int, @Sendable (Commit) -> Void)] = []

    mutating func add(_ handler: @escaping @Sendable (Commit) -> Void) -> Int {
        next += 1
        entries.append((next, handler))
        return next
    }

    mutating func remove(_ id: Int) { entries.removeAll { $0.0 == id } }

    var handlers: [@Sendable (Commit) -> Void] { entries.map(\.1) }
}

/// Keeps an observation alive; cancelling or releasing it stops the calls.
public final class ObservationToken: Sendable {
    private let cancelAction: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) { cancelAction = Mutex(cancel) }

    public func cancel() {
        let action = cancelAction.withLock { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}
