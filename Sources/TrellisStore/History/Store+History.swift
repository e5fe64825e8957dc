import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The store's history: the change feed, acknowledgements that hold retained history, and time travel.
///
/// History is read from the journal's files (never from a lock the writer takes), so reading it costs a commit
/// nothing; `StoreOptions.history` says how much of it compaction keeps.
extension Store {
    /// The store's history id (from its `HISTORY` file, written on first use by a writable store); nil for an
    /// in-memory store, and for a read-only store that has none.
    public func historyStoreID() throws -> UUID? {
        if let known = historyID.locked({ $0 }) { return known }
        let id: UUID?
        if let journal {
            id = try journal.historyFile().storeID
        } else if let reader = historyReader {
            id = try reader.retained().history?.storeID
        } else {
            id = nil
        }
        historyID.locked { $0 = id }
        return id
    }

    /// A token at the newest durable commit this store shows: `history(since:)` with it returns only what is
    /// committed later. (A follower's or read-only store's token is its snapshot's commit, never beyond it.)
    public func currentHistoryToken() throws -> HistoryToken {
        HistoryToken(sequence: min(try durableEnd(), snapshot.sequence), storeID: try historyStoreID())
    }

    /// The commits (and migrations) after `token`, oldest first, up to the newest durable one; from the oldest
    /// retained entry when `token` is nil.
    ///
    /// Throws `.historyCompacted` ("history before sequence N was compacted") when the entry after `token` is no
    /// longer retained, never a silent gap; `.invalidArgument` for a token of another store, or for an in-memory
    /// store, which keeps no history.
    /// - Complexity: reads and decodes the records asked for, from the segment holding the first of them; takes no
    ///   lock a commit waits for.
    public func history(since token: HistoryToken? = nil) throws -> [HistoryTransaction] {
        var out: [HistoryTransaction] = []
        try forEachHistoryEntry(since: token, through: try durableEnd()) { out.append($0) }
        return out
    }

    /// Calls `body` with each entry `history(since:)` would return, without collecting them.
    public func forEachHistoryEntry(
        since token: HistoryToken? = nil, _ body: (HistoryTransaction) throws -> Void
    ) throws {
        try forEachHistoryEntry(since: token, through: try durableEnd(), body)
    }

    func forEachHistoryEntry(
        since token: HistoryToken?, through: UInt64, _ body: (HistoryTransaction) throws -> Void
    ) throws {
        guard let reader = historyReader else {
            throw TrellisError(.invalidArgument, "an in-memory store keeps no history")
        }
        let id = try historyStoreID()
        if let token, let theirs = token.storeID, let id, theirs != id {
            throw TrellisError(
                .invalidArgument,
                "the history token is from another store (id \(theirs.uuidString); this store is \(id.uuidString))")
        }
        let after = try token?.sequence ?? (reader.retained().first - 1)
        try reader.records(after: after, through: through) { record in
            try body(HistoryTransaction(record, storeID: id))
        }
    }

