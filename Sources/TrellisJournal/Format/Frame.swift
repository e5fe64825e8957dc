import Foundation
import TrellisCore
import TrellisGraph

/// A record read back and checked: where it was, its header, and its stored payload. A record of format version 10
/// may span several frames (fragments); `header` and `stored` are then its first frame's, and `continuations` the
/// others', in order.
struct Frame {
    var offset: Int
    var header: FrameHeader
    var stored: [UInt8]
    /// The frames after the first of a record written as several (each checked like any frame); empty for a record
    /// of one frame.
    var continuations: [Fragment] = []

    /// One frame of a record after its first: its offset, header and stored payload.
    struct Fragment {
        var offset: Int
        var header: FrameHeader
        var stored: [UInt8]
    }

    /// Whether any frame of the record is compressed.
    var isCompressed: Bool {
        header.codec == RecordCodec.zlib.rawValue
            || continuations.contains { $0.header.codec == RecordCodec.zlib.rawValue }
    }

    /// The bytes the record takes on disk, from its first frame's start to its last frame's end (padding included).
    var extent: Int {
        guard let last = continuations.last else { return header.frameSize }
        return last.offset + last.header.frameSize - offset
    }

    /// The stored payload bytes of all the record's frames.
    var storedBytes: Int { continuations.reduce(header.storedLength) { $0 + $1.header.storedLength } }

    /// The payload bytes of all the record's frames, uncompressed.
    var uncompressedBytes: Int { continuations.reduce(header.uncompressedLength) { $0 + $1.header.uncompressedLength } }

    /// How many frames the record takes.
    var frameCount: Int { 1 + continuations.count }

    /// The payload as it was before compression (the frames' payloads one after the other); throws `.corrupt` when
    /// inflating fails or gives the wrong size.
    func payload(file: String) throws -> [UInt8] {
        guard !continuations.isEmpty else { return try Self.inflate(stored, header, at: offset, file: file) }
        var out: [UInt8] = []
        out.reserveCapacity(uncompressedBytes)
        out += try Self.inflate(stored, header, at: offset, file: file)
        for fragment in continuations {
            out += try Self.inflate(fragment.stored, fragment.header, at: fragment.offset, file: file)
        }
        return out
    }

    private static func inflate(
        _ stored: [UInt8], _ header: FrameHeader, at offset: Int, file: String
    ) throws
        -> [UInt8]
    {
        guard header.codec == RecordCodec.zlib.rawValue else { return stored }
        guard let out = Zlib.decompress(stored[...], count: header.uncompressedLength) else {
            throw TrellisError(.corrupt, "\(file) at offset \(offset): the compressed payload does not inflate")
        }
        return out
    }
}
