import Dispatch
import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Bugs the crash suite found in the journal, each kept as the case that found it.
@Suite struct CrashRegressionTests {
    typealias X = CrashExpectations

    /// Runs `body` on a thread of its own; false when it has not returned after `seconds` (a hang).
    static func returns(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Found by the fuzzer: a salvage open waited for its rewrite's ticket, and close waited for the same ticket
    /// again, which a semaphore had already handed out: close hung for ever.
    @Test func closingAStoreThatSalvageRewroteReturns() throws {
        let disk = try X.store(commits: 30)
        let records = try X.records(disk)
        let path = X.path(records[10].file)
        disk.setContents(path, ByteMutators.flipBit(disk.contents(path)!, (records[10].offset + 40) * 8))
        let store = try X.open(disk, recovery: .salvage)
        #expect(store.recoveryReport?.skipped.first?.offset == records[10].offset)
        #expect(Self.returns(within: 20) { try? store.close() }, "close hung after a salvage rewrite")
    }

    /// Found by the fuzzer: a manifest (checksum intact) naming segments 2…2^44 made open, verify and recovery walk
    /// every id in the range, one problem each: unbounded time and memory.
    @Test func aManifestNamingBillionsOfMissingSegmentsIsRefusedAtOnce() throws {
        let disk = try X.store(commits: 20, segmentBytes: 2_048)
        let manifestPath = X.path(JournalFormat.manifestName)
        var manifest = try Manifest.parse(disk.contents(manifestPath)!, file: "MANIFEST")
        manifest.lastSegment += 1 << 44
        disk.setContents(manifestPath, manifest.encoded())
        let outcome = Self.returns(within: 20) {
            let problems = (try? X.problems(disk)) ?? []
            #expect(problems.filter { $0.kind == .missingFile }.count == 1, "\(problems.prefix(3))")
            for recovery in [StoreOptions.Recovery.tolerateTornTail, .salvage] {
                #expect(throws: TrellisError.self) { try X.open(disk, recovery: recovery) }
            }
        }
        #expect(outcome, "a huge segment range was walked id by id")
        // Ids past 2^60 are refused as damage: `+ 1` on them could trap.
        manifest.lastSegment = UInt64.max
        disk.setContents(manifestPath, manifest.encoded())
        let error = try #require(throws: TrellisError.self) { try X.open(disk) }
        #expect(error.message.contains("MANIFEST") && error.message.contains("out of range"))
    }

    /// Found while fixing the segment range (by reading): sequence numbers read from disk were incremented and
    /// decremented with trapping arithmetic (a record numbered 2^64 - 1; a segment that starts at 0).
    @Test func sequenceNumbersAtTheEndsOfTheRangeAreDamageNotATrap() throws {
        let disk = try X.store(commits: 20)
        let records = try X.records(disk)
        let path = X.path(records[0].file)
        var bytes = disk.contents(path)!
        bytes = ByteMutators.setU64(bytes, at: records[19].offset + 16, UInt64.max)
        bytes = ByteMutators.fixFrameChecksum(bytes, at: records[19].offset)
        let topOfRange = disk.copy()
        topOfRange.setContents(path, bytes)
        #expect(try X.problems(topOfRange).map(\.kind) == [.sequenceGap])
        #expect(throws: TrellisError.self) { try X.open(topOfRange) }

        // A first segment that claims to start at sequence 0 and holds no record, followed by another segment.
        let segmented = try X.store(commits: 20, segmentBytes: 2_048)
        let first = X.path(JournalFormat.segmentName(1))
        let header = try FileHeader.parse(
            Array(segmented.contents(first)!.prefix(Int(ByteMutators.u32(segmented.contents(first)!, 12)))),
            magic: JournalFormat.segmentMagic, file: "segment 1")
        var empty = header
        empty.sequence = 0
        segmented.setContents(first, empty.encoded())
        let problems = try X.problems(segmented)
        #expect(problems.first?.kind == .sequenceGap && problems.first?.offset == 24)
    }

    /// Found by reading: a count limit below zero (an empty schema's entity count - 1) trapped in `UInt64(limit)`.
    @Test func aNegativeLimitRefusesEveryNumberInsteadOfTrapping() throws {
        var reader = ByteReader([0], context: "test")
        let error = try #require(throws: TrellisError.self) { try reader.int(limit: -1) }
        #expect(error.code == .corrupt)
    }

    /// Found by case 14: when the rotation after a durable, published commit failed, the flusher completed that
    /// commit's ticket a second time with the failure, so the caller could be told "not saved" for a commit that
    /// readers already saw and that every reopen recovers.
    @Test func aCommitMadeDurableBeforeARotationFailsIsAcknowledged() throws {
        for _ in 0..<20 {
            let disk = SimulatedFileLayer()
            let store = try X.open(disk, segmentBytes: 600)
            disk.inject(.init(.sync, pathContains: JournalFormat.temporarySuffix, error: EIO))
            var acknowledged = 0
            for n in 1...10 {
                guard (try? CrashWorkload.commit(n, to: store)) != nil else { break }
                acknowledged = n
            }
            #expect(store.failure != nil)
            #expect(acknowledged >= 1 && store.snapshot.sequence == UInt64(acknowledged))
            let after = disk.crash(.init(data: .dropUnsynced))
            let reopened = try X.open(after)
            #expect(reopened.snapshot.sequence == UInt64(acknowledged))
            try reopened.close()
        }
    }

    /// Found by case 16: when the directory sync after a rotation's manifest rename failed, a reopen on the same
    /// system read the new manifest (still only in the page cache), appended and acknowledged commits in the new
    /// segment, and a power cut then brought back the old manifest, which does not name that segment: acknowledged
    /// commits lost. Open now syncs the last segment and the directory before it takes commits.
    @Test func commitsAcknowledgedAfterReopeningOverAnUnsyncedManifestRenameSurviveAPowerCut() throws {
        let driver = CrashDriver(commits: 20, segmentBytes: 2_048, compactEvery: 0)
        let events = driver.cleanRun().events
        let renames = events.indices.filter { events[$0].operation == .rename && events[$0].path.hasSuffix("MANIFEST") }
        #expect(renames.count >= 3)
        for rename in renames.dropFirst() {
            let disk = SimulatedFileLayer()
            // The directory sync right after the manifest rename fails, once.
            disk.inject(.init([], nth: rename + 2, error: EIO))
            let first = driver.drive(disk)
            let acknowledged = driver.drive(disk, acknowledged: first)
            #expect(acknowledged == 20)
            let after = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
            let store = try X.open(after)
            X.expectPrefix(store.snapshot, acknowledged: acknowledged, "directory sync after operation \(rename + 1)")
            try store.close()
        }
    }

    /// Found by case 16 in the long mode: when the sync of the parent directory after creating the store directory
    /// failed (or the process died before it), the next open found the directory and never synced its entry, so a
    /// power cut could take the whole store, acknowledged commits and all. Both file layers now sync the parent of
    /// an existing directory too.
    @Test func aStoreDirectoryWhoseCreationWasNeverSyncedIsSyncedByTheNextOpen() throws {
        let disk = SimulatedFileLayer()
        disk.inject(.init(.syncDirectory, nth: 1, error: EIO))
        #expect(throws: TrellisError.self) { try X.open(disk) }
        let store = try X.open(disk)
        for n in 1...5 { try CrashWorkload.commit(n, to: store) }
        let after = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
        let reopened = try X.open(after)
        X.expectPrefix(reopened.snapshot, acknowledged: 5)
        try reopened.close()
    }

    /// Found by the fuzzer (directory target, 29 minutes in): salvage applied a record numbered 2^64 - 1 (checksum
    /// intact), and the rewrite that follows a salvage trapped on `sequence + 1` when it rotated. A record numbered
    /// backwards (a duplicate, a stale copy) was applied too, moving the sequence back. Both are skipped now.
    @Test func salvageSkipsRecordsNumberedBackwardsOrBeyondAnyRealStore() throws {
        for (index, sequence) in [(19, UInt64.max), (19, 1 << 60), (14, 3)] {
            let disk = try X.store(commits: 20)
            let records = try X.records(disk)
            let path = X.path(records[index].file)
            var bytes = disk.contents(path)!
            bytes = ByteMutators.setU64(bytes, at: records[index].offset + 16, sequence)
            disk.setContents(path, ByteMutators.fixFrameChecksum(bytes, at: records[index].offset))
            let store = try X.open(disk, recovery: .salvage)
            let skipped = store.recoveryReport?.skipped ?? []
            #expect(skipped.first?.kind == .sequenceGap && skipped.first?.offset == records[index].offset)
            #expect(store.snapshot.sequence == 20 || (index == 19 && store.snapshot.sequence == 19))
            try CrashWorkload.commit(Int(store.snapshot.sequence) + 1, to: store)
            try store.close()
        }
    }

    /// Found with the fix above: the graph took a checkpoint's sequence number from its header without checking it
    /// against the name the manifest chose it by.
    @Test func aCheckpointWhoseHeaderDisagreesWithItsNameIsRefused() throws {
        let disk = try X.store(commits: 20, compactEvery: 12)
        let manifestPath = X.path(JournalFormat.manifestName)
        var manifest = try Manifest.parse(disk.contents(manifestPath)!, file: "MANIFEST")
        let wrongName = JournalFormat.checkpointName(13)
        try disk.rename(X.path(JournalFormat.checkpointName(12)), to: X.path(wrongName))
        manifest.checkpointSequence = 13
        disk.setContents(manifestPath, manifest.encoded())
        let error = try #require(throws: TrellisError.self) { try X.open(disk) }
        #expect(error.message.contains("\(wrongName) at offset 24: header"), "\(error)")
        #expect(
            try X.problems(disk).first
                == JournalProblem(.header, file: wrongName, offset: 24, "holds sequence 12 but is named for 13"))
    }

    /// Found by the fuzzer (directory target, 28 minutes in, on the merged journal): a manifest whose generation was
    /// 2^64 - 1 (checksum intact) trapped on `generation += 1` at the next rotation (here: salvage's rewrite).
    @Test func aManifestGenerationAtTheTopOfTheRangeIsRefused() throws {
        let disk = try X.store(commits: 10)
        let path = X.path(JournalFormat.manifestName)
        var manifest = try Manifest.parse(disk.contents(path)!, file: "MANIFEST")
        manifest.generation = UInt64.max
        disk.setContents(path, manifest.encoded())
        for recovery in [StoreOptions.Recovery.tolerateTornTail, .salvage] {
            let error = try #require(throws: TrellisError.self) { try X.open(disk, recovery: recovery) }
            #expect(error.message.contains("MANIFEST") && error.message.contains("out of range"))
        }
    }
}
