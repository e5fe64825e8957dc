import CZlib

/// The system zlib, wrapped: the one file where the journal hands buffers to C for checksums and compression.
enum Zlib {
    /// CRC-32 (IEEE) of `bytes`, continuing from `crc` (start with 0).
    static func crc32(_ crc: UInt32, _ bytes: some Collection<UInt8>) -> UInt32 {
        let result = bytes.withContiguousStorageIfAvailable { buffer -> UInt32 in
            update(crc, buffer)
        }
        if let result { return result }
        return Array(bytes).withUnsafeBufferPointer { update(crc, $0) }
    }

    private static func update(_ crc: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc = uLong(crc)
        var base = buffer.baseAddress
        var left = buffer.count
        // zlib takes a 32-bit length; feed larger buffers in pieces.
        while left > 0, let b = base {
            let n = min(left, 1 << 30)
            crc = CZlib.crc32(crc, b, uInt(n))
            base = b + n
            left -= n
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// How deflate looks for redundancy. Every strategy writes an ordinary zlib stream: inflate reads them all.
    enum Strategy {
        /// Repeated strings (LZ77) and Huffman codes: smallest, slowest.
        case standard
        /// Huffman codes for single bytes only, no string matching: about 2.5 times as fast at level 1 on the
        /// journal's records, which are mostly random numbers and short texts, for about 6% more bytes.
        case huffmanOnly

        var raw: Int32 { self == .standard ? Z_DEFAULT_STRATEGY : Z_HUFFMAN_ONLY }
    }

    /// The zlib stream (deflate with a 2-byte header and an Adler-32 trailer, which inflate checks) of `bytes`, or
    /// nil when it would not be smaller.
    static func compress(_ bytes: [UInt8], level: Int32, strategy: Strategy = .standard) -> [UInt8]? {
        guard !bytes.isEmpty, bytes.count < Int(UInt32.max) else { return nil }
        var stream = z_stream()
        let version = zlibVersion()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, MAX_WBITS, 8, strategy.raw, version, Int32(MemoryLayout<z_stream>.size))
                == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var out = [UInt8](repeating: 0, count: bound)
        let (status, produced) = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i -> (Int32, Int) in
                stream.next_in = UnsafeMutablePointer(mutating: i.baseAddress)
                stream.avail_in = uInt(i.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                let status = deflate(&stream, Z_FINISH)
                return (status, o.count - Int(stream.avail_out))
            }
        }
        guard status == Z_STREAM_END, produced < bytes.count else { return nil }
        out.removeLast(out.count - produced)
        return out
    }

    /// Inflates a zlib stream that must produce exactly `count` bytes; nil when it does not (damage).
    static func decompress(_ bytes: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard count > 0, count < Int(UInt32.max) else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        var produced = uLong(count)
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                uncompress(o.baseAddress, &produced, i.baseAddress, uLong(i.count))
            }
        }
        guard status == Z_OK, Int(produced) == count else { return nil }
        return out
    }
}
