import Foundation
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// An object-graph store: one writer commits at a time, readers take snapshots and never wait.
///
/// ```swift
/// let store = try Store(schema: schema)                  // in memory
/// var tx = store.transaction()
/// let inbox = try tx.insert("Folder", ["name": "Inbox"])
/// try store.commit(tx)
/// let snapshot = store.snapshot                          // O(1); read it on any thread
/// print(try snapshot.value(inbox, "name") ?? .null)
///
/// let saved = try Store(directory: url, schema: schema)  // on disk: a journal, recovered at open
/// defer { try? saved.close() }
/// ```
public final class Store: Sendable {
    /// The store's schema, with its migration history (`Schema.history`).
    public let schema: Schema
    let allocator: SerialAllocator
    /// The published version, the observers and what waits for syncs (the journal publishes through it).
    let publication: StorePublication
    var reclaimer: VersionReclaimer { publication.reclaimer }
    /// Serialises commits; holds the newest committed version (in `.perCommit` durability it may be ahead of the
    /// published one by the commits waiting for their sync: the next commit builds on it).
    private let writer: Mutex<Graph>
    private var observerThreads: ObserverThreads { publication.observerThreads }
    /// The journal of a directory store open for writing; nil in memory and read-only.
    let journal: Journal?
    /// What reads the writer's commits into a store opened with `StoreOptions.follow`; nil otherwise.
    let follower: JournalFollower?
    /// The directory the store lives in; nil for an in-memory store.
    public let directory: URL?
    /// What opening the directory found and did; nil for an in-memory store.
    public let recoveryReport: RecoveryReport?
    /// Whether commits are refused because the store was opened read-only.
    public let isReadOnly: Bool
    private let closed = Mutex(false)
    /// Model bindings and the view context (see Store+Contexts.swift).
    let contexts = StoreContexts()
    /// The store's history id, once read (see Store+History.swift).
    let historyID = Mutex<UUID??>(nil)

    /// Opens an empty store that lives in memory only.
    public init(schema: Schema) {
        let graph = Graph(schema: schema)
        self.schema = schema
        self.allocator = SerialAllocator(after: graph.maxSerials)
        self.publication = StorePublication(graph)
        self.writer = Mutex(graph)
        self.journal = nil
        self.follower = nil
        self.directory = nil
        self.recoveryReport = nil
        self.isReadOnly = false
    }

    /// Opens the store in `directory`, creating it (owner-only permissions) when it does not exist, and recovers
    /// it: the newest checkpoint, then the journal after it, with damage handled by `options.recovery`.
    ///
    /// Only one process (and one `Store`) may open a directory for writing; another gets `TrellisError.locked`.
    /// Read-only opens take no lock. A store written with a schema of another structure is migrated when every
    /// change loses nothing (added, removed or renamed entities and properties, optionality, widened numbers, delete
    /// rules, counts the data meets, indexes), in one atomic step that keeps object IDs; anything else throws
    /// `.migrationRefused`, listing each offending change or object (and in `schemaDifferences` each difference
    /// with both sides), and changes nothing. Default values are not
    /// structure: a new default never stops a store from opening. A read-only open migrates in memory only.
    public convenience init(directory: URL, schema: Schema, options: StoreOptions = StoreOptions()) throws {
        try self.init(directory: directory, plan: ResolvedMigrationPlan(schema: schema), options: options)
    }

    /// Opens the store in `directory` with the schemas and stages of a migration plan: the store is brought from
    /// whichever of the plan's versions it holds to the last one, in one atomic step (see `SchemaMigrationPlan`).
    public convenience init(
        directory: URL, migrationPlan: any SchemaMigrationPlan.Type, options: StoreOptions = StoreOptions()
    ) throws {
        try self.init(directory: directory, plan: ResolvedMigrationPlan(migrationPlan), options: options)
    }

