import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// D4: holes from preallocated extents. A power cut during an unsynced batch written over reserved space can keep a
/// later sector and lose an earlier one (`[valid][zeros][valid]`). Format version 6 puts a synced-through watermark
/// in every frame, and `.pointInTime` recovery keeps the longest valid prefix when the watermarks say nothing after
/// the hole was acknowledged; anything else stays refused.
@Suite struct PointInTimeCrashTests {
    typealias X = CrashExpectations

    /// A store on a simulated disk that reserves space as `posix_fallocate` does: commits 1…`acknowledged` made
    /// durable by `flush()`, then commits up to `written` in `.none` durability, written by the flusher (in one or
    /// more batches over the reserved zeros) but never synced. The store is left open; the caller crashes copies.
    static func unsyncedBatch(acknowledged: Int, written: Int) throws -> (disk: SimulatedFileLayer, store: Store) {
        let disk = SimulatedFileLayer()
        disk.simulatePreallocation()
        var options = StoreOptions(durability: .none, compaction: .manual)
        options.fileLayer = disk
        let store = try Store(
            directory: URL(fileURLWithPath: X.directory), schema: CrashWorkload.schema, options: options)
        for n in 1...acknowledged { try CrashWorkload.commit(n, to: store) }
        try store.flush()
        for n in (acknowledged + 1)...written { try CrashWorkload.commit(n, to: store) }
        // `.none` writes within a few milliseconds and syncs only on flush, rotation, compaction or close.
        let deadline = Date().addingTimeInterval(10)
        while try Self.sequences(disk.copy()).last != UInt64(written) {
            guard Date() < deadline else { throw TrellisError(.failed, "the flusher did not write \(written)") }
            usleep(2_000)
        }
        return (disk, store)
    }

    /// The sequence numbers of the records the journal holds, in order, up to its first damage.
    static func sequences(_ disk: SimulatedFileLayer) throws -> [UInt64] {
        var out: [UInt64] = []
        _ = try JournalReader(path: X.directory, layer: disk).forEachRecord { out.append($0.sequence) }
        return out
    }

    static func open(_ disk: SimulatedFileLayer, _ recovery: StoreOptions.Recovery) throws -> Store {
        try X.open(disk, recovery: recovery)
    }

    /// Every record (file, offset, end, watermark) of a healthy store.
    static func frames(_ disk: SimulatedFileLayer) throws -> [JournalRecord] {
        var out: [JournalRecord] = []
        _ = try JournalReader(path: X.directory, layer: disk).forEachRecord { out.append($0) }
        return out
    }

    /// The unsynced batch store after a crash that kept everything written (no hole yet).
    static func batchStore(acknowledged: Int = 10, written: Int = 40) throws -> SimulatedFileLayer {
        let (live, store) = try unsyncedBatch(acknowledged: acknowledged, written: written)
        defer { try? store.close() }
        return live.copy().crash(.init(data: .keepUnsynced, keepUnsyncedEntries: false))
    }

    /// Zeroes the frame of record `n` (`[valid][zeros][valid]`); returns the record as it was.
    @discardableResult
    static func zeroRecord(_ disk: SimulatedFileLayer, _ n: Int) throws -> JournalRecord {
        let record = try frames(disk)[n - 1]
        let path = X.path(record.file)
        let bytes = try #require(disk.contents(path))
        disk.setContents(path, ByteMutators.zero(bytes, record.offset..<(record.offset + record.frameBytes)))
        return record
    }

    /// The unsynced batch store with everything written kept, and record `hole`'s frame zeroed.
    static func holeStore(hole: Int = 15) throws -> (disk: SimulatedFileLayer, record: JournalRecord) {
        let disk = try batchStore()
        let record = try zeroRecord(disk, hole)
        #expect(record.sequence == UInt64(hole) && record.syncedThrough == 10)
        return (disk, record)
    }

