import Foundation
import TrellisCore
import TrellisGraph

/// The payload of a columns chunk (record type 4, checkpoint format version 2): a run of rows of one entity, stored
/// column by column, each column in sections that are deflated when that makes them smaller. journal-format.md
/// ("Columns chunk payload") gives every byte; this file writes and reads exactly that.
enum CheckpointColumns {
    /// The most rows a chunk may hold; bounds what a damaged count can make the reader allocate.
    static let maxRows = 65_536
    /// The most relationship targets a chunk may hold, all relationships together (same reason).
    static let maxTargets = 1 << 24
    /// Writers cut chunks at leaf boundaries once they hold this many rows or about `targetBytes` of values.
    static let targetRows = 4_096
    static let targetBytes = 1 << 20
    /// The most text one alphabet-packed section may unpack to. Packed text costs as little as no bytes a character
    /// (an alphabet of one), so its length, unlike a stored or deflated section's, is not bounded by the input.
    static let maxPackedText = 16 << 20

    // MARK: Writing

    /// The rows of one leaf that a chunk takes (all of them, except when a leaf's targets must be split).
    struct Part {
        var key: UInt64
        var leaf: Leaf
        var mask: UInt64
    }

    /// Encodes the rows in `parts` (ascending serials) as one chunk payload.
    static func encode(entity: Int, layout: EntityLayout, parts: [Part], level: Int32) -> [UInt8] {
        var rows: [(part: Int, row: Int)] = []
        for (p, part) in parts.enumerated() {
            var m = part.mask
            while m != 0 {
                rows.append((p, m.trailingZeroBitCount))
                m &= m - 1
            }
        }
        var w = ByteWriter(capacity: 1 << 16)
        w.varint(entity)
        w.varint(rows.count)
        var block = ByteWriter(capacity: rows.count * 2 + 16)
        block.ints(rows.map { Int64(bitPattern: parts[$0.part].key << Leaf.shift | UInt64($0.row)) })
        w.section(block.bytes, level: level, strategies: [.standard])

        for (a, attribute) in layout.attributes.enumerated() {
            let kind = Column.Kind(attribute.type)
            var nulls = [UInt8](repeating: 0, count: (rows.count + 7) / 8)
            var anyNull = false
            var live: [(part: Int, row: Int)] = []
            live.reserveCapacity(rows.count)
            for (i, (p, r)) in rows.enumerated() {
                if parts[p].leaf.isNull(column: a, row: r) {
                    nulls[i >> 3] |= 1 << UInt8(i & 7)
                    anyNull = true
                } else {
                    live.append((p, r))
                }
            }
            var head = ByteWriter(capacity: live.count * 8 + nulls.count + 16)
            head.u8(anyNull ? 1 : 0)
            if anyNull { head.append(nulls) }
            switch kind {
            case .bool:
                var bits = [UInt8](repeating: 0, count: (live.count + 7) / 8)
                for (i, (p, r)) in live.enumerated() where parts[p].leaf.columns[a].bits & (1 << UInt64(r)) != 0 {
                    bits[i >> 3] |= 1 << UInt8(i & 7)
                }
                head.append(bits)
                w.section(head.bytes, level: level, strategies: [.standard])
            case .int:
                head.ints(live.map { parts[$0.part].leaf.columns[a].ints[$0.row] })
                w.section(head.bytes, level: level, strategies: [.standard])
            case .double, .date:
                // Byte planes, each its own section: the sign, exponent and high mantissa bytes of similar numbers
                // repeat and deflate well; the low bytes of most doubles are noise, stay stored, and load at copying
                // speed.
                head.u8(1)
                w.section(head.bytes, level: level, strategies: [])
                let values = live.map { parts[$0.part].leaf.columns[a].doubles[$0.row].bitPattern }
                for plane in 0..<8 {
                    let shift = UInt64(plane * 8)
                    let bytes = values.map { UInt8(truncatingIfNeeded: $0 >> shift) }
                    w.section(bytes, level: level, strategies: [.huffmanOnly, .standard])
                }
            case .string:
                var text: [UInt8] = []
                var lengths: [Int64] = []
                lengths.reserveCapacity(live.count)
                for (p, r) in live {
                    let strings = parts[p].leaf.columns[a].strings
                    let span = strings.span(r)
                    lengths.append(Int64(span.count))
                    text.append(contentsOf: strings.bytes[span])
                }
                head.ints(lengths)
                // Text of a small alphabet packs into a few bits a byte and unpacks many times faster than it
                // inflates; it is chosen unless deflate saves more than a twentieth.
                let packed = text.count <= maxPackedText ? Self.packAlphabet(text) : nil
                let deflated = Self.smallestDeflate(text, level: level, strategies: [.huffmanOnly, .standard])
                if let packed, packed.count <= (deflated?.count ?? text.count) * 21 / 20 {
                    head.u8(1)
                    w.section(head.bytes, level: level, strategies: [.standard])
                    w.section(packed, level: level, strategies: [])
                } else {
                    head.u8(0)
                    w.section(head.bytes, level: level, strategies: [.standard])
                    w.section(text, deflated: deflated)
                }
            case .other:
                for (p, r) in live { head.value(parts[p].leaf.columns[a].others[r]) }
                w.section(head.bytes, level: level, strategies: [.standard])
            }
        }

        for k in 0..<layout.relationships.count {
            var counts: [Int64] = []
            counts.reserveCapacity(rows.count)
            var targets: [Int64] = []
            for (p, r) in rows {
                let link = parts[p].leaf.links[k]
                if link.isToMany {
                    counts.append(Int64(link.many[r].count))
                    parts[p].leaf.forEachTarget(r, k) { serial in targets.append(Int64(bitPattern: serial)) }
                } else {
                    let t = link.one[r]
                    counts.append(t == 0 ? 0 : 1)
                    if t != 0 { targets.append(Int64(bitPattern: t)) }
                }
            }
            var block = ByteWriter(capacity: counts.count + targets.count * 4 + 32)
            block.ints(counts)
            block.ints(targets)
            w.section(block.bytes, level: level, strategies: [.standard])
        }
        return w.bytes
    }

