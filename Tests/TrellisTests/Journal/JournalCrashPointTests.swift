import Dispatch
import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The F harness at work on the protocols that must be atomic: a crash after any prefix of a compaction's (or a
/// rotation's) operations, with or without the unsynced data and directory entries, reopens to the same objects.
@Suite struct JournalCrashPointTests {
    /// A store with some history, and the disk operation count when it was ready.
    static func prepared(_ disk: SimulatedFileLayer) throws -> (Store, Graph) {
        let store = try disk.open(JournalWorkload.schema, disk.small)
        try JournalWorkload.run(store, seed: 17, commits: 40) { n in
            if n == 20 { try store.compact() }
        }
        return (store, store.snapshot)
    }

    @Test func crashAfterEveryPrefixOfACompactionReopensToTheSameObjects() throws {
        // First run: count the operations a compaction performs.
        let probe = SimulatedFileLayer()
        let (probeStore, _) = try Self.prepared(probe)
        let before = probe.operationCount
        try probeStore.compact()
        let compactionOperations = probe.operationCount - before
        try probeStore.close()
        #expect(compactionOperations > 10)
        let kinds = Set(probe.events.suffix(compactionOperations + 3).map(\.operation))
        #expect(kinds.isSuperset(of: [.create, .write, .sync, .rename, .syncDirectory, .remove]))

        for n in 0...compactionOperations {
            for policy in [
                SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: false),
                SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: true),
                SimulatedFileLayer.CrashPolicy(
                    data: .keepRandomSectors(seed: UInt64(n)), keepUnsyncedEntries: n % 2 == 0),
            ] {
                let disk = SimulatedFileLayer()
                let (store, live) = try Self.prepared(disk)
                disk.halt(afterOperations: disk.operationCount + n)
                _ = try? store.compact()
                let survivor = disk.crash(policy)
                let reopened = try survivor.open(JournalWorkload.schema, survivor.small)
                #expect(GraphEquality.differences(live, reopened.snapshot) == [], "crash after \(n) operations")
                #expect(reopened.snapshot.invariantViolations() == [])
                try reopened.close()
                #expect(try JournalReader(path: SimulatedFileLayer.storePath, layer: survivor).verify().problems == [])
                try? store.close()
            }
        }
    }

    @Test func intervalDurabilitySyncsWithinTheIntervalAndFlushWaitsForIt() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(JournalWorkload.schema, disk.options(.interval(0.05)))
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "a"])
        try store.commit(tx)
        // Published at once, before any sync.
        #expect(try store.snapshot.count("Tag") == 1)
        var synced = false
        for _ in 0..<100 where !synced {
            Thread.sleep(forTimeInterval: 0.01)
            synced = disk.events.contains { $0.operation == .sync && $0.path.hasSuffix(JournalFormat.segmentName(1)) }
        }
        #expect(synced)
        var second = store.transaction()
        try second.insert("Tag", ["label": "b"])
        try store.commit(second)
        try store.flush()
        let reopened = try disk.crash(.init(data: .dropUnsynced)).open()
        #expect(try reopened.snapshot.count("Tag") == 2)
        try reopened.close()
        try? store.close()
    }

    @Test func perCommitObserversRunBeforeTheCommitReturnsAndReadersSeeOnlyDurableCommits() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        let seen = Mutex<[UInt64]>([])
        let token = store.observe { commit in
            // The observer runs once the commit is durable: its sync is already in the operation log.
            seen.locked { $0.append(commit.sequence) }
        }
        for i in 0..<5 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("t\(i)")])
            let commit = try store.commit(tx)
            #expect(seen.locked { $0.last } == commit.sequence)
            #expect(store.snapshot.sequence == commit.sequence)
        }
        token.cancel()
        try store.close()
    }
}

/// Group commit: concurrent per-commit committers share syncs, and every acknowledged commit survives a crash.
@Suite struct JournalGroupCommitTests {
    @Test func concurrentCommitsShareSyncsAndAllSurviveACrash() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        disk.state.locked { $0.syncDelay = 0.005 }
        let syncsBefore = disk.events.filter { $0.operation == .sync }.count
        let acknowledged = Mutex(0)
        // Real threads (concurrentPerform would run only as many as there are cores).
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for i in 0..<25 {
                    var tx = store.transaction()
                    _ = try? tx.insert("Tag", ["label": .string("t\(thread)-\(i)")])
                    if (try? store.commit(tx)) != nil { acknowledged.locked { $0 += 1 } }
                }
            }
        }
        group.wait()
        let syncs = disk.events.filter { $0.operation == .sync }.count - syncsBefore
        #expect(acknowledged.locked { $0 } == 200)
        #expect(syncs < 100, "200 commits took \(syncs) syncs")
        let reopened = try disk.crash(.init(data: .dropUnsynced)).open()
        #expect(try reopened.snapshot.count("Tag") == 200)
        try reopened.close()
        try? store.close()
    }
}
