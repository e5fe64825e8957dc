import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix cases 1, 2, 3 and 7: what a crash during an append leaves at the end of the last segment is a torn tail;
/// recovery drops exactly it and keeps every whole record before it.
@Suite struct TornTailCrashTests {
    typealias X = CrashExpectations

    /// The journal of 49 commits in one segment, with its bytes and where its records end. The store was not closed
    /// (a power cut after its last commit): a torn tail is what a crash leaves, and after a clean close the manifest
    /// says which records were durable, so the same cuts would be a vanished tail (case D2).
    static func journal() throws -> (disk: SimulatedFileLayer, name: String, bytes: [UInt8], ends: [Int], start: Int) {
        let disk = try X.crashedStore(commits: 49)
        let records = try X.records(disk)
        let name = records[0].file
        let bytes = try #require(disk.contents(X.path(name)))
        return (disk, name, bytes, records.map(\.end), records[0].offset)
    }

    /// Opens a damaged copy read-only and for writing; checks the prefix, the dropped bytes and verify's verdict.
    static func expectTornTail(
        _ disk: SimulatedFileLayer, name: String, kept: Int, validEnd: Int, size: Int, writable: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let problems = try X.problems(disk)
        // Only zero bytes after the last whole record (a cut inside a frame whose checksum starts with zeros) are
        // what reserved space looks like: the journal ends there, nothing is torn or dropped.
        let tail = try #require(disk.contents(X.path(name)))[validEnd..<size]
        let torn = !tail.allSatisfy { $0 == 0 }
        if torn {
            #expect(problems.map(\.kind) == [.tornTail], "\(problems)", sourceLocation: sourceLocation)
            #expect(problems.first?.file == name && problems.first?.offset == validEnd, sourceLocation: sourceLocation)
        } else {
            #expect(problems == [], sourceLocation: sourceLocation)
        }
        var options = X.options(disk)
        options.readOnly = !writable
        let store = try Store(
            directory: URL(fileURLWithPath: X.directory), schema: CrashWorkload.schema, options: options)
        let k = X.expectPrefix(store.snapshot, acknowledged: kept, "size \(size)", sourceLocation: sourceLocation)
        #expect(k == kept, sourceLocation: sourceLocation)
        #expect(store.recoveryReport?.droppedBytes == (torn ? size - validEnd : 0), sourceLocation: sourceLocation)
        try store.close()
        if writable { #expect(try X.problems(disk) == [], sourceLocation: sourceLocation) }
    }

    @Test("1: truncating the last segment at every byte offset recovers exactly the whole records before the cut")
    func truncationAtEveryOffsetRecoversExactlyTheWholeRecordsBeforeIt() throws {
        let (disk, name, bytes, ends, start) = try Self.journal()
        #expect(ends.count == 49 && ends.last == bytes.count)
        // Every offset in the long mode; in CI every third one (3 and the 8-byte alignment are coprime, so every
        // position within a frame word is still cut) and every offset of the last three records.
        let cuts = (start...bytes.count).filter { X.long || $0 % 3 == 0 || $0 >= ends[45] }
        for cut in cuts {
            let copy = disk.copy()
            copy.setContents(X.path(name), ByteMutators.truncate(bytes, to: cut))
            let kept = ends.filter { $0 <= cut }.count
            try Self.expectTornTail(
                copy, name: name, kept: kept, validEnd: kept == 0 ? start : ends[kept - 1], size: cut,
                writable: cut % 61 == 0)
        }
    }

    @Test("2: a garbage tail, or garbage in place of the last record, is dropped as a torn tail")
    func garbageTailAndGarbageLastRecordAreDroppedAsTornTail() throws {
        let (disk, name, bytes, ends, _) = try Self.journal()
        for seed in 0..<40 as Range<UInt64> {
            let tail = disk.copy()
            let garbage = ByteMutators.garble([UInt8](repeating: 0, count: 1 + Int(seed) * 37), 0..<2_000, seed: seed)
            tail.setContents(X.path(name), bytes + garbage)
            try Self.expectTornTail(
                tail, name: name, kept: 49, validEnd: bytes.count, size: bytes.count + garbage.count, writable: true)

            let last = disk.copy()
            last.setContents(X.path(name), ByteMutators.garble(bytes, ends[47]..<bytes.count, seed: seed))
            try Self.expectTornTail(
                last, name: name, kept: 48, validEnd: ends[47], size: bytes.count, writable: seed % 4 == 0)
        }
    }

    @Test("3: a zero-filled tail, as preallocation leaves it, is the end of the journal: every record kept")
    func zeroFilledTailIsTheEndOfTheJournal() throws {
        let (disk, name, bytes, _, _) = try Self.journal()
        for zeros in [1, 7, 8, 31, 32, 33, 512, 4_096, 65_536] {
            for writable in [false, true] {
                let copy = disk.copy()
                copy.setContents(X.path(name), bytes + [UInt8](repeating: 0, count: zeros))
                #expect(try X.problems(copy) == [], "\(zeros) zeros")
                var options = X.options(copy)
                options.readOnly = !writable
                let store = try Store(
                    directory: URL(fileURLWithPath: X.directory), schema: CrashWorkload.schema, options: options)
                #expect(X.expectPrefix(store.snapshot, acknowledged: 49, "\(zeros) zeros") == 49)
                #expect(store.recoveryReport?.droppedBytes == 0 && store.recoveryReport?.tornTail == nil)
                try store.close()
                // Nobody cuts them off (a reader may be reading the file): the writer appends over them.
                #expect(copy.contents(X.path(name))?.count == bytes.count + zeros)
            }
        }
    }

    @Test("7: a last record torn across a sector boundary is dropped whichever sectors reached the disk")
    func lastRecordTornAcrossASectorBoundaryIsDroppedWhicheverSectorsSurvived() throws {
        let (disk, name, bytes, ends, _) = try Self.journal()
        let sector = SimulatedFileLayer.sectorSize
        let (first, end) = (ends[47], bytes.count)
        let boundaries = Array(stride(from: (first / sector + 1) * sector, to: end, by: sector))
        #expect(!boundaries.isEmpty, "the last record spans no sector boundary")
        for boundary in boundaries {
            // The sectors before the boundary reached the disk, the rest did not: cut there, or zeros, or old garbage.
            let variants: [[UInt8]] = [
                ByteMutators.truncate(bytes, to: boundary),
                ByteMutators.zero(bytes, boundary..<end),
                ByteMutators.garble(bytes, boundary..<end, seed: UInt64(boundary)),
                // Only the sectors after the boundary reached the disk (writes are not ordered within a file).
                ByteMutators.zero(bytes, first..<boundary),
            ]
            for damaged in variants {
                let copy = disk.copy()
                copy.setContents(X.path(name), damaged)
                try Self.expectTornTail(
                    copy, name: name, kept: 48, validEnd: first, size: damaged.count, writable: true)
            }
        }
    }
}
