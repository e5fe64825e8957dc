import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 17 (harness M): a missing middle segment, a sequence gap, a duplicated segment are refused, and the
/// refusal and verify name the cause, the file and the offset.
@Suite struct SegmentDamageCrashTests {
    typealias X = CrashExpectations

    static func store() throws -> (SimulatedFileLayer, [(file: String, offset: Int, end: Int)]) {
        let disk = try X.store(commits: 40, segmentBytes: 2_048)
        let records = try X.records(disk)
        #expect(Set(records.map(\.file)).count >= 5)
        return (disk, records)
    }

    static func expectRefusal(
        _ disk: SimulatedFileLayer, _ kind: JournalProblem.Kind, file: String, offset: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(throws: TrellisError.self, sourceLocation: sourceLocation) { try X.open(disk) }
        #expect(error.code == .corrupt, sourceLocation: sourceLocation)
        #expect(
            error.message.contains("\(file) at offset \(offset): \(kind.rawValue)"), "\(error)",
            sourceLocation: sourceLocation)
        let problems = try X.problems(disk)
        #expect(problems.first?.kind == kind, "\(problems)", sourceLocation: sourceLocation)
        #expect(problems.first?.file == file && problems.first?.offset == offset, sourceLocation: sourceLocation)
    }

    @Test("17: a missing middle segment is refused as a missing file")
    func missingMiddleSegmentIsRefusedAsAMissingFile() throws {
        let (disk, _) = try Self.store()
        let name = JournalFormat.segmentName(3)
        try disk.remove(X.path(name))
        try Self.expectRefusal(disk, .missingFile, file: name, offset: 0)
    }

    @Test("17: a record cut out of a middle segment is refused as a sequence gap at the record after it")
    func recordCutOutOfAMiddleSegmentIsRefusedAsASequenceGap() throws {
        let (disk, records) = try Self.store()
        let middle = records.indices.first { records[$0].file == JournalFormat.segmentName(3) }!
        let (name, offset, end) = records[middle]
        var bytes = disk.contents(X.path(name))!
        bytes.removeSubrange(offset..<end)
        disk.setContents(X.path(name), bytes)
        try Self.expectRefusal(disk, .sequenceGap, file: name, offset: offset)
    }

    /// Its header names segment 3 in the file of segment 4: refused on the header, before its sequence is compared
    /// (it was refused as a sequence gap at offset 24 before headers were checked against their file names).
    @Test("17: a duplicated segment (a copy under the next name) is refused on its header, which names the other")
    func duplicatedSegmentIsRefusedOnItsHeader() throws {
        let (disk, _) = try Self.store()
        disk.setContents(X.path(JournalFormat.segmentName(4)), disk.contents(X.path(JournalFormat.segmentName(3)))!)
        try Self.expectRefusal(disk, .header, file: JournalFormat.segmentName(4), offset: 0)
    }

    @Test("17: a segment whose records come from another segment is refused as stale frames")
    func segmentHoldingAnotherSegmentsFramesIsRefusedAsStale() throws {
        let (disk, records) = try Self.store()
        // Segment 4's header with segment 3's frames: every frame checks out only under segment 3's salt.
        let three = disk.contents(X.path(JournalFormat.segmentName(3)))!
        let four = disk.contents(X.path(JournalFormat.segmentName(4)))!
        let headerSize = records.first { $0.file == JournalFormat.segmentName(4) }!.offset
        disk.setContents(
            X.path(JournalFormat.segmentName(4)), Array(four.prefix(headerSize) + three.dropFirst(headerSize)))
        let problems = try X.problems(disk)
        #expect(problems.contains { $0.kind == .salt && $0.file == JournalFormat.segmentName(4) }, "\(problems)")
        #expect(throws: TrellisError.self) { try X.open(disk) }
    }
}
