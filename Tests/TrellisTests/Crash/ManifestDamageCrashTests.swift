import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 18 (harness M): a truncated manifest, a manifest with a bad checksum, a manifest naming a missing
/// file are refused and named; orphan temporary and unreferenced files are reported by verify and removed by open.
@Suite struct ManifestDamageCrashTests {
    typealias X = CrashExpectations

    static let manifest = X.path(JournalFormat.manifestName)

    static func store() throws -> SimulatedFileLayer {
        try X.store(commits: 30, segmentBytes: 2_048, compactEvery: 12)
    }

    static func expectManifestRefusal(
        _ disk: SimulatedFileLayer, _ kind: JournalProblem.Kind, file: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(throws: TrellisError.self, sourceLocation: sourceLocation) { try X.open(disk) }
        #expect(error.code == .corrupt, sourceLocation: sourceLocation)
        #expect(
            error.message.contains("\(file) at offset 0: \(kind.rawValue)"), "\(error)", sourceLocation: sourceLocation)
        let problems = try X.problems(disk)
        #expect(
            problems.contains { $0.kind == kind && $0.file == file && $0.offset == 0 }, "\(problems)",
            sourceLocation: sourceLocation)
    }

    @Test("18: a truncated manifest is refused and named")
    func truncatedManifestIsRefused() throws {
        let disk = try Self.store()
        let bytes = disk.contents(Self.manifest)!
        for size in [0, 1, 8, 16, 40, 64, 71] {
            let copy = disk.copy()
            copy.setContents(Self.manifest, ByteMutators.truncate(bytes, to: size))
            try Self.expectManifestRefusal(copy, .manifest, file: JournalFormat.manifestName)
        }
    }

    @Test("18: a manifest with any checked bit flipped is refused as failing its checksum")
    func manifestWithAFlippedBitIsRefused() throws {
        let disk = try Self.store()
        let bytes = disk.contents(Self.manifest)!
        for bit in 0..<(68 * 8) {
            let copy = disk.copy()
            copy.setContents(Self.manifest, ByteMutators.flipBit(bytes, bit))
            try Self.expectManifestRefusal(copy, .manifest, file: JournalFormat.manifestName)
        }
    }

    @Test("18: a manifest naming a missing checkpoint or segment is refused as a missing file")
    func manifestNamingAMissingFileIsRefused() throws {
        let disk = try Self.store()
        let good = try Manifest.parse(disk.contents(Self.manifest)!, file: "MANIFEST")
        var checkpoint = good
        checkpoint.checkpointSequence = 999
        let missingCheckpoint = disk.copy()
        missingCheckpoint.setContents(Self.manifest, checkpoint.encoded())
        try Self.expectManifestRefusal(missingCheckpoint, .missingFile, file: JournalFormat.checkpointName(999))

        var segment = good
        segment.lastSegment += 1
        let missingSegment = disk.copy()
        missingSegment.setContents(Self.manifest, segment.encoded())
        try Self.expectManifestRefusal(
            missingSegment, .missingFile, file: JournalFormat.segmentName(segment.lastSegment))

        let missingManifest = disk.copy()
        try missingManifest.remove(Self.manifest)
        let error = try #require(throws: TrellisError.self) { try X.open(missingManifest) }
        #expect(error.message.contains("MANIFEST at offset 0: manifest: missing"))
    }

    @Test("18: orphan temporary and unreferenced files are reported by verify and removed by the next open")
    func orphanFilesAreReportedAndRemoved() throws {
        let disk = try Self.store()
        let good = try Manifest.parse(disk.contents(Self.manifest)!, file: "MANIFEST")
        let orphans = [
            JournalFormat.manifestName + JournalFormat.temporarySuffix,
            JournalFormat.segmentName(good.lastSegment + 1) + JournalFormat.temporarySuffix,
            JournalFormat.checkpointName(good.checkpointSequence + 5) + JournalFormat.temporarySuffix,
            JournalFormat.segmentName(good.firstSegment - 1),
            JournalFormat.checkpointName(3),
        ].sorted()
        for (i, name) in orphans.enumerated() {
            let file = try disk.open(X.path(name), .create)
            try file.write(
                ByteMutators.garble([UInt8](repeating: 0, count: 100 * i), 0..<1_000, seed: UInt64(i)), at: 0)
        }
        let problems = try X.problems(disk)
        #expect(problems.map(\.kind) == Array(repeating: .orphanFile, count: orphans.count), "\(problems)")
        #expect(problems.map(\.file).sorted() == orphans)
        let store = try X.open(disk)
        X.expectPrefix(store.snapshot, acknowledged: 30)
        #expect(store.recoveryReport?.removedFiles == orphans)
        try store.close()
        #expect(try X.problems(disk) == [])
    }
}