    /// `text` as codes of the fewest bits that tell its distinct bytes apart: u8 alphabet size − 1, the alphabet
    /// (ascending), then one code per byte, LSB first. Nil when the alphabet needs more than six bits.
    static func packAlphabet(_ text: [UInt8]) -> [UInt8]? {
        guard !text.isEmpty else { return nil }
        var seen = [Bool](repeating: false, count: 256)
        for byte in text { seen[Int(byte)] = true }
        let alphabet = (0..<256).filter { seen[$0] }.map(UInt8.init)
        guard alphabet.count <= 64 else { return nil }
        var codes = [UInt8](repeating: 0, count: 256)
        for (code, byte) in alphabet.enumerated() { codes[Int(byte)] = UInt8(code) }
        let width = alphabet.count == 1 ? 0 : 64 - UInt64(alphabet.count - 1).leadingZeroBitCount
        var packer = BitPacker(width: width, count: text.count)
        for byte in text { packer.add(UInt64(codes[Int(byte)])) }
        return [UInt8(alphabet.count - 1)] + alphabet + packer.finish()
    }

    /// The smallest zlib stream of `bytes` among the strategies (the first of equals), or nil when none is smaller
    /// than `bytes` or `bytes` is under 64 bytes (too short to gain).
    static func smallestDeflate(_ bytes: [UInt8], level: Int32, strategies: [Zlib.Strategy]) -> [UInt8]? {
        guard bytes.count >= 64 else { return nil }
        var best: [UInt8]?
        for strategy in strategies {
            if let packed = Zlib.compress(bytes, level: level, strategy: strategy, limit: best?.count ?? bytes.count) {
                best = packed
            }
        }
        return best
    }

    /// Roughly the bytes a leaf's rows take before encoding: how writers decide where to cut chunks.
    static func estimatedBytes(_ leaf: Leaf, mask: UInt64) -> Int {
        let rows = mask.nonzeroBitCount
        var total = rows * 8 * (leaf.columns.count + leaf.links.count + 1)
        for column in leaf.columns {
            switch column.kind {
            case .string: total += column.strings.bytes.count
            case .other:
                var m = mask
                while m != 0 {
                    switch column.others[m.trailingZeroBitCount] {
                    case .data(let d): total += d.count
                    case .url(let u): total += u.absoluteString.utf8.count
                    default: total += 24
                    }
                    m &= m - 1
                }
            default: break
            }
        }
        return total
    }

