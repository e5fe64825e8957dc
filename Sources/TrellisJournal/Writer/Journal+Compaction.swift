import Foundation
import TrellisCore
import TrellisGraph

/// Compaction: rotate, write the checkpoint on a thread of its own, commit it through the manifest, then remove what it
/// replaced. Readers and the flusher carry on throughout.
extension Journal {
    func automaticCompactionDue() -> Bool {
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

    func startCompaction(tickets: [Ticket], preserveReplaced: Bool = false) throws {
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
    func compact(_ graph: Graph, firstKept: UInt64, tickets: [Ticket], preserveReplaced: Bool) {
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
                manifest.durableSequence = max(manifest.durableSequence, f.synced)
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
    package func rewriteAfterSalvage() throws {
        try startCompaction(tickets: [], preserveReplaced: true)
        if let done = files.withLock({ $0.compactionDone }) { try done.wait() }
        if let failure { throw failure }
    }
}
