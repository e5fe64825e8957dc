import Foundation
import Testing

@testable import Trellis
@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// An int column narrowed to 32-bit offsets (issue 21, W10) reads, writes, widens and scans as the 64 values it
/// stands for, and the leaves a checkpoint load builds are narrowed where their values allow it.
@Suite struct NarrowIntColumnTests {
    /// A wide int column holding `values` (nil: null) at rows 0..<values.count, every other row empty.
    static func column(_ values: [Int64?]) -> (column: Column, present: UInt64) {
        var column = Column(kind: .int)
        var present: UInt64 = 0
        for (r, v) in values.enumerated() {
            column.set(r, v.map(Value.int) ?? .null)
            present |= 1 << UInt64(r)
        }
        return (column, present)
    }

    /// `count` values from `base` spread over `span` (values within base ... base + span), every fifth one null.
    static func values(_ random: inout SeededRandom, base: Int64, span: UInt64, count: Int) -> [Int64?] {
        (0..<count).map { r in
            r % 5 == 4 ? nil : Int64(bitPattern: UInt64(bitPattern: base) &+ random.next() % (span &+ 1))
        }
    }

    static func reads(_ column: Column, _ values: [Int64?]) -> [Int64?] {
        values.indices.map { column.isNull($0) ? nil : column.int(at: $0) }
    }

    @Test(arguments: [Int64.min, -5_000_000_000, -1, 0, 1_000, Int64.max - Int64(UInt32.max)])
    func narrowingKeepsEveryValueAndHalvesTheWords(base: Int64) {
        var random = SeededRandom(seed: UInt64(bitPattern: base))
        for count in [1, 37, 64] {
            let values = Self.values(&random, base: base, span: UInt64(UInt32.max), count: count)
            var (column, present) = Self.column(values)
            column.narrow(rows: present)
            #expect(column.isNarrow, "base \(base), \(count) rows")
            #expect(column.ints.count == Leaf.width / 2)
            #expect(Self.reads(column, values) == values)
            #expect(values.indices.map { column.value($0) } == values.map { $0.map(Value.int) ?? .null })
            column.widen()
            #expect(!column.isNarrow && column.ints.count == Leaf.width)
            #expect(Self.reads(column, values) == values)
        }
    }

    @Test func aColumnWhoseValuesSpan2To32OrMoreStaysWide() {
        for (low, high, narrows) in [
            (Int64(-7), -7 + Int64(UInt32.max), true), (-7, -7 + Int64(UInt32.max) + 1, false),
            (Int64.min, Int64.max, false), (Int64.max - 1, Int64.max, true), (Int64.min, Int64.min, true),
        ] {
            // A null row with a value far outside the span does not count.
            var (column, present) = Self.column([low, nil, high])
            column.set(1, .int(0))
            column.set(1, .null)
            column.narrow(rows: present)
            #expect(column.isNarrow == narrows, "\(low) ... \(high)")
            #expect(column.int(at: 0) == low && column.int(at: 2) == high)
            #expect(column.isNull(1))
        }
        var empty = Column(kind: .int)
        empty.narrow(rows: 0)
        #expect(empty.isNarrow, "a leaf with no live value narrows to a base of 0")
        #expect(empty.int(at: 63) == 0)
    }

    @Test func writesThatFitStayNarrowAndAWriteThatDoesNotWidensKeepingEveryValue() {
        var random = SeededRandom(seed: 21)
        var model = Self.values(&random, base: 1_000, span: 1_000_000, count: 64)
        model[0] = 1_000  // the base
        let (wideColumn, present) = Self.column(model)
        var column = wideColumn
        column.narrow(rows: present)
        for step in 0..<500 {
            let r = Int(random.next() % 64)
            // Inside the span above the base (stays narrow), a null, or (once) far below the base.
            let v: Int64? =
                step == 400 ? -9 : random.next() % 7 == 0 ? nil : 1_000 + Int64(random.next() % UInt64(UInt32.max))
            column.set(r, v.map(Value.int) ?? .null)
            model[r] = v
            guard column.isNarrow == (step < 400), Self.reads(column, model) == model else {
                Issue.record("step \(step): narrow \(column.isNarrow), \(Self.reads(column, model)) for \(model)")
                break
            }
        }
        #expect(column.ints.count == Leaf.width)
    }

    @Test func scansAnswerAsTheWideColumnDoesForEveryOperator() {
        var random = SeededRandom(seed: 0x5CA7)
        let values = Self.values(&random, base: -3_000, span: 10_000, count: 50)
        let (wide, present) = Self.column(values)
        var narrow = wide
        narrow.narrow(rows: present)
        #expect(narrow.isNarrow)
        let operators: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        for operand in [Int64.min, -3_001, -3_000, 0, values[3]!, 7_000, 7_001, Int64.max] {
            for op in operators {
                #expect(
                    narrow.rows(op, .int(operand)) & present == wide.rows(op, .int(operand)) & present,
                    "\(op) \(operand)")
            }
        }
        #expect(narrow.rows(.equal, .null) & present == wide.rows(.equal, .null) & present)
    }

    /// A store compacted and reopened loads its int columns narrow where they fit: the narrow form is in use, not
    /// just possible. Leaves whose values span 2^32 or more stay wide.
    @Test func aCheckpointLoadNarrowsTheLeavesWhoseValuesFit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("narrow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let schema = try Schema([
            EntityDescription(
                "Row", attributes: [AttributeDescription("n", .int), AttributeDescription("far", .int)])
        ])
        var store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        try store.write { tx in
            for i in 0..<200 {
                _ = try tx.insert("Row", ["n": .int(Int64(i) * 1_000), "far": .int(i % 2 == 0 ? .min : .max)])
            }
        }
        try store.compact()
        try store.close()
        store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        defer { try? store.close() }
        var leaves = 0
        var n: [Int64] = []
        store.snapshot.tables[0].leaves.forEach { _, leaf in
            leaves += 1
            #expect(leaf.columns[0].isNarrow)
            #expect(!leaf.columns[1].isNarrow)
            for r in Leaf.rows(leaf.present) { n.append(leaf.columns[0].int(at: r)) }
        }
        #expect(leaves == 4)
        #expect(n == (0..<200).map { Int64($0) * 1_000 })
    }
}