    /// The number of relationship targets of the rows in `mask`.
    static func targetCount(_ leaf: Leaf, mask: UInt64) -> Int {
        var total = 0
        for link in leaf.links {
            var m = mask
            while m != 0 {
                let r = m.trailingZeroBitCount
                total += link.isToMany ? link.many[r].count : (link.one[r] == 0 ? 0 : 1)
                m &= m - 1
            }
        }
        return total
    }

    // MARK: Reading

    /// One attribute of a decoded chunk: which rows are null, and the values of the others in row order.
    struct DecodedColumn {
        /// Bit i of word i / 64 set: row i is null. Empty when no row is.
        var nulls: [UInt64] = []
        var ints: [Int64] = []
        /// Doubles and dates, as bit patterns.
        var doubles: [UInt64] = []
        /// Bit i of word i / 64: the i-th non-null boolean.
        var bools: [UInt64] = []
        /// The end offset of each non-null string in `text`.
        var ends: [Int] = []
        var text: [UInt8] = []
        var others: [Value] = []

        @inline(__always)
        func isNull(_ row: Int) -> Bool {
            !nulls.isEmpty && nulls[row >> 6] & (1 << UInt64(row & 63)) != 0
        }
    }

    /// One relationship of a decoded chunk: row i's targets are `targets[ends[i-1] ..< ends[i]]`.
    struct DecodedLinks {
        var ends: [Int]
        var targets: [UInt64]
    }

    struct DecodedChunk {
        var entity: Int
        var serials: [UInt64]
        var columns: [DecodedColumn]
        var links: [DecodedLinks]
    }

