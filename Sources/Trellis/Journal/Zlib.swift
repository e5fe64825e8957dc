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

    /// The zlib stream (deflate with a 2-byte header and an Adler-32 trailer, which inflate checks) of `bytes`, or
    /// nil when it would not be smaller.
    static func compress(_ bytes: [UInt8], level: Int32) -> [UInt8]? {
        guard !bytes.isEmpty, bytes.count < Int(UInt32.max) else { return nil }
        var bound = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(bound))
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                compress2(o.baseAddress, &bound, i.baseAddress, uLong(i.count), level)
            }
        }
        guard status == Z_OK, Int(bound) < bytes.count else { return nil }
        out.removeLast(out.count - Int(bound))
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
