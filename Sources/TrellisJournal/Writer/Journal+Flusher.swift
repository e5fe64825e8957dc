import Dispatch
import Foundation
import TrellisCore
import TrellisGraph

/// The flusher thread: takes what the inbox holds, appends it as one write, syncs as the durability mode asks,
/// publishes durable commits, and rotates segments. A turn (`process`) runs with `turn` held, on the flusher or on a
/// committing thread (`waitDurable`).
extension Journal {
    /// What one turn of the flusher takes from the inbox.
    struct Work {
        var entries: [Entry] = []
        var flushTickets: [Ticket] = []
        var compactionTickets: [Ticket] = []
        var compact = false
        var forced = false
        var closing = false
        var intervalDue = false
        /// Leftovers no commit took in time, to drop here.
        var leftovers = Leftovers()

        /// Whether the turn only drops leftovers: nothing to write, sync, publish or start.
        var onlyLeftovers: Bool {
            entries.isEmpty && flushTickets.isEmpty && compactionTickets.isEmpty && !compact && !closing && !intervalDue
        }
    }

    func run() {
        while true {
            let work = takeWork()
            if work.onlyLeftovers {
                turn.unlock()
                continue
            }
            let closing = work.closing
            finishTurn(work)
            if closing {
                finishClosing()
                return
            }
        }
    }

    /// Processes `work` (with `turn` held, released here) and hands back or drops what it no longer needs, so that
    /// nothing of it outlives the turn on this thread (at close, nothing outlives `close()`).
    private func finishTurn(_ work: consuming Work) {
        var work = work
        let replaced = process(work)
        turn.unlock()
        if !work.closing, let replaced, work.entries.allSatisfy({ $0.footprint < ChangeSet.freedInlineBelow }) {
            let entries = work.entries
            work.entries = []
            let now = DispatchTime.now()
            inbox.locked { box in
                if box.leftovers.isEmpty { box.leftoversSince = now }
                box.leftovers.entries.append(entries)
                box.leftovers.graphs.append(replaced)
                box.handOver.handedBack += 1
            }
        } else if replaced != nil {
            // What a big commit replaced, and the entries, are freed here, off the committing thread.
            inbox.locked { $0.handOver.droppedAtOnce += 1 }
        }
    }

    /// Waits for work; returns it with `turn` held.
    func takeWork() -> Work {
        while true {
            turn.lock()
            let compactionRunning = files.locked { $0.compactionRunning }
            let (unsynced, lastSync) = writer.locked { ($0.unsynced, $0.lastSync) }
            var deadline = DispatchTime.distantFuture
            var due = false
            if case .interval(let seconds) = options.durability, unsynced {
                deadline = lastSync + seconds
                due = DispatchTime.now() >= deadline
            }
            let perCommit = options.durability == .perCommit
            let now = DispatchTime.now()
            let work = inbox.locked { box -> Work? in
                // A compaction requested while one runs waits for it; close waits for both.
                let compact = box.compactionRequested && !compactionRunning
                // Without per-commit durability, records are written in batches (see `enqueue`).
                var entriesDue = !box.entries.isEmpty
                if entriesDue && !perCommit {
                    let writeBy = box.oldestQueued + Self.relaxedWriteDelay
                    entriesDue =
                        now >= writeBy || box.entries.count >= Self.relaxedBatchRecords
                        || box.queuedBytes >= Self.relaxedBatchBytes
                    if !entriesDue { deadline = min(deadline, writeBy) }
                }
                let leftoversDue =
                    !box.leftovers.isEmpty && (box.closing || now >= box.leftoversSince + box.leftoversKeptFor)
                if !box.leftovers.isEmpty, !leftoversDue {
                    deadline = min(deadline, box.leftoversSince + box.leftoversKeptFor)
                }
                guard entriesDue || !box.flushTickets.isEmpty || compact || box.closing || due || leftoversDue else {
                    return nil
                }
                var work = box.takeWrites()
                work.intervalDue = due
                if leftoversDue {
                    let idle = now >= box.leftoversSince + box.leftoversKeptFor
                    work.leftovers = box.takeLeftovers()
                    if idle {
                        box.handOver.droppedIdle += work.leftovers.graphs.count
                    } else {
                        box.handOver.droppedAtClose += work.leftovers.graphs.count
                    }
                }
                if compact {
                    work.compact = true
                    work.forced = box.compactionForced
                    box.compactionForced = false
                    work.compactionTickets = box.compactionTickets
                    box.compactionTickets = []
                    box.compactionRequested = false
                }
                // Close only once the inbox is drained and no compaction is pending.
                if box.closing && !box.compactionRequested { work.closing = true }
                return work
            }
            if let work { return work }
            zeroAheadIfDue()
            turn.unlock()
            _ = wake.wait(timeout: deadline)
        }
    }

