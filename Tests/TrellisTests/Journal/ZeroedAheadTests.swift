import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import TrellisTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// With per-commit durability the flusher keeps zeros written and synced ahead of the segment's records while idle
/// (`Journal.zeroAheadIfDue`), so a save's record overwrites blocks the file system holds already and its sync need
/// not commit the file's metadata. The zeros read as the journal's end, survive any crash as such, and a failure to
/// write them costs nothing but a warning.
@Suite struct ZeroedAheadTests {
    static let schema = try! Schema([EntityDescription("Blob", attributes: [.init("text", .string)])])
    static let segment = SimulatedFileLayer.storePath + "/" + JournalFormat.segmentName(1)

    static func open(_ disk: SimulatedFileLayer, _ durability: StoreOptions.Durability) throws -> Store {
        var options = StoreOptions(durability: durability, compaction: .manual)
        disk.simulateZeroingAhead()
        options.fileLayer = disk
        return try Store(
            directory: URL(fileURLWithPath: SimulatedFileLayer.storePath), schema: schema, options: options)
    }

    /// Random letters: a record of them deflates to about 60% (at 16 KiB and more, it is stored as it is).
    static func text(_ random: inout SeededRandom, _ count: Int) -> String {
        String((0..<count).map { _ in Character(Unicode.Scalar(UInt8(97 + random.below(26)))) })
    }

    static func insert(_ store: Store, _ text: String) throws {
        var tx = store.transaction()
        try tx.insert("Blob", ["text": .string(text)])
        try store.commit(tx)
    }

    /// Where the last record of the segment ends on `disk`, and how many records it holds.
    static func records(_ disk: SimulatedFileLayer) throws -> (end: Int, count: Int) {
        var end = 0
        var count = 0
        let problems = try JournalReader(path: SimulatedFileLayer.storePath, layer: disk).forEachRecord { record in
            end = record.offset + RecordFrame.align(FrameHeader.currentSize + record.storedBytes)
            count += 1
        }
        #expect(problems.isEmpty, "\(problems)")
        return (end, count)
    }

    /// Whether the segment holds, synced, at least half the zeros the flusher keeps ahead past `end`, and nothing
    /// written past them.
    static func zerosSyncedAhead(_ disk: SimulatedFileLayer, after end: Int) -> Bool {
        guard let synced = disk.syncedContents(segment), let current = disk.contents(segment) else { return false }
        return synced.count >= end + Journal.zeroedAheadBytes / 2 && current.count == synced.count
            && synced[end...].allSatisfy { $0 == 0 }
    }

    /// Whether the zeros written at open, past the segment's header, are synced.
    static func zerosSyncedAtOpen(_ disk: SimulatedFileLayer) -> Bool {
        (disk.syncedContents(segment)?.count ?? 0) >= Journal.zeroedAheadBytes
    }

    @Test func aDurableStoreKeepsSyncedZerosAheadOfItsRecordsAndWritesItsRecordsOverThem() throws {
        let disk = SimulatedFileLayer()
        let store = try Self.open(disk, .perCommit)
        #expect(eventually(within: 10) { Self.zerosSyncedAtOpen(disk) }, "the empty segment gets its zeros at open")
        var random = SeededRandom(seed: 0x2E40)
        var texts: [String] = []
        var lengths = Set<Int>()
        for k in 0..<40 {
            let before = disk.contents(Self.segment)?.count ?? 0
            texts.append(Self.text(&random, 8_000))
            try Self.insert(store, texts.last!)
            let (end, count) = try Self.records(disk)
            #expect(count == k + 1)
            #expect(end <= before, "record \(k + 1) went into the zeros (ends at \(end) of \(before) bytes)")
            #expect(
                eventually(within: 10) { Self.zerosSyncedAhead(disk, after: end) },
                "after record \(k + 1), synced zeros reach \(Journal.zeroedAheadBytes / 2) bytes past it")
            lengths.insert(disk.contents(Self.segment)?.count ?? 0)
        }
        #expect(lengths.count >= 2, "the zeros were written again as the records used them up: \(lengths.sorted())")

