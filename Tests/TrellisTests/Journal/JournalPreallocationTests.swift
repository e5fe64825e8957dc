import Foundation
import Testing

@testable import Trellis

/// Small durable commits are appended into space the writer reserved ahead of them (`posix_fallocate`), so their
/// syncs commit no new file size. The reserved zeros never outlive a clean close; after a crash they read as the end
/// of the journal (not damage), and the reopened writer appends over them.
@Suite struct JournalPreallocationTests {
    /// Where the last record of the journal at `path` ends, and the records' count.
    static func recordsEnd(_ path: String) throws -> (end: Int, count: Int, problems: [JournalProblem]) {
        var end = 0
        var count = 0
        let problems = try JournalReader(path: path, layer: PosixFileLayer()).forEachRecord { record in
            end = record.offset + RecordFrame.align(FrameHeader.size + record.storedBytes)
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

    @Test func smallCommitsGoIntoReservedSpaceThatCloseTrims() throws {
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema())
        try Self.commitFolders(store, 20)
        let segment = Self.segmentPath(temporary.store)
        let open = try Self.recordsEnd(temporary.store.path)
        #expect(open.count == 20)
        let reserved = try Self.size(segment)
        #expect(reserved > open.end, "reserved \(reserved), records end at \(open.end)")
        let tail = try #require(FileHandle(forReadingAtPath: segment))
        try tail.seek(toOffset: UInt64(open.end))
        #expect(try tail.readToEnd()?.allSatisfy { $0 == 0 } == true)
        try tail.close()

        try store.close()
        let closed = try Self.recordsEnd(temporary.store.path)
        #expect(closed.count == 20 && closed.problems.isEmpty)
        #expect(try Self.size(segment) == closed.end)
        let reopened = try Store(directory: temporary.store, schema: try Fixtures.outlineSchema())
        #expect(reopened.recoveryReport?.droppedBytes == 0)
        #expect(reopened.snapshot.count(entity: 0) == 20)
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
