import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix cases 4, 5 and 6: damage that a crash cannot explain (valid records follow it) is refused, named by file,
/// offset and class; salvage keeps everything else; a damaged length never makes the reader allocate what it says.
@Suite struct CorruptionCrashTests {
    typealias X = CrashExpectations

    static func expectRefusal(
        _ disk: SimulatedFileLayer, file: String, offset: Int, kinds: Set<JournalProblem.Kind>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(throws: TrellisError.self, sourceLocation: sourceLocation) { try X.open(disk) }
        #expect(error.code == .corrupt, sourceLocation: sourceLocation)
        #expect(error.message.contains("\(file) at offset \(offset):"), "\(error)", sourceLocation: sourceLocation)
        let problems = try X.problems(disk)
        #expect(!problems.isEmpty && kinds.contains(problems[0].kind), "\(problems)", sourceLocation: sourceLocation)
        #expect(problems.first?.file == file && problems.first?.offset == offset, sourceLocation: sourceLocation)
        // What follows the damage only reports its consequences: records that do not continue the sequence or no
        // longer apply once the damaged one is skipped.
        for problem in problems.dropFirst() {
            #expect(
                [.sequenceGap, .decode].contains(problem.kind) && problem.offset > offset, "\(problem)",
                sourceLocation: sourceLocation)
        }
    }

    @Test("4: every bit flipped in a middle record refuses the open at its offset; salvage keeps the other records")
    func everyFlippedBitOfAMiddleRecordIsRefusedAtItsOffsetAndSalvageKeepsTheRest() throws {
        let disk = try X.store(commits: 49)
        let records = try X.records(disk)
        let (name, offset, _) = records[24]
        let bytes = try #require(disk.contents(X.path(name)))
        // Every checked bit: header and payload (the padding after the payload carries nothing).
        let checked = FrameHeader.currentSize + Int(ByteMutators.u32(bytes, offset + 4))
        for bit in (offset * 8)..<((offset + checked) * 8) {
            let copy = disk.copy()
            copy.setContents(X.path(name), ByteMutators.flipBit(bytes, bit))
            try Self.expectRefusal(copy, file: name, offset: offset, kinds: [.checksum, .length])
            guard bit % 101 == 0 else { continue }
            let salvaged = try X.open(copy, recovery: .salvage)
            let skipped = salvaged.recoveryReport?.skipped ?? []
            #expect(skipped.first?.offset == offset && skipped.dropFirst().allSatisfy { $0.kind == .sequenceGap })
            // Everything but transaction 25's item is there, as in the full store.
            let full = X.versions[49]
            let item25 = CrashWorkload.item(25)
            #expect(!salvaged.snapshot.contains(item25))
            for entity in [CrashWorkload.folderEntity, CrashWorkload.itemEntity] {
                let expected = full.objectIDs(entity: entity).filter { $0 != item25 }
                #expect(salvaged.snapshot.objectIDs(entity: entity) == expected)
                for id in expected { #expect(salvaged.snapshot.row(id) == full.row(id)) }
            }
            try salvaged.close()
            #expect(try X.problems(copy) == [])
        }
    }

    @Test("5: a huge length field costs no huge allocation: refused in a middle record, dropped in the last")
    func hugeLengthFieldsAllocateNothingAndAreClassified() throws {
        // Never closed: damage to the last record is then a torn tail (after a clean close, a vanished tail: D2).
        let disk = try X.crashedStore(commits: 49)
        let records = try X.records(disk)
        let name = records[0].file
        let bytes = try #require(disk.contents(X.path(name)))
        // Stored length (offset 4) and uncompressed length (offset 12), with the checksum left stale and made right.
        for (field, value) in [(4, UInt32.max), (4, 0x7fff_fff0), (12, UInt32.max), (12, 0x2000_0000)] {
            for fix in [false, true] {
                for (index, last) in [(24, false), (48, true)] {
                    var damaged = ByteMutators.setU32(bytes, at: records[index].offset + field, value)
                    if fix { damaged = ByteMutators.fixFrameChecksum(damaged, at: records[index].offset) }
                    let copy = disk.copy()
                    copy.setContents(X.path(name), damaged)
                    copy.resetLargestRead()
                    if last && field == 12 && !fix {
                        // The whole last record with a stale checksum ends in a non-zero byte (format version 7's
                        // author field): rot, refused, not a torn write.
                        try Self.expectRefusal(copy, file: name, offset: records[index].offset, kinds: [.rot])
                    } else if last {
                        let store = try X.open(copy)
                        X.expectPrefix(store.snapshot, acknowledged: 48)
                        #expect(store.snapshot.sequence == 48)
                        try store.close()
                    } else {
                        try Self.expectRefusal(
                            copy, file: name, offset: records[index].offset, kinds: [.length, .checksum, .decode])
                    }
                    // Nothing read or inflated beyond the file's own size.
                    #expect(copy.largestRead <= damaged.count, "field \(field) = \(value), fix \(fix)")
                }
            }
        }
    }

    @Test("6: a zeroed range in the middle with valid records after it is corruption, not a torn tail")
    func zeroedMiddleRangeWithValidRecordsAfterItIsCorruption() throws {
        let disk = try X.store(commits: 49)
        let records = try X.records(disk)
        let name = records[0].file
        let bytes = try #require(disk.contents(X.path(name)))
        for (from, to) in [(10, 11), (10, 13), (30, 40), (47, 48)] {
            let copy = disk.copy()
            copy.setContents(X.path(name), ByteMutators.zero(bytes, records[from].offset..<records[to].offset))
            try Self.expectRefusal(copy, file: name, offset: records[from].offset, kinds: [.zeroed])
            let message = try X.problems(copy)[0].message
            #expect(message.contains("a valid record follows at offset \(records[to].offset)"))
        }
    }
}
