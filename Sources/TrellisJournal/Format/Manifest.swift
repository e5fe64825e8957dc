import TrellisCore
import TrellisGraph

/// The manifest: the one small file whose atomic replacement commits a rotation or a compaction.
///
///     offset size field
///          0    8 magic
///          8    2 format version (4; 1 to 3 are read too)
///         10    2 flags (0)
///         12    4 length (72)
///         16    8 generation (+1 on every write)
///         24    8 schema fingerprint
///         32    8 checkpoint sequence number (0: no checkpoint)
///         40    8 checkpoint file size in bytes
///         48    8 first live segment id
///         56    8 last live segment id (segments first…last all exist, consecutive)
///         64    4 CRC-32 of bytes 0..<64
///         68    4 reserved (0)
package struct Manifest: Equatable, Sendable {
    package var generation: UInt64
    var fingerprint: UInt64
    package var checkpointSequence: UInt64
    package var checkpointBytes: UInt64
    package var firstSegment: UInt64
    package var lastSegment: UInt64

    static let size = 72

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
            w.u32(Zlib.crc32(0, w.written(0..<w.count)))
            w.u32(0)
        }
    }

    static func parse(_ bytes: [UInt8], file: String) throws -> Manifest {
        guard bytes.count == size else {
            throw TrellisError(.corrupt, "\(file): \(bytes.count) bytes; a manifest has \(size) (truncated or foreign)")
        }
        var r = ByteReader(bytes, context: file)
        guard Array(try r.take(8)) == JournalFormat.manifestMagic else {
            throw TrellisError(.corrupt, "\(file): not a Trellis manifest (bad magic)")
        }
        guard Zlib.crc32(0, bytes[0..<64]) == (try ByteReader(bytes, from: 64, context: file).peekU32()) else {
            throw TrellisError(.corrupt, "\(file): manifest checksum mismatch")
        }
        let version = try r.u16()
        guard JournalFormat.readableVersions.contains(version) else {
            throw TrellisError(.corrupt, "\(file): format version \(version); this build reads versions 1 to 4")
        }
        // Every byte is checked: flags (a feature this build does not know), the length, the reserved field.
        let flags = try r.u16()
        guard flags == 0 else {
            throw TrellisError(
                .corrupt,
                "\(file): manifest flags 0x\(String(flags, radix: 16)) name a feature this build does not know")
        }
        let length = try r.u32()
        guard length == size else {
            throw TrellisError(.corrupt, "\(file): manifest length field \(length), not \(size)")
        }
        guard try ByteReader(bytes, from: 68, context: file).peekU32() == 0 else {
            throw TrellisError(.corrupt, "\(file): manifest reserved field is not 0")
        }
        let m = Manifest(
            generation: try r.u64(), fingerprint: try r.u64(), checkpointSequence: try r.u64(),
            checkpointBytes: try r.u64(), firstSegment: try r.u64(), lastSegment: try r.u64())
        guard m.firstSegment >= 1, m.firstSegment <= m.lastSegment else {
            throw TrellisError(.corrupt, "\(file): names no segments (first \(m.firstSegment), last \(m.lastSegment))")
        }
        // Far beyond any real store (a segment a millisecond for a million years), and it keeps `+ 1` from trapping.
        guard m.lastSegment < 1 << 60, m.checkpointSequence < 1 << 60, m.generation < 1 << 60 else {
            throw TrellisError(.corrupt, "\(file): generation, segment id or sequence number out of range")
        }
        return m
    }

    package init(
        generation: UInt64, fingerprint: UInt64, checkpointSequence: UInt64, checkpointBytes: UInt64,
        firstSegment: UInt64, lastSegment: UInt64
    ) {
        self.generation = generation
        self.fingerprint = fingerprint
        self.checkpointSequence = checkpointSequence
        self.checkpointBytes = checkpointBytes
        self.firstSegment = firstSegment
        self.lastSegment = lastSegment
    }
}