    /// Returns the version written last before this turn's entries, when they replaced it. Call with `turn` held.
    func process(_ work: Work) -> Graph? {
        var replaced: Graph?
        // Once records are durable and their commits acknowledged, a later failure (rotation, compaction start) must
        // not take the acknowledgement back: each ticket is completed exactly once.
        var acknowledged = false
        // Whether the store had failed before this turn: its entries were then refused, never written.
        var refused = false
        do {
            if let failure {
                refused = true
                throw failure
            }
            if !work.entries.isEmpty {
                // A record of several frames goes only into a segment of format version 10 or later: one a store
                // reopened from an older build still appends to is rotated first.
                let fragmentBytes = options.fragmentBytes
                if work.entries.contains(where: { $0.payloadBytes > fragmentBytes }),
                    writer.locked({ ($0.segment?.version ?? JournalFormat.version) < JournalFormat.fragmentVersion })
                {
                    try rotate()
                }
                replaced = try append(work.entries)
            }
            let mustSync =
                (options.durability == .perCommit && !work.entries.isEmpty) || !work.flushTickets.isEmpty
                || work.closing || work.intervalDue
            if mustSync {
                try syncSegment()
                // Before the acknowledgements: followers hear of the commits as soon as their savers do (after them,
                // the flusher could be descheduled in between); one pwrite of 56 bytes (see `writeDurableMark`).
                writeDurableMark()
            }
            if options.durability == .perCommit && !work.entries.isEmpty {
                let commits = work.entries.map { entry -> Commit in
                    guard let commit = entry.commit else { preconditionFailure("a durable entry lost its commit") }
                    return commit
                }
                delivery.locked { $0.target }?.publishDurable(commits)
            }
            for entry in work.entries { entry.ticket?.complete() }
            for ticket in work.flushTickets { ticket.complete() }
            acknowledged = true
            if work.compact {
                try startCompaction(tickets: work.compactionTickets, evenIfUpToDate: work.forced)
            } else if !work.closing && automaticCompactionDue() {
                try startCompaction(tickets: [], background: true)
            } else if writer.locked({ $0.segment?.end ?? 0 }) >= options.segmentBytes {
                try rotate()
            }
        } catch {
            let failure = fail(error)
            if !acknowledged {
                // Records this turn wrote, in part or whole, may be on disk after a crash or may not: say so.
                let answer = refused ? failure : outcomeUnknown(failure, error)
                for entry in work.entries { entry.ticket?.complete(answer) }
                for ticket in work.flushTickets { ticket.complete(answer) }
            }
            for ticket in work.compactionTickets { ticket.complete(failure) }
        }
        // A rotation moved the mark to the new segment (a no-op when nothing moved).
        writeDurableMark()
        delivery.locked { $0.target }?.synced(through: durableSequence)
        return replaced
    }

    /// The error for a commit (or flush) in flight when the store failed: its record was written, in part or whole,
    /// and not confirmed durable, so after a crash it may be there or not; a reopen shows which. Not "not saved".
    func outcomeUnknown(_ failure: TrellisError, _ error: any Error) -> TrellisError {
        let cause = (error as? TrellisError)?.message ?? "\(error)"
        return TrellisError(
            failure.code,
            "this commit's outcome is unknown: its record was written, in whole or in part, but not confirmed "
                + "durable when the store at \(directory) failed (after a crash it may or may not be there; a reopen "
                + "shows what the disk holds), and the store refuses commits until it is reopened: \(cause)")
    }

    func append(_ entries: [Entry]) throws -> Graph {
        try writer.locked { w in
            guard var segment = w.segment else { throw TrellisError(.failed, "no open segment") }
            guard let newest = entries.last?.commit else { preconditionFailure("the newest entry lost its commit") }
            w.unsynced = true
            // Every frame says which record was durable when it was written (format version 6): the last one a
            // sync of this store confirmed, or that recovery kept (the opener synced it). Point-in-time recovery
            // reads it to tell a hole that only unacknowledged records follow from lost acknowledged ones.
            let watermark = files.locked { $0.synced }
            segment.end += try write(entries, to: &segment, watermark: watermark)
            w.segment = segment
            w.lastWritten = entries.last!.sequence
            let replaced = w.lastWrittenGraph
            w.lastWrittenGraph = newest.snapshot
            files.locked { $0.segmentBytes[segment.id] = segment.end }
            return replaced
        }
    }

