import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix cases 14, 15 and 16 (harness F): failed syncs, full disks and short writes, and the Nth operation failing
/// anywhere in open, commit and compaction, followed by a crash, and by a crash during the recovery after it.
@Suite struct IOErrorCrashTests {
    typealias X = CrashExpectations

    /// Commits transactions from `first` until one fails; returns the last acknowledged and the one that failed.
    static func commitUntilFailure(_ store: Store, from first: Int = 1, through last: Int = 150) -> (Int, Int?) {
        var acknowledged = first - 1
        for n in first...last {
            do {
                try CrashWorkload.commit(n, to: store)
                acknowledged = n
            } catch {
                return (acknowledged, n)
            }
        }
        return (acknowledged, nil)
    }

    @Test("14: EIO on fsync: the commit is not acknowledged, the store turns read-only, a reopen gives a valid prefix")
    func eioOnFsyncIsNotAcknowledgedTurnsTheStoreReadOnlyAndReopensToAPrefix() throws {
        for n in 1...(X.long ? 60 : 30) {
            for keep in [false, true] {
                let disk = SimulatedFileLayer()
                let store = try X.open(disk, segmentBytes: 4_096)
                // One fsync fails, once: the disk would sync again, but that sync must never be trusted.
                disk.inject(.init(.sync, nth: n, error: EIO))
                let (acknowledged, failed) = Self.commitUntilFailure(store)
                let failedAt = try #require(failed, "sync \(n) never failed a commit")
                #expect(store.failure?.code == .failed)
                #expect(store.snapshot.sequence == UInt64(acknowledged), "a reader saw an unacknowledged commit")
                let again = #expect(throws: TrellisError.self) { try CrashWorkload.commit(failedAt, to: store) }
                #expect(again?.code == .failed, "the store accepted a commit after a failed fsync")
                let after = disk.crash(.init(data: keep ? .keepUnsynced : .dropUnsynced, keepUnsyncedEntries: keep))
                try CrashDriver.expectRecovery(after, acknowledged: acknowledged, "sync \(n), keep \(keep)")
            }
        }
    }

    @Test("15: ENOSPC or a short write during an append: no later record follows the half frame; a reopen drops it")
    func fullDiskOrShortWriteDuringAppendLeavesNothingAfterTheHalfFrame() throws {
        for n in 1...(X.long ? 80 : 40) {
            for error in [ENOSPC, EIO] {
                let disk = SimulatedFileLayer()
                let store = try X.open(disk, segmentBytes: 4_096)
                let before = disk.events.count
                disk.inject(.init(.write, pathContains: "segment-", nth: n, error: error, tearFraction: 0.5))
                let (acknowledged, failed) = Self.commitUntilFailure(store)
                #expect(failed != nil)
                // The failed write is the nth to a segment; nothing is written to that file after it.
                let writes = disk.events[before...].enumerated().filter {
                    $0.element.operation == .write && $0.element.path.contains("segment-")
                }
                let failedWrite = try #require(writes.count >= n ? writes[n - 1] : nil)
                #expect(
                    !writes.contains { $0.offset > failedWrite.offset && $0.element.path == failedWrite.element.path })
                #expect(!disk.names().contains { $0.hasSuffix(JournalFormat.temporarySuffix) }, "\(disk.names())")
                let after = disk.crash(.init(data: .keepUnsynced, keepUnsyncedEntries: true))
                try CrashDriver.expectRecovery(after, acknowledged: acknowledged, "write \(n), errno \(error)")
            }
        }
    }

    @Test("15: ENOSPC or a short write during a checkpoint or its manifest: temp files removed, old state intact")
    func fullDiskOrShortWriteDuringACheckpointRemovesTempFilesAndKeepsTheOldState() throws {
        for target in ["checkpoint-", JournalFormat.manifestName] {
            var failed = 0
            for n in 1...5 {
                let disk = SimulatedFileLayer()
                let store = try X.open(disk, segmentBytes: 4_096)
                for i in 1...30 { try CrashWorkload.commit(i, to: store) }
                let old = store.journal!.manifest
                disk.inject(.init(.write, pathContains: target, nth: n, error: ENOSPC, tearFraction: 0.3))
                do {
                    try store.compact()
                } catch {
                    failed += 1
                    #expect(store.failure != nil)
                    #expect(!disk.names().contains { $0.hasSuffix(JournalFormat.temporarySuffix) }, "\(disk.names())")
                    let manifest = try JournalReader(path: X.directory, layer: disk).manifest()
                    #expect(manifest.checkpointSequence == old.checkpointSequence, "\(target) write \(n)")
                }
                // A compaction fails exactly when its nth write failed: none that fired goes unchecked.
                #expect((store.failure != nil) == (disk.firedFaults == 1), "\(target) write \(n)")
                let after = disk.crash(.init(data: .keepUnsynced, keepUnsyncedEntries: true))
                let k = try CrashDriver.expectRecovery(after, acknowledged: 30, "\(target) write \(n)")
                #expect(k == 30)
            }
            // The checkpoint takes several writes, the manifest one (its temporary file): the failing branch ran.
            #expect(failed >= (target == JournalFormat.manifestName ? 1 : 2), "\(target): \(failed) of 5 failed")
        }
    }

    @Test("16: the Nth operation failing once or for good, in open, commit or compaction, then a crash during recovery")
    func nthOperationFailingThenACrashDuringRecoveryStillRecoversEveryAcknowledgedCommit() throws {
        let driver = CrashDriver(commits: 20, segmentBytes: 2_048, compactEvery: 8)
        let total = driver.cleanRun().operationCount
        var random = SeededRandom(seed: 16)
        for n in stride(from: 1, through: total, by: X.long ? 1 : 2) {
            for persistent in [false, true] {
                let disk = SimulatedFileLayer()
                disk.inject(.init([], nth: n, persistent: persistent, error: n % 3 == 0 ? ENOSPC : EIO))
                var acknowledged = driver.drive(disk)
                // After a one-off failure the store is reopened on the same disk and carries on.
                if !persistent { acknowledged = driver.drive(disk, acknowledged: acknowledged) }
                let after = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
                // How many operations a recovery takes, then a crash at a random one of them.
                let probe = after.copy()
                _ = try? X.open(probe).close()
                let recovery = max(1, probe.operationCount)
                after.halt(afterOperations: Int(random.next() % UInt64(recovery)))
                _ = try? X.open(after)
                let survivor = after.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
                try CrashDriver.expectRecovery(
                    survivor, acknowledged: acknowledged, "operation \(n), persistent \(persistent)")
            }
        }
    }
}
