import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A crash in the middle of an append leaves a torn tail: recovery drops it (backed up), reports the bytes, and the
/// store holds exactly the commits before it.
@Suite struct JournalTornTailTests {
    /// A store of 50 one-insert commits on a simulated disk, closed, with every version it published.
    static func fiftyRecordStore() throws -> (SimulatedFileLayer, [Graph]) {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        var versions = [store.snapshot]
        for i in 0..<50 {
            var tx = store.transaction()
            try tx.insert("Tag", ["label": .string("tag \(i) " + String(repeating: "x", count: i % 7))])
            versions.append(try store.commit(tx).snapshot)
        }
        try store.close()
        // As a crash after the 50 commits leaves it: a clean close's manifest would make a cut tail a vanished tail.
        try CrashExpectations.forgetCleanClose(disk)
        return (disk, versions)
    }

    static let segment = SimulatedFileLayer.storePath + "/" + JournalFormat.segmentName(1)

    @Test func truncatingTheLastSegmentAtEveryOffsetReopensToAPrefixAndReportsDroppedBytes() throws {
        let (disk, versions) = try Self.fiftyRecordStore()
        let bytes = try #require(disk.contents(Self.segment))
        var ends: [Int] = []
        try JournalReader(path: SimulatedFileLayer.storePath, layer: disk).forEachRecord { record in
            ends.append(record.offset + RecordFrame.align(FrameHeader.currentSize + record.storedBytes))
        }
        #expect(ends.count == 50 && ends.last == bytes.count)
        let start = try FileHeader.parse(
            Array(bytes.prefix(Int(FileHeader.length(Array(bytes.prefix(16)), magic: JournalFormat.segmentMagic)!))),
            magic: JournalFormat.segmentMagic, file: "s"
        ).encoded().count
        for cut in start...bytes.count {
            let copy = disk.copy()
            copy.setContents(Self.segment, Array(bytes.prefix(cut)))
            let store = try copy.open()
            let kept = ends.filter { $0 <= cut }.count
            let validEnd = kept == 0 ? start : ends[kept - 1]
            // A cut that leaves only zero bytes of the next frame (its checksum may start with zeros) leaves what
            // reserved space looks like: the journal ends there and nothing is dropped.
            let zeros = bytes[validEnd..<cut].allSatisfy { $0 == 0 }
            #expect(store.snapshot.sequence == UInt64(kept), "cut at \(cut)")
            #expect(store.recoveryReport?.droppedBytes == (zeros ? 0 : cut - validEnd), "cut at \(cut)")
            if cut % 97 == 0 || cut == bytes.count - 1 {
                #expect(GraphEquality.differences(versions[kept], store.snapshot) == [])
                if cut > validEnd && !zeros {
                    let backup = try #require(store.recoveryReport?.tailBackup)
                    #expect(copy.contents(SimulatedFileLayer.storePath + "/" + backup) == Array(bytes[validEnd..<cut]))
                    #expect(store.recoveryReport?.tornTail?.kind == .tornTail)
                }
                // The store appends after the cut, and the next open finds no damage.
                var tx = store.transaction()
                try tx.insert("Tag", ["label": "after"])
                try store.commit(tx)
                try store.close()
                let again = try copy.open()
                #expect(again.snapshot.sequence == UInt64(kept + 1))
                #expect(again.recoveryReport?.droppedBytes == 0)
                try again.close()
            } else {
                try store.close()
            }
        }
    }

    @Test func strictRecoveryRefusesATornTail() throws {
        let (disk, _) = try Self.fiftyRecordStore()
        let bytes = try #require(disk.contents(Self.segment))
        disk.setContents(Self.segment, Array(bytes.dropLast(5)))
        var options = disk.options()
        options.recovery = .strict
        let error = try #require(throws: TrellisError.self) { try disk.open(JournalWorkload.schema, options) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("torn tail") && error.message.contains(JournalFormat.segmentName(1)))
    }

    @Test func zeroFilledTailIsReservedSpaceNotDamage() throws {
        let (disk, versions) = try Self.fiftyRecordStore()
        let bytes = try #require(disk.contents(Self.segment))
        disk.setContents(Self.segment, bytes + [UInt8](repeating: 0, count: 4096))
        let store = try disk.open()
        #expect(store.recoveryReport?.droppedBytes == 0 && store.recoveryReport?.tornTail == nil)
        #expect(GraphEquality.differences(versions[50], store.snapshot) == [])
        // The next record goes where the zeros start, and the next open reads all 51.
        try store.write { tx in try tx.insert("Tag", ["label": "after"]) }
        try store.close()
        let again = try disk.open()
        #expect(again.snapshot.sequence == 51 && again.recoveryReport?.droppedBytes == 0)
        try again.close()
    }

    @Test func aHugeLengthInTheLastRecordAllocatesNothingAndIsDropped() throws {
        let (disk, versions) = try Self.fiftyRecordStore()
        var bytes = try #require(disk.contents(Self.segment))
        var last = 0
        try JournalReader(path: SimulatedFileLayer.storePath, layer: disk).forEachRecord { last = $0.offset }
        bytes.replaceSubrange((last + 4)..<(last + 8), with: [0xff, 0xff, 0xff, 0x7f])
        disk.setContents(Self.segment, bytes)
        let store = try disk.open()
        #expect(store.snapshot.sequence == 49)
        #expect(GraphEquality.differences(versions[49], store.snapshot) == [])
        #expect(store.recoveryReport?.droppedBytes == bytes.count - last)
        try store.close()
    }
}
