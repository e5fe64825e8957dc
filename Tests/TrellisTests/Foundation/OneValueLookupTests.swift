import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisStore

/// `lookup(index, value)` answers what `lookup(index, [value])` always answered, on every kind of index: a scalar
/// index compares encoded bits for a value of its own kind and goes through the general bounds for any other kind, a
/// general index (strings, optionals, several attributes) matches its first value. Checked against brute force.
@Suite struct OneValueLookupTests {
    static let schema = try! Schema([
        EntityDescription(
            "Sample",
            attributes: [
                AttributeDescription("i", .int64), AttributeDescription("d", .double),
                AttributeDescription("t", .date), AttributeDescription("b", .bool),
                AttributeDescription("s", .string), AttributeDescription("o", .int64, optional: true),
            ],
            indexes: [.on("i"), .on("d"), .on("t"), .on("b"), .on("s"), .on("o"), .on("s", "i")])
    ])

    /// Candidate values: each kind an index may hold, the same numbers as other kinds, and the values that encode
    /// specially (-0.0, NaN, infinities, the ends of Int64).
    static let probes: [Value] = {
        var out: [Value] = [.null, .string("x"), .string("k3"), .bool(true), .bool(false), .int(.max), .int(.min)]
        for n in -4...12 {
            out.append(.int(Int64(n)))
            out.append(.double(Double(n)))
            out.append(.double(Double(n) + 0.5))
            out.append(.date(Date(timeIntervalSinceReferenceDate: Double(n))))
            out.append(.decimal(Decimal(n)))
            out.append(.string("k\(n)"))
        }
        out += [.double(-0.0), .double(.nan), .double(.infinity), .double(-.infinity)]
        return out
    }()

    @Test func oneValueLookupFindsTheFirstEqualObjectOnEveryIndexKind() throws {
        let store = Store(schema: Self.schema)
        var rng = SeededRandom(seed: 77)
        var rows: [ObjectID: [Value]] = [:]
        let doubles: [Double] = [0, -0.0, .nan, .infinity, -.infinity, 2, 2.5, -3, 7]
        try store.write { tx in
            for _ in 0..<300 {
                let n = Int64(bitPattern: rng.next() % 16) - 4
                let row: [Value] = [
                    .int(n), .double(doubles[Int(rng.next() % UInt64(doubles.count))]),
                    .date(Date(timeIntervalSinceReferenceDate: Double(n))), .bool(rng.next() % 2 == 0),
                    .string("k\(rng.next() % 9)"), rng.next() % 3 == 0 ? .null : .int(n * 2),
                ]
                rows[tx.insert(entity: 0, row: row)] = row
            }
        }
        // Delete some, so the lowest serial of a value is sometimes gone.
        let doomed = rows.keys.sorted().enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        try store.write { tx in for id in doomed { try tx.delete(id) } }
        for id in doomed { rows[id] = nil }

        let s = store.snapshot
        var hits = 0
        for (position, name) in ["i", "d", "t", "b", "s", "o"].enumerated() {
            let index = try Self.schema.index("Sample", [name])
            for probe in Self.probes {
                let expected = rows.filter { Value.compare($0.value[position], probe) == 0 }.map(\.key).min {
                    $0.serial < $1.serial
                }
                let found = s.lookup(index, probe)
                #expect(found == expected, "\(name) = \(probe)")
                if found != nil { hits += 1 }
            }
        }
        // The probes hit every index, so the comparisons above are not all nil against nil.
        #expect(hits > 60)

        // Two attributes: one value matches the first, in index order (s, then i, then serial).
        let pair = try Self.schema.index("Sample", ["s", "i"])
        for probe in Self.probes {
            let expected = rows.filter { Value.compare($0.value[4], probe) == 0 }.min { a, b in
                let c = Value.compare(a.value[0], b.value[0])
                return c != 0 ? c < 0 : a.key.serial < b.key.serial
            }?.key
            #expect(s.lookup(pair, probe) == expected, "s = \(probe) on (s, i)")
        }
        #expect(s.lookup(pair, .string("k4")) != nil)
        #expect(s.lookup(pair, [.string("k4"), .int(99)]) == nil)
    }

    @Test func oneValueLookupOnAnIndexThatDoesNotExistFindsNothing() throws {
        let store = Store(schema: Self.schema)
        try store.write { tx in
            _ = tx.insert(entity: 0, row: [.int(1), .double(1), .date(Date()), .bool(true), .string("a"), .null])
        }
        #expect(store.snapshot.lookup(IndexKey(entity: 0, index: 0), .int(1)) != nil)
        #expect(store.snapshot.lookup(IndexKey(entity: 0, index: 99), .int(1)) == nil)
        #expect(store.snapshot.lookup(IndexKey(entity: 5, index: 0), .int(1)) == nil)
    }
}
