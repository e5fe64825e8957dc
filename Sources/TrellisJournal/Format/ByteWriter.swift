import TrellisCore
import TrellisGraph

/// Appends the journal's primitive encodings to a byte array: little-endian fixed-width integers, LEB128 varints,
/// zigzag signed varints and length-prefixed byte strings.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    var count: Int { bytes.count }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    mutating func u32(_ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    mutating func u64(_ v: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func varint(_ v: Int) { varint(UInt64(v)) }

    mutating func signed(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    mutating func blob(_ b: some Collection<UInt8>) {
        varint(b.count)
        bytes.append(contentsOf: b)
    }

    mutating func string(_ s: String) { blob(s.utf8) }

    mutating func append(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }

    /// Pads with zeros to a multiple of `alignment`.
    mutating func pad(to alignment: Int) {
        let extra = (alignment - bytes.count % alignment) % alignment
        bytes.append(contentsOf: repeatElement(0, count: extra))
    }

    /// Overwrites four bytes at `offset` (for checksums and lengths known only at the end).
    mutating func setU32(_ v: UInt32, at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: v >> UInt32(8 * i)) }
    }
}
