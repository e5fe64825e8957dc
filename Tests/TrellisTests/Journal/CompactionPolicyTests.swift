import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisJournal
@testable import TrellisStore

#if canImport(Glibc)
import Glibc
#endif

/// The compaction policy: a clean close asked to compact (`atClose`) compacts a long journal so that the next open
/// replays nothing (and only when asked), an automatic compaction writes its checkpoint at the lowest priority, and
/// the bench's forced rewrite of an up-to-date checkpoint keeps every object.
@Suite struct CompactionPolicyTests {
    static let schema = try! Schema([EntityDescription("Page", attributes: [.init("text", .string)])])

    /// Commits `commits` transactions of 20 pages of 1,000 random letters each (Huffman coding cannot halve them, so
    /// each durable commit puts its 20 KiB in the journal as they are); returns the last sequence.
    @discardableResult
    static func write(_ store: Store, commits: Int, seed: UInt64) throws -> UInt64 {
        var random = SeededRandom(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for _ in 0..<commits {
            var tx = store.transaction()
            for _ in 0..<20 {
                let text = String((0..<1_000).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
                try tx.insert("Page", ["text": .string(text)])
            }
            try store.commit(tx)
        }
        return store.snapshot.sequence
    }

    static func journalBytes(_ disk: SimulatedFileLayer) -> Int {
        disk.names().filter { $0.hasPrefix("segment-") }.reduce(0) { total, name in
            total + (disk.contents(SimulatedFileLayer.storePath + "/" + name)?.count ?? 0)
        }
    }

    @Test func aCleanCloseCompactsALongJournalSoTheNextOpenReplaysNothing() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(compaction: .init(atClose: true)))
        let last = try Self.write(store, commits: 40, seed: 1)
        try store.flush()
        let before = Self.journalBytes(disk)
        #expect(before >= Journal.closeMinimumJournalBytes, "the journal holds \(before) bytes before the close")
        #expect(disk.names().filter { JournalFormat.checkpointSequence($0) != nil }.isEmpty)
        let live = store.snapshot
        try store.close()

        #expect(disk.names().contains(JournalFormat.checkpointName(last)))
        let reopened = try disk.open(Self.schema, disk.options(compaction: .init(atClose: true)))
        #expect(reopened.recoveryReport?.checkpointSequence == last)
        #expect(reopened.recoveryReport?.replayedRecords == 0)
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        try reopened.close()
    }

    @Test func aCloseLeavesAShortJournalEvenAfterAReopenAndAnyJournalWhenTheOptionIsOffAsByDefault() throws {
        for (commits, atClose) in [(4, true), (40, false), (40, nil)] {
            let disk = SimulatedFileLayer()
            // Segments keep reserved space after their records: the rule counts records, not the file's size.
            disk.simulatePreallocation()
            let options = disk.options(compaction: atClose.map { .init(atClose: $0) } ?? .init())
            let store = try disk.open(Self.schema, options)
            try Self.write(store, commits: commits, seed: 2)
            try store.close()
            #expect(
                disk.names().filter { JournalFormat.checkpointSequence($0) != nil }.isEmpty,
                "\(commits) commits, atClose \(atClose)")
            let reopened = try disk.open(Self.schema, options)
            #expect(reopened.recoveryReport?.replayedRecords == commits)
            #expect(reopened.snapshot.count(entity: try Self.schema.entity("Page")) == commits * 20)
            try reopened.close()
            #expect(
                disk.names().filter { JournalFormat.checkpointSequence($0) != nil }.isEmpty,
                "\(commits) commits, atClose \(atClose), closed again after a reopen")
        }
    }

    #if os(Linux)
    @Test func anAutomaticCompactionWritesItsCheckpointAtTheLowestPriorityAndAnAskedForOneAtTheCallers() throws {
        let disk = SimulatedFileLayer()
        let niceValues = Mutex<[Int32]>([])
        var options = disk.options(compaction: .init(minimumJournalBytes: 100_000))
        // Runs on the thread that writes the checkpoint, after each chunk.
        options.checkpointChunkHook = {
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            niceValues.locked { $0.append(nice) }
        }
        let store = try disk.open(Self.schema, options)
        try Self.write(store, commits: 12, seed: 3)
        store.waitForCompaction()
        let automatic = niceValues.locked { $0 }
        #expect(!automatic.isEmpty, "no automatic compaction ran")
        #expect(automatic.allSatisfy { $0 == 19 }, "\(automatic)")

        // A journal emptied by a compaction and one small commit stay far below the automatic threshold, so the
        // compaction asked for next is the only one that runs.
        try store.compact()
        try store.write { try $0.insert("Page", ["text": .string("short")]) }
        niceValues.locked { $0 = [] }
        try store.compact()
        let asked = niceValues.locked { $0 }
        #expect(!asked.isEmpty)
        #expect(asked.allSatisfy { $0 == getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }, "\(asked)")
        try store.close()
    }
    #endif

    @Test func aForcedCompactionRewritesAnUpToDateCheckpointAndKeepsEveryObject() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options())
        let last = try Self.write(store, commits: 3, seed: 5)
        try store.compact()
        let operations = disk.operationCount
        try store.compact()
        #expect(disk.operationCount == operations, "an unforced compaction of an up-to-date store wrote")
        try store.compact(evenIfUpToDate: true)
        #expect(disk.operationCount > operations)
        let checkpoints = disk.names().filter { JournalFormat.checkpointSequence($0) != nil }
        #expect(checkpoints == [JournalFormat.checkpointName(last)])
        let live = store.snapshot
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options())
        #expect(reopened.recoveryReport?.checkpointSequence == last)
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        try reopened.close()
    }
}
