import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

/// The durable side of a directory store: a flusher thread that appends commits' records to the current segment,
/// syncs them (group commit: one sync for every record queued meanwhile), rotates segments, and starts compactions,
/// which write checkpoints on a thread of their own.
///
/// The store's writer hands each commit over in sequence order (`enqueue`), inside its commit lock; everything else
/// happens here, off the writer's and the readers' threads, except that with `.perCommit` durability a committing
/// thread the flusher has not taken over from writes and syncs the queued records itself (`waitDurable`).
///
/// The first write or sync error fails the journal for good: the error is kept, every waiting and later commit gets
/// it, and nothing is written again (an fsync that failed is never retried: the kernel may already have dropped the
/// data it was meant to keep).
package final class Journal: Sendable {
    /// A resolved commit on its way to disk.
    struct Entry: Sendable {
        let sequence: UInt64
        let time: Int64
        /// The record's payload as pieces that follow one another (no one buffer holds a big record).
        let payload: [[UInt8]]
        /// The payload's bytes, all pieces together.
        let payloadBytes: Int
        /// The bytes at the end of `payload` that hold the author (format version 7): a writer appending to a segment
        /// of an older version drops them.
        let authorBytes: Int
        /// The commit, for publishing once durable (`.perCommit`); in the other modes only the newest queued entry
        /// keeps it, for its version (see `enqueue`).
        var commit: Commit?
        /// Completed once the record is durable (`.perCommit`), nil otherwise.
        let ticket: Ticket?
        /// About how many objects the commit wrote, counted up to `ChangeSet.freedInlineBelow`.
        let footprint: Int
    }

    /// What other threads hand to the flusher.
    struct Inbox: Sendable {
        var entries: [Entry] = []
        /// Payload bytes of `entries`.
        var queuedBytes = 0
        /// When the oldest of `entries` was queued.
        var oldestQueued = DispatchTime.distantFuture
        var flushTickets: [Ticket] = []
        var compactionTickets: [Ticket] = []
        var compactionRequested = false
        /// Whether a requested compaction writes a checkpoint even when the last one is up to date.
        var compactionForced = false
        var closing = false
        var closeTickets: [Ticket] = []
        var closed = false
        /// What the flusher wrote and no longer needs, for the committing thread to drop (see `Leftovers`).
        var leftovers = Leftovers()
        /// When the flusher handed `leftovers` over.
        var leftoversSince = DispatchTime.distantFuture
        /// How long `leftovers` wait for a commit before the flusher drops them (`Journal.leftoversKeptFor`; a test
        /// that must see them dropped at close lengthens it).
        var leftoversKeptFor = Journal.leftoversKeptFor
        /// Where the versions the flusher wrote past went (for tests).
        var handOver = HandOverCounts()
        /// Turns committing threads took (for tests).
        var committersTurns = 0
    }

    /// How many versions the flusher wrote past were handed back, and who dropped them (for tests).
    struct HandOverCounts: Sendable, Equatable {
        /// Handed back in `leftovers`.
        var handedBack = 0
        /// Taken from `leftovers` by a commit.
        var takenByCommits = 0
        /// Dropped by the flusher: left in `leftovers` for `leftoversKeptFor`.
        var droppedIdle = 0
        /// Dropped by the flusher at close, before `leftoversKeptFor` had passed.
        var droppedAtClose = 0
        /// Dropped by the flusher at once: a commit written with them was big, or the store was closing.
        var droppedAtOnce = 0
    }

    /// Written entries (acknowledged, with `.perCommit`) and the version the flusher last wrote before them, handed
    /// back when small commits made them all: the committing thread allocated them, and freed on the flusher they
    /// went back to that thread's heap under its lock while it allocated the next commits (a durable commit's next
    /// record waited for those frees). The next commit takes them (`enqueue`) and its caller drops them after the
    /// store's writer lock; the flusher drops them itself after `leftoversKeptFor` without one, or at close.
    package struct Leftovers: Sendable {
        var entries: [[Entry]] = []
        var graphs: [Graph] = []
        var isEmpty: Bool { entries.isEmpty && graphs.isEmpty }
        package init() {}
    }

    /// How long an idle store keeps `Leftovers` for its next commit to drop.
    static let leftoversKeptFor = 0.02

    /// The writing side's state (locked by the thread with the `turn`, the compaction's start, open and close).
    struct WriterSide: Sendable {
        var segment: OpenSegment?
        var lastWritten: UInt64
        var lastWrittenGraph: Graph
        var unsynced = false
        var lastSync = DispatchTime.now()
        /// Where the synced records end: what the durable mark tells followers (`DurableMark`).
        var durable: DurableMark
    }

    /// What the flusher and the compaction thread share: the manifest (whose writes they take turns at) and byte
    /// counts for the compaction policy.
    struct FilesState: Sendable {
        var manifest: Manifest
        var segmentBytes: [UInt64: Int]
        var compactionRunning = false
        var compactionDone: Ticket?
        var compactions = 0
        /// The `*.damaged` names a rewrite after salvage kept the files it replaced under.
        var keptDamaged: [String] = []
        /// The last record synced (everything recovered counts: the opener synced it). Rotation, compaction and a
        /// clean close record it in the manifest, so a journal found shorter later is damage, not a crash.
        var synced: UInt64
        /// The `HISTORY` file as last written (nil: the store has none yet).
        var history: HistoryFile?

        /// The live segments' record bytes: what the compaction policy weighs against the checkpoint.
        var journalBytes: Int { segmentBytes.values.reduce(0, +) }
    }

    let layer: any FileLayer
    let directory: String
    let schema: Schema
    let options: StoreOptions
    /// Whether commits are published only once synced (`.perCommit`), rather than when made.
    package var publishesDurable: Bool { options.durability == .perCommit }
    let lock: any LayerLock
    let inbox = Mutex(Inbox())
    /// Held while a turn takes records from the inbox and writes them, so records reach the disk in sequence order:
    /// by the flusher, or by a committing thread waiting for durability (`waitDurable`).
    let turn = NSLock()
    let wake = DispatchSemaphore(value: 0)
    let failureState = Mutex<TrellisError?>(nil)
    let writer: Mutex<WriterSide>
    let files: Mutex<FilesState>
    /// Held by whoever writes the manifest (rotation in a turn, compaction on its thread), for the whole write
    /// and its syncs; `files` is held only to read and update the state, so commits never wait for a manifest sync.
    let manifestWrites = Mutex(())
    /// What went wrong without failing the store (a replaced file that could not be removed), oldest first.
    let warningList = Mutex<[String]>([])
    let delivery = Mutex(PublisherLink())
    /// The durable-mark file followers read and the mark it holds (see `Journal+DurableMark.swift`).
    let durableMarkFile = Mutex(DurableMarkFile())
    /// The flusher's `Thread`, once started: `close()` called on it (a store whose last reference an observer held,
    /// released there) must not wait for the thread it runs on.
    let flusherThread = Mutex<ObjectIdentifier?>(nil)
    /// Whether the flusher writes zeros ahead of the records (`zeroAheadIfDue`): with per-commit durability, on a
    /// layer that gains from it.
    let zeroesAhead: Bool
    /// Set when writing zeros ahead of the records failed: no more are written.
    let zeroingFailed = Atomic(false)

    package init(
        layer: any FileLayer, directory: String, schema: Schema, options: StoreOptions, lock: any LayerLock,
        segment: OpenSegment, graph: Graph, manifest: Manifest, segmentBytes: [UInt64: Int],
        history: HistoryFile? = nil
    ) {
        self.layer = layer
        self.directory = directory
        self.schema = schema
        self.options = options
        self.zeroesAhead = options.durability == .perCommit && layer.writesZerosAhead
        self.lock = lock
        // The opener synced everything it recovered (or created), so the mark starts at the end of the segment.
        let durable = DurableMark(
            sequence: graph.sequence, segment: segment.id, salt: segment.salt, offset: UInt64(segment.end))
        self.writer = Mutex(
            WriterSide(segment: segment, lastWritten: graph.sequence, lastWrittenGraph: graph, durable: durable))
        self.files = Mutex(
            FilesState(manifest: manifest, segmentBytes: segmentBytes, synced: graph.sequence, history: history))
    }

    /// Starts the flusher; `publisher` (held until `close()`) publishes durable commits (`.perCommit`) in order, on
    /// the thread with the turn (the flusher, or a committing thread in `waitDurable`).
    ///
    /// A direct call through a protocol reference, not a closure: taking a `@Sendable` closure out of a
    /// `Mutex<(@Sendable (…) -> Void)?>` and calling it costs the flusher a large part of a one-object durable commit.
    package func start(publisher: any DurablePublisher) {
        delivery.locked { $0.target = publisher }
        openDurableMark()
        let thread = Thread { [self] in run() }
        thread.name = "Trellis flusher"
        flusherThread.locked { $0 = ObjectIdentifier(thread) }
        thread.start()
    }

    package var failure: TrellisError? { failureState.locked { $0 } }

    // MARK: Requests from other threads

    /// Without per-commit durability, records wait in the inbox for at most this long, or until this many records or
    /// bytes are queued, and are then written in one go. Waking the flusher for each commit cost a burst of small
    /// commits two thread switches apiece and set both threads fighting over the allocator's lock.
    static let relaxedWriteDelay = 0.005
    static let relaxedBatchRecords = 512
    static let relaxedBatchBytes = 1 << 20

    /// Queues a commit's record; call in sequence order. Returns what the flusher handed back, for the caller to drop
    /// outside its locks.
    func enqueue(_ entry: Entry) -> Leftovers {
        let perCommit = options.durability == .perCommit
        let (wakeFlusher, superseded, leftovers) = inbox.locked { box -> (Bool, Commit?, Leftovers) in
            let wasEmpty = box.entries.isEmpty
            if wasEmpty { box.oldestQueued = DispatchTime.now() }
            // Without per-commit durability the flusher needs only the newest version written. An older queued
            // one kept here made the flusher the last holder of each replaced version, freeing on its thread what
            // the committing thread allocated.
            var superseded: Commit?
            if !perCommit, !wasEmpty { swap(&superseded, &box.entries[box.entries.count - 1].commit) }
            box.entries.append(entry)
            box.queuedBytes += entry.payloadBytes
            let leftovers = box.takeLeftovers()
            box.handOver.takenByCommits += leftovers.graphs.count
            // A small durable commit's thread writes the record itself or wakes the flusher (`waitDurable`); a big
            // one's wakes it now, to write while that thread finishes the commit.
            if perCommit { return (entry.footprint >= ChangeSet.freedInlineBelow, nil, leftovers) }
            // The flusher's timed wait picks the first record up; only a full batch wakes it early (once).
            let wake =
                wasEmpty
                || (box.entries.count == Self.relaxedBatchRecords
                    || (box.queuedBytes >= Self.relaxedBatchBytes
                        && box.queuedBytes - entry.payloadBytes < Self.relaxedBatchBytes))
            return (wake, superseded, leftovers)
        }
        if wakeFlusher { wake.signal() }
        // Dropped outside the inbox's lock.
        withExtendedLifetime(superseded) {}
        return leftovers
    }

    /// Encodes a commit's change set and queues its record; returns the ticket to wait on for durability
    /// (`.perCommit`), else nil. Call inside the store's commit lock, so records queue in sequence order; drop
    /// `leftovers` (what the flusher wrote and handed back, see `Leftovers`) after it.
    /// `ahead`: sections of the record encoded already (see `ChangeSetCodec.encode(_:schema:ahead:)`). A record of
    /// any size is taken: one larger than `StoreOptions.fragmentBytes` is written as several frames (format version 10),
    /// so memory, not a record limit, bounds a commit.
    package func record(
        _ commit: Commit, ahead: consuming EncodedSections = EncodedSections(), leftovers: inout Leftovers
    ) throws -> Ticket? {
        if let failure { throw failure }
        var payload = ChangeSetCodec.encodePieces(commit.changes, schema: schema, ahead: consume ahead)
        let authorBytes = ChangeSetCodec.appendAuthor(commit.author, to: &payload)
        let ticket = options.durability == .perCommit ? Ticket() : nil
        leftovers = enqueue(
            Entry(
                sequence: commit.sequence, time: RecordFrame.microseconds(commit.time), payload: payload,
                payloadBytes: payload.reduce(0) { $0 + $1.count }, authorBytes: authorBytes, commit: commit,
                ticket: ticket, footprint: commit.changes.footprint(upTo: ChangeSet.freedInlineBelow)))
        return ticket
    }

    /// Returns once the commit `ticket` stands for is durable; rethrows its error. A committing thread whose record
    /// the flusher has not taken yet writes and syncs the queued records itself, in a turn of its own, sparing the
    /// two thread switches a handoff to the flusher and back costs; then it frees what they replaced. Its turn is the
    /// flusher's: a rotation or an automatic compaction's start that falls due after the acknowledgements is done
    /// then, on this thread. Queued big commits (`ChangeSet.freedInlineBelow`), a requested compaction or a close
    /// leave the turn to the flusher.
    package func waitDurable(_ ticket: Ticket) throws {
        var wrote = false
        if turn.try() {
            let work = inbox.locked { box -> Work? in
                // Big commits are the flusher's: it frees what they replaced off this thread.
                guard !box.entries.isEmpty, !box.closing, !box.compactionRequested,
                    box.entries.allSatisfy({ $0.footprint < ChangeSet.freedInlineBelow })
                else { return nil }
                box.committersTurns += 1
                return box.takeWrites()
            }
            var replaced: Graph?
            var zeroing = false
            if let work {
                replaced = process(work)
                zeroing = zeroesAhead && writer.locked { zeroingDue($0) }
            }
            turn.unlock()
            // The flusher writes the zeros ahead while idle (`zeroAheadIfDue`); this thread's save is done.
            if zeroing { wake.signal() }
            wrote = work != nil
            // The entries and the version written before them are freed here, on the thread that allocated them.
            withExtendedLifetime((work, replaced)) {}
        }
        // Queued records wake the flusher only here: it may have taken this one already, or be at a turn and miss it.
        if !wrote { wake.signal() }
        try ticket.wait()
    }

    /// Wakes the flusher for durable records queued without `waitDurable` (`.perCommit`).
    package func writeQueued() {
        wake.signal()
    }

    /// Returns once everything queued before the call is durable; throws the journal's failure.
    package func flush() throws {
        let ticket = Ticket()
        try submit { $0.flushTickets.append(ticket) }
        try ticket.wait()
    }

    /// Rotates to a new segment, writes a checkpoint of the newest written version in the background and commits
    /// it through the manifest; returns when that is done (others keep reading and committing meanwhile).
    /// With `evenIfUpToDate`, a checkpoint is written even when the last one already holds the newest version (the
    /// bench times a whole rewrite that way).
    package func compact(evenIfUpToDate: Bool = false) throws {
        let ticket = Ticket()
        try submit {
            $0.compactionTickets.append(ticket)
            $0.compactionRequested = true
            $0.compactionForced = $0.compactionForced || evenIfUpToDate
        }
        try ticket.wait()
    }

    /// Returns once no compaction is running (one started by the policy, or requested).
    package func waitForCompaction() {
        if let done = files.locked({ $0.compactionDone }) { try? done.wait() }
    }

    /// Compacts first when the policy asks for it at close, writes and syncs what is queued, waits for a running
    /// compaction, closes the files and releases the lock.
    /// Throws the journal's failure, if it failed at any time. On the flusher thread it queues the close and returns
    /// at once (`closeFromFlusher`).
    package func close() throws {
        if isFlusherThread {
            closeFromFlusher()
            return
        }
        // Decided once a running compaction has ended (it may leave little to replay). A compaction that fails has
        // failed the journal (the close below throws that failure) and lost nothing.
        waitForCompaction()
        if compactionDueAtClose() { try? compact() }
        let ticket = Ticket()
        let alreadyClosed = inbox.locked { box -> Bool in
            if box.closed { return true }
            box.closing = true
            box.closeTickets.append(ticket)
            return false
        }
        if alreadyClosed { return }
        wake.signal()
        // Published through the last turn; the link goes, so a closed journal holds nothing of its store's.
        defer { delivery.locked { $0.target = nil } }
        try ticket.wait()
    }

    /// Whether the caller runs on the flusher thread: in a turn, where an observer or what it released runs.
    package var isFlusherThread: Bool {
        let flusher = flusherThread.locked { $0 }
        return flusher != nil && flusher == ObjectIdentifier(Thread.current)
    }

    /// `close()` on the flusher thread, in the middle of a turn: a store released there (its last reference held by
    /// an observer the flusher was running) closes its journal from its `deinit`. Waiting would wait for this very
    /// thread, for good; instead the close is queued, and the flusher carries it out, as `close()` does, once the
    /// turn is over: every queued record is written and synced, and the lock released. The close-time compaction
    /// is left out (the next open or close does it).
    private func closeFromFlusher() {
        inbox.locked { box in
            if !box.closed { box.closing = true }
        }
        wake.signal()
    }

    private func submit(_ change: (inout Inbox) -> Void) throws {
        if let failure { throw failure }
        try inbox.locked { box in
            guard !box.closing, !box.closed else {
                throw TrellisError(.readOnly, "the store at \(directory) is closed")
            }
            change(&box)
        }
        wake.signal()
    }

    func finishClosing() {
        waitForCompaction()
        if failure == nil {
            // Every record is synced already; the manifest only claims less without it (a full disk cannot take
            // the new manifest), so the close succeeds and says so.
            do {
                try recordDurableEnd()
            } catch {
                warn(
                    "the manifest could not record the records as durable through the last one at close (nothing is "
                        + "lost; the next clean close, rotation or compaction records it)", error)
            }
        }
        writeDurableMark()
        closeDurableMark()
        writer.locked { w in
            w.segment?.file.close()
            w.segment = nil
        }
        lock.release()
        let (tickets, pending, flushes) = inbox.locked { box in
            box.closed = true
            defer {
                box.closeTickets = []
                box.compactionTickets = []
                box.flushTickets = []
            }
            return (box.closeTickets, box.compactionTickets, box.flushTickets)
        }
        let closed = TrellisError(.readOnly, "the store at \(directory) is closed")
        for ticket in pending + flushes { ticket.complete(failure ?? closed) }
        // After the last turn's deliveries; a close queued from the flusher (`closeFromFlusher`) ends here too.
        delivery.locked { $0.target }?.closed()
        for ticket in tickets { ticket.complete(failure) }
    }

    /// A clean close: the manifest records the last record synced (the flusher synced everything before closing), so
    /// that a journal found ending before it is reported as a vanished tail. Not written when nothing was synced
    /// since the manifest was.
    private func recordDurableEnd() throws {
        try files.locked { f in
            guard f.synced > f.manifest.durableSequence else { return }
            var manifest = f.manifest
            manifest.durableSequence = f.synced
            manifest.generation += 1
            try writeManifest(manifest)
            f.manifest = manifest
        }
    }

    /// Records the first failure for good and returns the error every commit gets from now on.
    @discardableResult
    func fail(_ error: any Error) -> TrellisError {
        failureState.locked { state in
            if let state { return state }
            let cause = (error as? TrellisError)?.message ?? "\(error)"
            let failure = TrellisError(
                .failed,
                "the store at \(directory) failed after an I/O error and refuses commits until it is reopened "
                    + "(a refused commit is not written; one in flight when it failed was told its outcome): \(cause)")
            state = failure
            return failure
        }
    }

    /// Problems that did not stop the store, each naming the file and the system error: a file the manifest no
    /// longer names that could not be removed (the next open removes it), and the like.
    package var warnings: [String] { warningList.locked { $0 } }

    func warn(_ what: String, _ error: any Error) {
        let cause = (error as? TrellisError)?.message ?? "\(error)"
        warningList.locked { $0.append("\(what): \(cause)") }
    }

    /// Ends a journal whose flusher never started (an open that failed after creating it): waits for its
    /// compaction, closes its segment and releases the lock.
    package func closeUnstarted() { finishClosing() }

    /// How many compactions have committed since open (tests and tools).
    var compactionCount: Int { files.locked { $0.compactions } }

    /// The manifest in force.
    var manifest: Manifest { files.locked { $0.manifest } }
}
