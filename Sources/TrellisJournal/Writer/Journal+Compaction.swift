import Foundation
import TrellisCore
import TrellisGraph

/// Compaction: rotate, write the checkpoint on a thread of its own, commit it through the manifest, then remove what it
/// replaced. Readers and the flusher carry on throughout.
extension Journal {
    func automaticCompactionDue() -> Bool {
        guard options.compaction.automatic else { return false }
        return files.locked { f in
            guard !f.compactionRunning else { return false }
            let journal = f.segmentBytes.values.reduce(0, +)
            let threshold = max(
                Double(options.compaction.minimumJournalBytes),
                Double(f.manifest.checkpointBytes) * options.compaction.journalToCheckpointRatio)
            return Double(journal) >= threshold
        }
    }

    func startCompaction(tickets: [Ticket], preserveReplaced: Bool = false) throws {
        let (graph, segmentEmpty) = writer.locked { ($0.lastWrittenGraph, $0.segment?.isEmpty ?? true) }
        let upToDate = files.locked { f in
            f.manifest.checkpointSequence == graph.sequence && f.manifest.firstSegment == f.manifest.lastSegment
        }
        if upToDate && segmentEmpty {
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
            compact(graph, firstKept: firstKept, tickets: tickets, preserveReplaced: preserveReplaced)
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
    func compact(_ graph: Graph, firstKept: UInt64, tickets: [Ticket], preserveReplaced: Bool) {
        do {
            if let failure { throw failure }
            let bytes = try Checkpoint.write(
                graph, layer: layer, directory: directory, afterChunk: options.checkpointChunkHook)
            let (old, replaced) = try manifestWrites.locked { _ -> (Manifest, [UInt64]) in
                let (old, replaced, synced) = try files.locked { f -> (Manifest, [UInt64], UInt64) in
                    if let failure { throw failure }
                    return (f.manifest, f.segmentBytes.keys.filter { $0 < firstKept }.sorted(), f.synced)
                }
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
                return (old, replaced)
            }
            // The new state is committed; what follows only frees space, and whatever a crash or an error leaves of
            // it is an unreferenced file that the next open removes (and lists). An error here is not the store's
            // failure, but it is reported (`warnings`).
            CrashPoints.hit("before-unlink-old")
            var unneeded = replaced.map(JournalFormat.segmentName)
            if old.checkpointSequence > 0 && old.checkpointSequence != graph.sequence {
                unneeded.append(JournalFormat.checkpointName(old.checkpointSequence))
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
}
