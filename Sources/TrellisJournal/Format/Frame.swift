import Foundation
import TrellisCore
import TrellisGraph

/// A record read back and checked: where it was, its header, and its stored payload.
struct Frame {
    var offset: Int
    var header: FrameHeader
    var stored: [UInt8]

    var isCompressed: Bool { header.codec == RecordCodec.zlib.rawValue }

    /// The payload as it was before compression; throws `.corrupt` when inflating fails or gives the wrong size.
    func payload(file: String) throws -> [UInt8] {
        guard isCompressed else { return stored }
        guard let out = Zlib.decompress(stored[...], count: header.uncompressedLength) else {
            throw TrellisError(.corrupt, "\(file) at offset \(offset): the compressed payload does not inflate")
        }
        return out
    }
}
