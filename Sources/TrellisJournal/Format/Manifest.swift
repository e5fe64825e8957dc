import TrellisCore
import TrellisGraph

/// The manifest: the one small file whose atomic replacement commits a rotation, a compaction or a clean close.
///
/// Version 5 (76 bytes; every byte under the checksum):
///
///     offset size field
///          0    8 magic
///          8    2 format version (5)
///         10    2 flags (0; anything else is damage)
///         12    4 length (76; anything else is damage)
///         16    8 generation (+1 on every write)
///         24    8 schema fingerprint
///         32    8 checkpoint sequence number (0: no checkpoint)
///         40    8 checkpoint file size in bytes
///         48    8 first live segment id
///         56    8 last live segment id (segments first…last all exist, consecutive)
///         64    8 durable sequence: the journal reached at least this record, synced, when the manifest was written
///         72    4 CRC-32 of bytes 0..<72
///
/// Versions 1 to 4 (72 bytes, read too, durable sequence 0): the same up to offset 64, then the CRC-32 of bytes
/// 0..<64 and 4 reserved bytes.
package struct Manifest: Equatable, Sendable {
    package var generation: UInt64
    var fingerprint: UInt64
    package var checkpointSequence: UInt64
    package var checkpointBytes: UInt64
    package var firstSegment: UInt64
    package var lastSegment: UInt64
    /// A journal that ends before this record lost records that were durable (a vanished tail). Written at clean
    /// close, rotation, compaction and migration; 0 in manifests of versions 1 to 4.
    package var durableSequence: UInt64

    static let size = 76
    /// The size of a manifest of versions 1 to 4.
    static let legacySize = 72

    package func encoded() -> [UInt8] {
        ByteWriter.bytes(estimate: Self.size) { w in
            w.append(JournalFormat.manifestMagic)
            w.u16(JournalFormat.version)
            w.u16(0)
            w.u32(UInt32(Self.size))
            w.u64(generation)
            w.u64(fingerprint)
            w.u64(checkpointSequence)
            w.u64(checkpointBytes)
            w.u64(firstSegment)
            w.u64(lastSegment)
            w.u64(durableSequence)
            w.u32(Zlib.crc32(0, w.written(0..<w.count)))
        }
    }

    static func parse(_ bytes: [UInt8], file: String) throws -> Manifest {
        let readable =
            "this build reads versions \(JournalFormat.readableVersions.lowerBound) to "
            + "\(JournalFormat.readableVersions.upperBound)"
        guard bytes.count >= 10, Array(bytes[0..<8]) == JournalFormat.manifestMagic else {
            guard bytes.count == size || bytes.count == legacySize else {
                throw TrellisError(
                    .corrupt, "\(file): \(bytes.count) bytes; a manifest has \(size) (\(legacySize) before version 5)")
            }
            throw TrellisError(.corrupt, "\(file): not a Trellis manifest (bad magic)")
        }
        let claimed = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        // The size says which layout it is; a version from the future is named as such.
        guard bytes.count == size || bytes.count == legacySize else {
            if claimed > JournalFormat.version {
                throw TrellisError(.corrupt, "\(file): format version \(claimed); \(readable)")
            }
            throw TrellisError(
                .corrupt, "\(file): \(bytes.count) bytes; a manifest has \(size) (\(legacySize) before version 5)")
        }
        let covered = bytes.count == size ? 72 : 64
        guard Zlib.crc32(0, bytes[0..<covered]) == (try ByteReader(bytes, from: covered, context: file).peekU32())
        else {
            throw TrellisError(.corrupt, "\(file): manifest checksum mismatch")
        }
        var r = ByteReader(bytes, from: 8, context: file)
        let version = try r.u16()
        guard JournalFormat.readableVersions.contains(version) else {
            throw TrellisError(.corrupt, "\(file): format version \(version); \(readable)")
        }
        guard (version >= 5) == (bytes.count == size) else {
            throw TrellisError(.corrupt, "\(file): a version-\(version) manifest of \(bytes.count) bytes")
        }
        let flags = try r.u16()
        let length = try r.u32()
        // Fields 10 and 12 are not read before version 5; from it on they must say what they mean.
        guard version < 5 || (flags == 0 && length == UInt32(size)) else {
            throw TrellisError(.corrupt, "\(file): manifest flags \(flags) or length \(length) unknown to this build")
        }
        // Before version 5 the flags, the length and the reserved word after the checksum were written as 0, 72
        // and 0 but not covered: every byte is checked all the same.
        if version < 5 {
            guard flags == 0, length == UInt32(legacySize) else {
                throw TrellisError(
                    .corrupt,
                    "\(file): manifest flags 0x\(String(flags, radix: 16)) or length \(length) unknown to this build")
            }
            guard try ByteReader(bytes, from: 68, context: file).peekU32() == 0 else {
                throw TrellisError(.corrupt, "\(file): manifest reserved field is not 0")
            }
        }
        let m = Manifest(
            generation: try r.u64(), fingerprint: try r.u64(), checkpointSequence: try r.u64(),
            checkpointBytes: try r.u64(), firstSegment: try r.u64(), lastSegment: try r.u64(),
            durableSequence: version >= 5 ? try r.u64() : 0)
        guard m.firstSegment >= 1, m.firstSegment <= m.lastSegment else {
            throw TrellisError(.corrupt, "\(file): names no segments (first \(m.firstSegment), last \(m.lastSegment))")
        }
        // Far beyond any real store (a segment a millisecond for a million years), and it keeps `+ 1` from trapping.
        guard m.lastSegment < 1 << 60, m.checkpointSequence < 1 << 60, m.generation < 1 << 60,
            m.durableSequence < 1 << 60
        else {
            throw TrellisError(.corrupt, "\(file): generation, segment id or sequence number out of range")
        }
        return m
    }

    package init(
        generation: UInt64, fingerprint: UInt64, checkpointSequence: UInt64, checkpointBytes: UInt64,
        firstSegment: UInt64, lastSegment: UInt64, durableSequence: UInt64
    ) {
        self.generation = generation
        self.fingerprint = fingerprint
        self.checkpointSequence = checkpointSequence
        self.checkpointBytes = checkpointBytes
        self.firstSegment = firstSegment
        self.lastSegment = lastSegment
        self.durableSequence = durableSequence
    }
}
