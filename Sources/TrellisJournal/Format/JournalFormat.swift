import TrellisCore
import TrellisGraph

/// Constants of the on-disk format, version 4 (`journal-format.md` at the repository root explains each choice).
package enum JournalFormat {
    /// The version this build writes. Versions 2 and 3 changed only the checkpoint: columnar chunks (record type 4),
    /// then stored index order (record type 5).
    static let version: UInt16 = 4
    /// The versions this build reads: version-1 checkpoints load through the row decoder they were written for,
    /// version-2 checkpoints rebuild every index by sorting, and segments and manifests of versions 1 and 2 are byte
    /// for byte what version 3 writes.
    static let readableVersions: ClosedRange<UInt16> = 1...4
    /// PNG-style magics: a high byte first (catches 7-bit transfers), a name, CR LF (catches line-ending
    /// conversion), ^Z and LF.
    package static let segmentMagic: [UInt8] = [0x89, 0x54, 0x52, 0x4A, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R J
    static let checkpointMagic: [UInt8] = [0x89, 0x54, 0x52, 0x43, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R C
    static let manifestMagic: [UInt8] = [0x89, 0x54, 0x52, 0x4D, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R M

    package static let manifestName = "MANIFEST"
    package static let lockName = "LOCK"
    static let temporarySuffix = ".tmp"
    static let segmentPrefix = "segment-"
    static let segmentSuffix = ".trj"
    static let checkpointPrefix = "checkpoint-"
    static let checkpointSuffix = ".trc"

    /// Every record starts on a multiple of 8, so its 8-byte checksum-and-length word never straddles a sector and
    /// is written whole or not at all.
    static let alignment = 8
    /// The largest stored or uncompressed record payload a reader accepts, and the largest commit a writer takes.
    static let maxRecordBytes = 512 << 20
    /// deflate cannot expand more than about 1032:1; a claimed uncompressed size beyond that is damage, and refusing
    /// it bounds what a damaged length can make the reader allocate.
    static let maxCompressionRatio = 1100
    /// The largest header (schema included) and manifest a reader accepts.
    static let maxHeaderBytes = 16 << 20

    package static func segmentName(_ id: UInt64) -> String { segmentPrefix + hex16(id) + segmentSuffix }
    static func checkpointName(_ sequence: UInt64) -> String { checkpointPrefix + hex16(sequence) + checkpointSuffix }

    package static func hex16(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// The id in a segment file name, or nil for any other name.
    static func segmentID(_ name: String) -> UInt64? { number(name, segmentPrefix, segmentSuffix) }

    /// The sequence number in a checkpoint file name, or nil for any other name.
    static func checkpointSequence(_ name: String) -> UInt64? { number(name, checkpointPrefix, checkpointSuffix) }

    private static func number(_ name: String, _ prefix: String, _ suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 16 + suffix.count else {
            return nil
        }
        return UInt64(name.dropFirst(prefix.count).prefix(16), radix: 16)
    }
}

/// The kind of a framed record. The high bit marks a type a reader may skip when it does not know it.
package enum RecordType: UInt8 {
    case changeSet = 1
    case checkpointRows = 2
    case checkpointFooter = 3
    /// Format version 2: a checkpoint chunk stored column by column (`CheckpointColumns`).
    case checkpointColumns = 4
    /// Format version 3: the order of one index of a checkpoint's entity (`CheckpointIndexOrder`).
    case checkpointIndexOrder = 5
    /// Format version 4: a schema migration, the first record of a segment whose header holds the new schema
    /// (`MigrationRecord`).
    case migration = 6

    static let ignorableBit: UInt8 = 0x80
}

/// How a record's payload is stored.
enum RecordCodec: UInt8 {
    case none = 0
    case zlib = 1
}

/// The header of a segment or checkpoint file: what it is, which sequence numbers it holds, its salt, and the
/// schema it was written with.
///
///     offset size field
///          0    8 magic
///          8    2 format version (4; 1 to 3 are read too)
///         10    2 flags (0)
///         12    4 header length in bytes, padding included (a multiple of 8)
///         16    8 segment id (checkpoint: 0)
///         24    8 segment: sequence number of its first record; checkpoint: the sequence number it holds
///         32    8 salt (random per file; mixed into every record checksum)
///         40    8 schema fingerprint
///         48    4 schema length L
///         52    4 reserved (0)
///         56    L schema (`SchemaCodec`)
///       56+L    4 CRC-32 of bytes 0..<56+L
///               zero padding to a multiple of 8
package struct FileHeader: Equatable {
    var magic: [UInt8]
    var id: UInt64
    var sequence: UInt64
    var salt: UInt64
    var fingerprint: UInt64
    var schemaBytes: [UInt8]
    /// The format version the file was written in (a new file: this build's).
    var version: UInt16 = JournalFormat.version

    static let fixedSize = 56

    package func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.fixedSize + schemaBytes.count + 12)
        w.append(magic)
        w.u16(version)
        w.u16(0)
        w.u32(0)  // length, set below
        w.u64(id)
        w.u64(sequence)
        w.u64(salt)
        w.u64(fingerprint)
        w.u32(UInt32(schemaBytes.count))
        w.u32(0)
        w.append(schemaBytes)
        let crcOffset = w.count
        w.u32(0)
        w.pad(to: JournalFormat.alignment)
        w.setU32(UInt32(w.count), at: 12)
        w.setU32(Zlib.crc32(0, w.bytes[0..<crcOffset]), at: crcOffset)
        return w.bytes
    }

    /// The header's length, read from its first 16 bytes; nil when those do not start a header of this kind.
    static func length(_ prefix: [UInt8], magic: [UInt8]) -> Int? {
        guard prefix.count >= 16, Array(prefix[0..<8]) == magic else { return nil }
        var r = ByteReader(prefix, from: 12, context: "header")
        guard let n = try? r.u32(), n >= fixedSize + 8, n <= JournalFormat.maxHeaderBytes else { return nil }
        return Int(n)
    }

    /// Parses and checks a whole header; the error message says what is wrong.
    static func parse(_ bytes: [UInt8], magic: [UInt8], file: String) throws -> FileHeader {
        var r = ByteReader(bytes, context: file + " header")
        guard bytes.count >= fixedSize + 8, Array(try r.take(8)) == magic else {
            throw TrellisError(.corrupt, "\(file): not a Trellis file of this kind (bad magic)")
        }
        let version = try r.u16()
        guard JournalFormat.readableVersions.contains(version) else {
            throw TrellisError(.corrupt, "\(file): format version \(version); this build reads versions 1 to 4")
        }
        _ = try r.u16()
        let length = Int(try r.u32())
        guard length == bytes.count else { throw r.failure("header length \(length) does not match") }
        let id = try r.u64()
        let sequence = try r.u64()
        let salt = try r.u64()
        let fingerprint = try r.u64()
        let schemaLength = Int(try r.u32())
        _ = try r.u32()
        let schema = Array(try r.take(schemaLength))
        let crcOffset = r.position
        let stored = try r.u32()
        guard stored == Zlib.crc32(0, bytes[0..<crcOffset]) else {
            throw TrellisError(.corrupt, "\(file): header checksum mismatch")
        }
        return FileHeader(
            magic: magic, id: id, sequence: sequence, salt: salt, fingerprint: fingerprint, schemaBytes: schema,
            version: version)
    }

    package init(
        magic: [UInt8], id: UInt64, sequence: UInt64, salt: UInt64, fingerprint: UInt64, schemaBytes: [UInt8],
        version: UInt16 = JournalFormat.version
    ) {
        self.magic = magic
        self.id = id
        self.sequence = sequence
        self.salt = salt
        self.fingerprint = fingerprint
        self.schemaBytes = schemaBytes
        self.version = version
    }
}

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
        var w = ByteWriter(capacity: Self.size)
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
        w.u32(Zlib.crc32(0, w.bytes))
        w.u32(0)
        return w.bytes
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
        _ = try r.u16()
        _ = try r.u32()
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

extension ByteReader {
    func peekU32() throws -> UInt32 {
        var copy = self
        return try copy.u32()
    }
}
