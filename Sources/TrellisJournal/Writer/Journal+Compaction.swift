import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

/// Compaction: rotate, write the checkpoint on a thread of its own, commit it through the manifest, then remove what it
/// replaced. Readers and the flusher carry on throughout.
extension Journal {
    func automaticCompactionDue() -> Bool {
        guard options.compaction.automatic else { return false }
        return files.locked { f in
            guard !f.compactionRunning else { return false }
            let threshold = max(
                Double(options.compaction.minimumJournalBytes),
                Double(f.manifest.checkpointBytes) * options.compaction.journalToCheckpointRatio)
            return Double(f.journalBytes) >= threshold
        }
    }

    /// Whether a clean close compacts first (`StoreOptions.Compaction.atClose`): the journal is at least
    /// `closeMinimumJournalBytes` and a sixteenth of the checkpoint, so that the next open replays at most about a
    /// quarter of what loading the checkpoint costs (a journal byte replays about four times slower than a checkpoint
    /// byte loads).
    func compactionDueAtClose() -> Bool {
        guard options.compaction.automatic, options.compaction.atClose, failure == nil else { return false }
        return files.locked { f in
            f.journalBytes >= max(Self.closeMinimumJournalBytes, Int(f.manifest.checkpointBytes / 16))
        }
    }

    /// Below this, a close never compacts: replaying a journal this short takes a few milliseconds.
    static let closeMinimumJournalBytes = 256 << 10

    /// Starts a compaction on a thread of its own. An automatic one (`background`) writes its checkpoint at the lowest
    /// scheduling priority, so that on a machine with few cores it takes only the time commits and reads leave idle;
    /// one a caller waits for (`Store.compact()`, the rewrite after salvage) writes at the caller's.
    func startCompaction(
        tickets: [Ticket], preserveReplaced: Bool = false, background: Bool = false, evenIfUpToDate: Bool = false
    ) throws {
        let (graph, segmentEmpty) = writer.locked { ($0.lastWrittenGraph, $0.segment?.isEmpty ?? true) }
        let upToDate = files.locked { f in
            f.manifest.checkpointSequence == graph.sequence && f.manifest.firstSegment == f.manifest.lastSegment
        }
        if upToDate && segmentEmpty && !evenIfUpToDate {
            for ticket in tickets { ticket.complete() }
            return
        }
        try rotate()
        let firstKept = writer.locked { $0.segment!.id }
        let done = Ticket()
        files.locked { f in
            f.compactionRunning = true
            f.compactionDone = done
        }
        let thread = Thread { [self] in
            compact(
                graph, firstKept: firstKept, tickets: tickets, preserveReplaced: preserveReplaced,
                background: background)
            files.locked { $0.compactionRunning = false }
            done.complete()
            wake.signal()
        }
        thread.name = "Trellis compaction"
        thread.start()
    }

