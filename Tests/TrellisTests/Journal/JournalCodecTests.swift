import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct JournalCodecTests {
    @Test func everyValueKindRoundTripsExactly() throws {
        let values: [Value] = [
            .null, .bool(true), .bool(false), .int(0), .int(-1), .int(.max), .int(.min), .double(-0.0),
            .double(.nan), .double(.infinity), .double(1e-300), .string(""), .string("naïve ✓ 日本"),
            .date(Date(timeIntervalSinceReferenceDate: 12345.678901)), .data(Data()), .data(Data([0, 1, 255])),
            .uuid(UUID()), .url(URL(string: "https://example.com/a%20b?q=1#f")!),
            .url(URL(fileURLWithPath: "/tmp/a b")),
            .decimal(Decimal(string: "-123.4500")!), .decimal(.nan), .decimal(Decimal(string: "1e-20")!),
        ]
        let bytes = ByteWriter.bytes { w in
            for v in values { w.value(v) }
        }
        var r = ByteReader(bytes, context: "test")
        for v in values {
            let back = try r.value()
            #expect(v.isIdentical(to: back), "\(v) came back as \(back)")
        }
        #expect(r.isAtEnd)
    }

    @Test func varintsAndZigzagCoverTheirRange() throws {
        let unsigned: [UInt64] = [0, 1, 127, 128, 16383, 16384, .max >> 1, .max]
        let signed: [Int64] = [0, -1, 1, .min, .max, -64, 64]
        let bytes = ByteWriter.bytes { w in
            for u in unsigned { w.varint(u) }
            for s in signed { w.signed(s) }
        }
        var r = ByteReader(bytes, context: "test")
        for u in unsigned { #expect(try r.varint() == u) }
        for s in signed { #expect(try r.signed() == s) }
        // An 11-byte varint is damage, not a number.
        var bad = ByteReader([UInt8](repeating: 0xff, count: 11) + [0], context: "test")
        #expect(throws: TrellisError.self) { try bad.varint() }
    }

    @Test func changeSetRoundTripsWithOldValuesAndDeletedTargets() throws {
        let store = Store(schema: JournalWorkload.schema)
        let collected = Mutex<[ChangeSet]>([])
        let token = store.observe { commit in collected.locked { $0.append(commit.changes) } }
        try JournalWorkload.run(store, seed: 7, commits: 60)
        token.cancel()
        let changes = collected.locked { $0 }
        #expect(changes.contains { !$0.deletes.isEmpty } && changes.contains { !$0.updates.isEmpty })
        for c in changes {
            let bytes = ChangeSetCodec.encode(c, schema: store.schema)
            #expect(try ChangeSetCodec.decode(bytes, schema: store.schema, context: "test") == c)
        }
    }

    @Test func truncatedOrGarbledChangeSetsThrowInsteadOfTrapping() throws {
        let store = Store(schema: JournalWorkload.schema)
        let latest = Mutex(ChangeSet())
        let token = store.observe { commit in latest.locked { $0 = commit.changes } }
        try JournalWorkload.run(store, seed: 3, commits: 5)
        token.cancel()
        let last = latest.locked { $0 }
        let bytes = ChangeSetCodec.encode(last, schema: store.schema)
        for cut in 0..<bytes.count {
            #expect(throws: TrellisError.self) {
                try ChangeSetCodec.decode(Array(bytes.prefix(cut)), schema: store.schema, context: "cut")
            }
        }
        var random = SeededRandom(seed: 1)
        for _ in 0..<500 {
            var garbled = bytes
            garbled[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            _ = try? ChangeSetCodec.decode(garbled, schema: store.schema, context: "garbled")
        }
    }

    @Test func schemaRoundTripsWithFingerprint() throws {
        let schema = JournalWorkload.schema
        let back = try SchemaCodec.decode(SchemaCodec.encode(schema), context: "test")
        #expect(back == schema)
        #expect(back.fingerprint == schema.fingerprint)
    }

    @Test func smallRecordsAreStoredUncompressedAndLargeOnesCompressed() throws {
        let tiny = RecordFrame.encode(
            type: .changeSet, payload: [1, 2, 3], sequence: 1, time: 0, salt: 9, compressionLevel: 1)
        #expect(tiny[9] == RecordCodec.none.rawValue)
        #expect(tiny.count == 48, "a 40-byte header (version 6) and 3 bytes, padded to 8")
        let big = [UInt8](repeating: 42, count: 10_000)
        let packed = RecordFrame.encode(
            type: .changeSet, payload: big, sequence: 2, time: 0, salt: 9, compressionLevel: 1)
        #expect(packed[9] == RecordCodec.zlib.rawValue)
        #expect(packed.count < 200)
        #expect(packed.count % 8 == 0)
    }

    @Test func largeRecordsAreDeflatedOnlyWhenThatHalvesThem() throws {
        var random = SeededRandom(seed: 64)
        func frame(_ payload: [UInt8]) -> [UInt8] {
            RecordFrame.encode(type: .changeSet, payload: payload, sequence: 1, time: 0, salt: 9, compressionLevel: 1)
        }
        // 4 distinct bytes: Huffman codes take 2 bits each, so deflate quarters the payload.
        let letters = (0..<300_000).map { _ in UInt8(97 + random.next() % 4) }
        let packed = frame(letters)
        #expect(packed[9] == RecordCodec.zlib.rawValue)
        #expect(packed.count < 90_000)
        let stored = Int(packed[4]) | Int(packed[5]) << 8 | Int(packed[6]) << 16 | Int(packed[7]) << 24
        let h = FrameHeader.currentSize
        #expect(Zlib.decompress(packed[h..<(h + stored)], count: letters.count) == letters)
        // 64 distinct bytes: 6 bits a byte, a saving of about a quarter, under the half a large record needs.
        let noisy = (0..<300_000).map { _ in UInt8(random.next() % 64) }
        let plain = frame(noisy)
        #expect(plain[9] == RecordCodec.none.rawValue)
        #expect(Array(plain[h..<(h + noisy.count)]) == noisy)
        // Between one and two samples the payload is judged whole, by its byte counts first: the same outcomes.
        let lettersMid = Array(letters.prefix(100_000))
        let packedMid = frame(lettersMid)
        #expect(packedMid[9] == RecordCodec.zlib.rawValue)
        let storedMid = Int(packedMid[4]) | Int(packedMid[5]) << 8 | Int(packedMid[6]) << 16 | Int(packedMid[7]) << 24
        #expect(Zlib.decompress(packedMid[h..<(h + storedMid)], count: lettersMid.count) == lettersMid)
        let noisyMid = Array(noisy.prefix(100_000))
        let plainMid = frame(noisyMid)
        #expect(plainMid[9] == RecordCodec.none.rawValue)
        #expect(Array(plainMid[h..<(h + noisyMid.count)]) == noisyMid)
        // The same saving on a small payload is still taken: only large ones need to halve.
        let small = Array(noisy.prefix(20_000))
        #expect(frame(small)[9] == RecordCodec.zlib.rawValue)
    }

    @Test func manifestChecksItself() throws {
        let m = Manifest(
            generation: 3, fingerprint: 42, checkpointSequence: 7, checkpointBytes: 100, firstSegment: 2,
            lastSegment: 4,
            durableSequence: 9)
        var bytes = m.encoded()
        #expect(bytes.count == 76 && bytes[8] == UInt8(JournalFormat.version) && bytes[12] == 76)
        #expect(try Manifest.parse(bytes, file: "M") == m)
        bytes[20] ^= 1
        #expect(throws: TrellisError.self) { try Manifest.parse(bytes, file: "M") }
        #expect(throws: TrellisError.self) { try Manifest.parse(Array(m.encoded().prefix(40)), file: "M") }
        // Version 5: every byte is under the checksum (a flip anywhere is refused), and flags must be 0.
        for i in 0..<76 {
            var flipped = m.encoded()
            flipped[i] ^= 0x10
            #expect(throws: TrellisError.self, "byte \(i)") { try Manifest.parse(flipped, file: "M") }
        }
        var flagged = m.encoded()
        flagged[10] = 1
        flagged.replaceSubrange(
            72..<76, with: withUnsafeBytes(of: Zlib.crc32(0, flagged[0..<72]).littleEndian, Array.init))
        #expect(throws: TrellisError.self) { try Manifest.parse(flagged, file: "M") }
    }

    @Test func manifestOfVersionFourStillReads() throws {
        // The 72-byte layout of versions 1 to 4, written out by hand: the checksum covers bytes 0..<64 only.
        var bytes = JournalFormat.manifestMagic + [4, 0, 0, 0, 72, 0, 0, 0]
        for field: UInt64 in [3, 42, 7, 100, 2, 4] { bytes += withUnsafeBytes(of: field.littleEndian, Array.init) }
        bytes += withUnsafeBytes(of: Zlib.crc32(0, bytes).littleEndian, Array.init) + [0, 0, 0, 0]
        let m = try Manifest.parse(bytes, file: "M")
        #expect(m.checkpointSequence == 7 && m.firstSegment == 2 && m.lastSegment == 4 && m.durableSequence == 0)
        // A version-5 number in the old layout, or a version from the future, is refused.
        var five = bytes
        five[8] = 5
        five.replaceSubrange(64..<68, with: withUnsafeBytes(of: Zlib.crc32(0, five[0..<64]).littleEndian, Array.init))
        #expect(throws: TrellisError.self) { try Manifest.parse(five, file: "M") }
    }

    @Test func checkpointLoadsEqualIncludingDanglingTargetsAndDeletedSerials() throws {
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let store = Store(schema: JournalWorkload.schema)
        try JournalWorkload.run(store, seed: 11, commits: 150)
        let graph = store.snapshot
        let bytes = try Checkpoint.write(graph, layer: disk, directory: "/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        #expect(disk.names(in: "/c") == [name])
        let file = try disk.open("/c/" + name, .read)
        #expect(try file.size() == bytes)
        let loaded = try Checkpoint.load(file, name: name, schema: graph.schema)
        #expect(GraphEquality.differences(graph, loaded) == [])
    }
}

extension SimulatedFileLayer {
    func names(in directory: String) -> [String] { ((try? list(directory)) ?? []).sorted() }
}
