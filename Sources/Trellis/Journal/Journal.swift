import Dispatch
import Foundation
import Synchronization

/// The durable side of a directory store: a flusher thread that appends commits' records to the current segment,
/// syncs them (group commit: one sync for every record queued meanwhile), rotates segments, and starts compactions,
/// which write checkpoints on a thread of their own.
///
/// The store's writer hands each commit over in sequence order (`enqueue`), inside its commit lock; everything else
/// happens here, off the writer's and the readers' threads. The first write or sync error fails the journal for good:
/// the error is kept, every waiting and later commit gets it, and nothing is written again (an fsync that failed is
/// never retried: the kernel may already have dropped the data it was meant to keep).
final class Journal: Sendable {
    /// A resolved commit on its way to disk.
    struct Entry: Sendable {
        let sequence: UInt64
        let time: Int64
        let payload: [UInt8]
        let commit: Commit
        /// Completed once the record is durable (`.perCommit`), nil otherwise.
        let ticket: Ticket?
    }

    /// What other threads hand to the flusher.
    struct Inbox: Sendable {
        var entries: [Entry] = []
        var flushTickets: [Ticket] = []
        var compactionTickets: [Ticket] = []
        var compactionRequested = false
        var closing = false
        var closeTickets: [Ticket] = []
        var closed = false
    }

    /// The flusher's own state (only its thread locks it, except during open and close).
    struct WriterSide: Sendable {
        var segment: OpenSegment?
        var lastWritten: UInt64
        var lastWrittenGraph: Graph
        var unsynced = false
        var lastSync = DispatchTime.now()
    }

    /// What the flusher and the compaction thread share: the manifest (whose writes they take turns at) and byte
    /// counts for the compaction policy.
    struct FilesState: Sendable {
        var manifest: Manifest
        var segmentBytes: [UInt64: Int]
        var compactionRunning = false
        var compactionDone: Ticket?
        var compactions = 0
    }

    let layer: any FileLayer
    let directory: String
    let schema: Schema
    let options: StoreOptions
    private let lock: any LayerLock
    private let inbox = Mutex(Inbox())
    private let wake = DispatchSemaphore(value: 0)
    private let failureState = Mutex<TrellisError?>(nil)
    private let writer: Mutex<WriterSide>
    let files: Mutex<FilesState>
    private let delivery = Mutex<(@Sendable ([Commit]) -> Void)?>(nil)

    init(
        layer: any FileLayer, directory: String, schema: Schema, options: StoreOptions, lock: any LayerLock,
        segment: OpenSegment, graph: Graph, manifest: Manifest, segmentBytes: [UInt64: Int]
    ) {
        self.layer = layer
        self.directory = directory
        self.schema = schema
        self.options = options
        self.lock = lock
        self.writer = Mutex(WriterSide(segment: segment, lastWritten: graph.sequence, lastWrittenGraph: graph))
        self.files = Mutex(FilesState(manifest: manifest, segmentBytes: segmentBytes))
    }

    /// Starts the flusher; `deliver` publishes durable commits (`.perCommit`) on the flusher thread, in order.
    func start(deliver: @escaping @Sendable ([Commit]) -> Void) {
        delivery.withLock { $0 = deliver }
        let thread = Thread { [self] in run() }
        thread.name = "Trellis flusher"
        thread.start()
    }

    var failure: TrellisError? { failureState.withLock { $0 } }

    // MARK: Requests from other threads

    /// Queues a commit's record; call in sequence order.
    func enqueue(_ entry: Entry) {
        inbox.withLock { $0.entries.append(entry) }
        wake.signal()
    }

    /// Encodes a commit's change set and queues its record; returns the ticket to wait on for durability
    /// (`.perCommit`), else nil. Call inside the store's commit lock, so records queue in sequence order.
    func record(_ commit: Commit) throws -> Ticket? {
        if let failure { throw failure }
        let payload = ChangeSetCodec.encode(commit.changes, schema: schema)
        guard payload.count <= JournalFormat.maxRecordBytes else {
            throw TrellisError(
                .invalidArgument,
                "the commit encodes to \(payload.count) bytes, more than the \(JournalFormat.maxRecordBytes) a journal "
                    + "record may hold; split it into several commits")
        }
        let ticket = options.durability == .perCommit ? Ticket() : nil
        enqueue(
            Entry(
                sequence: commit.sequence, time: RecordFrame.microseconds(Date()), payload: payload, commit: commit,
                ticket: ticket))
        return ticket
    }

    /// Returns once everything queued before the call is durable; throws the journal's failure.
    func flush() throws {
        let ticket = Ticket()
        try submit { $0.flushTickets.append(ticket) }
        try ticket.wait()
    }

    /// Rotates to a new segment, writes a checkpoint of the newest written version in the background and commits
    /// it through the manifest; returns when that is done (others keep reading and committing meanwhile).
    func compact() throws {
        let ticket = Ticket()
        try submit {
            $0.compactionTickets.append(ticket)
            $0.compactionRequested = true
        }
        try ticket.wait()
    }

