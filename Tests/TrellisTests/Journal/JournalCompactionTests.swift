import Dispatch
import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Compaction blocks no one: while the checkpoint is being written, readers read and the writer commits (durably),
/// and afterwards the store reopens equal from the checkpoint and the journal after it, with the old segments gone.
@Suite struct JournalCompactionTests {
    @Test func writerAndTwoReadersCarryOnWhileTheCheckpointIsWritten() throws {
        let disk = SimulatedFileLayer()
        let checkpointStarted = DispatchSemaphore(value: 0)
        let resumeCheckpoint = DispatchSemaphore(value: 0)
        let firstChunk = Mutex(true)
        // Set when the held checkpoint gave up waiting: commits that only finished then were blocked by it.
        let holdTimedOut = Mutex(false)
        var options = disk.options()
        // Timeline:  compact() ─ rotate ─ checkpoint chunk 1 ─┤ held ├─ footer ─ manifest ─ delete old segment
        //            writer                                   ├ 20 durable commits ┤
        //            readers ─────────── read snapshots the whole time ───────────────
        options.checkpointChunkHook = {
            guard
                firstChunk.locked({ f in
                    defer { f = false }; return f
                })
            else { return }
            checkpointStarted.signal()
            if resumeCheckpoint.wait(timeout: .now() + 20) == .timedOut { holdTimedOut.locked { $0 = true } }
        }
        let store = try disk.open(JournalWorkload.schema, options)
        for batch in 0..<5 {
            var tx = store.transaction()
            for i in 0..<100 { try tx.insert("Tag", ["label": .string("tag \(batch)-\(i)")]) }
            try store.commit(tx)
        }

        let stop = Mutex(false)
        let reads = Mutex([0, 0])
        let readersDone = DispatchGroup()
        for r in 0..<2 {
            readersDone.enter()
            Thread.detachNewThread {
                defer { readersDone.leave() }
                while !stop.locked({ $0 }) {
                    let snapshot = store.snapshot
                    if (try? snapshot.count("Tag")) ?? 0 >= 500 { reads.locked { $0[r] += 1 } }
                }
            }
        }
        let compacted = DispatchSemaphore(value: 0)
        let compactionError = Mutex<TrellisError?>(nil)
        Thread.detachNewThread {
            do { try store.compact() } catch let error as TrellisError { compactionError.locked { $0 = error } } catch {
            }
            compacted.signal()
        }
        #expect(checkpointStarted.wait(timeout: .now() + 20) == .success)
        let readsBefore = reads.locked { $0 }
        var commitsDuringCheckpoint = 0
        for i in 0..<20 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("during \(i)")])
            try store.commit(tx)
            commitsDuringCheckpoint += 1
        }
        // The commits ran while the checkpoint was held: it is still held, and did not time out.
        #expect(!holdTimedOut.locked { $0 }, "the commits finished only after the held checkpoint gave up")
        #expect(compacted.wait(timeout: .now()) == .timedOut, "the compaction finished before the commits did")
        // Each reader reads while it is held too (waited for, with a limit that fails the test).
        let deadline = Date().addingTimeInterval(10)
        while zip(reads.locked { $0 }, readsBefore).contains(where: { $0 <= $1 }) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        let readsDuring = zip(reads.locked { $0 }, readsBefore).map { $0 - $1 }
        resumeCheckpoint.signal()
        #expect(compacted.wait(timeout: .now() + 20) == .success)
        stop.locked { $0 = true }
        readersDone.wait()

        #expect(compactionError.locked { $0 } == nil)
        #expect(commitsDuringCheckpoint == 20)
        #expect(readsDuring.allSatisfy { $0 > 0 }, "reads while the checkpoint was held: \(readsDuring)")
        #expect(try store.snapshot.count("Tag") == 520)
        let names = disk.names()
        #expect(!names.contains(JournalFormat.segmentName(1)))
        #expect(names.contains(JournalFormat.checkpointName(5)))
        #expect(names.contains(JournalFormat.segmentName(2)))
        let live = store.snapshot
        try store.close()

        let reopened = try disk.open()
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        #expect(reopened.recoveryReport?.checkpointSequence == 5)
        #expect(reopened.recoveryReport?.replayedRecords == 20)
        try reopened.close()
    }

    @Test func automaticCompactionFollowsThePolicyAndReplacesTheOldCheckpoint() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(
            JournalWorkload.schema,
            disk.options(compaction: .init(automatic: true, minimumJournalBytes: 3000, journalToCheckpointRatio: 1)))
        // An automatic compaction writes at the lowest priority, so under load one may still run when the next is
        // due (only one runs at a time): the commits come in three parts, each after the compaction they started.
        var seen = 0
        try JournalWorkload.run(store, seed: 99, commits: 300) { n in
            guard n % 100 == 99 else { return }
            try store.flush()
            // The flusher starts the compaction just after acknowledging the flush.
            #expect(eventually { store.journal!.compactionCount > seen })
            store.waitForCompaction()
            seen = store.journal!.compactionCount
        }
        let compactions = store.journal!.compactionCount
        #expect(compactions >= 2)
        let live = store.snapshot
        try store.close()
        let checkpoints = disk.names().filter { JournalFormat.checkpointSequence($0) != nil }
        #expect(checkpoints.count == 1)
        let reopened = try disk.open()
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        try reopened.close()
    }

    @Test func compactingAnUnchangedStoreIsANoOp() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try store.compact()
        #expect(disk.names().filter { JournalFormat.checkpointSequence($0) != nil }.isEmpty)
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "x"])
        try store.commit(tx)
        try store.compact()
        let operations = disk.operationCount
        try store.compact()
        #expect(disk.operationCount == operations)
        try store.close()
    }
}
