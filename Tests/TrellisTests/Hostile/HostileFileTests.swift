import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal

/// Issue 23, items 6 and 7: bytes a hostile file can set behind a valid checksum, each refused (every one of these
/// was accepted on main before its fix). `.ci/check-hostile.sh` runs the same classes through every tool command.
@Suite struct HostileFileTests {
    static let schema = try! Schema([
        EntityDescription(
            "Item", attributes: [AttributeDescription("title", .string), AttributeDescription("rank", .int64)])
    ])

    func header(flags: UInt16 = 0, reserved: UInt32 = 0, extra: Int = 0, padding: UInt8 = 0) -> [UInt8] {
        var bytes = FileHeader(
            magic: JournalFormat.segmentMagic, id: 1, sequence: 1, salt: 7, fingerprint: Self.schema.fingerprint,
            schemaBytes: SchemaCodec.encode(Self.schema)
        ).encoded()
        let schemaLength = Int(bytes[48]) | Int(bytes[49]) << 8
        bytes.replaceSubrange(10..<12, with: [UInt8(flags & 0xff), UInt8(flags >> 8)])
        bytes.replaceSubrange(52..<56, with: withUnsafeBytes(of: reserved.littleEndian) { Array($0) })
        bytes += [UInt8](repeating: 0, count: extra)
        let end = 56 + schemaLength
        for i in (end + 4)..<bytes.count { bytes[i] = padding }
        let length = UInt32(bytes.count)
        bytes.replaceSubrange(12..<16, with: withUnsafeBytes(of: length.littleEndian) { Array($0) })
        let crc = Zlib.crc32(0, bytes[0..<end])
        bytes.replaceSubrange(end..<(end + 4), with: withUnsafeBytes(of: crc.littleEndian) { Array($0) })
        return bytes
    }

    @Test func aPlainHeaderParses() throws {
        _ = try FileHeader.parse(header(), magic: JournalFormat.segmentMagic, file: "s")
    }

    @Test func headerFlagsReservedPaddingAndLongerLengthAreRefused() {
        for bytes in [header(flags: 1), header(reserved: 3), header(extra: 8), header(extra: 8, padding: 0x55)] {
            #expect(throws: TrellisError.self) {
                _ = try FileHeader.parse(bytes, magic: JournalFormat.segmentMagic, file: "s")
            }
        }
    }

    @Test func manifestFlagsLengthAndReservedAreRefused() throws {
        func crc(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            withUnsafeBytes(of: Zlib.crc32(0, bytes).littleEndian) { Array($0) }
        }
        let good = Manifest(
            generation: 1, fingerprint: 0, checkpointSequence: 0, checkpointBytes: 0, firstSegment: 1, lastSegment: 1,
            durableSequence: 0
        ).encoded()
        _ = try Manifest.parse(good, file: "MANIFEST")
        for (at, byte) in [(10, UInt8(1)), (12, UInt8(80))] {
            var bytes = good
            bytes[at] = byte
            bytes.replaceSubrange(72..<76, with: crc(bytes[0..<72]))
            #expect(throws: TrellisError.self) { _ = try Manifest.parse(bytes, file: "MANIFEST") }
        }
        // A version-4 manifest: 72 bytes, the checksum over bytes 0..<64, then a reserved word outside it.
        var legacy = Array(good[0..<64])
        legacy[8] = 4
        legacy[12] = 72
        let sealed = { (bytes: [UInt8]) in Array(bytes[0..<64]) + crc(bytes[0..<64]) + Array(bytes[68..<72]) }
        let goodLegacy = sealed(legacy + [0, 0, 0, 0, 0, 0, 0, 0])
        _ = try Manifest.parse(goodLegacy, file: "MANIFEST")
        for (at, byte) in [(10, UInt8(1)), (12, UInt8(80)), (68, UInt8(1))] {
            var bytes = goodLegacy
            bytes[at] = byte
            #expect(throws: TrellisError.self) { _ = try Manifest.parse(sealed(bytes), file: "MANIFEST") }
        }
    }

    @Test func bytesAfterTheEndOfAZlibStreamAreRefused() throws {
        let payload = [UInt8](repeating: 42, count: 4096)
        let packed = try #require(Zlib.compress(payload, level: 6))
        #expect(Zlib.decompress(packed[...], count: payload.count) == payload)
        #expect(Zlib.decompress((packed + [1, 2, 3])[...], count: payload.count) == nil)
    }

    @Test func aLargeFrameInflatingMoreThan256To1IsRefused() {
        var header = FrameHeader([UInt8](repeating: 0, count: FrameHeader.currentSize), version: JournalFormat.version)
        header.codec = RecordCodec.zlib.rawValue
        header.storedLength = 4096
        header.uncompressedLength = 4 << 20  // 1024:1, under the 1100:1 bound main applied
        #expect(!FrameScanner.plausibleLengths(header))
        header.uncompressedLength = 1 << 20  // 1 MiB: any ratio up to 1100:1
        #expect(FrameScanner.plausibleLengths(header))
    }
}