    /// Writes and syncs what is queued, waits for a running compaction, closes the files and releases the lock.
    /// Throws the journal's failure, if it failed at any time.
    func close() throws {
        let ticket = Ticket()
        let alreadyClosed = inbox.withLock { box -> Bool in
            if box.closed { return true }
            box.closing = true
            box.closeTickets.append(ticket)
            return false
        }
        if alreadyClosed { return }
        wake.signal()
        try ticket.wait()
    }

    private func submit(_ change: (inout Inbox) -> Void) throws {
        if let failure { throw failure }
        try inbox.withLock { box in
            guard !box.closing, !box.closed else {
                throw TrellisError(.readOnly, "the store at \(directory) is closed")
            }
            change(&box)
        }
        wake.signal()
    }

    // MARK: The flusher thread

    private struct Work {
        var entries: [Entry] = []
        var flushTickets: [Ticket] = []
        var compactionTickets: [Ticket] = []
        var compact = false
        var closing = false
        var intervalDue = false
    }

    private func run() {
        while true {
            let work = takeWork()
            process(work)
            if work.closing {
                finishClosing()
                return
            }
        }
    }

    private func takeWork() -> Work {
        while true {
            let compactionRunning = files.withLock { $0.compactionRunning }
            let (unsynced, lastSync) = writer.withLock { ($0.unsynced, $0.lastSync) }
            var deadline = DispatchTime.distantFuture
            var due = false
            if case .interval(let seconds) = options.durability, unsynced {
                deadline = lastSync + seconds
                due = DispatchTime.now() >= deadline
            }
            let work = inbox.withLock { box -> Work? in
                // A compaction requested while one runs waits for it; close waits for both.
                let compact = box.compactionRequested && !compactionRunning
                guard !box.entries.isEmpty || !box.flushTickets.isEmpty || compact || box.closing || due else {
                    return nil
                }
                var work = Work(entries: box.entries, flushTickets: box.flushTickets, intervalDue: due)
                box.entries = []
                box.flushTickets = []
                if compact {
                    work.compact = true
                    work.compactionTickets = box.compactionTickets
                    box.compactionTickets = []
                    box.compactionRequested = false
                }
                // Close only once the inbox is drained and no compaction is pending.
                if box.closing && !box.compactionRequested { work.closing = true }
                return work
            }
            if let work { return work }
            _ = wake.wait(timeout: deadline)
        }
    }

    private func process(_ work: Work) {
        // Once records are durable and their commits acknowledged, a later failure (rotation, compaction start) must
        // not take the acknowledgement back: each ticket is completed exactly once.
        var acknowledged = false
        do {
            if let failure { throw failure }
            if !work.entries.isEmpty { try append(work.entries) }
            let mustSync =
                (options.durability == .perCommit && !work.entries.isEmpty) || !work.flushTickets.isEmpty
                || work.closing || work.intervalDue
            if mustSync { try syncSegment() }
            if options.durability == .perCommit && !work.entries.isEmpty {
                delivery.withLock { $0 }?(work.entries.map(\.commit))
            }
            for entry in work.entries { entry.ticket?.complete() }
            for ticket in work.flushTickets { ticket.complete() }
            acknowledged = true
            if work.compact || (!work.closing && automaticCompactionDue()) {
                try startCompaction(tickets: work.compactionTickets)
            } else if writer.withLock({ $0.segment?.end ?? 0 }) >= options.segmentBytes {
                try rotate()
            }
        } catch {
            let failure = fail(error)
            if !acknowledged {
                for entry in work.entries { entry.ticket?.complete(failure) }
                for ticket in work.flushTickets { ticket.complete(failure) }
            }
            for ticket in work.compactionTickets { ticket.complete(failure) }
        }
    }

    private func append(_ entries: [Entry]) throws {
        try writer.withLock { w in
            guard var segment = w.segment else { throw TrellisError(.failed, "no open segment") }
            var batch: [UInt8] = []
            for entry in entries {
                batch += RecordFrame.encode(
                    type: .changeSet, payload: entry.payload, sequence: entry.sequence, time: entry.time,
                    salt: segment.salt, compressionLevel: Int32(options.compressionLevel))
            }
            w.unsynced = true
            if CrashPoints.isArmed("mid-record") {
                try segment.file.write(Array(batch.prefix(batch.count / 2)), at: segment.end)
                CrashPoints.hit("mid-record")
            }
            try segment.file.write(batch, at: segment.end)
            segment.end += batch.count
            w.segment = segment
            w.lastWritten = entries.last!.sequence
            w.lastWrittenGraph = entries.last!.commit.snapshot
            files.withLock { $0.segmentBytes[segment.id] = segment.end }
        }
    }

    private func syncSegment() throws {
        try writer.withLock { w in
            guard w.unsynced, let segment = w.segment else { return }
            try segment.file.sync()
            w.unsynced = false
            w.lastSync = DispatchTime.now()
        }
    }

