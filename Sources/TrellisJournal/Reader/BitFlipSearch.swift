/// Finds the one bit whose flip would make a CRC-32 (zlib's) match, if there is one.
///
/// CRC-32 is linear: for messages of equal length, crc(a) ⊕ crc(b) depends only on a ⊕ b. So a single flipped bit
/// at position p changes the checksum by a value that depends only on p and the number of bytes after it, and the
/// difference between the stored and the computed checksum names p, if any p fits (for messages below 2³¹ bits at
/// most one does). Walking from the last byte to the first costs eight table steps a byte.
enum BitFlipSearch {
    /// zlib's reflected table (polynomial 0xEDB88320).
    static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The byte index and bit (0 = least significant) in `message` whose flip changes its CRC-32 by `difference`
    /// (the computed checksum XOR the stored one), searching only `searched` (indexes into `message`); nil when no
    /// single bit does.
    static func find(message: [UInt8], searched: Range<Int>, difference: UInt32) -> (index: Int, bit: Int)? {
        guard difference != 0, !searched.isEmpty else { return nil }
        // effect[b]: how flipping bit b of byte i changes the checksum, for the i the walk is at.
        var effect = (0..<8).map { table[1 << $0] }
        var i = message.count - 1
        while i >= searched.lowerBound {
            if i < searched.upperBound, let bit = effect.firstIndex(of: difference) { return (i, bit) }
            for b in 0..<8 { effect[b] = table[Int(effect[b] & 0xFF)] ^ (effect[b] >> 8) }
            i -= 1
        }
        return nil
    }
}