    init(directory: URL, plan: ResolvedMigrationPlan, options: StoreOptions) throws {
        let opened = try StoreOpener.open(directory: directory.path, plan: plan, options: options)
        self.schema = opened.graph.schema
        self.allocator = SerialAllocator(after: opened.graph.maxSerials)
        self.publication = StorePublication(opened.graph)
        self.writer = Mutex(opened.graph)
        self.journal = opened.journal
        self.follower = opened.follower
        self.directory = directory
        self.recoveryReport = opened.report
        // `follow` set after `StoreOptions.init` leaves `readOnly` as it was: a follower is read-only all the same.
        self.isReadOnly = options.readOnly || options.follow
        journal?.start(publisher: publication)
        follower?.start(
            publisher: publication, notifications: options.followNotifications, interval: options.followPollInterval)
    }

    deinit {
        follower?.close()
        // On the flusher thread the journal only queues its close, and tells the handlers when it has closed.
        let closesLater = journal?.isFlusherThread ?? false
        try? journal?.close()
        if !closesLater { publication.handlers.storeClosed() }
        // As `close()` does: the kept versions go with the store, not on the reclaimer's queue a second later.
        reclaimer.drain()
    }

    /// The newest published version of the graph.
    /// - Complexity: O(1); never waits for a commit in progress.
    public var snapshot: Snapshot { publication.published.locked { $0 } }

    /// A new, empty transaction against this store's schema.
    public func transaction() -> Transaction { Transaction(schema: schema, allocator: allocator) }

    /// Validates and applies a transaction as one atomic commit, then publishes the new version.
    ///
    /// A failed commit changes nothing and throws a `TrellisError` saying what was wrong with which object.
    /// - Complexity: in proportion to the transaction's change (after delete rules), not to the store.
    /// In a directory store with `.perCommit` durability (the default) it returns once the commit is durable, and
    /// readers see it only from then on; concurrent commits share one sync. If the journal cannot write or sync,
    /// the commit throws (it is not acknowledged, and its outcome is unknown: after a crash it may or may not be
    /// there) and the store turns read-only until reopened; later commits are refused.
    @discardableResult
    public func commit(_ transaction: consuming Transaction) throws -> Commit {
        try commit(transaction, onConflict: .error)
    }

    /// Commits a transaction as `commit(_:)` does, choosing what an insert whose unique values another object already
    /// holds does: `.error` refuses the commit, `.update` updates that object instead (an upsert; see
    /// `UniqueConflictResolution`). The returned commit's `merged` maps each such inserted ID to the object's.
    ///
    /// ```swift
    /// var tx = store.transaction()
    /// try tx.insert("Tag", ["name": "home", "color": "red"])   // "home" exists: its color becomes red
    /// let commit = try store.commit(tx, onConflict: .update)
    /// ```
    /// - Complexity: as `commit(_:)`, plus O(log n) per unique constraint of each insert with `.update`.
    @discardableResult
    public func commit(_ transaction: consuming Transaction, onConflict: UniqueConflictResolution) throws -> Commit {
        precondition(transaction.schema == schema, "transaction belongs to another store")
        try observerThreads.refuse("a commit")
        var merged: [ObjectID: ObjectID] = [:]
        var released: Graph?
        var leftovers = Journal.Leftovers()
        let (resolved, durable): (Commit, Ticket?) = try writer.locked { head in
            if onConflict == .update {
                // Against the head, under the writer lock: no commit can take a key between the lookup and this one.
                (transaction, merged) = transaction.mergingUniqueConflicts(on: head)
            }
            // A commit that changes nothing answers with the published version: in `.perCommit` mode the head may
            // hold commits that are not durable yet, which no reader may see.
            if transaction.isEmpty {
                let current = publication.published.locked { $0 }
                return (Commit(sequence: current.sequence, changes: ChangeSet(), snapshot: current), nil)
            }
            try checkWritable()
            let (next, changes, ahead) = try CommitResolver.resolve(
                transaction, on: head, encodingAhead: journal != nil)
            if changes.isEmpty {
                // Nothing to do after resolution (a link that already exists): no sequence number is spent.
                let current = publication.published.locked { $0 }
                return (Commit(sequence: current.sequence, changes: changes, snapshot: current), nil)
            }
            let commit = Commit(sequence: next.sequence, changes: changes, snapshot: next, author: transaction.author)
            // Queued inside the lock so records reach the journal in sequence order.
            let durable = try journal?.record(commit, ahead: ahead.wait(), leftovers: &leftovers)
            head = next
            if durable == nil { released = publication.publish(commit) }
            return (commit, durable)
        }
        // A version the reclaimer let go, and what the journal handed back, are freed here, outside the writer lock.
        withExtendedLifetime((released, leftovers)) {}
        // A big transaction's rows (the caller's, now its own) and its change set are freed on the reclaimer's
        // queue, not on the caller's thread, where freeing them would add milliseconds to the save. The change set
        // counts too: one deleted object can cascade to a big one.
        let changes = resolved.changes
        if transaction.inserts.count + transaction.updates.count + transaction.deletes.count
            >= VersionReclaimer.disposedFrom
            || changes.changeCount >= VersionReclaimer.disposedFrom
        {
            reclaimer.dispose((transaction, changes))
        }
        // Waiting outside the lock lets the next commit build on this one and share its sync.
        if let durable { try journal!.waitDurable(durable) }
        var commit = resolved
        commit.merged = merged
        return commit
    }

