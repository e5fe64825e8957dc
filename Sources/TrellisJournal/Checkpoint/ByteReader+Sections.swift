import Foundation
import TrellisCore
import TrellisGraph

/// Reads the checkpoint's building blocks that `ByteWriter+Sections.swift` writes: sections, integer blocks and
/// alphabet-packed text, each checked before it is trusted.
extension ByteReader {
    /// Text packed by `CheckpointColumns.packAlphabet`: `count` bytes.
    mutating func unpackAlphabet(count: Int) throws -> [UInt8] {
        let size = Int(try u8()) + 1
        // The writer packs at most 64 distinct bytes; the code table below has room for no more.
        guard size <= 64 else { throw failure("an alphabet of \(size) bytes (at most 64)") }
        let alphabet = Array(try take(size))
        // One letter takes no bits: the text is that letter repeated.
        if size == 1 { return [UInt8](repeating: alphabet[0], count: count) }
        let width = 64 - UInt64(size - 1).leadingZeroBitCount
        let codes = try take((count * width + 7) / 8)
        var table = [UInt8](repeating: 0, count: 64)
        for (i, byte) in alphabet.enumerated() { table[i] = byte }
        let mask: UInt64 = (1 << UInt64(width)) - 1
        // Codes are looked up two at a time: each entry holds the two bytes of a pair of codes, and bit 16 says
        // that one of them is past the alphabet (at most 2^12 entries: 16 KiB).
        let pairBits = 2 * width
        let pairs = [UInt32](uninitializedCapacity: 1 << pairBits) { pairs, initialized in
            for p in 0..<(1 << pairBits) {
                let (low, high) = (p & Int(mask), p >> width)
                let beyond: UInt32 = low >= size || high >= size ? 1 << 16 : 0
                pairs[p] = UInt32(table[low]) | UInt32(table[high]) << 8 | beyond
            }
            initialized = 1 << pairBits
        }
        // Flags of pairs, and the largest code of what is unpacked one code at a time: one test at the end.
        var flags: UInt32 = 0
        var largest = 0
        let out = [UInt8](uninitializedCapacity: count) { out, initialized in
            codes.withUnsafeBufferPointer { b in
                table.withUnsafeBufferPointer { t in
                    // Eight codes take `width` whole bytes. While eight bytes remain from a group's first, one
                    // unaligned load reads them and four pair lookups give eight bytes, stored at once.
                    let groups = width == 0 ? 0 : count / 8
                    let loaded = width == 0 || b.count < 8 ? 0 : Swift.min(groups, (b.count - 8) / width + 1)
                    if loaded > 0, let source = UnsafeRawPointer(b.baseAddress),
                        let target = UnsafeMutableRawPointer(out.baseAddress)
                    {
                        pairs.withUnsafeBufferPointer { pairs in
                            let shift = UInt64(pairBits)
                            let pairMask: UInt64 = (1 << shift) - 1
                            for g in 0..<loaded {
                                let word = UInt64(
                                    littleEndian: source.loadUnaligned(fromByteOffset: g * width, as: UInt64.self))
                                let p0 = pairs[Int(word & pairMask)]
                                let p1 = pairs[Int(word >> shift & pairMask)]
                                let p2 = pairs[Int(word >> (2 * shift) & pairMask)]
                                let p3 = pairs[Int(word >> (3 * shift) & pairMask)]
                                flags |= p0 | p1 | p2 | p3
                                let eight =
                                    UInt64(p0 & 0xffff) | UInt64(p1 & 0xffff) << 16 | UInt64(p2 & 0xffff) << 32
                                    | UInt64(p3 & 0xffff) << 48
                                target.storeBytes(of: eight.littleEndian, toByteOffset: g * 8, as: UInt64.self)
                            }
                        }
                    }
                    for g in loaded..<groups {
                        var word: UInt64 = 0
                        let base = g * width
                        for j in 0..<width { word |= UInt64(b[base + j]) << UInt64(j * 8) }
                        for j in 0..<8 {
                            let code = Int((word >> UInt64(j * width)) & mask)
                            largest = Swift.max(largest, code)
                            out[g * 8 + j] = t[code]
                        }
                    }
                    var bit = groups * 8 * width
                    for i in (groups * 8)..<count {
                        var code = 0
                        for j in 0..<width where b[(bit + j) >> 3] & (1 << UInt8((bit + j) & 7)) != 0 { code |= 1 << j }
                        bit += width
                        largest = Swift.max(largest, code)
                        out[i] = t[code]
                    }
                }
            }
            initialized = count
        }
        guard flags >> 16 == 0, largest < size else { throw failure("a text code beyond its alphabet of \(size)") }
        return out
    }

