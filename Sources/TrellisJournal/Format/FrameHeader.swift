import Foundation
import TrellisCore
import TrellisGraph

/// One framed record: the unit the journal appends and the checkpoint is made of.
///
///     offset size field
///          0    4 CRC-32 of: the file's salt (8 bytes LE), bytes 4..<32 of this header, the stored payload
///          4    4 stored payload length S
///          8    1 type (`RecordType`; high bit: ignorable when unknown)
///          9    1 codec (0 none, 1 zlib)
///         10    2 flags (0)
///         12    4 uncompressed payload length U (U == S when the codec is none)
///         16    8 sequence number (journal: commit sequence; checkpoint: chunk number), strictly +1
///         24    8 commit time, microseconds since 1970-01-01 UTC (checkpoint: 0)
///         32    S stored payload, then zero padding to a multiple of 8
struct FrameHeader: Equatable {
    var checksum: UInt32
    var storedLength: Int
    var type: UInt8
    var codec: UInt8
    var flags: UInt16
    var uncompressedLength: Int
    var sequence: UInt64
    var time: Int64

    static let size = 32

    init(_ bytes: some Collection<UInt8>) {
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
    }

    /// The frame's size on disk: header, payload and padding.
    var frameSize: Int { RecordFrame.align(Self.size + storedLength) }

    var isAllZero: Bool {
        checksum == 0 && storedLength == 0 && type == 0 && codec == 0 && flags == 0 && uncompressedLength == 0
            && sequence == 0 && time == 0
    }
}
