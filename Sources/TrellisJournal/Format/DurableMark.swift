import TrellisCore
import TrellisGraph

/// The durable watermark: the small file `DURABLE` a writer rewrites in place after each sync, so that followers in
/// other processes read records only up to the last one known durable.
///
///     offset size field
///          0    8 magic 89 54 52 57 0D 0A 1A 0A (\x89TRW)
///          8    2 layout version (1)
///         10    2 flags (0; anything else: not read)
///         12    4 length (56)
///         16    8 durable sequence W: every record through W is synced
///         24    8 segment id S: the segment the writer appends to
///         32    8 the salt of segment S
///         40    8 offset E in S: where the records through W end there (S's header end when it holds none of them)
///         48    4 CRC-32 of bytes 0..<48
///         52    4 reserved (0)
///
/// It is a hint, not part of the store: no reader of the journal needs it, opening never reads it, and a value that
/// is missing, torn or does not check out makes a follower fall back to the manifest's durable sequence.
package struct DurableMark: Equatable, Sendable {
    package var sequence: UInt64
    package var segment: UInt64
    package var salt: UInt64
    package var offset: UInt64

    static let size = 56
    static let layoutVersion: UInt16 = 1
    static let magic: [UInt8] = [0x89, 0x54, 0x52, 0x57, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R W
    package static let fileName = "DURABLE"

    package init(sequence: UInt64, segment: UInt64, salt: UInt64, offset: UInt64) {
        self.sequence = sequence
        self.segment = segment
        self.salt = salt
        self.offset = offset
    }

    package func encoded() -> [UInt8] {
        ByteWriter.bytes(estimate: Self.size) { w in
            w.append(Self.magic)
            w.u16(Self.layoutVersion)
            w.u16(0)
            w.u32(UInt32(Self.size))
            w.u64(sequence)
            w.u64(segment)
            w.u64(salt)
            w.u64(offset)
            w.u32(Zlib.crc32(0, w.written(0..<w.count)))
            w.u32(0)
        }
    }

    /// The mark `bytes` hold, or nil when they are not a whole, checked mark of this layout (a file being created,
    /// a read that met a write half done, a layout from a later build).
    package static func parse(_ bytes: [UInt8]) -> DurableMark? {
        guard bytes.count == size, Array(bytes[0..<8]) == magic else { return nil }
        do {
            var r = ByteReader(bytes, from: 8, context: fileName)
            guard try r.u16() == layoutVersion, try r.u16() == 0, try r.u32() == UInt32(size) else { return nil }
            let mark = DurableMark(sequence: try r.u64(), segment: try r.u64(), salt: try r.u64(), offset: try r.u64())
            guard try r.u32() == Zlib.crc32(0, bytes[0..<48]), try r.u32() == 0 else { return nil }
            guard mark.sequence < JournalFormat.sequenceLimit, mark.segment < JournalFormat.sequenceLimit else {
                return nil
            }
            return mark
        } catch {
            return nil
        }
    }

    /// Reads the mark of the store in `directory`; nil when there is none or it does not check out. A read that
    /// meets a write in progress fails its checksum, so it is tried a few times.
    package static func read(_ layer: any FileLayer, directory: String) -> DurableMark? {
        let path = joinPath(directory, fileName)
        for _ in 0..<3 {
            guard let bytes = try? layer.readWhole(path, limit: size * 2) else { return nil }
            if let mark = parse(bytes) { return mark }
        }
        return nil
    }
}