    /// Frames `entries` and writes them at the segment's end; returns the bytes written. Small records are framed
    /// into one buffer and written with one positional write; a record of `writtenInParts` or more is written frame
    /// by frame (each as its header, payload and padding one after the other, so its megabytes are not copied into a
    /// frame first), and one larger than `StoreOptions.fragmentBytes` as several frames, compressed and written one
    /// at a time.
    private func write(_ entries: [Entry], to segment: inout OpenSegment, watermark: UInt64) throws -> Int {
        let start = segment.end
        var batch: [UInt8] = []
        var at = segment.end
        let level = Int32(options.compressionLevel)
        // With per-commit durability a save waits for its record here; a level above 1 asks for bytes over latency.
        let largeFrom =
            options.durability == .perCommit && level <= 1
            ? RecordFrame.durableLargePayload : RecordFrame.huffmanOnlyPayload
        let midRecord = CrashPoints.isArmed("mid-record")
        func writeBatch() throws {
            guard !batch.isEmpty else { return }
            // Small records go into reserved space, so their syncs need not commit a new file size; a big batch is
            // bound by its data, and reserving after it would only leave zeros on disk.
            if batch.count < Self.preallocateBelow, at + batch.count > segment.allocated {
                let target = RecordFrame.align(at + batch.count + Self.preallocationStep)
                if segment.file.preallocate(to: target) { segment.allocated = target }
            }
            if midRecord {
                try segment.file.write(Array(batch.prefix(batch.count / 2)), at: at)
                CrashPoints.hit("mid-record")
            }
            try segment.file.write(batch, at: at)
            at += batch.count
            batch = []
        }
        for entry in entries {
            let inParts =
                (entry.payloadBytes >= Self.writtenInParts || entry.payloadBytes > options.fragmentBytes) && !midRecord
            if inParts { try writeBatch() }
            try RecordFrame.forEachFrame(
                type: .changeSet, pieces: entry.payload(for: segment.version), fragmentBytes: options.fragmentBytes,
                sequence: entry.sequence, time: entry.time, salt: segment.salt, compressionLevel: level,
                watermark: watermark, version: segment.version, largeFrom: largeFrom
            ) { header, stored, padding in
                if inParts {
                    if CrashPoints.isArmed("mid-fragment") {
                        try segment.file.write(header + stored.prefix(stored.count / 2), at: at)
                        CrashPoints.hit("mid-fragment")
                    }
                    try segment.file.write(header, at: at)
                    try segment.file.write(stored, at: at + header.count)
                    at += header.count + stored.count
                    if padding > 0 { try segment.file.write([UInt8](repeating: 0, count: padding), at: at) }
                    at += padding
                    CrashPoints.hit("after-fragment")
                } else {
                    // A batch of one record of one frame is that frame, not a copy of it.
                    if batch.isEmpty && stored.isEmpty && padding == 0 {
                        batch = header
                    } else {
                        batch += header
                        batch += stored
                        batch += repeatElement(0, count: padding)
                    }
                }
            }
        }
        try writeBatch()
        return at - start
    }

    /// How far past the records the flusher keeps zeros written and synced, with per-commit durability.
    static let zeroedAheadBytes = 256 << 10
    /// The zeros `zeroAheadIfDue` writes, allocated once: a new buffer of this size each time is mapped and unmapped.
    static let zeroBlock = [UInt8](repeating: 0, count: 64 << 10)
    static let zeroPage = 4096

    /// Whether the zeros past the current segment's records have run low, with per-commit durability.
    func zeroingDue(_ w: WriterSide) -> Bool {
        // Only with every record synced: a failed sync of the zeros must not take unsynced records with it.
        guard zeroesAhead, !w.unsynced, failure == nil, !zeroingFailed.load(ordering: .relaxed),
            let segment = w.segment
        else { return false }
        return segment.zeroed - segment.end < Self.zeroedAheadBytes / 2
    }

