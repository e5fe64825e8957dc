import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal

/// The bytes the encoders write, pinned: a digest of what each encoder writes for fixed inputs, recorded when the
/// value codec was unified (issue 15). Any change to a byte of the format changes a digest; a deliberate format change
/// records the new digests along with its version bump.
@Suite struct FormatBytesTests {
    /// Change-set payloads of seeded random change sets (every value kind, NaNs and extremes included).
    @Test func changeSetPayloadsAreUnchanged() {
        var random = SeededRandom(seed: 2024)
        var crc: UInt32 = 0
        for round in 0..<200 {
            let changes = ChangeSetCodecTests.randomChangeSet(&random, size: round % 10 == 0 ? 300 : 10)
            crc = Zlib.crc32(crc, ChangeSetCodec.encode(changes, schema: ChangeSetCodecTests.schema))
        }
        #expect(crc == Self.changeSets, "digest \(String(crc, radix: 16))")
    }

    /// Schemas (defaults of every kind), file headers, manifests and record frames (stored, not deflated), in this
    /// build's format (version 10: version 6's layouts, with its number; a record of one frame has flags 0), as
    /// versions 9, 8, 7 and 6 wrote them (frames of 40-byte headers carrying a synced-through watermark) and as
    /// version 5 wrote them (32-byte frame headers), whose digests are the ones recorded before versions 10, 9, 8, 7
    /// and 6: older stores read, and are appended to, byte for byte as before.
    @Test func schemasHeadersManifestsAndFramesAreUnchanged() {
        #expect(JournalFormat.version == 10)
        let current = Self.headerDigest(version: 10)
        #expect(current == Self.headersVersion10, "digest \(String(current, radix: 16))")
        let nine = Self.headerDigest(version: 9)
        #expect(nine == Self.headersVersion9, "digest \(String(nine, radix: 16))")
        let eight = Self.headerDigest(version: 8)
        #expect(eight == Self.headersVersion8, "digest \(String(eight, radix: 16))")
        let seven = Self.headerDigest(version: 7)
        #expect(seven == Self.headersVersion7, "digest \(String(seven, radix: 16))")
        let six = Self.headerDigest(version: 6)
        #expect(six == Self.headers, "digest \(String(six, radix: 16))")
        // The digest runs over items that each end in their own CRC-32, which makes it blind to the version field
        // alone; the field is checked directly.
        let header = FileHeader(
            magic: JournalFormat.segmentMagic, id: 1, sequence: 1, salt: 1, fingerprint: 0, schemaBytes: [2, 0, 0])
        #expect(
            header.encoded()[8] == 10
                && Manifest(
                    generation: 1, fingerprint: 0, checkpointSequence: 0, checkpointBytes: 0, firstSegment: 1,
                    lastSegment: 1,
                    durableSequence: 0
                ).encoded()[8] == 10)
        let five = Self.headerDigest(version: 5)
        #expect(five == Self.headersVersion5, "digest \(String(five, radix: 16))")
    }

    static func headerDigest(version: UInt16) -> UInt32 {
        var crc: UInt32 = 0
        for schema in [JournalWorkload.schema, CheckpointColumnsTests.schema] {
            let bytes = SchemaCodec.encode(schema)
            crc = Zlib.crc32(crc, bytes)
            let header = FileHeader(
                magic: JournalFormat.segmentMagic, id: 3, sequence: 1 << 40, salt: 0x0123_4567_89ab_cdef,
                fingerprint: schema.fingerprint, schemaBytes: bytes, version: version)
            crc = Zlib.crc32(crc, header.encoded())
            crc = Zlib.crc32(
                crc,
                RecordFrame.encode(
                    type: .changeSet, payload: bytes, sequence: 77, time: -5, salt: header.salt, compressionLevel: nil,
                    watermark: version >= 6 ? 1 << 39 + 3 : 0, version: version))
        }
        let manifest = Manifest(
            generation: 9, fingerprint: 0xfeed_f00d, checkpointSequence: 1234, checkpointBytes: 1 << 33,
            firstSegment: 4, lastSegment: 6, durableSequence: 1 << 35 + 5)
        var manifestBytes = manifest.encoded()
        // Versions 5 and 6 share the manifest's layout; only the version field differs.
        manifestBytes[8] = UInt8(version)
        let check = Zlib.crc32(0, manifestBytes[0..<72])
        for i in 0..<4 { manifestBytes[72 + i] = UInt8(truncatingIfNeeded: check >> (8 * UInt32(i))) }
        return Zlib.crc32(crc, manifestBytes)
    }

    /// A record of several frames (version 10): 100 payload bytes in frames of at most 40, flags 1, 3, 3, 2, each
    /// frame checked on its own, the same sequence number, time and watermark in all; its bytes pinned.
    @Test func aRecordOfSeveralFramesIsPinned() throws {
        let payload = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let bytes = RecordFrame.encode(
            type: .changeSet, pieces: [Array(payload[..<30]), Array(payload[30...])], fragmentBytes: 40, sequence: 12,
            time: 99, salt: 0x0123_4567_89ab_cdef, compressionLevel: nil, watermark: 11)
        var flags: [UInt16] = []
        var offset = 0
        var joined: [UInt8] = []
        while offset < bytes.count {
            let header = FrameHeader(bytes[offset..<(offset + 40)], version: 10)
            #expect(header.sequence == 12 && header.time == 99 && header.watermark == 11 && header.type == 1)
            #expect(header.storedLength <= 40)
            flags.append(header.flags)
            joined += bytes[(offset + 40)..<(offset + 40 + header.storedLength)]
            offset += header.frameSize
        }
        // The first piece (30 bytes) fits a frame with room to spare, but not with the next: pieces are never
        // joined past the limit, and the 70-byte piece is cut at 40.
        #expect(flags == [1, 3, 2] && joined == payload)
        let digest = Zlib.crc32(0, bytes)
        #expect(digest == Self.fragments, "digest \(String(digest, radix: 16))")
        // One frame, flags 0, when the record fits.
        let one = RecordFrame.encode(
            type: .changeSet, pieces: [payload], fragmentBytes: 100, sequence: 12, time: 99, salt: 1,
            compressionLevel: nil)
        #expect(
            one
                == RecordFrame.encode(
                    type: .changeSet, payload: payload, sequence: 12, time: 99, salt: 1,
                    compressionLevel: nil))
    }

    /// The author that ends a change-set record from version 7: 1 for none, else 2 and the string (never a zero last
    /// byte for none); a reader of a version-6 record takes the same bytes for trailing damage.
    @Test func theAuthorEndsAVersionSevenRecord() throws {
        var none: [UInt8] = [0, 0, 0, 0]
        #expect(ChangeSetCodec.appendAuthor(nil, to: &none) == 1 && none == [0, 0, 0, 0, 1])
        var named: [UInt8] = [0, 0, 0, 0]
        #expect(ChangeSetCodec.appendAuthor("ab", to: &named) == 4 && named == [0, 0, 0, 0, 2, 2, 0x61, 0x62])
        let schema = ChangeSetCodecTests.schema
        #expect(try ChangeSetCodec.decodeRecord(named, schema: schema, context: "t", version: 7).author == "ab")
        #expect(try ChangeSetCodec.decodeRecord(none, schema: schema, context: "t", version: 7).author == nil)
        #expect(try ChangeSetCodec.decodeRecord([0, 0, 0, 0], schema: schema, context: "t", version: 6).author == nil)
        #expect(throws: TrellisError.self) {
            try ChangeSetCodec.decodeRecord(named, schema: schema, context: "t", version: 6)
        }
        #expect(throws: TrellisError.self) {
            try ChangeSetCodec.decodeRecord([0, 0, 0, 0, 0], schema: schema, context: "t", version: 7)
        }
    }

    /// The `HISTORY` file (version 7): its bytes pinned, read back whole, and refused when any byte changes.
    @Test func theHistoryFileIsPinnedAndChecksItself() throws {
        var history = HistoryFile(storeID: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
        history.bases = [
            .init(checkpoint: 0, firstSegment: 1, time: -3), .init(checkpoint: 40, firstSegment: 6, time: 1 << 50),
        ]
        history.consumers = ["sync": .init(sequence: 33, time: 7), "backup": .init(sequence: 1 << 40, time: 0)]
        history.retention = HistoryRetention(commits: 100, duration: 3600, consumers: ["sync", "backup"])
        let bytes = history.encoded()
        let digest = Zlib.crc32(0, bytes)
        #expect(digest == Self.historyFile, "digest \(String(digest, radix: 16))")
        #expect(try HistoryFile.parse(bytes) == history)
        for i in bytes.indices {
            var damaged = bytes
            damaged[i] ^= 0x10
            #expect(throws: TrellisError.self) { try HistoryFile.parse(damaged) }
        }
    }

    /// Checkpoint column chunks and index orders of seeded random graphs. Level 0 makes every section stored (a zlib
    /// stream at level 0 never saves a byte), so the digest does not depend on the zlib build.
    @Test func checkpointChunksAreUnchanged() {
        var crc: UInt32 = 0
        for seed: UInt64 in [1, 2, 3] {
            let graph = CheckpointColumnsTests.randomGraph(seed: seed, rows: 400)
            for (e, layout) in graph.schema.layouts.enumerated() {
                var parts: [CheckpointColumns.Part] = []
                for (key, leaf) in graph.tables[e].leaves {
                    parts.append(CheckpointColumns.Part(key: key, leaf: leaf, mask: leaf.present))
                }
                crc = Zlib.crc32(crc, CheckpointColumns.encode(entity: e, layout: layout, parts: parts, level: 0))
                for i in layout.indexes.indices {
                    guard let places = CheckpointIndexOrder.places(graph.tables[e], index: i) else { continue }
                    crc = Zlib.crc32(
                        crc, CheckpointIndexOrder.encode(entity: e, index: i, places: places, level: 0))
                }
            }
        }
        #expect(crc == Self.checkpoints, "digest \(String(crc, radix: 16))")
    }

    /// One value of every tag, against bytes written out by hand from journal-format.md.
    @Test func everyValueTagWritesItsSpecifiedBytes() throws {
        let uuid = UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
        let cases: [(Value, [UInt8])] = [
            (.null, [0]), (.bool(false), [1]), (.bool(true), [2]),
            (.int(0), [3, 0]), (.int(-1), [3, 1]), (.int(1), [3, 2]), (.int(-65), [3, 0x81, 0x01]),
            (.int(.min), [3] + [UInt8](repeating: 0xff, count: 9) + [0x01]),
            (.double(1), [4, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]),
            (.string("é"), [5, 2, 0xc3, 0xa9]),
            (.date(Date(timeIntervalSinceReferenceDate: -2)), [6, 0, 0, 0, 0, 0, 0, 0, 0xc0]),
            (.data(Data([1, 2])), [7, 2, 1, 2]),
            (.uuid(uuid), [8] + Array(0...15)),
            (.url(URL(string: "https://a.b")!), [9, 11] + Array("https://a.b".utf8)),
            (.decimal(Decimal(string: "-12.5")!), [10, 5] + Array("-12.5".utf8)),
            (.decimal(.nan), [11]),
        ]
        for (value, expected) in cases {
            let bytes = ByteWriter.bytes { $0.value(value) }
            #expect(bytes == expected, "\(value)")
            var r = ByteReader(bytes, context: "test")
            #expect(try r.value().isIdentical(to: value) && r.isAtEnd, "\(value)")
        }
        let fixed = ByteWriter.bytes { w in
            w.u16(0x0102)
            w.u32(0x0304_0506)
            w.u64(0x0708_090a_0b0c_0d0e)
            w.blob([0xaa])
            w.pad(to: 8)
            w.setU32(0xdead_beef, at: 12)
        }
        #expect(fixed == [2, 1, 6, 5, 4, 3, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0xef, 0xbe, 0xad, 0xde])
    }

    static let changeSets: UInt32 = 0x487b_e75c
    /// Version 6 (recorded when the frame header grew the watermark, issue 23).
    static let headers: UInt32 = 0xa7c9_2fcd
    /// Recorded with the move to version 7: version 6's layouts, so version 6's digest (which does not see the
    /// version field: see the test).
    static let headersVersion7: UInt32 = 0xa7c9_2fcd
    /// Recorded with the move to version 8 (collection attributes): version 6's layouts again, and schemas without
    /// collections encode as before.
    static let headersVersion8: UInt32 = 0xa7c9_2fcd
    /// Recorded with the move to version 9 (metadata attributes): version 6's layouts again, and schemas without a
    /// metadata attribute encode as before.
    static let headersVersion9: UInt32 = 0xa7c9_2fcd
    /// Version 10's layouts are version 9's (the digest is blind to the version field, checked on its own).
    static let headersVersion10: UInt32 = 0xa7c9_2fcd
    static let fragments: UInt32 = 0x0504_548f
    /// The `HISTORY` file of `theHistoryFileIsPinnedAndChecksItself` (version 7).
    static let historyFile: UInt32 = 0x2144_df1c
    /// Version 5's bytes, the digest recorded before version 6.
    static let headersVersion5: UInt32 = 0x7275_6046
    static let checkpoints: UInt32 = 0x1dd8_ec51
}
