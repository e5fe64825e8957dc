import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// An insert run writes a string column in one pass when its rows come after every row holding bytes
/// (`PackedStrings.appendInOrder`); otherwise, row by row. Either way the column must read exactly as one `set` per
/// row leaves it.
@Suite struct PackedStringsRunTests {
    private static let samples = ["", "a", "plain title", "émigré ñ", "日本語のタイトル", String(repeating: "x", count: 300)]

    private static func randomValue(_ rng: inout SeededRandom) -> Value {
        rng.next() % 5 == 0 ? .null : .string(samples[Int(rng.next() % UInt64(samples.count))])
    }

    @Test func aRunReadsAsItsRowsSetOneByOneWhetherAppendedOrNot() throws {
        var rng = SeededRandom(seed: 77)
        var appended = 0
        var fellBack = 0
        for round in 0..<400 {
            var column = Column(kind: .string)
            var reference = Column(kind: .string)
            // Some rows written before the run: below its first row (the fast path still applies) or, now and then,
            // above it (it must not).
            let first = Int(rng.next() % 40)
            for _ in 0..<Int(rng.next() % 4) {
                let r = round % 3 == 0 ? Int(rng.next() % 64) : Int(rng.next() % UInt64(max(first, 1)))
                let value = Self.randomValue(&rng)
                column.set(r, value)
                reference.set(r, value)
            }
            // The run: ascending rows from `first` with gaps, now and then out of order.
            var rows: [Int] = []
            var r = first
            while r < 64 && rows.count < 20 {
                rows.append(r)
                r += 1 + Int(rng.next() % 3)
            }
            if round % 7 == 0 && rows.count > 2 { rows.swapAt(0, rows.count - 1) }
            let inserts = rows.map { row in
                ChangeSet.Insert(
                    id: ObjectID(entity: 0, serial: 64 + UInt64(row)), values: [.int(0), Self.randomValue(&rng)])
            }
            for insert in inserts { reference.set(Int(insert.id.serial & 63), insert.values[1]) }
            var nulls = column.nulls
            var strings = column.strings
            let fast = inserts.withUnsafeBufferPointer {
                strings.appendInOrder(1, from: $0, 0..<$0.count, nulls: &nulls)
            }
            if fast { appended += 1 } else { fellBack += 1 }
            inserts.withUnsafeBufferPointer { column.fill(1, from: $0, 0..<$0.count) }
            for row in 0..<64 {
                #expect(column.value(row) == reference.value(row), "round \(round), row \(row)")
                #expect(column.isNull(row) == reference.isNull(row), "round \(round), row \(row)")
            }
            #expect(column.strings.bytes.count == reference.strings.bytes.count, "round \(round)")
        }
        // Both paths were taken.
        #expect(appended > 100)
        #expect(fellBack > 50)
    }
}