    /// Decodes and checks one chunk payload. Throws `TrellisError.corrupt` on anything out of place, so that damage
    /// behind a valid checksum is refused, never trapped on or loaded.
    static func decode(_ payload: [UInt8], schema: Schema, context: String) throws -> DecodedChunk {
        var r = ByteReader(payload, context: context)
        let entity = try r.int(limit: schema.layouts.count - 1)
        let layout = schema.layouts[entity]
        let n = try r.int(limit: maxRows)
        guard n > 0 else { throw r.failure("a chunk of no rows") }
        var s = try r.sectionReader()
        let serials = try s.ints(count: n).map { UInt64(bitPattern: $0) }
        try s.expectEnd()
        var previous: UInt64 = 0
        for serial in serials {
            guard serial > previous else { throw r.failure("serial \(serial) is zero or out of order") }
            previous = serial
        }

        var columns: [DecodedColumn] = []
        columns.reserveCapacity(layout.attributes.count)
        for attribute in layout.attributes {
            var column = DecodedColumn()
            var c = try r.sectionReader()
            let flag = try c.u8()
            var k = n
            if flag == 1 {
                let bytes = try c.take((n + 7) / 8)
                column.nulls = [UInt64](repeating: 0, count: (n + 63) / 64)
                for (i, byte) in bytes.enumerated() { column.nulls[i >> 3] |= UInt64(byte) << UInt64((i & 7) * 8) }
                guard (n & 7 == 0 || bytes.last! >> UInt8(n & 7) == 0) else { throw c.failure("stray null bits") }
                k = n - column.nulls.reduce(0) { $0 + $1.nonzeroBitCount }
            } else if flag != 0 {
                throw c.failure("null flag \(flag)")
            }
            switch Column.Kind(attribute.type) {
            case .bool:
                let bytes = try c.take((k + 7) / 8)
                column.bools = [UInt64](repeating: 0, count: (k + 63) / 64)
                for (i, byte) in bytes.enumerated() { column.bools[i >> 3] |= UInt64(byte) << UInt64((i & 7) * 8) }
                guard (k & 7 == 0 || bytes.last! >> UInt8(k & 7) == 0) else { throw c.failure("stray bool bits") }
            case .int:
                column.ints = try c.ints(count: k)
            case .double, .date:
                let layoutByte = try c.u8()
                column.doubles = [UInt64](repeating: 0, count: k)
                // Byte planes are the one layout (1); the byte leaves room for another.
                switch layoutByte {
                case 1:
                    try c.expectEnd()
                    for plane in 0..<8 {
                        var p = try r.sectionReader()
                        let bytes = try p.take(k)
                        try p.expectEnd()
                        let shift = UInt64(plane * 8)
                        bytes.withUnsafeBufferPointer { b in
                            column.doubles.withUnsafeMutableBufferPointer { out in
                                for i in 0..<k { out[i] |= UInt64(b[i]) << shift }
                            }
                        }
                    }
                default:
                    throw c.failure("double layout \(layoutByte)")
                }
            case .string:
                let lengths = try c.ints(count: k)
                let textLayout = try c.u8()
                try c.expectEnd()
                var t = try r.sectionReader()
                var total = 0
                for length in lengths {
                    guard length >= 0, length <= JournalFormat.maxRecordBytes - total else {
                        throw c.failure("string length \(length)")
                    }
                    total += Int(length)
                }
                switch textLayout {
                case 0: column.text = Array(try t.take(t.remaining))
                case 1:
                    guard total <= maxPackedText else { throw t.failure("\(total) bytes of packed text") }
                    column.text = try t.unpackAlphabet(count: total)
                default: throw c.failure("text layout \(textLayout)")
                }
                guard total == column.text.count else { throw t.failure("\(column.text.count - total) stray bytes") }
                column.ends.reserveCapacity(k)
                var end = 0
                for length in lengths {
                    end += Int(length)
                    column.ends.append(end)
                }
                try Self.checkUTF8(column.text, ends: column.ends, reader: t)
                c = t
            case .other:
                column.others.reserveCapacity(k)
                for _ in 0..<k {
                    let value = try c.value()
                    switch value {
                    case .data, .uuid, .url, .decimal: column.others.append(value)
                    default: throw c.failure("a \(value) in a column of \(attribute.type)")
                    }
                }
            }
            try c.expectEnd()
            columns.append(column)
        }

        var links: [DecodedLinks] = []
        var totalTargets = 0
        for relationship in layout.relationships {
            var l = try r.sectionReader()
            let counts = try l.ints(count: n)
            var ends: [Int] = []
            ends.reserveCapacity(n)
            for count in counts {
                guard count >= 0, count <= maxTargets - totalTargets else { throw l.failure("target count \(count)") }
                if count > 1 && !relationship.isToMany { throw l.failure("to-one with \(count) targets") }
                totalTargets += Int(count)
                ends.append((ends.last ?? 0) + Int(count))
            }
            let targets = try l.ints(count: ends.last ?? 0).map { UInt64(bitPattern: $0) }
            try l.expectEnd()
            var start = 0
            for end in ends {
                var previous: UInt64 = 0
                for t in targets[start..<end] {
                    guard t > previous else { throw l.failure("target \(t) is zero or out of order") }
                    previous = t
                }
                start = end
            }
            links.append(DecodedLinks(ends: ends, targets: targets))
        }
        guard r.isAtEnd else { throw r.failure("trailing bytes") }
        return DecodedChunk(entity: entity, serials: serials, columns: columns, links: links)
    }

    /// Checks that `text` is UTF-8 and that no string starts inside a character (so each one is UTF-8 by itself).
    private static func checkUTF8(_ text: [UInt8], ends: [Int], reader: ByteReader) throws {
        let ascii = text.withUnsafeBufferPointer { b in
            var any: UInt8 = 0
            for byte in b { any |= byte }
            return any < 0x80
        }
        if ascii { return }
        guard String(validating: text, as: UTF8.self) != nil else { throw reader.failure("invalid UTF-8") }
        for end in ends.dropLast() where end < text.count && text[end] & 0xC0 == 0x80 {
            throw reader.failure("a string starts inside a character")
        }
    }
}

// MARK: Primitives

extension ByteWriter {
    /// A section: `raw` deflated with the first of `strategies` that makes it smallest, or stored as is.
    mutating func section(_ raw: [UInt8], level: Int32, strategies: [Zlib.Strategy]) {
        section(raw, deflated: CheckpointColumns.smallestDeflate(raw, level: level, strategies: strategies))
    }