        // A crash that keeps only what was synced: every record, the zeros after them read as the end.
        let crashed = disk.crash(.init(data: .dropUnsynced))
        let recovered = try Self.open(crashed, .perCommit)
        #expect(recovered.recoveryReport?.droppedBytes == 0 && recovered.recoveryReport?.tornTail == nil)
        let stored = try recovered.snapshot.objectIDs("Blob").map { try recovered.snapshot.value($0, "text") }
        #expect(stored == texts.map { .string($0) })
        try recovered.close()
    }

    @Test func aCrashWhileTheZerosAreWrittenLosesNoAcknowledgedRecord() throws {
        let disk = SimulatedFileLayer()
        let store = try Self.open(disk, .perCommit)
        #expect(eventually(within: 10) { Self.zerosSyncedAtOpen(disk) })
        var random = SeededRandom(seed: 0x2E43)
        let small = Self.text(&random, 2_000)
        try Self.insert(store, small)
        // The big record's sync goes through; the sync of the zeros written after it is held.
        let gate = disk.block(.sync, pathContains: JournalFormat.segmentName(1), nth: 2)
        let big = Self.text(&random, Journal.zeroedAheadBytes * 3 / 4)
        try Self.insert(store, big)
        #expect(gate.waitUntilReached(seconds: 10), "the zeros were written and their sync started")
        let policies: [SimulatedFileLayer.CrashPolicy.Data] = [
            .dropUnsynced, .keepUnsynced, .keepRandomSectors(seed: 1), .garbleRandomSector(seed: 2),
            .tearUnsynced(seed: 3), .garbleUnsyncedBytes(seed: 4), .keepSectorsIndependently(seed: 5),
        ]
        for policy in policies {
            let recovered = try Self.open(disk.copy().crash(.init(data: policy)), .perCommit)
            let stored = try recovered.snapshot.objectIDs("Blob").map { try recovered.snapshot.value($0, "text") }
            #expect(stored == [.string(small), .string(big)], "\(policy): both acknowledged records")
            try recovered.close()
        }
        gate.release()
        try store.close()
    }

    @Test(
        "without per-commit durability no save waits for a sync, and nothing is written past the records",
        arguments: [StoreOptions.Durability.interval(60), .none])
    func relaxedStoresWriteNoZerosAhead(_ durability: StoreOptions.Durability) throws {
        let disk = SimulatedFileLayer()
        let store = try Self.open(disk, durability)
        var random = SeededRandom(seed: 0x2E41)
        for _ in 0..<5 { try Self.insert(store, Self.text(&random, 6_000)) }
        try store.flush()
        usleep(50_000)
        let (end, count) = try Self.records(disk)
        #expect(count == 5)
        #expect(disk.contents(Self.segment)?.count == end)
        try store.close()
    }

    @Test(
        "a failed write or sync of the zeros is a warning, commits go on, and no more zeros are written",
        arguments: [SimulatedFileLayer.Operation.write, .sync])
    func aFailedWriteOfTheZerosIsAWarningAndCommitsGoOn(_ operation: SimulatedFileLayer.Operation) throws {
        let disk = SimulatedFileLayer()
        let store = try Self.open(disk, .perCommit)
        // The empty segment's zeros are written at open; the next ones after a record that uses up half of them.
        #expect(eventually(within: 10) { Self.zerosSyncedAtOpen(disk) })
        // The big record's write and sync come first, then the zeros'.
        disk.inject(.init(operation, pathContains: JournalFormat.segmentName(1), nth: 2, error: ENOSPC))
        var random = SeededRandom(seed: 0x2E42)
        let big = Self.text(&random, Journal.zeroedAheadBytes * 3 / 4)
        try Self.insert(store, big)
        #expect(eventually(within: 10) { !store.warnings.isEmpty }, "the failed write is reported")
        #expect(store.warnings.first?.contains("zeros written ahead") == true, "\(store.warnings)")
        #expect(disk.firedFaults == 1)
        #expect(store.failure == nil, "the store goes on")
        let segmentWrites = { disk.events.filter { $0.operation == .write && $0.path == Self.segment }.count }
        let before = segmentWrites()
        for k in 0..<3 { try Self.insert(store, Self.text(&random, Journal.zeroedAheadBytes / 2) + "\(k)") }
        usleep(50_000)
        #expect(segmentWrites() == before + 3, "one write a record, no zeros after the failure")
        try store.close()
        let reopened = try Self.open(disk.crash(.init(data: .dropUnsynced)), .perCommit)
        #expect(try reopened.snapshot.count("Blob") == 4)
        try reopened.close()
    }
}