    /// With per-commit durability, a save waits for its record's sync. Appending past the file's written blocks
    /// (past its end, or into space `posix_fallocate` reserved, which ext4 keeps as unwritten extents) makes that
    /// sync commit the file's metadata as well; overwriting blocks already written and synced makes it write data
    /// only. So while idle the flusher writes zeros up to `zeroedAheadBytes` past the records and syncs them. Zeros
    /// past the last record read as the journal's end, as reserved space does. Called with `turn` held (no record
    /// is written meanwhile) and the inbox empty; a write or sync that fails is only reported (nothing depended on
    /// it) and stops the zeroing in this journal.
    func zeroAheadIfDue() {
        // The flusher comes here each time it finds nothing to do: a journal that never zeroes takes no lock for it.
        guard zeroesAhead else { return }
        let plan = writer.locked { w -> (file: any LayerFile, from: Int, to: Int, id: UInt64)? in
            guard zeroingDue(w), let segment = w.segment else { return nil }
            // From the next page: the zeros never dirty the page that holds the end of a record already synced
            // (past the records, the rest of that page reads as zeros already).
            let from = max(segment.zeroed, (segment.end + Self.zeroPage - 1) / Self.zeroPage * Self.zeroPage)
            let to = RecordFrame.align(segment.end + Self.zeroedAheadBytes)
            return to > from ? (segment.file, from, to, segment.id) : nil
        }
        guard let plan else { return }
        do {
            var at = plan.from
            while at < plan.to {
                let count = min(Self.zeroBlock.count, plan.to - at)
                let zeros = count == Self.zeroBlock.count ? Self.zeroBlock : Array(Self.zeroBlock[..<count])
                try plan.file.write(zeros, at: at)
                at += count
            }
            try plan.file.sync()
        } catch {
            zeroingFailed.store(true, ordering: .relaxed)
            warn(
                "the zeros written ahead of the journal's records could not be written or synced (nothing is lost; "
                    + "durable commits go on without them)", error)
            return
        }
        writer.locked { w in
            guard var segment = w.segment, segment.id == plan.id else { return }
            segment.zeroed = max(segment.zeroed, plan.to)
            segment.allocated = max(segment.allocated, plan.to)
            w.segment = segment
        }
    }

    /// A batch of one record whose payload is at least this big writes the record's parts one after the other.
    static let writtenInParts = 1 << 20

    /// Batches smaller than this are written into space reserved ahead of them, `preallocationStep` at a time.
    static let preallocateBelow = 64 << 10
    static let preallocationStep = 256 << 10

    func syncSegment() throws {
        try writer.locked { w in
            guard w.unsynced, let segment = w.segment else { return }
            try segment.file.sync()
            w.unsynced = false
            w.lastSync = DispatchTime.now()
            let last = w.lastWritten
            files.locked { $0.synced = last }
            w.durable = DurableMark(
                sequence: last, segment: segment.id, salt: segment.salt, offset: UInt64(segment.end))
        }
    }

    /// Closes the current segment (synced) and starts the next, committed through the manifest before any record
    /// goes into it.
    func rotate() throws {
        try syncSegment()
        try writer.locked { w in
            guard let old = w.segment else { return }
            let next = try OpenSegment.create(
                id: old.id + 1, firstSequence: w.lastWritten + 1, schema: schema, layer: layer, directory: directory)
            do {
                // `manifestWrites`, not `files`, is held across the manifest's syncs (see `compact`).
                try manifestWrites.locked { _ in
                    var (manifest, synced) = files.locked { ($0.manifest, $0.synced) }
                    manifest.lastSegment = next.id
                    manifest.durableSequence = max(manifest.durableSequence, synced)
                    manifest.generation += 1
                    try writeManifest(manifest)
                    files.locked { f in
                        f.manifest = manifest
                        f.segmentBytes[next.id] = next.end
                    }
                }
            } catch {
                next.file.close()
                throw error
            }
            old.file.close()
            w.segment = next
            // Everything written is synced (above): the mark names the new segment, so that it always names one
            // that a compaction keeps.
            w.durable = DurableMark(
                sequence: w.lastWritten, segment: next.id, salt: next.salt, offset: UInt64(next.end))
        }
    }

    func writeManifest(_ manifest: Manifest) throws {
        try layer.writeAtomically(
            manifest.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
    }
}

extension Journal.Entry {
    /// The payload as a segment of format `version` takes it: without the author before version 7 (a store opened
    /// from an older build appends to its last segment in that segment's version until the next rotation). The
    /// author is at the end of the last piece.
    func payload(for version: UInt16) -> [[UInt8]] {
        guard version < ChangeSetCodec.authorVersion, let last = payload.last else { return payload }
        return payload.dropLast() + [Array(last[..<(last.count - authorBytes)])]
    }
}

extension Journal.Inbox {
    /// Takes the queued records and flush tickets, for a turn to write.
    mutating func takeWrites() -> Journal.Work {
        defer {
            entries = []
            queuedBytes = 0
            oldestQueued = .distantFuture
            flushTickets = []
        }
        return Journal.Work(entries: entries, flushTickets: flushTickets)
    }

    /// Takes what the flusher handed back (empty if nothing waits).
    mutating func takeLeftovers() -> Journal.Leftovers {
        guard !leftovers.isEmpty else { return Journal.Leftovers() }
        leftoversSince = .distantFuture
        defer { leftovers = Journal.Leftovers() }
        return leftovers
    }
}