    /// Runs on the compaction thread: checkpoint, manifest, then removal of what the new manifest no longer names.
    ///
    /// The manifest is written under `manifestWrites` (which rotation takes too, so the two never overwrite each
    /// other's manifest), not under `files`: the flusher takes `files` for every append, so a commit never waits for
    /// this manifest's syncs.
    ///
    /// With `preserveReplaced` (a rewrite after salvage), the replaced segments and the old checkpoint get second
    /// names `*.damaged` (hard links) and the directory is synced before the manifest commits: a crash or an error at
    /// any point leaves their bytes under a name that no open removes.
    ///
    /// With `background`, the checkpoint is written on a thread of the lowest priority, which holds no lock the
    /// flusher takes; the manifest and removal steps, which do, run here at normal priority, so a commit never waits
    /// for a thread the scheduler is starving.
    func compact(_ graph: Graph, firstKept: UInt64, tickets: [Ticket], preserveReplaced: Bool, background: Bool) {
        do {
            if let failure { throw failure }
            let write = { @Sendable [layer, directory, options] in
                try Checkpoint.write(
                    graph, layer: layer, directory: directory, fragmentBytes: options.fragmentBytes,
                    afterChunk: options.checkpointChunkHook)
            }
            let bytes = try background ? atLowestPriority(write) : write()
            let (old, replaced, kept) = try manifestWrites.locked { _ -> (Manifest, [UInt64], HistoryKept) in
                let (old, replaced, synced) = try files.locked { f -> (Manifest, [UInt64], UInt64) in
                    if let failure { throw failure }
                    return (f.manifest, f.segmentBytes.keys.filter { $0 < firstKept }.sorted(), f.synced)
                }
                let kept = try retainHistory(old: old, checkpoint: graph.sequence, firstKept: firstKept)
                var manifest = old
                manifest.checkpointSequence = graph.sequence
                manifest.checkpointBytes = UInt64(bytes)
                manifest.firstSegment = firstKept
                manifest.durableSequence = max(manifest.durableSequence, synced)
                manifest.generation += 1
                if preserveReplaced {
                    var names = replaced.map(JournalFormat.segmentName)
                    if old.checkpointSequence > 0 && old.checkpointSequence != graph.sequence {
                        names.append(JournalFormat.checkpointName(old.checkpointSequence))
                    }
                    let kept = try keepAsDamaged(names)
                    files.locked { $0.keptDamaged += kept }
                }
                try writeManifest(manifest)
                files.locked { f in
                    f.manifest = manifest
                    for id in replaced { f.segmentBytes[id] = nil }
                    f.compactions += 1
                }
                return (old, replaced, kept)
            }
            // The new state is committed; what follows only frees space, and whatever a crash or an error leaves of
            // it is an unreferenced file that the next open removes (and lists). An error here is not the store's
            // failure, but it is reported (`warnings`).
            CrashPoints.hit("before-unlink-old")
            // Retained history stays: the segments from the first one history keeps, and its checkpoints.
            var unneeded = (kept.released + replaced).filter { $0 < kept.firstSegment }.map(JournalFormat.segmentName)
            for sequence in kept.releasedCheckpoints.union([old.checkpointSequence])
            where sequence > 0 && sequence != graph.sequence && !kept.checkpoints.contains(sequence) {
                unneeded.append(JournalFormat.checkpointName(sequence))
            }
            for name in unneeded {
                do {
                    try layer.remove(joinPath(directory, name))
                } catch {
                    warn(
                        "could not remove \(name), which the manifest no longer names (the next open removes it)", error
                    )
                }
            }
            do {
                try layer.syncDirectory(directory)
            } catch {
                warn("could not sync \(directory) after removing replaced files (the next open removes them)", error)
            }
            for ticket in tickets { ticket.complete() }
        } catch {
            let failure = fail(error)
            for ticket in tickets { ticket.complete(failure) }
        }
    }

    /// Gives each file a second name `<name>.damaged` (or `<name>.damaged-2`, … when that is taken, as after a
    /// salvage that crashed and ran again: two names of the same bytes cost nothing), then syncs the directory.
    /// Returns the new names.
    func keepAsDamaged(_ names: [String]) throws -> [String] {
        var kept: [String] = []
        for name in names {
            var target = name + JournalFormat.damagedSuffix
            var n = 1
            while layer.exists(joinPath(directory, target)).exists {
                n += 1
                target = name + JournalFormat.damagedSuffix + "-\(n)"
            }
            try layer.link(joinPath(directory, name), to: joinPath(directory, target))
            kept.append(target)
        }
        try layer.syncDirectory(directory)
        return kept
    }

    /// Compacts at once on the calling thread (used at open, after salvage skipped damage, before the flusher
    /// starts); returns the `*.damaged` names the replaced files were kept under.
    package func rewriteAfterSalvage() throws -> [String] {
        try startCompaction(tickets: [], preserveReplaced: true)
        if let done = files.locked({ $0.compactionDone }) { try done.wait() }
        if let failure { throw failure }
        return files.locked { $0.keptDamaged }
    }

    /// What a compaction keeps of the history, and what it lets go of.
    struct HistoryKept {
        /// Segments from this id on stay (history, then the journal).
        var firstSegment: UInt64
        /// Checkpoints history keeps beside the new one.
        var checkpoints: Set<UInt64>
        /// Segments of history released by this compaction (below the journal replaced).
        var released: [UInt64] = []
        var releasedCheckpoints: Set<UInt64> = []
    }

