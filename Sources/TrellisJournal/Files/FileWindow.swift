import Foundation
import TrellisCore
import TrellisGraph

/// Reads a file through a window of a megabyte, so scanning costs few system calls and bounded memory.
struct FileWindow {
    let file: any LayerFile
    let size: Int
    private var base = 0
    private var buffer: [UInt8] = []
    static let windowBytes = 1 << 20

    init(_ file: any LayerFile, size: Int) {
        self.file = file
        self.size = size
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    mutating func bytes(at offset: Int, count: Int) throws -> ArraySlice<UInt8> {
        let count = max(0, min(count, size - offset))
        if offset >= base, offset + count <= base + buffer.count {
            return buffer[(offset - base)..<(offset - base + count)]
        }
        if count > Self.windowBytes { return try file.read(at: offset, count: count)[...] }
        base = offset
        buffer = try file.read(at: offset, count: min(Self.windowBytes, size - offset))
        return buffer[0..<min(count, buffer.count)]
    }
}
