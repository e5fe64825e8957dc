import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisStore

/// Integers and doubles compare by their exact values, also where a double cannot hold every integer (from 2^53 on):
/// `Value`'s order and an index range select the same objects. (A `DynamicQuery` converts its constant to the
/// attribute's type first, as Swift would, or refuses it.)
@Suite struct LargeIntegerComparisonTests {
    static let schema = try! Schema([
        EntityDescription(
            "Sample",
            attributes: [
                AttributeDescription("i", .int64), AttributeDescription("d", .double),
            ], indexes: [.on("i"), .on("d")])
    ])

    static let p53: Int64 = 1 << 53

    /// Integers on both sides of 2^53 and of the ends of `Int64`, where neighbours share one nearest double.
    static let integers: [Int64] = [
        p53 - 2, p53 - 1, p53, p53 + 1, p53 + 2, p53 + 3, -p53 - 1, -p53, -p53 + 1, .max, .max - 1, .min, .min + 1,
        (1 << 62) + 1, 0, 1,
    ]

    /// Doubles at those places, and fractions and values beyond `Int64` as bounds.
    static let doubles: [Double] = [
        Double(p53), Double(p53 + 2), Double(-p53), 9_223_372_036_854_775_808.0, -9_223_372_036_854_775_808.0,
        Double(1 << 62), 0.5, -0.5, 1e19, -1e19, .infinity, -.infinity, .nan, Double(p53).nextDown, -0.0,
    ]

    /// The exact order of an integer and a double, worked out apart from `Value.compareExactly`: an integral double
    /// in range converts to `Int64` exactly, and a fractional one lies between its floor and the next integer.
    static func reference(_ a: Int64, _ b: Double) -> Int {
        if b.isNaN { return -1 }
        if let whole = Int64(exactly: b) { return a < whole ? -1 : (a == whole ? 0 : 1) }
        if b >= 0x1p63 { return -1 }
        if b < -0x1p63 { return 1 }
        let floor = Int64(b.rounded(.down))
        return a <= floor ? -1 : 1
    }

    @Test func anIntegerAndADoubleCompareByTheirExactValues() {
        for a in Self.integers {
            for b in Self.doubles + Self.integers.map(Double.init) {
                let expected = Self.reference(a, b)
                #expect(Value.compare(.int(a), .double(b)) == expected, "\(a) against \(b)")
                #expect(Value.compare(.double(b), .int(a)) == -expected, "\(b) against \(a)")
                #expect((Value.int(a) == Value.double(b)) == (expected == 0))
            }
        }
        // Two integers that round to one double are not both equal to it.
        #expect(Value.int(Self.p53) == .double(Double(Self.p53)))
        #expect(Value.int(Self.p53 + 1) != .double(Double(Self.p53)))
        #expect(Value.int(Self.p53 + 1) > .double(Double(Self.p53)))
        #expect(Value.int(.max) < .double(9_223_372_036_854_775_808.0))
    }

    /// The column scans' operand takes an integer for a double column only when converting it rounds nothing;
    /// otherwise the count is left to the evaluator's exact order.
    @Test func aColumnScanOfADoubleColumnMatchesAnIntegerExactly() throws {
        let store = Store(schema: Self.schema)
        try store.write { tx in
            for d in [Double(Self.p53), Double(Self.p53 + 2), 3] {
                _ = tx.insert(entity: 0, row: [.int(0), .double(d)])
            }
        }
        let s = store.snapshot
        #expect(s.countRows(entity: 0, where: 1, equals: .int(Self.p53)) == 1)
        #expect(s.countRows(entity: 0, where: 1, equals: .int(3)) == 1)
        #expect(ColumnPredicate.Operand(.int(Self.p53 + 1), for: .double) == nil)
        #expect(s.countRows(entity: 0, where: 1, equals: .int(Self.p53 + 1)) ?? 0 == 0)
    }

    @Test func indexRangesSelectWhatTheExactOrderSelects() throws {
        let store = Store(schema: Self.schema)
        var rows: [ObjectID: (int: Int64, double: Double)] = [:]
        let values = Self.integers.map { ($0, Double($0)) } + Self.doubles.map { (Int64(0), $0) }
        try store.write { tx in
            for (n, pair) in values.enumerated() {
                let int = n < Self.integers.count ? pair.0 : Int64(n)
                let row: [Value] = [.int(int), .double(pair.1)]
                rows[tx.insert(entity: 0, row: row)] = (int, pair.1)
            }
        }
        let s = store.snapshot
        let bounds: [Value] = Self.integers.map { .int($0) } + Self.doubles.map { .double($0) }
        for (indexed, isInt) in [("i", true), ("d", false)] {
            let index = try Self.schema.index("Sample", [indexed])
            for bound in bounds {
                // Exact: an integer column against any bound, or a double column against an integer bound.
                func order(_ row: (int: Int64, double: Double)) -> Int {
                    switch (isInt, bound) {
                    case (true, .int(let b)): return row.int < b ? -1 : (row.int == b ? 0 : 1)
                    case (true, .double(let b)): return Self.reference(row.int, b)
                    case (false, .int(let b)): return -Self.reference(b, row.double)
                    case (false, .double(let b)): return Value.compare(.double(row.double), .double(b))
                    default: return 0
                    }
                }
                for inclusive in [true, false] {
                    let above = rows.filter { order($0.value) > 0 || (inclusive && order($0.value) == 0) }
                    let below = rows.filter { order($0.value) < 0 || (inclusive && order($0.value) == 0) }
                    let label = "\(indexed) against \(bound), inclusive \(inclusive)"
                    let fromIndex = Set(s.scan(index, from: [bound], inclusive: inclusive, to: nil, inclusive: true))
                    #expect(fromIndex == Set(above.keys), "index from \(label)")
                    let toIndex = Set(s.scan(index, from: nil, inclusive: true, to: [bound], inclusive: inclusive))
                    #expect(toIndex == Set(below.keys), "index to \(label)")
                    // `Value`'s order over the stored values (what a scan without an index compares by).
                    let stored = rows.mapValues { isInt ? Value.int($0.int) : Value.double($0.double) }
                    let valueAbove = stored.filter {
                        Value.compare($0.value, bound) > 0 || (inclusive && Value.compare($0.value, bound) == 0)
                    }
                    #expect(Set(valueAbove.keys) == Set(above.keys), "Value order from \(label)")
                }
                let equal = Set(rows.filter { order($0.value) == 0 }.keys)
                #expect(s.lookup(index, [bound]).map { equal.contains($0) } ?? equal.isEmpty, "lookup \(indexed)")
            }
        }
    }
}
