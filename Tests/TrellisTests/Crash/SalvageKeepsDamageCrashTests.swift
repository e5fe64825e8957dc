import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// D5 (issue 23, item 5): a salvage open rewrites the store as a checkpoint and stops using the damaged segments and
/// the old checkpoint. Crashed after every prefix of its file operations, under four crash policies, and opened
/// again (which removes files no manifest names), the skipped bytes and the old checkpoint are still on the disk,
/// and the open's report names the `*.damaged` files that hold them.
@Suite struct SalvageKeepsDamageCrashTests {
    typealias X = CrashExpectations

    static let segmentBytes = 3_000

    /// A closed store of 30 commits over several segments, checkpoint 10, with record 16 damaged (a flipped payload
    /// bit); the damaged frame's bytes and the old checkpoint's.
    static func damagedStore() throws -> (disk: SimulatedFileLayer, frame: [UInt8], checkpoint: [UInt8]) {
        let disk = SimulatedFileLayer()
        let store = try X.open(disk, segmentBytes: segmentBytes)
        for n in 1...30 {
            try CrashWorkload.commit(n, to: store)
            if n == 10 { try store.compact() }
        }
        try store.close()
        let records = try X.records(disk)
        let (file, offset, end) = records[5]
        var bytes = disk.contents(X.path(file))!
        bytes[offset + FrameHeader.currentSize + 3] ^= 0x40
        disk.setContents(X.path(file), bytes)
        let checkpoint = disk.contents(X.path(JournalFormat.checkpointName(10)))!
        #expect(throws: TrellisError.self) { try X.open(disk, segmentBytes: segmentBytes) }
        return (disk, Array(bytes[offset..<end]), checkpoint)
    }

    /// The names of the store's files that hold `bytes` (anywhere in them).
    static func holders(_ bytes: [UInt8], on disk: SimulatedFileLayer) throws -> [String] {
        try disk.list(X.directory).sorted().filter { name in
            guard let data = disk.contents(X.path(name)), data.count >= bytes.count else { return false }
            var i = 0
            while i + bytes.count <= data.count {
                if data[i] == bytes[0] && Array(data[i..<i + bytes.count]) == bytes { return true }
                i += 1
            }
            return false
        }
    }

    @Test(
        "D5: every prefix of a salvage's operations, crashed and opened again, keeps the skipped bytes and the old checkpoint",
        arguments: [
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: false),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: false),
        ])
    func everyPrefixOfASalvageKeepsWhatItSkips(policy: SimulatedFileLayer.CrashPolicy) throws {
        let (damaged, frame, checkpoint) = try Self.damagedStore()
        let full = damaged.copy()
        let salvaged = try X.open(full, segmentBytes: Self.segmentBytes, recovery: .salvage)
        let operations = full.events
        let report = try #require(salvaged.recoveryReport)
        try salvaged.close()
        #expect(!report.skipped.isEmpty)
        #expect(report.damagedFiles.contains { $0.hasPrefix("checkpoint-") } && report.damagedFiles.count >= 2)
        #expect(operations.contains { $0.operation == .link })
        for prefix in 0...operations.count {
            let disk = damaged.copy()
            disk.halt(afterOperations: prefix)
            if let store = try? X.open(disk, segmentBytes: Self.segmentBytes, recovery: .salvage) {
                _ = try? store.close()
            }
            let after = disk.crash(policy)
            #expect(try !Self.holders(frame, on: after).isEmpty, "prefix \(prefix): the skipped bytes are gone")
            #expect(try !Self.holders(checkpoint, on: after).isEmpty, "prefix \(prefix): the old checkpoint is gone")
            // Opening again finishes or redoes the salvage, and removes whatever no manifest names.
            let reopened = try X.open(after, segmentBytes: Self.segmentBytes, recovery: .salvage)
            let kept = reopened.recoveryReport?.damagedFiles ?? []
            try reopened.close()
            let frameHolders = try Self.holders(frame, on: after)
            let checkpointHolders = try Self.holders(checkpoint, on: after)
            #expect(!frameHolders.isEmpty && !checkpointHolders.isEmpty, "prefix \(prefix) after reopening")
            // The report names files that hold them, and those are not files the store uses.
            #expect(frameHolders.contains { kept.contains($0) }, "prefix \(prefix): \(frameHolders) \(kept)")
            #expect(checkpointHolders.contains { kept.contains($0) }, "prefix \(prefix): \(checkpointHolders) \(kept)")
            #expect(kept.allSatisfy { $0.contains(".damaged") })
            #expect(try X.problems(after) == [], "prefix \(prefix)")
        }
    }

    @Test("D5: a link or directory sync failing before the manifest fails the salvage and leaves the store as it was")
    func aFailedLinkLeavesTheOldStore() throws {
        for operation in [SimulatedFileLayer.Operation.link, .syncDirectory] {
            let (damaged, frame, _) = try Self.damagedStore()
            let disk = damaged.copy()
            let manifest = try JournalReader(path: X.directory, layer: disk).manifest()
            disk.inject(.init(operation, pathContains: operation == .link ? "checkpoint" : nil, persistent: true))
            #expect(throws: TrellisError.self) {
                try X.open(disk, segmentBytes: Self.segmentBytes, recovery: .salvage)
            }
            // Rotation may have added an empty segment; the checkpoint and the first segment are the old ones.
            let now = try JournalReader(path: X.directory, layer: disk).manifest()
            #expect(now.checkpointSequence == manifest.checkpointSequence, "\(operation)")
            #expect(now.firstSegment == manifest.firstSegment, "\(operation)")
            #expect(try !Self.holders(frame, on: disk).isEmpty)
        }
    }
}
