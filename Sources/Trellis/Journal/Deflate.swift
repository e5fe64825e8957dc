import CZlib

/// zlib's deflate with a chosen strategy, for checkpoint columns: Huffman coding alone suits text without repeats
/// (titles of random letters), the default strategy suits values that repeat. The output is an ordinary zlib stream
/// (2-byte header, deflate, Adler-32), which `Zlib.decompress` reads.
enum Deflate {
    enum Strategy {
        case standard, huffmanOnly

        var raw: Int32 { self == .standard ? Z_DEFAULT_STRATEGY : Z_HUFFMAN_ONLY }
    }

    /// The zlib stream of `bytes`, or nil when it is not smaller than `limit` bytes (or zlib fails).
    static func compress(_ bytes: [UInt8], level: Int32, strategy: Strategy, limit: Int) -> [UInt8]? {
        guard !bytes.isEmpty, bytes.count < Int(UInt32.max) else { return nil }
        var stream = z_stream()
        let setup = deflateInit2_(
            &stream, level, Z_DEFLATED, 15, 8, strategy.raw, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard setup == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var out = [UInt8](repeating: 0, count: bound)
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                stream.next_in = UnsafeMutablePointer(mutating: i.baseAddress)
                stream.avail_in = uInt(i.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        let produced = Int(stream.total_out)
        guard status == Z_STREAM_END, produced < limit else { return nil }
        out.removeLast(out.count - produced)
        return out
    }
}