    /// Closes the current segment (synced) and starts the next, committed through the manifest before any record
    /// goes into it.
    private func rotate() throws {
        try syncSegment()
        try writer.withLock { w in
            guard let old = w.segment else { return }
            let next = try OpenSegment.create(
                id: old.id + 1, firstSequence: w.lastWritten + 1, schema: schema, layer: layer, directory: directory)
            do {
                try files.withLock { f in
                    var manifest = f.manifest
                    manifest.lastSegment = next.id
                    manifest.generation += 1
                    try writeManifest(manifest)
                    f.manifest = manifest
                    f.segmentBytes[next.id] = next.end
                }
            } catch {
                next.file.close()
                throw error
            }
            old.file.close()
            w.segment = next
        }
    }

    private func writeManifest(_ manifest: Manifest) throws {
        try layer.writeAtomically(
            manifest.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
    }

    private func automaticCompactionDue() -> Bool {
        guard options.compaction.automatic else { return false }
        return files.withLock { f in
            guard !f.compactionRunning else { return false }
            let journal = f.segmentBytes.values.reduce(0, +)
            let threshold = max(
                Double(options.compaction.minimumJournalBytes),
                Double(f.manifest.checkpointBytes) * options.compaction.journalToCheckpointRatio)
            return Double(journal) >= threshold
        }
    }

    private func startCompaction(tickets: [Ticket], preserveReplaced: Bool = false) throws {
        let (graph, segmentEmpty) = writer.withLock { ($0.lastWrittenGraph, $0.segment?.isEmpty ?? true) }
        let upToDate = files.withLock { f in
            f.manifest.checkpointSequence == graph.sequence && f.manifest.firstSegment == f.manifest.lastSegment
        }
        if upToDate && segmentEmpty {
            for ticket in tickets { ticket.complete() }
            return
        }
        try rotate()
        let firstKept = writer.withLock { $0.segment!.id }
        let done = Ticket()
        files.withLock { f in
            f.compactionRunning = true
            f.compactionDone = done
        }
        let thread = Thread { [self] in
            compact(graph, firstKept: firstKept, tickets: tickets, preserveReplaced: preserveReplaced)
            files.withLock { $0.compactionRunning = false }
            done.complete()
            wake.signal()
        }
        thread.name = "Trellis compaction"
        thread.start()
    }

    /// Runs on the compaction thread: checkpoint, manifest, then removal of what the new manifest no longer names.
    private func compact(_ graph: Graph, firstKept: UInt64, tickets: [Ticket], preserveReplaced: Bool) {
        do {
            if let failure { throw failure }
            let bytes = try Checkpoint.write(
                graph, layer: layer, directory: directory, afterChunk: options.checkpointChunkHook)
            let (old, replaced) = try files.withLock { f -> (Manifest, [UInt64]) in
                if let failure { throw failure }
                var manifest = f.manifest
                manifest.checkpointSequence = graph.sequence
                manifest.checkpointBytes = UInt64(bytes)
                manifest.firstSegment = firstKept
                manifest.generation += 1
                try writeManifest(manifest)
                let old = f.manifest
                f.manifest = manifest
                let replaced = f.segmentBytes.keys.filter { $0 < firstKept }.sorted()
                for id in replaced { f.segmentBytes[id] = nil }
                f.compactions += 1
                return (old, replaced)
            }
            // The new state is committed; what follows only frees space, and whatever a crash leaves of it is an
            // unreferenced file that the next open removes.
            CrashPoints.hit("before-unlink-old")
            for id in replaced {
                let path = joinPath(directory, JournalFormat.segmentName(id))
                if preserveReplaced { try? layer.rename(path, to: path + ".damaged") } else { try? layer.remove(path) }
            }
            if old.checkpointSequence > 0 && old.checkpointSequence != graph.sequence {
                try? layer.remove(joinPath(directory, JournalFormat.checkpointName(old.checkpointSequence)))
            }
            try? layer.syncDirectory(directory)
            for ticket in tickets { ticket.complete() }
        } catch {
            let failure = fail(error)
            for ticket in tickets { ticket.complete(failure) }
        }
    }

    /// Compacts at once on the calling thread (used at open, after salvage skipped damage).
    func rewriteAfterSalvage() throws {
        try startCompaction(tickets: [], preserveReplaced: true)
        if let done = files.withLock({ $0.compactionDone }) { try done.wait() }
        if let failure { throw failure }
    }

    private func finishClosing() {
        if let done = files.withLock({ $0.compactionDone }) { try? done.wait() }
        writer.withLock { w in
            w.segment?.file.close()
            w.segment = nil
        }
        lock.release()
        let (tickets, pending, flushes) = inbox.withLock { box in
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
        for ticket in tickets { ticket.complete(failure) }
    }

    /// Records the first failure for good and returns the error every commit gets from now on.
    @discardableResult
    private func fail(_ error: any Error) -> TrellisError {
        failureState.withLock { state in
            if let state { return state }
            let cause = (error as? TrellisError)?.message ?? "\(error)"
            let failure = TrellisError(
                .failed,
                "the store at \(directory) stopped writing after an I/O error and is read-only until reopened "
                    + "(commits not yet acknowledged were not saved): \(cause)")
            state = failure
            return failure
        }
    }

    /// How many compactions have committed since open (tests and tools).
    var compactionCount: Int { files.withLock { $0.compactions } }

    /// The manifest in force.
    var manifest: Manifest { files.withLock { $0.manifest } }
}