    @Test(
        "D4 regression: a hole that only unacknowledged records follow is dropped by .pointInTime, refused by default")
    func aHoleOnlyUnacknowledgedRecordsFollowIsDroppedByPointInTimeAndRefusedByDefault() throws {
        let (disk, record) = try Self.holeStore()
        let problems = try X.problems(disk)
        #expect(problems.map(\.kind) == [.unacknowledgedHole], "\(problems)")
        #expect(problems.first?.offset == record.offset && problems.first?.file == record.file)
        #expect(problems.first?.message.contains("25 valid records after it") == true, "\(problems)")
        #expect(problems.first?.message.contains("at most 10") == true, "\(problems)")
        // The default policy and `.strict` refuse it, naming the class and the way out.
        for policy in [StoreOptions.Recovery.tolerateTornTail, .strict] {
            #expect {
                try Self.open(disk, policy).close()
            } throws: { error in
                let message = (error as? TrellisError)?.message ?? ""
                return message.contains("at offset \(record.offset): unacknowledged hole: ")
                    && message.contains(".pointInTime")
            }
        }
        let segmentSize = try #require(disk.contents(X.path(record.file))).count
        let store = try Self.open(disk, .pointInTime)
        X.expectPrefix(store.snapshot, acknowledged: 14)
        #expect(store.snapshot.sequence == 14, "the longest valid prefix: 1…14")
        let report = try #require(store.recoveryReport)
        #expect(report.hole?.kind == .unacknowledgedHole && report.hole?.offset == record.offset)
        #expect(report.tornTail == nil && report.droppedRecords == 25)
        #expect(report.droppedBytes == segmentSize - record.offset)
        #expect(report.description.contains("dropped an unacknowledged hole"), "\(report)")
        let backup = try #require(report.tailBackup)
        #expect(backup == "torn-\(JournalFormat.hex16(1))-\(JournalFormat.hex16(UInt64(record.offset))).bak")
        #expect(disk.contents(X.path(backup))?.count == report.droppedBytes)
        try CrashWorkload.commit(15, to: store)
        try store.close()
        let again = try X.open(disk)
        X.expectPrefix(again.snapshot, acknowledged: 15)
        #expect(again.snapshot.sequence == 15)
        try again.close()
        #expect(try X.problems(disk) == [])
    }

    @Test(
        "D4: power cuts over preallocated extents leave holes; .pointInTime keeps the longest valid prefix and every acknowledged commit"
    )
    func powerCutsOverPreallocatedExtentsRecoverToTheLongestValidPrefix() throws {
        let acknowledged = 10
        let (live, store) = try Self.unsyncedBatch(acknowledged: acknowledged, written: 60)
        defer { try? store.close() }
        var holes = 0
        var refusedByDefault = 0
        for seed: UInt64 in 0..<(X.long ? 400 : 40) {
            let disk = live.copy().crash(.init(data: .keepSectorsIndependently(seed: seed), keepUnsyncedEntries: false))
            let problems = try X.problems(disk)
            for problem in problems {
                #expect(
                    [.tornTail, .unacknowledgedHole].contains(problem.kind), "seed \(seed): \(problem)")
            }
            let prefix = try Self.sequences(disk).last ?? 0
            if problems.contains(where: { $0.kind == .unacknowledgedHole }) {
                holes += 1
                if (try? Self.open(disk, .tolerateTornTail).close()) == nil { refusedByDefault += 1 }
            }
            let opened = try Self.open(disk, .pointInTime)
            let k = X.expectPrefix(opened.snapshot, acknowledged: acknowledged, "seed \(seed)")
            #expect(UInt64(k) == prefix, "seed \(seed): recovered \(k), the valid prefix ends at \(prefix)")
            let report = try #require(opened.recoveryReport)
            #expect((report.hole != nil) == problems.contains { $0.kind == .unacknowledgedHole }, "seed \(seed)")
            try CrashWorkload.commit(k + 1, to: opened)
            try opened.close()
            let again = try X.open(disk)
            X.expectPrefix(again.snapshot, acknowledged: k + 1, "seed \(seed)")
            try again.close()
            #expect(try X.problems(disk) == [], "seed \(seed)")
        }
        #expect(holes >= 5, "only \(holes) of the crashes left a hole")
        #expect(refusedByDefault == holes)
    }

    @Test("D4: a record after the hole whose watermark shows the lost record was durable refuses .pointInTime")
    func aWatermarkThatProvesTheLostRecordAcknowledgedRefusesPointInTime() throws {
        // Per-commit durability: every record was synced before the next was written, so record 21's watermark is 20.
        let disk = try X.crashedStore(commits: 30)
        let records = try Self.frames(disk)
        #expect(records.map(\.syncedThrough) == (0..<30).map { UInt64($0) })
        let (lost, next) = (records[19], records[20])
        let path = X.path(lost.file)
        let bytes = try #require(disk.contents(path))
        disk.setContents(path, ByteMutators.zero(bytes, lost.offset..<(lost.offset + lost.frameBytes)))
        let problems = try X.problems(disk)
        #expect(problems.first?.kind == .zeroed, "\(problems)")
        #expect(!problems.contains { $0.kind == .unacknowledgedHole })
        let evidence = "record 21 at offset \(next.offset) was written when record 20 was durable"
        #expect(problems.first?.message.contains(evidence) == true, "\(problems)")
        for policy in [StoreOptions.Recovery.pointInTime, .tolerateTornTail] {
            #expect {
                try Self.open(disk, policy).close()
            } throws: { error in
                let message = (error as? TrellisError)?.message ?? ""
                return message.contains("\(lost.file) at offset \(lost.offset): zeroed: ") && message.contains(evidence)
            }
        }
    }

    @Test(
        "D4 hostile: crafted watermarks and sequence numbers after a hole cannot make .pointInTime drop acknowledged data"
    )
    func craftedFramesAfterAHoleAreJudgedByWhatTheyClaim() throws {
        let base = try X.crashedStore(commits: 30)
        let records = try Self.frames(base)
        let path = X.path(records[0].file)
        let original = try #require(base.contents(path))
        let lost = records[19]
        let zeroed = ByteMutators.zero(original, lost.offset..<(lost.offset + lost.frameBytes))
        func withWatermarks(_ bytes: [UInt8], _ value: UInt64) -> [UInt8] {
            var out = bytes
            for record in records[20...] {
                out = ByteMutators.setU64(out, at: record.offset + 32, value)
                out = ByteMutators.fixFrameChecksum(out, at: record.offset)
            }
            return out
        }
        // A watermark far beyond the journal proves nothing less: refused.
        let huge = base.copy()
        huge.setContents(path, withWatermarks(zeroed, .max))
        #expect(try X.problems(huge).first?.kind == .zeroed)
        #expect(throws: TrellisError.self) { try Self.open(huge, .pointInTime).close() }
        // Watermarks saying "nothing after the hole was durable" are believed (they are under the checksum) ...
        let unacknowledged = base.copy()
        unacknowledged.setContents(path, withWatermarks(zeroed, 19))
        #expect(try X.problems(unacknowledged).map(\.kind) == [.unacknowledgedHole])
        let store = try Self.open(unacknowledged, .pointInTime)
        #expect(store.snapshot.sequence == 19 && store.recoveryReport?.droppedRecords == 10)
        try store.close()
        // ... unless the manifest's durable sequence covers the hole: never tolerated.
        let covered = base.copy()
        covered.setContents(path, withWatermarks(zeroed, 19))
        var manifest = try Manifest.parse(
            try #require(covered.contents(X.path(JournalFormat.manifestName))), file: JournalFormat.manifestName)
        manifest.durableSequence = 25
        covered.setContents(X.path(JournalFormat.manifestName), manifest.encoded())
        #expect(try X.problems(covered).first?.kind == .zeroed)
        #expect(throws: TrellisError.self) { try Self.open(covered, .pointInTime).close() }
        // A record after the hole numbered before it is no writer's: refused.
        let stale = base.copy()
        var bytes = withWatermarks(zeroed, 0)
        bytes = ByteMutators.setU64(bytes, at: records[25].offset + 16, 3)
        bytes = ByteMutators.fixFrameChecksum(bytes, at: records[25].offset)
        stale.setContents(path, bytes)
        #expect(try X.problems(stale).first?.kind == .zeroed)
        #expect(throws: TrellisError.self) { try Self.open(stale, .pointInTime).close() }
    }

    @Test("D4: a hole in a version-5 segment (no watermarks) is still refused under .pointInTime")
    func aHoleInAVersionFiveSegmentIsRefusedUnderPointInTime() throws {
        // The same store as a version-5 build writes it: 32-byte frame headers, a version-5 manifest.
        let five = try Self.batchStore()
        let segment = X.path(try Self.frames(five)[0].file)
        five.setContents(segment, ByteMutators.downgraded(try #require(five.contents(segment)), to: 5))
        var manifest = try #require(five.contents(X.path(JournalFormat.manifestName)))
        manifest[8] = 5
        manifest = ByteMutators.setU32(manifest, at: 72, Zlib.crc32(0, manifest[0..<72]))
        five.setContents(X.path(JournalFormat.manifestName), manifest)
        #expect(try X.problems(five) == [])
        #expect(try Self.frames(five).allSatisfy { $0.syncedThrough == 0 && $0.frameBytes % 8 == 0 })

        let holed = five.copy()
        let record = try Self.zeroRecord(holed, 15)
        let problems = try X.problems(holed)
        #expect(problems.first?.kind == .zeroed && problems.first?.offset == record.offset, "\(problems)")
        #expect(!problems.contains { $0.kind == .unacknowledgedHole })
        for policy in [StoreOptions.Recovery.pointInTime, .tolerateTornTail] {
            #expect(throws: TrellisError.self) { try Self.open(holed, policy).close() }
        }
        // Without the hole it opens under .pointInTime, and records appended to its version-5 segment take that
        // version's frames (no watermark), so the segment reads as one version throughout.
        let store = try Self.open(five, .pointInTime)
        #expect(store.snapshot.sequence == 40)
        try CrashWorkload.commit(41, to: store)
        try store.close()
        #expect(try X.problems(five) == [])
        let appended = try #require(try Self.frames(five).last)
        #expect(appended.sequence == 41 && appended.syncedThrough == 0)
        #expect(five.contents(segment)?[8] == 5)
    }

    @Test("D4: across processes: a child refuses a hole, a --point-in-time child opens at the prefix and goes on")
    func holeAcrossProcesses() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        let first = try CrashChild.run(["run", "--dir", store.path, "--commits", "30"])
        #expect(first.lines.last == "closed 30", "\(first.lines.suffix(3))")
        // Records 31…35 appended by this process on a copy (the same segment file, salt and all), then put back
        // under the child's manifest (durable sequence 30): the five records a crash after their write leaves.
        let copy = temporary.url.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: store, to: copy)
        let writer = try Store(
            directory: copy, schema: CrashWorkload.schema, options: StoreOptions(compaction: .manual))
        for n in 31...35 { try CrashWorkload.commit(n, to: writer) }
        try writer.close()
        var records: [JournalRecord] = []
        _ = try JournalReader(directory: copy).forEachRecord { records.append($0) }
        #expect(records.count == 35)
        let name = records[34].file
        var bytes = [UInt8](try Data(contentsOf: copy.appendingPathComponent(name)))
        let lost = records[31]
        bytes = ByteMutators.zero(bytes, lost.offset..<(lost.offset + lost.frameBytes))
        try Data(bytes).write(to: store.appendingPathComponent(name))
        // As written (per-commit), record 33 was written once 32 was durable: acknowledged data is gone.
        let proven = try CrashChild.run(["run", "--dir", store.path, "--commits", "40", "--point-in-time"])
        #expect(proven.exitStatus == 1 && proven.opened == nil, "\(proven.lines)")
        #expect(proven.lines.contains { $0.contains("record 33 at offset \(records[32].offset) was written") })

        // Written in one unsynced batch after 30, as a group commit writes them: nothing after the hole was acked.
        for record in records[30...] where record.sequence != lost.sequence {
            bytes = ByteMutators.setU64(bytes, at: record.offset + 32, 30)
            bytes = ByteMutators.fixFrameChecksum(bytes, at: record.offset)
        }
        try Data(bytes).write(to: store.appendingPathComponent(name))
        #expect(try X.problems(store).map(\.kind) == [.unacknowledgedHole])
        let refused = try CrashChild.run(["run", "--dir", store.path, "--commits", "40"])
        #expect(refused.exitStatus == 1 && refused.opened == nil, "\(refused.lines)")
        #expect(refused.lines.contains { $0.contains(": unacknowledged hole: ") }, "\(refused.lines)")
        let recovered = try CrashChild.run(["run", "--dir", store.path, "--commits", "40", "--point-in-time"])
        #expect(recovered.opened == 31 && recovered.lines.last == "closed 40", "\(recovered.lines.suffix(3))")
        let backup = "torn-\(JournalFormat.hex16(1))-\(JournalFormat.hex16(UInt64(lost.offset))).bak"
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent(backup).path))
        let reopened = try CrashChild.run(["run", "--dir", store.path, "--commits", "40"])
        #expect(reopened.opened == 40 && reopened.lines.last == "closed 40", "\(reopened.lines.suffix(3))")
        #expect(try X.problems(store) == [])
    }
}
