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
        let size = FrameHeader.size(version: UInt16(bytes[8]) | UInt16(bytes[9]) << 8)
        let stored = min(Int(u32(bytes, offset + 4)), bytes.count - offset - size)
        let crc = RecordFrame.checksum(
            salt: salt, header: bytes[(offset + 4)..<(offset + size)],
            stored: bytes[(offset + size)..<(offset + size + stored)])
        return setU32(bytes, at: offset, crc)
    }

    /// A segment or checkpoint of this build's format, as a build of `version` (5 or older) would have written it:
    /// the version field set, and every frame rewritten with the 32-byte header of those versions (no watermark),
    /// checksums recomputed. Frames are read up to the first that does not check out (reserved zeros stay zeros).
    static func downgraded(_ bytes: [UInt8], to version: UInt16) -> [UInt8] {
        precondition(version < FrameHeader.watermarkVersion)
        let salt = u64(bytes, 32)
        let headerLength = Int(u32(bytes, 12))
        var header = Array(bytes[0..<headerLength])
        header[8] = UInt8(version)
        header[9] = 0
        var out = fixHeaderChecksum(header)
        var offset = headerLength
        let size = FrameHeader.currentSize
        while offset + size <= bytes.count {
            let stored = Int(u32(bytes, offset + 4))
            guard stored > 0 || u64(bytes, offset + 16) != 0, offset + size + stored <= bytes.count else { break }
            var payload = bytes[(offset + size)..<(offset + size + stored)]
            var frameHeader = Array(bytes[offset..<(offset + 32)])
            // Records before version 7 have no author: drop a stored change set's "none" (the workloads set no author).
            if bytes[offset + 8] == RecordType.changeSet.rawValue, bytes[offset + 9] == 0, payload.last == 1 {
                payload = payload.dropLast()
                frameHeader = setU32(frameHeader, at: 4, UInt32(payload.count))
                frameHeader = setU32(frameHeader, at: 12, UInt32(payload.count))
            }
            var frame = frameHeader + payload
            frame = setU32(frame, at: 0, RecordFrame.checksum(salt: salt, header: frame[4..<32], stored: payload))
            frame += [UInt8](repeating: 0, count: RecordFrame.align(frame.count) - frame.count)
            out += frame
            offset += RecordFrame.align(size + stored)
        }
        return out + [UInt8](repeating: 0, count: bytes.count - offset)
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
