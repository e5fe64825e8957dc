import Foundation
import TrellisCore
import TrellisGraph

/// The checkpoint's building blocks (journal-format.md, "Columns chunk payload"): sections, stored or deflated, and
/// blocks of integers packed by frame of reference or by deltas.
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
