import Dispatch
import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// D9 (issue 23, item 9), on the simulated disk: compaction holds nothing a commit needs while it syncs the manifest,
/// and the errors that do not fail the store (a file that could not be removed) are reported, not dropped.
@Suite struct ErrorsNotSwallowedTests {
    typealias X = CrashExpectations

    @Test("D9: a commit completes while the compaction's manifest sync is held")
    func aCommitCompletesWhileTheCompactionsManifestSyncIsBlocked() throws {
        let disk = SimulatedFileLayer()
        let store = try X.open(disk)
        for n in 1...5 { try CrashWorkload.commit(n, to: store) }
        // The first manifest sync of a compaction is its rotation's (on the flusher); the second is the checkpoint's.
        let gate = disk.block(.sync, pathContains: JournalFormat.manifestName, nth: 2)
        let compacted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? store.compact()
            compacted.signal()
        }
        #expect(gate.waitUntilReached(seconds: 20))
        let committed = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        DispatchQueue.global().async {
            do {
                _ = try CrashWorkload.commit(6, to: store)
            } catch {
                failure.locked { $0 = "\(error)" }
            }
            committed.signal()
        }
        let completed = committed.wait(timeout: .now() + 5) == .success
        gate.release()
        if !completed { committed.wait() }
        compacted.wait()
        #expect(completed, "the commit waited for the compaction's manifest sync")
        #expect(failure.locked { $0 } == nil)
        #expect(store.journal!.manifest.checkpointSequence == 5)
        try store.close()
        _ = try CrashDriver.expectRecovery(disk.crash(), acknowledged: 6)
    }

    @Test("D9: a leftover that cannot be removed at open is a warning of the open and of the store")
    func aLeftoverThatCannotBeRemovedIsReported() throws {
        let disk = try X.store(commits: 3)
        try disk.open(X.path("segment-00000000000000ff.trj.tmp"), .create).write([1, 2, 3], at: 0)
        disk.inject(.init(.remove, pathContains: ".tmp", persistent: true))
        let store = try X.open(disk)
        let report = try #require(store.recoveryReport)
        #expect(report.warnings.count == 1 && report.warnings[0].contains("segment-00000000000000ff.trj.tmp"))
        #expect(store.warnings == report.warnings)
        #expect(report.description.contains("1 warnings"))
        try store.close()
    }

    @Test("D9: a replaced file that compaction cannot remove is a warning; the store goes on")
    func aFileCompactionCannotRemoveIsReported() throws {
        let disk = SimulatedFileLayer()
        let store = try X.open(disk, segmentBytes: 3_000)
        for n in 1...20 { try CrashWorkload.commit(n, to: store) }
        disk.inject(.init(.remove, pathContains: "segment-", persistent: true))
        try store.compact()
        #expect(store.failure == nil)
        #expect(!store.warnings.isEmpty && store.warnings.allSatisfy { $0.contains("could not remove segment-") })
        try CrashWorkload.commit(21, to: store)
        try store.close()
        disk.clearFaults()
        let reopened = try X.open(disk)
        #expect(reopened.recoveryReport!.removedFiles.contains { $0.hasPrefix("segment-") })
        try reopened.close()
    }

    @Test("D9: a failed write whose temporary file cannot be removed says both")
    func aTemporaryFileThatCannotBeRemovedIsNamed() throws {
        let disk = SimulatedFileLayer()
        let store = try X.open(disk)
        for n in 1...3 { try CrashWorkload.commit(n, to: store) }
        disk.inject(.init(.write, pathContains: "checkpoint", error: ENOSPC))
        disk.inject(.init(.remove, pathContains: "checkpoint", persistent: true))
        #expect(throws: TrellisError.self) { try store.compact() }
        let message = store.failure?.message ?? ""
        #expect(message.contains("No space left") && message.contains("could not be removed either"), "\(message)")
        _ = try? store.close()
    }
}
