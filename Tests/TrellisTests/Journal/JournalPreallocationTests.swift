import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Small durable commits are appended into space the writer reserved ahead of them (`posix_fallocate`), so their
/// syncs commit no new file size. Zeros after a segment's last record read as its end (not damage), whether the store
/// was closed or crashed, and the next writer appends over them.
@Suite struct JournalPreallocationTests {
    /// Where the last record of the journal at `path` ends, and the records' count.
    static func recordsEnd(_ path: String) throws -> (end: Int, count: Int, problems: [JournalProblem]) {
        var end = 0
        var count = 0
        let problems = try JournalReader(path: path, layer: PosixFileLayer()).forEachRecord { record in
            end = record.offset + RecordFrame.align(FrameHeader.currentSize + record.storedBytes)
            count += 1
        }
        return (end, count, problems)
    }

    static func segmentPath(_ store: URL) -> String {
        store.appendingPathComponent(JournalFormat.segmentName(1)).path
    }

    static func size(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    static func commitFolders(_ store: Store, _ count: Int) throws {
        for i in 0..<count { try store.write { tx in try tx.insert("Folder", ["name": .string("folder \(i)")]) } }
    }

    @Test func smallCommitsGoIntoReservedSpaceAndTheNextWriterAppendsOverIt() throws {
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema())
        try Self.commitFolders(store, 20)
        let segment = Self.segmentPath(temporary.store)
        let open = try Self.recordsEnd(temporary.store.path)
        #expect(open.count == 20 && open.problems.isEmpty)
        let reserved = try Self.size(segment)
        #expect(reserved > open.end, "reserved \(reserved), records end at \(open.end)")
        let tail = try #require(FileHandle(forReadingAtPath: segment))
        try tail.seek(toOffset: UInt64(open.end))
        #expect(try tail.readToEnd()?.allSatisfy { $0 == 0 } == true)
        try tail.close()

        // Closing cuts nothing off (a reader may be reading the segment); the zeros read as the journal's end.
        try store.close()
        #expect(try Self.size(segment) == reserved)
        let reopened = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema())
        #expect(reopened.recoveryReport?.droppedBytes == 0 && reopened.recoveryReport?.tornTail == nil)
        #expect(reopened.snapshot.count(entity: 0) == 20)
        try Self.commitFolders(reopened, 5)
        try reopened.close()
        let after = try Self.recordsEnd(temporary.store.path)
        #expect(after.count == 25 && after.problems.isEmpty)
        #expect(try Self.size(segment) == reserved, "the five records went into the reserved space")
    }

    @Test func closedSegmentsKeepTheirZerosAndTheJournalReadsWhole() throws {
        let temporary = TemporaryDirectory()
        var options = StoreOptions()
        options.segmentBytes = 2048
        let store = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema(), options: options)
        try Self.commitFolders(store, 60)
        try store.close()
        let segments = try FileManager.default.contentsOfDirectory(atPath: temporary.store.path)
            .filter { $0.hasPrefix("segment-") }
        #expect(segments.count >= 3, "\(segments)")
        let walked = try Self.recordsEnd(temporary.store.path)
        #expect(walked.count == 60 && walked.problems.isEmpty, "\(walked.problems)")
        let reopened = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema(), options: options)
        #expect(reopened.snapshot.count(entity: 0) == 60)
        try reopened.close()
    }

    @Test func reservedZerosLeftByACrashAreTheEndOfTheJournal() throws {
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema())
        try Self.commitFolders(store, 30)
        // A copy of the directory while the store is open is what a crash at this moment leaves on disk.
        let crashed = temporary.url.appendingPathComponent("crashed")
        try FileManager.default.copyItem(at: temporary.store, to: crashed)
        try store.close()
        let (end, count, _) = try Self.recordsEnd(crashed.path)
        let zeros = try Self.size(Self.segmentPath(crashed)) - end
        #expect(count == 30 && zeros > 0)

        let recovered = try Store(directory: crashed, schema: try Fixtures.outlineSchema())
        #expect(recovered.snapshot.count(entity: 0) == 30)
        #expect(recovered.recoveryReport?.droppedBytes == 0 && recovered.recoveryReport?.tornTail == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: crashed.path).filter { $0.hasSuffix(".bak") } == [])
        // It appends over the zeros where the records ended, and the next open finds all 35.
        try Self.commitFolders(recovered, 5)
        try recovered.close()
        let again = try Store(directory: crashed, schema: try Fixtures.outlineSchema())
        #expect(again.snapshot.count(entity: 0) == 35)
        #expect(again.recoveryReport?.droppedBytes == 0)
        try again.close()
    }
}