    /// A section of `raw`, stored deflated as `deflated` (its zlib stream, if one was made) when that saves enough.
    mutating func section(_ raw: [UInt8], deflated best: [UInt8]?) {
        // Inflating costs time on every load: a saving under a thirty-second is not worth it.
        if let best, best.count < raw.count - raw.count / 32 {
            u8(RecordCodec.zlib.rawValue)
            varint(raw.count)
            varint(best.count)
            append(best)
        } else {
            u8(RecordCodec.none.rawValue)
            varint(raw.count)
            append(raw)
        }
    }

    /// An ints block: frame of reference or deltas, whichever packs smaller.
    mutating func ints(_ values: [Int64]) {
        guard let first = values.first else {
            u8(0)
            signed(0)
            u8(0)
            return
        }
        var low = first
        var high = first
        var deltaLow = Int64.max
        var deltaHigh = Int64.min
        for v in values {
            low = min(low, v)
            high = max(high, v)
        }
        for i in values.indices.dropFirst() {
            let d = values[i] &- values[i - 1]
            deltaLow = min(deltaLow, d)
            deltaHigh = max(deltaHigh, d)
        }
        let plainWidth = Self.width(low, high)
        let deltaWidth = values.count > 1 ? Self.width(deltaLow, deltaHigh) : 0
        if values.count > 1, (values.count - 1) * deltaWidth + 64 < values.count * plainWidth {
            u8(1)
            signed(first)
            signed(deltaLow)
            u8(UInt8(deltaWidth))
            var packer = BitPacker(width: deltaWidth, count: values.count - 1)
            for i in values.indices.dropFirst() {
                packer.add(UInt64(bitPattern: (values[i] &- values[i - 1]) &- deltaLow))
            }
            append(packer.finish())
        } else {
            u8(0)
            signed(low)
            u8(UInt8(plainWidth))
            var packer = BitPacker(width: plainWidth, count: values.count)
            for v in values { packer.add(UInt64(bitPattern: v &- low)) }
            append(packer.finish())
        }
    }

    /// Bits needed for every value in `low ... high` as an offset from `low`.
    static func width(_ low: Int64, _ high: Int64) -> Int {
        64 - UInt64(bitPattern: high &- low).leadingZeroBitCount
    }
}

/// Packs values of `width` bits each, least significant bit first.
struct BitPacker {
    let width: Int
    var bytes: [UInt8]
    private var buffer: UInt64 = 0
    private var buffered = 0

    init(width: Int, count: Int) {
        self.width = width
        bytes = []
        bytes.reserveCapacity((count * width + 7) / 8)
    }

    mutating func add(_ value: UInt64) {
        var v = value
        var left = width
        while left > 0 {
            let take = min(left, 32)
            let piece = v & ((1 << UInt64(take)) - 1)
            v >>= UInt64(take)
            left -= take
            buffer |= piece << UInt64(buffered)
            buffered += take
            while buffered >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                buffered -= 8
            }
        }
    }

    mutating func finish() -> [UInt8] {
        if buffered > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        buffered = 0
        buffer = 0
        return bytes
    }
}

extension ByteReader {
    /// Text packed by `CheckpointColumns.packAlphabet`: `count` bytes.
    mutating func unpackAlphabet(count: Int) throws -> [UInt8] {
        let size = Int(try u8()) + 1
        // The writer packs at most 64 distinct bytes; the code table below has room for no more.
        guard size <= 64 else { throw failure("an alphabet of \(size) bytes (at most 64)") }
        let alphabet = Array(try take(size))
        let width = size == 1 ? 0 : 64 - UInt64(size - 1).leadingZeroBitCount
        let codes = try take((count * width + 7) / 8)
        var table = [UInt8](repeating: 0, count: 64)
        for (i, byte) in alphabet.enumerated() { table[i] = byte }
        let mask: UInt64 = (1 << UInt64(width)) - 1
        // Codes are looked up two at a time: each entry holds the two bytes of a pair of codes, and bit 16 says
        // that one of them is past the alphabet (at most 2^12 entries: 16 KiB).
        let pairBits = 2 * width
        let pairs = [UInt32](unsafeUninitializedCapacity: 1 << pairBits) { pairs, initialized in
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
        let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
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
        return [Int64](unsafeUninitializedCapacity: total) { out, initialized in
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
