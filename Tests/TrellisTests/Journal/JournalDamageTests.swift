import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Damage that a crash cannot explain is refused by default, named by file, offset and class; salvage keeps the rest.
@Suite struct JournalDamageTests {
    static let directory = SimulatedFileLayer.storePath

    /// Where each record of the store's journal starts, in order.
    static func recordOffsets(_ disk: SimulatedFileLayer) throws -> [(file: String, offset: Int)] {
        var out: [(String, Int)] = []
        try JournalReader(path: directory, layer: disk).forEachRecord { out.append(($0.file, $0.offset)) }
        return out
    }

    @Test func flippedByteInAMiddleRecordRefusesWithFileOffsetAndClassAndSalvageKeepsTheOthers() throws {
        let (disk, _) = try JournalTornTailTests.fiftyRecordStore()
        let offsets = try Self.recordOffsets(disk)
        let (file, offset) = offsets[19]
        let path = Self.directory + "/" + file
        var bytes = try #require(disk.contents(path))
        bytes[offset + FrameHeader.currentSize + 2] ^= 0x10
        disk.setContents(path, bytes)

        let error = try #require(throws: TrellisError.self) { try disk.open() }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("\(file) at offset \(offset): checksum"))
        #expect(error.message.contains("a valid record follows"))
        let verification = try JournalReader(path: Self.directory, layer: disk).verify()
        #expect(verification.problems.map(\.kind) == [.checksum])
        #expect(verification.problems.first?.offset == offset)

        var options = disk.options()
        options.recovery = .salvage
        let salvaged = try disk.open(JournalWorkload.schema, options)
        #expect(try salvaged.snapshot.count("Tag") == 49)
        let labels = try salvaged.snapshot.objectIDs("Tag").map { try salvaged.snapshot.value($0, "label")! }
        #expect(!labels.contains(.string("tag 19 " + String(repeating: "x", count: 19 % 7))))
        #expect(salvaged.recoveryReport?.skipped.map(\.kind) == [.checksum])
        var tx = salvaged.transaction()
        try tx.insert("Tag", ["label": "after salvage"])
        try salvaged.commit(tx)
        try salvaged.close()
        // Salvage rewrote the store: a normal open now finds nothing wrong, and the damaged segment is kept aside.
        let reopened = try disk.open()
        #expect(try reopened.snapshot.count("Tag") == 50)
        #expect(disk.names().contains(JournalFormat.segmentName(1) + ".damaged"))
        try reopened.close()
        #expect(try JournalReader(path: Self.directory, layer: disk).verify().problems == [])
    }

    @Test func zeroedRangeWithValidRecordsAfterItIsCorruptionNotATornTail() throws {
        let (disk, _) = try JournalTornTailTests.fiftyRecordStore()
        let offsets = try Self.recordOffsets(disk)
        let path = Self.directory + "/" + offsets[10].file
        var bytes = try #require(disk.contents(path))
        for i in offsets[10].offset..<offsets[13].offset { bytes[i] = 0 }
        disk.setContents(path, bytes)
        let error = try #require(throws: TrellisError.self) { try disk.open() }
        #expect(error.message.contains("offset \(offsets[10].offset): zeroed"))
    }