    /// Reads a section and returns a reader over its contents (inflated when the section is compressed).
    mutating func sectionReader() throws -> ByteReader {
        let codec = try u8()
        let length = try int(limit: JournalFormat.maxRecordBytes)
        switch codec {
        case RecordCodec.none.rawValue:
            // A stored section is read where it lies, in the chunk's buffer, not copied out (offsets in messages
            // count from the chunk's start).
            let start = position
            _ = try take(length)
            return ByteReader(bytes, from: start, to: start + length, context: context)
        case RecordCodec.zlib.rawValue:
            let stored = try take(try count())
            guard length > 0, length <= stored.count * JournalFormat.maxCompressionRatio + 64,
                let raw = Zlib.decompress(stored, count: length)
            else { throw failure("a compressed section does not inflate to \(length) bytes") }
            return ByteReader(raw, context: context)
        default:
            throw failure("section codec \(codec)")
        }
    }

    /// Checks that a section has been read to its end.
    func expectEnd() throws {
        guard isAtEnd else { throw failure("\(remaining) stray bytes in a section") }
    }

    /// An ints block of `count` values.
    mutating func ints(count: Int) throws -> [Int64] {
        let mode = try u8()
        switch mode {
        case 0:
            return try packed(count: count, first: nil)
        case 1:
            guard count > 0 else { throw failure("a delta block of no values") }
            return try packed(count: count - 1, first: try signed())
        default:
            throw failure("ints mode \(mode)")
        }
    }

    /// A frame-of-reference block of `count` values; with `first`, the values are deltas and the result their
    /// running sum starting at `first` (`count + 1` values).
    private mutating func packed(count: Int, first: Int64?) throws -> [Int64] {
        let base = try signed()
        let width = Int(try u8())
        guard width <= 64 else { throw failure("bit width \(width)") }
        let bytes = try take((count * width + 7) / 8)
        let total = count + (first == nil ? 0 : 1)
        return [Int64](uninitializedCapacity: total) { out, initialized in
            var running = first ?? 0
            var o = 0
            if let first {
                out[0] = first
                o = 1
            }
            if width <= 56 {
                // Each value lies within the eight bytes from its first byte: one unaligned load, a shift, a mask,
                // while eight bytes remain; the last few values come from one word holding the under eight bytes
                // left. The bytes are read where they lie (a zero-padded copy of them cost a memset and a copy).
                let mask: UInt64 = width == 0 ? 0 : (1 << UInt64(width)) - 1
                bytes.withUnsafeBytes { raw in
                    let last = raw.count - 8
                    var bit = 0
                    var i = 0
                    if first == nil {
                        while i < count, bit >> 3 <= last {
                            let word = UInt64(
                                littleEndian: raw.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                            out[o + i] = base &+ Int64(bitPattern: (word >> UInt64(bit & 7)) & mask)
                            bit += width
                            i += 1
                        }
                    } else {
                        while i < count, bit >> 3 <= last {
                            let word = UInt64(
                                littleEndian: raw.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                            running = running &+ base &+ Int64(bitPattern: (word >> UInt64(bit & 7)) & mask)
                            out[o + i] = running
                            bit += width
                            i += 1
                        }
                    }
                    guard i < count else { return }
                    let start = bit >> 3
                    var tail: UInt64 = 0
                    for j in start..<raw.count { tail |= UInt64(raw[j]) << UInt64((j - start) * 8) }
                    while i < count {
                        let v = base &+ Int64(bitPattern: (tail >> UInt64(bit - start * 8)) & mask)
                        running = first == nil ? v : running &+ v
                        out[o + i] = running
                        bit += width
                        i += 1
                    }
                }
                initialized = total
                return
            }
            bytes.withUnsafeBufferPointer { b in
                var position = 0
                var buffer: UInt64 = 0
                var buffered = 0
                // n ≤ 32, so the buffer never holds more than 39 bits.
                @inline(__always)
                func bits(_ n: Int) -> UInt64 {
                    while buffered < n {
                        buffer |= UInt64(b[position]) << UInt64(buffered)
                        position += 1
                        buffered += 8
                    }
                    let v = buffer & ((1 << UInt64(n)) - 1)
                    buffer >>= UInt64(n)
                    buffered -= n
                    return v
                }
                for _ in 0..<count {
                    var raw: UInt64
                    if width <= 32 {
                        raw = width == 0 ? 0 : bits(width)
                    } else {
                        raw = bits(32)
                        raw |= bits(width - 32) << 32
                    }
                    let v = base &+ Int64(bitPattern: raw)
                    if first == nil {
                        out[o] = v
                    } else {
                        running = running &+ v
                        out[o] = running
                    }
                    o += 1
                }
            }
            initialized = total
        }
    }
}
