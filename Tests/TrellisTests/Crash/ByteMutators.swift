@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The M harness of the crash matrix: byte-level damage to real store files, in the manner of LevelDB's log tests
/// (`ShrinkSize`, `IncrementByte`, `FixChecksum`).
enum ByteMutators {
    static func truncate(_ bytes: [UInt8], to size: Int) -> [UInt8] { Array(bytes.prefix(size)) }

    static func flipBit(_ bytes: [UInt8], _ bit: Int) -> [UInt8] {
        var out = bytes
        out[bit / 8] ^= 1 << UInt8(bit % 8)
        return out
    }

    static func zero(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var out = bytes
        for i in range.clamped(to: 0..<out.count) { out[i] = 0 }
        return out
    }

    /// Overwrites `range` with bytes from a seeded generator (garbage).
    static func garble(_ bytes: [UInt8], _ range: Range<Int>, seed: UInt64) -> [UInt8] {
        var out = bytes
        var random = SeededRandom(seed: seed)
        for i in range.clamped(to: 0..<out.count) { out[i] = UInt8(truncatingIfNeeded: random.next()) }
        return out
    }

    /// Sets the little-endian 32-bit field at `offset` (a length field, say).
    static func setU32(_ bytes: [UInt8], at offset: Int, _ value: UInt32) -> [UInt8] {
        var out = bytes
        for i in 0..<4 { out[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
        return out
    }

    static func setU64(_ bytes: [UInt8], at offset: Int, _ value: UInt64) -> [UInt8] {
        var out = bytes
        for i in 0..<8 { out[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
        return out
    }

    /// Recomputes the checksum of the frame at `offset` of a segment or checkpoint (so that a changed field is read
    /// as written, not as damage).
    static func fixFrameChecksum(_ bytes: [UInt8], at offset: Int) -> [UInt8] {
        let salt = u64(bytes, 32)
        let stored = min(Int(u32(bytes, offset + 4)), bytes.count - offset - FrameHeader.size)
        let crc = RecordFrame.checksum(
            salt: salt, header: bytes[(offset + 4)..<(offset + FrameHeader.size)],
            stored: bytes[(offset + FrameHeader.size)..<(offset + FrameHeader.size + stored)])
        return setU32(bytes, at: offset, crc)
    }

    /// Recomputes the header checksum of a segment or checkpoint.
    static func fixHeaderChecksum(_ bytes: [UInt8]) -> [UInt8] {
        let crcOffset = FileHeader.fixedSize + Int(u32(bytes, 48))
        return setU32(bytes, at: crcOffset, Zlib.crc32(0, bytes[0..<crcOffset]))
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << UInt32(8 * $1) }
    }

    static func u64(_ b: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << UInt64(8 * $1) }
    }
}