    /// Commits a change set another store committed as record `sequence` (a replica applying its stream): it must be
    /// the next record; it is applied as recovery and followers apply a record, written to this store's journal under
    /// the same sequence number, and published. Returns once it is durable, or at once with `waitDurable` false (then
    /// `flush()` waits for it and every record before it, so a batch of records shares one sync).
    package func applyReplicated(
        _ changes: ChangeSet, sequence: UInt64, author: String?, waitDurable: Bool = true
    ) throws {
        try observerThreads.refuse("applying a replicated commit")
        var released: Graph?
        var leftovers = Journal.Leftovers()
        let durable: Ticket? = try writer.locked { head in
            guard sequence == head.sequence + 1 else {
                throw TrellisError(.corrupt, "replicated record \(sequence) where \(head.sequence + 1) was due")
            }
            try checkWritable()
            let next = try head.applying(changes, sequence: sequence)
            let commit = Commit(sequence: sequence, changes: changes, snapshot: next, author: author)
            let durable = try journal?.record(commit, leftovers: &leftovers)
            head = next
            if durable == nil { released = publication.publish(commit) }
            return durable
        }
        withExtendedLifetime((released, leftovers)) {}
        if let durable {
            if waitDurable { try journal!.waitDurable(durable) } else { journal!.writeQueued() }
        }
    }

    /// Fills a transaction in `body` and commits it; returns what `body` returned.
    @discardableResult
    public func write<R>(_ body: (inout Transaction) throws -> R) throws -> R {
        var tx = transaction()
        let result = try body(&tx)
        try commit(tx)
        return result
    }

    // MARK: Durability

    /// Returns once every commit made before the call is durable (a no-op in memory and in `.perCommit` mode for
    /// commits that returned). Throws the store's failure.
    public func flush() throws {
        guard !isReadOnly else { return }
        try observerThreads.refuse("flush()")
        try journal?.flush()
    }

    /// Writes a checkpoint of the current version in the background and drops the journal it replaces; returns
    /// when that is committed. Readers and writers carry on meanwhile. A no-op in memory.
    public func compact() throws { try compact(evenIfUpToDate: false) }

    /// `compact()` that writes a checkpoint even when the last one holds the newest version (the bench times a whole
    /// rewrite with it).
    package func compact(evenIfUpToDate: Bool) throws {
        try observerThreads.refuse("compact()")
        guard !isReadOnly else { throw TrellisError(.readOnly, "the store is open read-only; it cannot compact") }
        try journal?.compact(evenIfUpToDate: evenIfUpToDate)
    }

    /// Returns once no compaction is running.
    package func waitForCompaction() { journal?.waitForCompaction() }

