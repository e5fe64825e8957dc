import Foundation
import TrellisCore
import TrellisGraph

/// Decoding a columns chunk (the writing half is in `CheckpointColumns.swift`).
extension CheckpointColumns {
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
    /// `budget` is charged for the objects, text and targets before they are allocated.
    static func decode(
        _ payload: [UInt8], schema: Schema, context: String, budget: LoadBudget? = nil
    ) throws -> DecodedChunk {
        var r = ByteReader(payload, context: context)
        let entity = try r.int(limit: schema.layouts.count - 1)
        let layout = schema.layouts[entity]
        let n = try r.int(limit: maxRows)
        guard n > 0 else { throw r.failure("a chunk of no rows") }
        try budget?.charge(
            n * LoadBudget.objectBytes(values: layout.attributes.count, ends: layout.relationships.count),
            "\(context) (\(n) objects)")
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
                try budget?.charge(total, "\(context) (\(total) bytes of text)")
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
            case .list:
                column.others.reserveCapacity(k)
                for _ in 0..<k {
                    let value = try c.value()
                    // Elements of the attribute's type; a set's ascending and distinct.
                    guard case .list = value, attribute.type.normalized(value)?.isIdentical(to: value) == true else {
                        throw c.failure("a \(value) in a column of \(attribute.type)")
                    }
                    column.others.append(value)
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
            try budget?.charge(8 * (ends.last ?? 0), "\(context) (\(ends.last ?? 0) targets)")
            let targets = try l.ints(count: ends.last ?? 0).map { UInt64(bitPattern: $0) }
            try l.expectEnd()
            var start = 0
            for end in ends {
                if relationship.isOrdered {
                    // In list order: each target non-zero and there once.
                    var seen = Set<UInt64>()
                    for t in targets[start..<end] {
                        guard t != 0, seen.insert(t).inserted else { throw l.failure("target \(t) is zero or twice") }
                    }
                } else {
                    var previous: UInt64 = 0
                    for t in targets[start..<end] {
                        guard t > previous else { throw l.failure("target \(t) is zero or out of order") }
                        previous = t
                    }
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
        // Eight bytes at a time: text runs to megabytes a chunk.
        let ascii = text.withUnsafeBytes { b in
            var any: UInt64 = 0
            let words = b.count / 8
            for w in 0..<words { any |= b.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self) }
            for i in words * 8..<b.count { any |= UInt64(b[i]) }
            return any & 0x8080_8080_8080_8080 == 0
        }
        if ascii { return }
        guard String(validating: text, as: UTF8.self) != nil else { throw reader.failure("invalid UTF-8") }
        for end in ends.dropLast() where end < text.count && text[end] & 0xC0 == 0x80 {
            throw reader.failure("a string starts inside a character")
        }
    }
}
