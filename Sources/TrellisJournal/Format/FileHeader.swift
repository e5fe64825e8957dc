import TrellisCore
import TrellisGraph

/// The header of a segment or checkpoint file: what it is, which sequence numbers it holds, its salt, and the
/// schema it was written with.
///
///     offset size field
///          0    8 magic
///          8    2 format version (6; 1 to 5 are read too)
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
        ByteWriter.bytes(estimate: Self.fixedSize + schemaBytes.count + 12) { w in
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
            w.setU32(Zlib.crc32(0, w.written(0..<crcOffset)), at: crcOffset)
        }
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
            throw TrellisError(.corrupt, "\(file): format version \(version); \(JournalFormat.readableDescription)")
        }
        let flags = try r.u16()
        let length = Int(try r.u32())
        guard length == bytes.count else { throw r.failure("header length \(length) does not match") }
        let id = try r.u64()
        let sequence = try r.u64()
        let salt = try r.u64()
        let fingerprint = try r.u64()
        let schemaLength = Int(try r.u32())
        let reserved = try r.u32()
        let schema = Array(try r.take(schemaLength))
        let crcOffset = r.position
        let stored = try r.u32()
        guard stored == Zlib.crc32(0, bytes[0..<crcOffset]) else {
            throw TrellisError(.corrupt, "\(file): header checksum mismatch")
        }
        // Every byte is checked: the checksum covers the flags and the reserved field, and no writer sets them, so a
        // set one is a feature this build does not know (refused, as an incompatible feature must be); the padding
        // is outside the checksum, so it must be zero, and the header exactly as long as its schema makes it.
        guard flags == 0 else {
            throw TrellisError(
                .corrupt, "\(file): header flags 0x\(String(flags, radix: 16)) name a feature this build does not know")
        }
        guard reserved == 0 else {
            throw TrellisError(.corrupt, "\(file): header reserved field is \(reserved), not 0")
        }
        guard length == RecordFrame.align(fixedSize + schemaLength + 4) else {
            throw TrellisError(
                .corrupt,
                "\(file): header length \(length) is not \(RecordFrame.align(fixedSize + schemaLength + 4)) (60 + the "
                    + "schema's \(schemaLength) bytes, rounded up to 8)")
        }
        guard bytes[r.position...].allSatisfy({ $0 == 0 }) else {
            throw TrellisError(.corrupt, "\(file): nonzero bytes in the header's padding")
        }
        // Far beyond any real store, and it keeps the sequence chain's `+ 1` from wrapping to 0.
        guard sequence < JournalFormat.sequenceLimit else {
            throw TrellisError(.corrupt, "\(file): sequence number \(sequence) is out of range (at most 2^60 - 1)")
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
