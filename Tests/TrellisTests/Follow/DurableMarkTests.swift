import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 18: the durable mark, the writer's 56-byte note to followers of where the synced records end.
@Suite struct DurableMarkTests {
    @Test("a mark reads back as written, and any changed byte or a short file reads as no mark")
    func markRoundTripsAndDamageReadsAsNone() {
        let mark = DurableMark(sequence: 41, segment: 3, salt: 0xDEAD_BEEF, offset: 4_096)
        let bytes = mark.encoded()
        #expect(bytes.count == 56)
        #expect(Array(bytes[0..<8]) == [0x89, 0x54, 0x52, 0x57, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(DurableMark.parse(bytes) == mark)
        for i in bytes.indices {
            var damaged = bytes
            damaged[i] ^= 0x10
            #expect(DurableMark.parse(damaged) == nil, "byte \(i) changed")
        }
        #expect(DurableMark.parse(Array(bytes.prefix(40))) == nil)
    }

    @Test("the writer's mark names the last synced record and where it ends, through commits, a rotation and a close")
    func writerMarksEachSync() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let store = try Store(
            directory: directory, schema: CrashWorkload.schema,
            options: StoreOptions(compaction: .manual, segmentBytes: 16_384))
        let layer = PosixFileLayer()
        #expect(DurableMark.read(layer, directory: directory.path)?.sequence == 0)
        for n in 1...60 {
            try CrashWorkload.commit(n, to: store)
            // The flusher writes the mark after it acknowledges: wait for it, bounded.
            #expect(
                eventually(within: 10) { DurableMark.read(layer, directory: directory.path)?.sequence == UInt64(n) })
        }
        let mark = try #require(DurableMark.read(layer, directory: directory.path))
        let manifest = try #require(try StoreFiles.list(layer, directory.path).manifest)
        #expect(manifest.lastSegment > 1, "no rotation happened")
        #expect(mark.segment == manifest.lastSegment)
        let segment = try layer.open(
            directory.appendingPathComponent(JournalFormat.segmentName(mark.segment)).path, .read)
        defer { segment.close() }
        let header = try readSegmentHeader(segment, name: "segment", size: try segment.size())
        #expect(mark.salt == header.salt)
        // The mark's offset is where record 60, the last, ends in its segment.
        var last: JournalRecord?
        _ = try JournalReader(directory: directory).forEachRecord { last = $0 }
        let record = try #require(last)
        #expect(record.sequence == mark.sequence)
        #expect(record.file == JournalFormat.segmentName(mark.segment))
        #expect(UInt64(record.offset + record.frameBytes) == mark.offset)
        try store.close()
        #expect(DurableMark.read(layer, directory: directory.path)?.sequence == 60)
    }
}
