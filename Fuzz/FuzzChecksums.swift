@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Makes the checksums of a damaged file right again, so that the fuzzer's mutations get past the CRCs and reach the
/// parsers behind them (schema, change sets, checkpoint rows, lengths). Without this almost every mutation would end
/// at the first checksum.
enum FuzzChecksums {
    static func fixManifest(_ b: inout [UInt8]) {
        // Versions 5 on: 76 bytes, the checksum at 72; before: 72 bytes, the checksum at 64.
        if b.count >= Manifest.size && b.count >= 10 && UInt16(b[8]) | UInt16(b[9]) << 8 >= 5 {
            put32(&b, 72, Zlib.crc32(0, b[0..<72]))
        } else if b.count >= Manifest.legacySize {
            put32(&b, 64, Zlib.crc32(0, b[0..<64]))
        }
    }

    /// Fixes a segment's or checkpoint's header (its fingerprint too, when its schema decodes) and every whole frame.
    static func fixFile(_ b: inout [UInt8]) {
        guard b.count >= FileHeader.fixedSize + 8 else { return }
        let length = Int(get32(b, 12))
        let schemaLength = Int(get32(b, 48))
        let crcOffset = FileHeader.fixedSize + schemaLength
        guard length >= FileHeader.fixedSize + 8, length <= b.count, schemaLength <= length, crcOffset + 4 <= length
        else { return }
        if let schema = try? SchemaCodec.decode(Array(b[56..<crcOffset]), context: "fuzz") {
            put64(&b, 40, schema.fingerprint)
        }
        put32(&b, crcOffset, Zlib.crc32(0, b[0..<crcOffset]))
        let salt = get64(b, 32)
        // The frame layout follows the file's version: 40-byte headers (the watermark) from version 6, 32 before.
        let h = FrameHeader.size(version: UInt16(b[8]) | UInt16(b[9]) << 8)
        var offset = length
        while offset + h <= b.count {
            let stored = Int(get32(b, offset + 4))
            guard stored <= b.count - offset - h else { return }
            let end = offset + h + stored
            put32(
                &b, offset,
                RecordFrame.checksum(salt: salt, header: b[(offset + 4)..<(offset + h)], stored: b[(offset + h)..<end]))
            offset = RecordFrame.align(end)
        }
    }

    static func get32(_ b: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << UInt32(8 * $1) }
    }

    static func get64(_ b: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << UInt64(8 * $1) }
    }

    static func put32(_ b: inout [UInt8], _ at: Int, _ v: UInt32) {
        for i in 0..<4 { b[at + i] = UInt8(truncatingIfNeeded: v >> UInt32(8 * i)) }
    }

    static func put64(_ b: inout [UInt8], _ at: Int, _ v: UInt64) {
        for i in 0..<8 { b[at + i] = UInt8(truncatingIfNeeded: v >> UInt64(8 * i)) }
    }
}
