import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Single required numbers, dates and booleans are indexed by 16-byte encoded keys; these tests prove the encoded
/// order and every kind of query bound select exactly what `Value`'s own order selects.
@Suite struct ScalarIndexTests {
    static let schema = try! Schema([
        EntityDescription(
            "Sample",
            attributes: [
                AttributeDescription("i", .int64), AttributeDescription("d", .double),
                AttributeDescription("t", .date), AttributeDescription("b", .bool),
                AttributeDescription("i8", .int8),
            ], indexes: [.on("i"), .on("d"), .on("t"), .on("b"), .unique("i8")])
    ])

    private static func randomDouble(_ rng: inout SeededRandom) -> Double {
        let specials: [Double] = [0, -0.0, .infinity, -.infinity, .nan, 1e300, -1e300, 0.5, -0.5, 3, -3]
        if rng.next() % 4 == 0 { return specials[Int(rng.next() % UInt64(specials.count))] }
        return Double(Int64(bitPattern: rng.next()) % 2_000) / 8
    }

    private static func randomBound(_ rng: inout SeededRandom) -> Value {
        switch rng.next() % 9 {
        case 0: return .int(Int64(bitPattern: rng.next()) % 300)
        case 1: return .double(randomDouble(&rng))
        case 2: return .date(Date(timeIntervalSinceReferenceDate: randomDouble(&rng)))
        case 3: return .bool(rng.next() % 2 == 0)
        case 4: return .string("x")
        case 5: return .null
        case 6: return .decimal(Decimal(Int(Int64(bitPattern: rng.next()) % 300)) / 4)
        case 7: return .int(rng.next() % 2 == 0 ? .max : .min)
        default: return .double(Double(Int64(bitPattern: rng.next()) % 300) + 0.5)
        }
    }

    @Test func scansOverEncodedKeysSelectWhatValueOrderSelects() throws {
        let store = Store(schema: Self.schema)
        var rng = SeededRandom(seed: 2024)
        var rows: [ObjectID: [Value]] = [:]
        try store.write { tx in
            for n in 0..<250 {
                let row: [Value] = [
                    .int(Int64(bitPattern: rng.next()) % 300), .double(Self.randomDouble(&rng)),
                    .date(Date(timeIntervalSinceReferenceDate: Self.randomDouble(&rng))), .bool(rng.next() % 2 == 0),
                    .int(Int64(n % 256) - 128),
                ]
                rows[tx.insert(entity: 0, row: row)] = row
            }
        }
        // Delete some, so trees also hold the shapes removals leave.
        let doomed = rows.keys.sorted().enumerated().filter { $0.offset % 7 == 0 }.map(\.element)
        try store.write { tx in for id in doomed { try tx.delete(id) } }
        for id in doomed { rows[id] = nil }

        let s = store.snapshot
        #expect(s.invariantViolations() == [])
        for (column, name) in ["i", "d", "t", "b"].enumerated() {
            let index = try Self.schema.index("Sample", [name])
            for _ in 0..<300 {
                let lower: Value? = rng.next() % 4 == 0 ? nil : Self.randomBound(&rng)
                let upper: Value? = rng.next() % 4 == 0 ? nil : Self.randomBound(&rng)
                let (li, ui) = (rng.next() % 2 == 0, rng.next() % 2 == 0)
                let expected = rows.filter { _, row in
                    let v = row[column]
                    if let lower {
                        let c = Value.compare(v, lower)
                        if c < 0 || (c == 0 && !li) { return false }
                    }
                    if let upper {
                        let c = Value.compare(v, upper)
                        if c > 0 || (c == 0 && !ui) { return false }
                    }
                    return true
                }.sorted { a, b in
                    let c = Value.compare(a.value[column], b.value[column])
                    return c != 0 ? c < 0 : a.key.serial < b.key.serial
                }.map(\.key)
                let found = s.scan(
                    index, from: lower.map { [$0] }, inclusive: li, to: upper.map { [$0] }, inclusive: ui)
                #expect(
                    found == expected, "\(name) \(String(describing: lower)) \(li) … \(String(describing: upper)) \(ui)"
                )
                let counted = s.count(
                    index, from: lower.map { [$0] }, inclusive: li, to: upper.map { [$0] }, inclusive: ui)
                #expect(counted == expected.count)
                if let lower {
                    let equal = rows.filter { Value.compare($0.value[column], lower) == 0 }.map(\.key).sorted()
                    let hit = s.lookup(index, [lower])
                    #expect(hit == equal.first, "lookup \(name) = \(lower)")
                }
            }
        }
    }

    /// A bound of two values on a one-value index sorts after the entries holding its first value, at either end,
    /// as it does in a general index, where a longer probe follows every key it starts with.
    @Test func aBoundOfMoreValuesThanTheIndexSortsAfterTheEntriesHoldingItsFirst() throws {
        let store = Store(schema: Self.schema)
        var ids: [Int64: ObjectID] = [:]
        try store.write { tx in
            for n in Int64(1)...5 {
                let row: [Value] = [
                    .int(n), .double(Double(n)), .date(Date(timeIntervalSinceReferenceDate: Double(n))), .bool(n > 2),
                    .int(n),
                ]
                ids[n] = tx.insert(entity: 0, row: row)
            }
        }
        let s = store.snapshot
        let index = try Self.schema.index("Sample", ["i"])
        func scan(_ lower: [Value]?, _ li: Bool, _ upper: [Value]?, _ ui: Bool) -> [Int64] {
            let found = s.scan(index, from: lower, inclusive: li, to: upper, inclusive: ui)
            return found.compactMap { id in ids.first { $0.value == id }?.key }
        }
        for inclusive in [true, false] {
            // From [3, x]: 3 lies below the bound, inclusive or not; to [3, x]: 3 lies below it, so it is in.
            #expect(scan([.int(3), .int(0)], inclusive, nil, true) == [4, 5])
            #expect(scan(nil, true, [.int(3), .int(0)], inclusive) == [1, 2, 3])
            #expect(scan([.int(2), .null], inclusive, [.int(4), .string("z")], inclusive) == [3, 4])
            // A first value between the integers rounds inward whatever follows it.
            #expect(scan([.double(2.5), .int(9)], inclusive, [.double(4.5), .int(9)], inclusive) == [3, 4])
        }
    }

    @Test func uniqueScalarIndexRejectsDuplicatesAndFindsByValue() throws {
        let store = Store(schema: Self.schema)
        let row: [Value] = [.int(1), .double(1), .date(Date(timeIntervalSinceReferenceDate: 0)), .bool(true), .int(-5)]
        let first = try store.write { tx in tx.insert(entity: 0, row: row) }
        var tx = store.transaction()
        tx.insert(entity: 0, row: row)
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error?.code == .uniqueViolation)
        #expect(error?.message.contains("i8 = -5") == true)
        let index = try Self.schema.index("Sample", ["i8"])
        #expect(store.snapshot.lookup(index, [.int(-5)]) == first)
        #expect(store.snapshot.lookup(index, [.double(-5)]) == first)
        #expect(store.snapshot.lookup(index, [.double(-5.5)]) == nil)
    }
}
