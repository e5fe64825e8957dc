import Foundation
import TrellisCore
import TrellisGraph

/// The payload of a columns chunk (record type 4, checkpoint format version 2): a run of rows of one entity, stored
/// column by column, each column in sections that are deflated when that makes them smaller. journal-format.md
/// ("Columns chunk payload") gives every byte; this file writes and reads exactly that.
enum CheckpointColumns {
    /// Writers cut chunks at leaf boundaries once they hold this many rows or about `targetBytes` of values.
    static let targetRows = 4_096
    /// The most rows a chunk may hold: what a writer cuts at (`targetRows`, plus a leaf's 64 rows less one). A
    /// column of one repeated value, and consecutive serials, encode in no bytes a row, so the chunk's bytes cannot
    /// bound its rows; this does, at about 100 rows a byte of file, what the writer itself produces for such rows
    /// (format versions 2 and 3 allowed 65,536: 3,000 chunks of 89 bytes claimed 196 million rows).
    static let maxRows = targetRows + 63
    /// The most relationship targets a chunk may hold, all relationships together (same reason).
    static let maxTargets = 1 << 24
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
        ByteWriter.bytes(estimate: 1 << 16) {
            write(entity: entity, layout: layout, parts: parts, level: level, into: &$0)
        }
    }

    private static func write(entity: Int, layout: EntityLayout, parts: [Part], level: Int32, into w: inout ByteWriter)
    {
        var rows: [(part: Int, row: Int)] = []
        for (p, part) in parts.enumerated() {
            var m = part.mask
            while m != 0 {
                rows.append((p, m.trailingZeroBitCount))
                m &= m - 1
            }
        }
        w.varint(entity)
        w.varint(rows.count)
        let serials = ByteWriter.bytes(estimate: rows.count * 2 + 16) {
            $0.ints(rows.map { Int64(bitPattern: parts[$0.part].key << Leaf.shift | UInt64($0.row)) })
        }
        w.section(serials, level: level, strategies: [.standard])

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
            /// The column's first section: the null flag and bitmap, then what `rest` writes.
            func head(_ rest: (inout ByteWriter) -> Void) -> [UInt8] {
                ByteWriter.bytes(estimate: live.count * 8 + nulls.count + 16) { head in
                    head.u8(anyNull ? 1 : 0)
                    if anyNull { head.append(nulls) }
                    rest(&head)
                }
            }
            switch kind {
            case .bool:
                var bits = [UInt8](repeating: 0, count: (live.count + 7) / 8)
                for (i, (p, r)) in live.enumerated() where parts[p].leaf.columns[a].bits & (1 << UInt64(r)) != 0 {
                    bits[i >> 3] |= 1 << UInt8(i & 7)
                }
                w.section(head { $0.append(bits) }, level: level, strategies: [.standard])
            case .int:
                let ints = live.map { parts[$0.part].leaf.columns[a].int(at: $0.row) }
                w.section(head { $0.ints(ints) }, level: level, strategies: [.standard])
            case .double, .date:
                // Byte planes, each its own section: the sign, exponent and high mantissa bytes of similar numbers
                // repeat and deflate well; the low bytes of most doubles are noise, stay stored, and load at copying
                // speed.
                w.section(head { $0.u8(1) }, level: level, strategies: [])
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
                // Text of a small alphabet packs into a few bits a byte and unpacks many times faster than it
                // inflates; it is chosen unless deflate saves more than a twentieth.
                let packed = text.count <= maxPackedText ? Self.packAlphabet(text) : nil
                let deflated = Self.smallestDeflate(text, level: level, strategies: [.huffmanOnly, .standard])
                let isPacked = packed.map { $0.count <= (deflated?.count ?? text.count) * 21 / 20 } ?? false
                let first = head { head in
                    head.ints(lengths)
                    head.u8(isPacked ? 1 : 0)
                }
                w.section(first, level: level, strategies: [.standard])
                if let packed, isPacked {
                    w.section(packed, level: level, strategies: [])
                } else {
                    w.section(text, deflated: deflated)
                }
            case .other, .list:
                let values = head { head in
                    for (p, r) in live { head.value(parts[p].leaf.columns[a].others[r]) }
                }
                w.section(values, level: level, strategies: [.standard])
            }
        }

        for k in 0..<layout.relationships.count {
            var counts: [Int64] = []
            counts.reserveCapacity(rows.count)
            var targets: [Int64] = []
            for (p, r) in rows {
                let link = parts[p].leaf.links[k]
                if link.isToMany {
                    // An ordered relationship's targets go in list order.
                    counts.append(Int64(parts[p].leaf.targetCount(r, k)))
                    parts[p].leaf.forEachTarget(r, k) { serial in targets.append(Int64(bitPattern: serial)) }
                } else {
                    let t = link.one[r]
                    counts.append(t == 0 ? 0 : 1)
                    if t != 0 { targets.append(Int64(bitPattern: t)) }
                }
            }
            let block = ByteWriter.bytes(estimate: counts.count + targets.count * 4 + 32) { block in
                block.ints(counts)
                block.ints(targets)
            }
            w.section(block, level: level, strategies: [.standard])
        }
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
            case .other, .list:
                var m = mask
                while m != 0 {
                    switch column.others[m.trailingZeroBitCount] {
                    case .data(let d): total += d.count
                    case .url(let u): total += u.absoluteString.utf8.count
                    case .list(let elements): total += 8 + elements.count * 16
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
                total +=
                    link.isOrdered
                    ? link.ordered[r].count : link.isToMany ? link.many[r].count : (link.one[r] == 0 ? 0 : 1)
                m &= m - 1
            }
        }
        return total
    }
}