    /// With `StoreOptions.Compaction.atClose`, first compacts when the journal has grown long against the checkpoint
    /// (so the next open loads a checkpoint instead of replaying); then writes and syncs every commit, waits for a
    /// running compaction, closes the files and releases the writer lock. Later commits throw `.readOnly`. Throws the
    /// store's failure if it failed at any time. A follower stops following once the commits it is publishing on its
    /// thread have reached their observers: none is published after this returns, and its history streams end after
    /// them.
    public func close() throws {
        try observerThreads.refuse("close()")
        let wasClosed = writer.locked { _ in
            closed.locked { c in
                defer { c = true }
                return c
            }
        }
        if !wasClosed {
            defer { reclaimer.drain() }
            // After the journal's last turn (its deliveries included), even when the close throws.
            defer { publication.handlers.storeClosed() }
            follower?.close()
            try journal?.close()
        }
    }

    /// The error that stopped the store writing, if one did; for a follower, the error that stopped it following
    /// (it keeps showing the last version it read).
    public var failure: TrellisError? { journal?.failure ?? follower?.failure }

    // MARK: Following

    /// Whether the store follows a writer in another process (`StoreOptions.follow`) and has not stopped: not closed,
    /// not failed (`failure` says why).
    public var isFollowing: Bool { follower?.isFollowing ?? false }

    /// Reads the commits the writer made durable since the follower last looked and publishes them now, each as its
    /// own commit, in order (or as one refresh, `Commit.isRefresh`, when a compaction removed what it had yet to read
    /// or the writer migrated the store), without waiting for the notification; returns the sequence number now published. A
    /// follower does this by itself within milliseconds of each durable commit; call it where code must not wait for
    /// that (a widget's timeline, a test). Throws the failure that stopped following; returns the current sequence
    /// number for a store that does not follow. From an observer of this store it throws `.calledFromObserver`.
    /// - Complexity: O(r) for the r records read, plus the observers.
    @discardableResult
    public func catchUp() throws -> UInt64 {
        guard let follower else { return snapshot.sequence }
        try observerThreads.refuse("catchUp()")
        let sequence = follower.step()
        if let failure = follower.failure { throw failure }
        return sequence
    }

    /// Problems that did not stop the store, oldest first, each naming the file and the system error: a file a
    /// compaction replaced that could not be removed (the next open removes it and lists it in its
    /// `recoveryReport`), leftovers of an earlier run that could not be removed at open (`recoveryReport.warnings`).
    /// Empty when all went well.
    public var warnings: [String] { (recoveryReport?.warnings ?? []) + (journal?.warnings ?? []) }

    private func checkWritable() throws {
        if isReadOnly { throw TrellisError(.readOnly, "the store is open read-only") }
        if closed.locked({ $0 }) { throw TrellisError(.readOnly, "the store is closed") }
        if let failure = journal?.failure { throw failure }
    }

    // MARK: Observers

    /// Calls `handler` after every commit, in commit order, on the committing thread (in `.perCommit` durability: once
    /// the commit is durable, on the thread that synced it: a committing thread, or the store's flusher thread); keep
    /// it short (hop to your own actor or queue). Reading in a handler is fine; a commit, `flush()`, `compact()`,
    /// `close()` or `catchUp()` of this store made in a handler, on its thread, throws `.calledFromObserver` (it would
    /// wait for that thread), so hop first to save in reaction to a commit. `close()` (or the store's release) on
    /// another thread waits for a handler that is running, so a handler must not wait for that thread (for example
    /// with `DispatchQueue.main.sync` while the main thread closes the store). Observation ends when the returned
    /// token is cancelled or released.
    public func observe(_ handler: @escaping @Sendable (Commit) -> Void) -> ObservationToken {
        let handlers = publication.handlers
        let id = handlers.observers.locked { $0.add(handler) }
        // The token holds the handler lists only: a weak reference would give the store a side table, and the whole
        // publication would keep the published version alive as long as the token.
        return ObservationToken { handlers.observers.locked { $0.remove(id) } }
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

    /// Stops the handler; calls already running finish. Releasing the token cancels too.
    public func cancel() {
        let action = cancelAction.locked { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}