    /// Decides what a compaction to `checkpoint` (whose journal starts at segment `firstKept`) keeps of the history,
    /// by `options.history`, and writes the `HISTORY` file that says so, before the manifest commits: a crash after
    /// it leaves a history file naming files that all exist (the old manifest's, or the new checkpoint, complete).
    /// Called under `manifestWrites`. Without a rule and without history kept before, writes nothing.
    func retainHistory(old: Manifest, checkpoint: UInt64, firstKept: UInt64) throws -> HistoryKept {
        let previous = files.locked { $0.history }
        let oldBases = previous?.bases ?? []
        let oldFirst = min(oldBases.first?.firstSegment ?? old.firstSegment, old.firstSegment)
        let oldCheckpoints = Set(oldBases.map(\.checkpoint))
        guard !options.history.isNone || !oldBases.isEmpty else {
            return HistoryKept(firstSegment: firstKept, checkpoints: [])
        }
        let now = RecordFrame.microseconds(Date())
        var bases = oldBases.filter { $0.checkpoint <= old.checkpointSequence }
        if bases.last?.checkpoint != old.checkpointSequence || bases.isEmpty {
            // The journal being replaced becomes history: from its checkpoint (or the empty graph), its segments.
            // When its checkpoint was made is not known here: now keeps it at least as long as asked.
            bases.append(.init(checkpoint: old.checkpointSequence, firstSegment: old.firstSegment, time: now))
        }
        bases.append(.init(checkpoint: checkpoint, firstSegment: firstKept, time: now))
        let acknowledged = (previous?.consumers ?? [:]).mapValues(\.sequence)
        while bases.count >= 2,
            options.history.releases(
                upTo: bases[1].checkpoint, time: bases[1].time, last: checkpoint, now: now, acknowledged: acknowledged)
        {
            bases.removeFirst()
        }
        // Only the new checkpoint left: nothing is kept beyond the journal.
        if bases.count == 1 { bases = [] }
        var history = previous ?? HistoryFile()
        history.bases = bases
        history.retention = options.history
        if history != previous {
            try history.write(layer, directory)
            files.locked { $0.history = history }
        }
        let firstSegment = bases.first?.firstSegment ?? firstKept
        let keptCheckpoints = history.keptCheckpoints
        return HistoryKept(
            firstSegment: firstSegment, checkpoints: keptCheckpoints,
            released: Array(oldFirst..<max(oldFirst, min(firstSegment, old.firstSegment))),
            releasedCheckpoints: oldCheckpoints.subtracting(keptCheckpoints))
    }

    /// The store's `HISTORY` file, written first when the store has none (it holds the store's id, which history
    /// tokens carry).
    package func historyFile() throws -> HistoryFile {
        if let failure { throw failure }
        return try manifestWrites.locked { _ in
            if let known = files.locked({ $0.history }) { return known }
            let history = HistoryFile()
            try history.write(layer, directory)
            files.locked { $0.history = history }
            return history
        }
    }

    /// Records that `consumer` has read the history up to `sequence`, in the `HISTORY` file (synced before it
    /// returns). An acknowledgement never moves back: an older one is ignored.
    package func acknowledge(consumer: String, sequence: UInt64) throws {
        if let failure { throw failure }
        try manifestWrites.locked { _ in
            var history = files.locked { $0.history } ?? HistoryFile()
            if let prior = history.consumers[consumer], prior.sequence >= sequence { return }
            history.consumers[consumer] = .init(sequence: sequence, time: RecordFrame.microseconds(Date()))
            try history.write(layer, directory)
            files.locked { $0.history = history }
        }
    }

    /// The last record synced: what a reader of the files may rely on.
    package var durableSequence: UInt64 { files.locked { $0.synced } }

    /// A reader of this store's retained history, through the journal's own file layer.
    package var historyReader: HistoryReader { HistoryReader(layer: layer, directory: directory) }
}

/// Runs `body` on a new thread of the lowest scheduling priority and waits for its answer.
private func atLowestPriority(_ body: @escaping @Sendable () throws -> Int) throws -> Int {
    let answer = LoweredAnswer()
    let thread = Thread {
        lowerThisThreadsPriority()
        let result = Result { try body() }
        answer.value.locked { $0 = result }
        answer.done.signal()
    }
    thread.name = "Trellis checkpoint"
    thread.start()
    answer.done.wait()
    return try answer.value.locked { $0! }.get()
}

/// What `atLowestPriority`'s thread hands back.
private final class LoweredAnswer: Sendable {
    let value = Mutex<Result<Int, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}

/// Gives the calling thread the lowest scheduling priority (nice 19). On Linux a nice value belongs to a thread, and
/// `who` 0 names the calling one.
private func lowerThisThreadsPriority() {
    #if os(Linux)
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
    #endif
}
