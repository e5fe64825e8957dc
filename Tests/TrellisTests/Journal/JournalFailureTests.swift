import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

#if canImport(Glibc)
import Glibc
#endif

/// An I/O error stops writing, not reading: the commit is not acknowledged, the store turns read-only with an error
/// that says what happened, nothing is retried, and reopening recovers a valid prefix.
@Suite struct JournalFailureTests {
    static func seeded(_ disk: SimulatedFileLayer) throws -> (Store, Graph) {
        let store = try disk.open()
        for i in 0..<10 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("tag \(i)")])
            try store.commit(tx)
        }
        return (store, store.snapshot)
    }

    @Test func fsyncErrorLeavesTheStoreReadOnlyAndTheCommitUnacknowledged() throws {
        let disk = SimulatedFileLayer()
        let (store, acknowledged) = try Self.seeded(disk)
        disk.inject(.init(.sync, pathContains: JournalFormat.segmentName(1), error: EIO))
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "lost"])
        let error = try #require(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error.code == .failed)
        #expect(error.message.contains("fdatasync") || error.message.contains("sync"))
        #expect(error.message.contains("Input/output error"))
        // Readers never saw the unacknowledged commit, and keep reading.
        #expect(GraphEquality.differences(acknowledged, store.snapshot) == [])
        #expect(try store.snapshot.count("Tag") == 10)
        // Every later commit is refused with the same failure; fsync is not tried again.
        let syncsBefore = disk.events.filter { $0.operation == .sync }.count
        var next = store.transaction()
        try next.insert("Tag", ["label": "later"])
        #expect(throws: TrellisError.self) { try store.commit(next) }
        #expect(store.failure?.code == .failed)
        #expect(disk.events.filter { $0.operation == .sync }.count == syncsBefore)
        #expect(throws: TrellisError.self) { try store.flush() }

        // After a power cut the store reopens to the acknowledged state (the record was written but never synced).
        let survivor = disk.crash(.init(data: .dropUnsynced))
        let reopened = try survivor.open()
        #expect(GraphEquality.differences(acknowledged, reopened.snapshot) == [])
        try reopened.close()
        try? store.close()
    }

    @Test func fsyncErrorThenProcessExitMayKeepTheUnacknowledgedCommitButOnlyWhole() throws {
        let disk = SimulatedFileLayer()
        let (store, acknowledged) = try Self.seeded(disk)
        disk.inject(.init(.sync, pathContains: JournalFormat.segmentName(1)))
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "maybe"])
        #expect(throws: TrellisError.self) { try store.commit(tx) }
        let reopened = try disk.crash(.init(data: .keepUnsynced)).open()
        let count = try reopened.snapshot.count("Tag")
        #expect(count == 10 || count == 11)
        #expect(reopened.snapshot.sequence == acknowledged.sequence + UInt64(count - 10))
        try reopened.close()
        try? store.close()
    }

    @Test func shortWriteWithNoSpaceLeavesNoHalfFrameBeforeALaterRecord() throws {
        let disk = SimulatedFileLayer()
        let (store, acknowledged) = try Self.seeded(disk)
        disk.inject(.init(.write, pathContains: JournalFormat.segmentName(1), error: ENOSPC, tearFraction: 0.5))
        var tx = store.transaction()
        try tx.insert("Tag", ["label": .string(String(repeating: "y", count: 300))])
        let error = try #require(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error.message.contains("No space left on device"))
        var later = store.transaction()
        try later.insert("Tag", ["label": "later"])
        #expect(throws: TrellisError.self) { try store.commit(later) }
        let survivor = disk.crash(.init(data: .keepUnsynced))
        let reopened = try survivor.open()
        #expect(GraphEquality.differences(acknowledged, reopened.snapshot) == [])
        #expect((reopened.recoveryReport?.droppedBytes ?? 0) > 0)
        try reopened.close()
        try? store.close()
    }

    @Test func checkpointWriteFailureFailsTheStoreAndLeavesTheOldStateIntact() throws {
        let disk = SimulatedFileLayer()
        let (store, acknowledged) = try Self.seeded(disk)
        disk.inject(.init(.write, pathContains: "checkpoint-", error: ENOSPC))
        #expect(throws: TrellisError.self) { try store.compact() }
        #expect(store.failure != nil)
        #expect(!disk.names().contains { $0.hasPrefix("checkpoint-") })
        let reopened = try disk.crash(.init(data: .dropUnsynced)).open()
        #expect(GraphEquality.differences(acknowledged, reopened.snapshot) == [])
        try reopened.close()
        try? store.close()
    }

    @Test(arguments: 1..<40)
    func failingTheNthOperationNeverLosesAnAcknowledgedCommit(n: Int) throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        disk.inject(.init(nth: n))
        var acknowledged = store.snapshot
        for i in 0..<12 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("tag \(i)")])
            guard let commit = try? store.commit(tx) else { break }
            acknowledged = commit.snapshot
            if i == 5 { try? store.compact() }
        }
        let reopened = try disk.crash(.init(data: .dropUnsynced)).open()
        #expect(GraphEquality.differences(acknowledged, reopened.snapshot) == [])
        try reopened.close()
        try? store.close()
    }
}
