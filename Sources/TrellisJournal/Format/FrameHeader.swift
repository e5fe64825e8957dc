import Foundation
import TrellisCore
import TrellisGraph

/// One framed record: the unit the journal appends and the checkpoint is made of.
///
///     offset size field
///          0    4 CRC-32 of: the file's salt (8 bytes LE), bytes 4..<H of this header, the stored payload
///          4    4 stored payload length S
///          8    1 type (`RecordType`; high bit: ignorable when unknown)
///          9    1 codec (0 none, 1 zlib)
///         10    2 flags (version 10: bit 0 another frame of the record follows, bit 1 the frame continues the
///                 record of the frame before it; 0 before version 10)
///         12    4 uncompressed payload length U (U == S when the codec is none)
///         16    8 sequence number (journal: commit sequence; checkpoint: chunk number), strictly +1
///         24    8 commit time, microseconds since 1970-01-01 UTC (checkpoint: 0)
///         32    8 version 6 on: synced-through watermark, the last record known durable when this frame was
///                 written (0: none; checkpoint: 0)
///          H    S stored payload (H = 40 from version 6, 32 before), then zero padding to a multiple of 8
struct FrameHeader: Equatable {
    var checksum: UInt32
    var storedLength: Int
    var type: UInt8
    var codec: UInt8
    var flags: UInt16
    var uncompressedLength: Int
    var sequence: UInt64
    var time: Int64
    /// The synced-through watermark (version 6 on; 0 in older files).
    var watermark: UInt64
    /// The header's size in its file's version: `FrameHeader.size(version:)`.
    var size: Int

    /// Flag bit (version 10): another frame of this record follows this one.
    static let moreFragments: UInt16 = 1
    /// Flag bit (version 10): this frame continues the record of the frame before it (same type, sequence number,
    /// time and watermark).
    static let continuesRecord: UInt16 = 2

    /// The flags a frame of a file of `version` may carry: the two fragment bits from version 10, none before.
    static func knownFlags(version: UInt16) -> UInt16 {
        version >= JournalFormat.fragmentVersion ? moreFragments | continuesRecord : 0
    }

    /// Whether another frame of this record follows.
    var hasMoreFragments: Bool { flags & Self.moreFragments != 0 }
    /// Whether this frame continues a record (it is not where a record starts).
    var isContinuation: Bool { flags & Self.continuesRecord != 0 }

    /// The first version whose frames carry a synced-through watermark (a 40-byte header).
    static let watermarkVersion: UInt16 = 6

    /// The size of a frame header in files of `version`: 40 bytes from version 6 (the watermark), 32 before.
    static func size(version: UInt16) -> Int { version >= watermarkVersion ? 40 : 32 }

    /// The size of a frame header in the files this build writes.
    static let currentSize = size(version: JournalFormat.version)

    /// Parses the first `size(version:)` bytes of `bytes`, which must hold at least that many.
    init(_ bytes: some Collection<UInt8>, version: UInt16) {
        let b = Array(bytes)
        var r = ByteReader(b, context: "frame")
        checksum = try! r.u32()
        storedLength = Int(try! r.u32())
        type = try! r.u8()
        codec = try! r.u8()
        flags = try! r.u16()
        uncompressedLength = Int(try! r.u32())
        sequence = try! r.u64()
        time = Int64(bitPattern: try! r.u64())
        size = Self.size(version: version)
        watermark = size > 32 ? try! r.u64() : 0
    }

    /// The frame's size on disk: header, payload and padding.
    var frameSize: Int { RecordFrame.align(size + storedLength) }

    var isAllZero: Bool {
        checksum == 0 && storedLength == 0 && type == 0 && codec == 0 && flags == 0 && uncompressedLength == 0
            && sequence == 0 && time == 0 && watermark == 0
    }
}