    /// The history after `token` (from the oldest retained entry when nil), then every new commit once it is
    /// durable, without a gap or a repeat between the two.
    ///
    /// The feed holds only durable history, in every durability mode: in `.perCommit` mode a commit is published once
    /// synced and delivered then; in `.interval` and `.none` modes a commit published before its sync is delivered
    /// after the sync that covers it (the interval's, a `flush()`, a segment rotation, a compaction or `close()`), so
    /// an entry delivered is never taken back by a crash. A follower (`StoreOptions.follow`) publishes only durable
    /// commits; when it refreshes after missing a compaction (`Commit.isRefresh`), the feed reads the commits in
    /// between from the store's files, or ends with `.historyCompacted` when they were not retained.
    ///
    /// The stream ends with an error where `history(since:)` would throw; cancelling the task that iterates it ends
    /// it. Closing the store, or releasing it, ends it too, after every commit durable by then (it may end with an
    /// error when the store closed before the past had been read). New commits are delivered from memory, on the thread that made them durable (the store's flusher, or a
    /// follower's thread), so a slow consumer only grows the stream's buffer.
    public func historyUpdates(
        since token: HistoryToken? = nil
    ) -> AsyncThrowingStream<HistoryTransaction, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: HistoryTransaction.self, throwing: (any Error).self)
        struct Follow: Sendable {
            /// The last sequence yielded; nil until the past has been read.
            var last: UInt64?
            /// Commits published and not delivered yet (the past is being read, or they are not durable yet).
            var waiting: [Commit] = []
            var ended = false
            /// The store closed (or was released): the stream ends once the past has been read and delivered.
            var closed = false
        }
        let follow = Mutex(Follow())
        let id = try? historyStoreID()
        // A writer that publishes before the sync holds entries back until they are synced.
        let gate = journal.flatMap { $0.publishesDurable ? nil : $0 }
        // Delivers, in order, the waiting commits that are durable.
        let deliver = { @Sendable [weak self] (f: inout Follow) in
            guard var last = f.last, !f.ended else { return }
            let durable = gate?.durableSequence ?? .max
            var taken = 0
            do {
                for commit in f.waiting {
                    guard commit.sequence <= durable else { break }
                    taken += 1
                    guard commit.sequence > last else { continue }
                    if commit.isRefresh {
                        // A follower that missed a compaction: the commits it did not read one by one, from the files.
                        guard let self else { break }
                        try self.forEachHistoryEntry(
                            since: HistoryToken(sequence: last, storeID: id), through: commit.sequence
                        ) { continuation.yield($0) }
                    } else if !commit.changes.isEmpty {
                        continuation.yield(HistoryTransaction(commit, storeID: id))
                    }
                    last = commit.sequence
                }
            } catch {
                f.ended = true
                continuation.finish(throwing: error)
            }
            f.waiting.removeFirst(taken)
            f.last = last
        }
        // Observed first, so that every commit published from now on reaches the stream: those the past read covers
        // are skipped by sequence.
        let observation = observe { commit in
            follow.locked { f in
                f.waiting.append(commit)
                deliver(&f)
            }
        }
        let syncs = watchSyncs { _ in follow.locked { deliver(&$0) } }
        // After a close the store publishes nothing more: what was durable by then is delivered, and the stream ends
        // (then its tokens go, and with them what its closures hold of the closed store).
        let handlers = publication.handlers
        let ending = { @Sendable in
            follow.locked { f in
                f.closed = true
                guard f.last != nil else { return }  // the past read ends the stream when it is done
                deliver(&f)
                if !f.ended {
                    f.ended = true
                    continuation.finish()
                }
            }
        }
        // Off the closing thread: a store released inside `deliver` (the last reference it took) would otherwise call
        // this with `follow` locked on the same thread.
        let closeID = handlers.addCloseWatcher { _ in DispatchQueue.global().async { ending() } }
        // A store closed already ends the stream once the past is read (which then fails, or reads what is there).
        if closeID == nil { follow.locked { $0.closed = true } }
        continuation.onTermination = { _ in
            observation.cancel()
            syncs.cancel()
            if let closeID { handlers.removeCloseWatcher(closeID) }
        }
        DispatchQueue.global().async { [self] in
            do {
                // Everything published so far, made durable (a no-op in `.perCommit` mode), is read from the files.
                let published = snapshot.sequence
                try flush()
                var last = token?.sequence ?? 0
                try forEachHistoryEntry(since: token, through: published) { entry in
                    continuation.yield(entry)
                    last = entry.sequence
                }
                last = max(last, published)
                follow.locked { f in
                    f.last = last
                    deliver(&f)
                    if f.closed && !f.ended {
                        f.ended = true
                        continuation.finish()
                    }
                }
            } catch {
                follow.locked { $0.ended = true }
                continuation.finish(throwing: error)
            }
        }
        return stream
    }

    /// Calls `handler` after each turn that writes the journal (the flusher's, or a committing thread's) with the
    /// newest commit synced; for as long as the returned token lives.
    func watchSyncs(_ handler: @escaping @Sendable (UInt64) -> Void) -> ObservationToken {
        let handlers = publication.handlers
        let id = handlers.syncWatchers.locked { $0.add(handler) }
        return ObservationToken { handlers.syncWatchers.locked { $0.remove(id) } }
    }

    /// Records that `consumer` has handled the history up to `token`: with `HistoryRetention.consumers` naming it,
    /// compaction keeps what it has not acknowledged. Stored (and synced) in the store's `HISTORY` file, so it
    /// survives a reopen; an acknowledgement never moves back.
    public func acknowledgeHistory(consumer: String, token: HistoryToken) throws {
        guard let journal else {
            throw TrellisError(
                isReadOnly ? .readOnly : .invalidArgument,
                isReadOnly ? "the store is open read-only" : "an in-memory store keeps no history")
        }
        let id = try historyStoreID()
        if let theirs = token.storeID, let id, theirs != id {
            throw TrellisError(.invalidArgument, "the history token is from another store")
        }
        try journal.acknowledge(consumer: consumer, sequence: token.sequence)
    }

    /// The store as it was right after commit `sequence`: a read-only snapshot of a retained version, usable with
    /// every API a snapshot serves (its schema is the one in force then).
    ///
    /// Built from the retained checkpoint before it (or the empty store) with the records up to `sequence` applied,
    /// as recovery builds the store, so it equals the version that was published then. Throws
    /// `.historyCompacted` for a version before the retained history, `.invalidArgument` for a sequence not yet
    /// durable.
    /// - Complexity: loads a checkpoint and replays the records after it, up to `sequence`.
    public func snapshot(asOf sequence: UInt64) throws -> Snapshot {
        guard let reader = historyReader else {
            throw TrellisError(.invalidArgument, "an in-memory store keeps no history")
        }
        let current = snapshot
        if sequence == current.sequence { return current }
        let end = try durableEnd()
        guard sequence <= end else {
            throw TrellisError(
                .invalidArgument, "sequence \(sequence) is not a durable version of the store (the newest is \(end))")
        }
        return try reader.graph(at: sequence)
    }

    /// The store as it was at `date`: the version of the last commit made at or before it (see
    /// `snapshot(asOf:)`). Throws `.historyCompacted` when the history retained starts after `date`.
    public func snapshot(asOf date: Date) throws -> Snapshot {
        guard let reader = historyReader else {
            throw TrellisError(.invalidArgument, "an in-memory store keeps no history")
        }
        let first = try reader.retained().first
        var found: UInt64?
        var firstTime: Date?
        try forEachHistoryEntry(since: nil) { entry in
            if firstTime == nil { firstTime = entry.time }
            if entry.time <= date { found = entry.sequence }
        }
        if let found { return try snapshot(asOf: found) }
        // Before the first retained record: the version before it, when the store started there.
        if first == 1 { return try snapshot(asOf: 0) }
        throw HistoryReader.compacted(from: 0, first: first)
    }

    /// What the store retains of its history, and why (for tools and diagnostics).
    public func historyRetention() throws -> HistoryRetentionStatus {
        guard let reader = historyReader else {
            throw TrellisError(.invalidArgument, "an in-memory store keeps no history")
        }
        return HistoryRetentionStatus(try reader.retained())
    }

    /// The reader of this store's history files; nil in memory.
    var historyReader: HistoryReader? {
        if let journal { return journal.historyReader }
        guard let directory else { return nil }
        return HistoryReader(directory: directory.path)
    }

    /// The newest commit a reader of the files may rely on: the newest published one in `.perCommit` mode, else
    /// the last one synced; for a read-only store, the end of what reads.
    func durableEnd() throws -> UInt64 {
        guard let journal else { return directory == nil ? snapshot.sequence : .max }
        return min(snapshot.sequence, journal.durableSequence)
    }
}

