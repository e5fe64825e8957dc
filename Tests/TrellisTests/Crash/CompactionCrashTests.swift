import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 11 (harness F): a crash after every prefix of a compaction's recorded operations leaves the old state
/// (the manifest before, its segments whole) or the new one (the new checkpoint and what follows it), never a mix.
@Suite struct CompactionCrashTests {
    typealias X = CrashExpectations

    static let commits = 30

    /// A store of 30 commits over several segments, a checkpoint at 10, open; and the operations before compacting.
    static func prepared() throws -> (SimulatedFileLayer, Store, Int) {
        let disk = SimulatedFileLayer()
        let store = try X.open(disk, segmentBytes: 3_000)
        for n in 1...commits {
            try CrashWorkload.commit(n, to: store)
            if n == 10 { try store.compact() }
        }
        // The flusher may still be rotating after the last commit returned; a flush waits for that, so the
        // compaction's operations start at the same count in every run.
        try store.flush()
        return (disk, store, disk.operationCount)
    }

    @Test(
        "11: every prefix of a compaction's operations, with and without unsynced data, recovers the old or the new state",
        arguments: [
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: false),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: false),
        ])
    func everyPrefixOfACompactionRecoversTheOldOrTheNewStateNeverAMix(policy: SimulatedFileLayer.CrashPolicy) throws {
        let (disk, store, before) = try Self.prepared()
        let oldManifest = store.journal!.manifest
        try store.compact()
        let operations = Array(disk.events[before...])
        try store.close()
        #expect(operations.contains { $0.operation == .rename && $0.path.contains("checkpoint") })
        #expect(operations.count > 15)
        var sawOld = false
        var sawNew = false
        for prefix in 0...operations.count {
            let (disk, store, before) = try Self.prepared()
            disk.halt(afterOperations: before + prefix)
            _ = try? store.compact()
            // The run really stopped after this prefix of the recorded sequence.
            #expect(
                Array(disk.events[before...].prefix(prefix)) == Array(operations.prefix(prefix)), "prefix \(prefix)")
            let after = disk.crash(policy)
            let manifest = try JournalReader(path: X.directory, layer: after).manifest()
            if manifest.checkpointSequence == UInt64(Self.commits) {
                sawNew = true
                #expect(manifest.firstSegment > oldManifest.lastSegment, "prefix \(prefix)")
            } else {
                sawOld = true
                #expect(manifest.checkpointSequence == oldManifest.checkpointSequence, "prefix \(prefix)")
                #expect(manifest.firstSegment == oldManifest.firstSegment, "prefix \(prefix)")
            }
            // Either way every commit is there, once: the same graph, loaded from the checkpoint or replayed.
            let k = try CrashDriver.expectRecovery(after, acknowledged: Self.commits, "prefix \(prefix)")
            #expect(k == Self.commits, "prefix \(prefix)")
        }
        #expect(sawOld && sawNew)
    }
}
