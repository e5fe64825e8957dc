import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 19 (harness K): repair (a salvage open, which rewrites the store as a checkpoint) run twice gives the
/// same store; a repair killed at any named point of its rewrite leaves a store that the next repair finishes and
/// that then opens normally. A torn-tail repair killed after its backup is finished by the next open.
@Suite struct RepairCrashTests {
    typealias X = CrashExpectations

    static let rewritePoints = [
        "before-segment-rename", "after-segment-rename", "before-checkpoint-sync", "after-checkpoint-rename",
        "before-manifest-rename", "after-manifest-rename", "before-unlink-old",
    ]

    /// A store of 60 commits over several segments with record 33 damaged (no later transaction refers to its
    /// item), so a normal open refuses it; returns the damaged file and offset.
    @discardableResult
    static func damagedStore(_ directory: URL) throws -> (file: String, offset: Int) {
        let child = try CrashChild.run(
            ["run", "--dir", directory.path, "--commits", "60", "--segment-bytes", "4096"])
        #expect(child.lines.last == "closed 60")
        let records = try JournalReader(directory: directory).forEachRecord { _ in }
        #expect(records.isEmpty)
        var offsets: [(String, Int)] = []
        try JournalReader(directory: directory).forEachRecord { offsets.append(($0.file, $0.offset)) }
        let (file, offset) = offsets[32]
        let url = directory.appendingPathComponent(file)
        var bytes = [UInt8](try Data(contentsOf: url))
        bytes[offset + FrameHeader.currentSize + 3] ^= 0x40
        try Data(bytes).write(to: url)
        #expect(throws: TrellisError.self) { try Store(directory: directory, schema: CrashWorkload.schema) }
        return (file, offset)
    }

    static func copy(_ from: URL, _ to: URL) throws {
        try FileManager.default.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: from, to: to)
    }

    /// Opens normally (no salvage) and returns the graph; verify must find nothing.
    static func openNormally(_ directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Graph {
        #expect(try X.problems(directory) == [], sourceLocation: sourceLocation)
        let store = try Store(directory: directory, schema: CrashWorkload.schema)
        defer { try? store.close() }
        return store.snapshot
    }

    @Test("19: repair run twice gives the same store, which then opens normally")
    func repairRunTwiceGivesTheSameStore() throws {
        let temporary = TemporaryDirectory()
        try Self.damagedStore(temporary.store)
        let first = try CrashChild.run(["repair", "--dir", temporary.store.path])
        let graph = try Self.openNormally(temporary.store)
        let second = try CrashChild.run(["repair", "--dir", temporary.store.path])
        #expect(first.lines == ["repaired 60"] && second.lines == first.lines)
        #expect(try X.problems(Self.openNormally(temporary.store), comparedWith: graph) == [])
        // The records after the damaged one are kept; only the damaged transaction's own item is gone.
        let full = X.versions[60]
        #expect(!graph.contains(CrashWorkload.item(33)))
        #expect(
            graph.objectIDs(entity: CrashWorkload.itemEntity)
                == full.objectIDs(entity: CrashWorkload.itemEntity).filter { $0 != CrashWorkload.item(33) })
    }

    @Test("19: a repair killed at any point of its rewrite is finished by the next repair", arguments: rewritePoints)
    func repairKilledMidwayIsFinishedByTheNextRepair(point: String) throws {
        let temporary = TemporaryDirectory()
        let damaged = temporary.url.appendingPathComponent("damaged")
        let injected = try Self.damagedStore(damaged)
        let reference = temporary.url.appendingPathComponent("reference")
        try Self.copy(damaged, reference)
        _ = try CrashChild.run(["repair", "--dir", reference.path])
        let repaired = try Self.openNormally(reference)

        let killed = try CrashChild.run(
            ["repair", "--dir", damaged.path], environment: ["TRELLIS_CRASH_AT": point])
        #expect(killed.killed, "the repair never reached \(point)")
        // Verify finds the injected damage where it was put, or (once the rewrite committed) only crash leftovers.
        let problems = try X.problems(damaged)
        if let first = problems.first(where: { !X.crashKinds.contains($0.kind) }) {
            #expect(
                first.kind == .checksum && first.file == injected.file && first.offset == injected.offset,
                "\(point): \(first)")
            #expect(problems.allSatisfy { X.crashKinds.union([.checksum, .sequenceGap, .decode]).contains($0.kind) })
        }
        let again = try CrashChild.run(["repair", "--dir", damaged.path])
        #expect(again.lines == ["repaired 60"], "\(point): \(again.lines)")
        #expect(try X.problems(Self.openNormally(damaged), comparedWith: repaired) == [], "\(point)")
    }

    @Test("19: an open that drops a torn tail, killed after backing it up, is finished by the next open")
    func tornTailRepairKilledAfterItsBackupIsFinishedByTheNextOpen() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        _ = try CrashChild.run(["run", "--dir", store.path, "--commits", "30"])
        // A torn tail is what a crash leaves, not a clean close (whose manifest names record 30 as durable).
        try X.forgetCleanClose(store)
        let segment = try FileManager.default.contentsOfDirectory(atPath: store.path).first { $0.hasSuffix(".trj") }!
        let url = store.appendingPathComponent(segment)
        // Cut into the last record (the file goes on with the zeros the writer reserved after it).
        var end = 0
        try JournalReader(directory: store).forEachRecord {
            end = $0.offset + RecordFrame.align(FrameHeader.currentSize + $0.storedBytes)
        }
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(end - 50).write(to: url)
        let killed = try CrashChild.run(
            ["run", "--dir", store.path, "--commits", "40"], environment: ["TRELLIS_CRASH_AT": "after-tail-backup"])
        #expect(killed.killed && killed.opened == nil)
        let finished = try CrashChild.run(["run", "--dir", store.path, "--commits", "40"])
        #expect(finished.opened == 29 && finished.lines.last == "closed 40")
        X.expectPrefix(try Self.openNormally(store), acknowledged: 40)
    }
}