/// What a store retains of its history (`Store.historyRetention()`, `trellis info`).
public struct HistoryRetentionStatus: Sendable {
    /// The first commit whose record is retained (`history(since:)` reads from the one after a token at
    /// `firstRetained - 1`).
    public let firstRetained: UInt64
    /// The checkpoints history keeps beside the store's own, oldest first (0: the empty store before commit 1).
    public let keptCheckpoints: [UInt64]
    /// The checkpoint the store opens from.
    public let checkpointSequence: UInt64
    /// Each consumer's acknowledged sequence number.
    public let acknowledged: [String: UInt64]
    /// The store's history id; nil when it has none yet.
    public let storeID: UUID?

    init(_ retained: HistoryReader.Retained) {
        firstRetained = retained.first
        keptCheckpoints = retained.bases.dropLast().map(\.checkpoint)
        checkpointSequence = retained.checkpointSequence
        acknowledged = (retained.history?.consumers ?? [:]).mapValues(\.sequence)
        storeID = retained.history?.storeID
    }
}

/// Handlers in the order they were added, each removable by the number `add` returned: what waits for the journal's
/// syncs (`Store.watchSyncs`) and for the store's close (`StoreHandlers.closeWatchers`).
struct WatcherList<Argument>: Sendable {
    private var next = 0
    private var entries: [(Int, @Sendable (Argument) -> Void)] = []

    mutating func add(_ handler: @escaping @Sendable (Argument) -> Void) -> Int {
        next += 1
        entries.append((next, handler))
        return next
    }

    mutating func remove(_ id: Int) { entries.removeAll { $0.0 == id } }

    /// Removes every handler; ids already handed out are not given again.
    mutating func removeAll() { entries.removeAll() }

    var handlers: [@Sendable (Argument) -> Void] { entries.map(\.1) }
}