    @Test func missingMiddleSegmentAndDamagedEarlierSegmentAreRefused() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(JournalWorkload.schema, disk.small)
        for i in 0..<60 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("tag \(i)")])
            try store.commit(tx)
        }
        try store.close()
        let segments = disk.names().filter { JournalFormat.segmentID($0) != nil }
        #expect(segments.count >= 4)

        let damaged = disk.copy()
        let second = Self.directory + "/" + segments[1]
        damaged.setContents(second, Array(damaged.contents(second)!.dropLast(3)))
        let error = try #require(throws: TrellisError.self) { try damaged.open(JournalWorkload.schema, damaged.small) }
        #expect(error.code == .corrupt && error.message.contains(segments[1]) && error.message.contains("length"))

        let missing = disk.copy()
        try missing.remove(Self.directory + "/" + segments[1])
        let gone = try #require(throws: TrellisError.self) { try missing.open(JournalWorkload.schema, missing.small) }
        #expect(gone.message.contains("missing file") && gone.message.contains(segments[1]))
        #expect(
            try JournalReader(path: Self.directory, layer: missing).verify().problems.map(\.kind).contains(.missingFile)
        )
    }

    @Test func sequenceGapBetweenSegmentsIsRefused() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(JournalWorkload.schema, disk.small)
        for i in 0..<30 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("tag \(i)")])
            try store.commit(tx)
        }
        try store.close()
        // Drop the last record of the first segment: the second segment then starts one past where the first ends.
        let offsets = try Self.recordOffsets(disk)
        let first = offsets.filter { $0.file == JournalFormat.segmentName(1) }
        let path = Self.directory + "/" + JournalFormat.segmentName(1)
        disk.setContents(path, Array(disk.contents(path)!.prefix(first.last!.offset)))
        let error = try #require(throws: TrellisError.self) { try disk.open(JournalWorkload.schema, disk.small) }
        #expect(error.message.contains("sequence gap") && error.message.contains(JournalFormat.segmentName(2)))
    }

    @Test func damagedManifestIsRefusedAndOrphanTemporariesAreCleanedAfterAGoodOpen() throws {
        let (disk, _) = try JournalTornTailTests.fiftyRecordStore()
        let manifest = Self.directory + "/" + JournalFormat.manifestName
        let good = try #require(disk.contents(manifest))
        var bad = good
        bad[30] ^= 4
        disk.setContents(manifest, bad)
        let error = try #require(throws: TrellisError.self) { try disk.open() }
        #expect(error.code == .corrupt && error.message.contains("manifest"))
        disk.setContents(manifest, good)
        let orphan = try disk.open(Self.directory + "/MANIFEST.tmp", .create)
        try orphan.write([1, 2, 3], at: 0)
        let store = try disk.open()
        #expect(store.recoveryReport?.removedFiles == ["MANIFEST.tmp"])
        #expect(!disk.names().contains("MANIFEST.tmp"))
        try store.close()
    }

    @Test func reopeningWithASchemaThatWouldLoseDataIsRefusedSayingWhatChanged() throws {
        let (disk, _) = try JournalTornTailTests.fiftyRecordStore()
        var entities = JournalWorkload.schema.entities
        entities[2].attributes[0].type = .int
        let other = try Schema(entities)
        let error = try #require(throws: TrellisError.self) { try disk.open(other) }
        #expect(error.code == .migrationRefused)
        #expect(error.message.contains("Tag.label: changing its type from String to Int can lose data"))
    }
}

extension SimulatedFileLayer {
    /// Options with 600-byte segments, so a few dozen commits span many segments.
    var small: StoreOptions {
        var options = self.options()
        options.segmentBytes = 600
        return options
    }
}

/// Bad input never crashes a reader or allocates without bound: random mutations of a segment, a checkpoint and the
/// manifest either open (to a valid graph) or are refused with `.corrupt`.
@Suite struct JournalMutationTests {
    @Test func randomMutationsOpenToAValidGraphOrAreRefused() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try JournalWorkload.run(store, seed: 21, commits: 30) { n in if n == 15 { try store.compact() } }
        try store.close()
        let files = disk.names().filter { $0 != JournalFormat.lockName }
        var random = SeededRandom(seed: 2024)
        var opened = 0
        var refused = 0
        for round in 0..<300 {
            let copy = disk.copy()
            let name = files[round % files.count]
            let path = SimulatedFileLayer.storePath + "/" + name
            var bytes = try #require(copy.contents(path))
            switch random.below(4) {
            case 0: bytes[random.below(bytes.count)] ^= UInt8(1 << random.below(8))
            case 1: bytes = Array(bytes.prefix(random.below(bytes.count)))
            case 2:
                let start = random.below(bytes.count)
                for i in start..<min(bytes.count, start + 1 + random.below(64)) { bytes[i] = 0 }
            default:
                let at = random.below(max(1, bytes.count - 4)) & ~3
                bytes.replaceSubrange(at..<min(bytes.count, at + 4), with: [0xff, 0xff, 0xff, 0x7f])
            }
            copy.setContents(path, bytes)
            for recovery in [StoreOptions.Recovery.tolerateTornTail, .salvage] {
                var options = copy.options()
                options.recovery = recovery
                let trial = copy.copy()
                options.fileLayer = trial
                do {
                    let s = try trial.open(JournalWorkload.schema, options)
                    #expect(s.snapshot.invariantViolations() == [], "\(name) round \(round)")
                    try s.close()
                    opened += 1
                } catch let error as TrellisError {
                    #expect([.corrupt, .schemaMismatch].contains(error.code), "\(name) round \(round): \(error)")
                    refused += 1
                }
            }
            _ = try? JournalReader(path: SimulatedFileLayer.storePath, layer: copy).verify()
        }
        #expect(opened > 0 && refused > 0)
    }
}
