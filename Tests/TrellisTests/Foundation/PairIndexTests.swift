import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Indexes on two required numbers, dates or booleans keep 24-byte encoded keys (`PairEntry`); these tests prove that
/// every way of changing and reading such an index, and every kind of bound on one or both of its values, selects
/// exactly what `Value`'s order selects, that `forEachEntry` hands back the values the rows hold, and that a store
/// reopened from its journal or from a checkpoint rebuilds the same index.
@Suite struct PairIndexTests {
    static let schema = try! Schema([
        EntityDescription(
            "Sample",
            attributes: [
                AttributeDescription("i", .int64), AttributeDescription("d", .double),
                AttributeDescription("t", .date), AttributeDescription("b", .bool),
                AttributeDescription("i16", .int16),
            ], indexes: [.on("d", "i"), .on("i", "b"), .on("t", "d"), .unique("i16", "b")])
    ])
    /// Each index's columns, in key order.
    static let indexed: [(name: String, columns: [Int])] = [
        ("d,i", [1, 0]), ("i,b", [0, 3]), ("t,d", [2, 1]), ("i16,b", [4, 3]),
    ]

    static func randomDouble(_ rng: inout SeededRandom) -> Double {
        let specials: [Double] = [0, -0.0, .infinity, -.infinity, .nan, 1e300, -1e300, 0.5, -0.5, 3, -3]
        if rng.next() % 4 == 0 { return specials[Int(rng.next() % UInt64(specials.count))] }
        return Double(Int64(bitPattern: rng.next()) % 40) / 4
    }

    static func randomBound(_ rng: inout SeededRandom) -> Value {
        switch rng.next() % 10 {
        case 0: return .int(Int64(bitPattern: rng.next()) % 12)
        case 1, 2: return .double(randomDouble(&rng))
        case 3: return .date(Date(timeIntervalSinceReferenceDate: randomDouble(&rng)))
        case 4: return .bool(rng.next() % 2 == 0)
        case 5: return .string("x")
        case 6: return .null
        case 7: return .decimal(Decimal(Int(Int64(bitPattern: rng.next()) % 40)) / 4)
        case 8: return .int(rng.next() % 2 == 0 ? .max : .min)
        default: return .double(Double(Int64(bitPattern: rng.next()) % 12) + 0.5)
        }
    }

    /// A row whose `i16` is `unique`, with few distinct values elsewhere so keys tie on their first value.
    static func randomRow(_ rng: inout SeededRandom, unique: Int) -> [Value] {
        let i: Int64 = rng.next() % 9 == 0 ? (rng.next() % 2 == 0 ? .max : .min) : Int64(bitPattern: rng.next()) % 6
        return [
            .int(i), .double(randomDouble(&rng)), .date(Date(timeIntervalSinceReferenceDate: randomDouble(&rng))),
            .bool(rng.next() % 2 == 0), .int(Int64(unique)),
        ]
    }

    /// How `key` (an entry's values) compares with a bound on a prefix of them, by `Value`'s order; a bound longer
    /// than the key sorts after every key it starts with, as a general index's probe does.
    static func compare(_ key: [Value], _ bound: [Value]) -> Int {
        for k in 0..<min(key.count, bound.count) {
            let c = Value.compare(key[k], bound[k])
            if c != 0 { return c }
        }
        return bound.count > key.count ? -1 : 0
    }

    /// Checks every index of `s` against `rows` with `rounds` random bounds each.
    static func check(_ s: Snapshot, _ rows: [ObjectID: [Value]], rng: inout SeededRandom, rounds: Int = 200) throws {
        #expect(s.invariantViolations() == [])
        #expect(s.count(entity: 0) == rows.count)
        for (number, index) in indexed.enumerated() {
            guard case .pair = s.tables[0].indexes[number] else {
                Issue.record("index \(index.name) is not a pair index")
                return
            }
            let key = IndexKey(entity: 0, index: number)
            let all = rows.map { id, row in (id: id, values: index.columns.map { row[$0] }) }.sorted { a, b in
                let c = compare(a.values, b.values)
                return c != 0 ? c < 0 : a.id.serial < b.id.serial
            }
            for round in 0..<rounds {
                func bound() -> [Value]? {
                    switch rng.next() % 6 {
                    case 0: return nil
                    case 1, 2: return [randomBound(&rng)]
                    case 3: return [randomBound(&rng), randomBound(&rng), randomBound(&rng)]
                    default: return [randomBound(&rng), randomBound(&rng)]
                    }
                }
                let (lower, upper) = (bound(), bound())
                let (li, ui) = (rng.next() % 2 == 0, rng.next() % 2 == 0)
                let expected = all.filter { entry in
                    if let lower {
                        let c = compare(entry.values, lower)
                        if c < 0 || (c == 0 && !li) { return false }
                    }
                    if let upper {
                        let c = compare(entry.values, upper)
                        if c > 0 || (c == 0 && !ui) { return false }
                    }
                    return true
                }
                let described = "\(index.name) \(String(describing: lower)) \(li) … \(String(describing: upper)) \(ui)"
                let found = s.scan(key, from: lower, inclusive: li, to: upper, inclusive: ui)
                #expect(found == expected.map { $0.id }, "scan \(described)")
                #expect(s.count(key, from: lower, inclusive: li, to: upper, inclusive: ui) == expected.count)
                // Index-only reads: the same entries, each with the values its row holds.
                let reverse = round % 3 == 0
                let limit = round % 4 == 0 ? Int(rng.next() % 5) : .max
                var read: [(ObjectID, [Value])] = []
                s.forEachEntry(
                    key, from: lower, inclusive: li, to: upper, inclusive: ui, reverse: reverse, limit: limit
                ) { entry in
                    read.append((entry.id, (0..<entry.count).map(entry.value)))
                }
                let wanted = Array((reverse ? expected.reversed() : expected).prefix(limit))
                #expect(
                    read.map { $0.0 } == wanted.map { $0.id },
                    "forEachEntry \(described) reverse \(reverse) limit \(limit)")
                for ((_, values), entry) in zip(read, wanted) where compare(values, entry.values) != 0 {
                    Issue.record("forEachEntry \(described): \(values) for \(entry.values)")
                }
                if let lower {
                    let equal = lower.count > 2 ? nil : all.first { compare($0.values, lower) == 0 }
                    #expect(s.lookup(key, lower) == equal?.id, "lookup \(index.name) = \(lower)")
                }
            }
        }
    }

    @Test func pairIndexesSelectWhatValueOrderSelectsThroughEveryKindOfChange() throws {
        let store = Store(schema: Self.schema)
        var rng = SeededRandom(seed: 4242)
        var rows: [ObjectID: [Value]] = [:]
        var unique = 0
        // 1,200 inserts: past the size where a commit sorts its index changes on another thread.
        try store.write { tx in
            for _ in 0..<1_200 {
                unique += 1
                let row = Self.randomRow(&rng, unique: unique)
                rows[tx.insert(entity: 0, row: row)] = row
            }
        }
        try Self.check(store.snapshot, rows, rng: &rng)

        // Updates of one value, the other or both, 1,000 in one commit (sorted on another thread from the updates and
        // the stored values; one in sixteen changes nothing), then 40 (recorded per leaf), then 3 (one at a time).
        for count in [1_000, 40, 3] {
            let ids = Array(rows.keys.sorted().shuffled(using: &rng).prefix(count))
            try store.write { tx in
                for id in ids {
                    let fresh = Self.randomRow(&rng, unique: 0)
                    var row = rows[id]!
                    for c in 0..<4 where rng.next() % 2 == 0 {
                        row[c] = fresh[c]
                        try tx.set(id, Self.schema.layouts[0].attributes[c].name, fresh[c])
                    }
                    rows[id] = row
                }
            }
            try Self.check(store.snapshot, rows, rng: &rng, rounds: 100)
        }

        // Deletes, then one-object inserts, which wait in the trees' pending runs.
        let doomed = rows.keys.sorted().enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        try store.write { tx in for id in doomed { try tx.delete(id) } }
        for id in doomed { rows[id] = nil }
        for _ in 0..<20 {
            unique += 1
            let row = Self.randomRow(&rng, unique: unique)
            rows[try store.write { tx in tx.insert(entity: 0, row: row) }] = row
        }
        try Self.check(store.snapshot, rows, rng: &rng)
    }

    @Test func aUniquePairRefusesTheSameTwoValuesAndAllowsEitherAlone() throws {
        let store = Store(schema: Self.schema)
        let row: [Value] = [.int(1), .double(1), .date(Date(timeIntervalSinceReferenceDate: 0)), .bool(true), .int(7)]
        let first = try store.write { tx in tx.insert(entity: 0, row: row) }
        // The same i16 with the other b, and the other i16 with the same b, are both allowed.
        var allowed = row
        allowed[3] = .bool(false)
        var other = row
        other[4] = .int(8)
        let second = try store.write { tx in
            (tx.insert(entity: 0, row: allowed), tx.insert(entity: 0, row: other))
        }
        var tx = store.transaction()
        tx.insert(entity: 0, row: row)
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error?.code == .uniqueViolation)
        let index = try Self.schema.index("Sample", ["i16", "b"])
        #expect(store.snapshot.lookup(index, [.int(7), .bool(true)]) == first)
        #expect(store.snapshot.lookup(index, [.int(7), .bool(false)]) == second.0)
        #expect(store.snapshot.lookup(index, [.int(8)]) == second.1)
        #expect(store.snapshot.lookup(index, [.double(7.5)]) == nil)
        // Moving the first object onto the other's key is refused too; onto a free one it is not.
        var move = store.transaction()
        try move.set(first, "b", .bool(false))
        #expect(throws: TrellisError.self) { try store.commit(move) }
        try store.write { tx in try tx.set(first, "i16", .int(9)) }
        #expect(store.snapshot.lookup(index, [.int(9), .bool(true)]) == first)
        #expect(store.snapshot.lookup(index, [.int(7), .bool(true)]) == nil)
    }

    /// Two inserts of one commit that share a unique pair are refused, in a small commit (probed one by one) and in a
    /// large one (where a walk of the index, `holdsDuplicateValues`, first decides whether any probe is needed); the
    /// same large commit without the repeat is accepted.
    @Test func insertsOfOneCommitSharingAUniquePairAreRefusedAtEverySize() throws {
        func row(_ n: Int, _ b: Bool) -> [Value] {
            [
                .int(Int64(n)), .double(Double(n)), .date(Date(timeIntervalSinceReferenceDate: 0)), .bool(b),
                .int(Int64(n)),
            ]
        }
        for count in [2, 100] {
            let store = Store(schema: Self.schema)
            var tx = store.transaction()
            for n in 0..<count - 1 { tx.insert(entity: 0, row: row(n, n % 2 == 0)) }
            let k = (count - 1) / 2
            tx.insert(entity: 0, row: row(k, k % 2 == 0))  // the same (i16, b) as insert k
            let error = #expect(throws: TrellisError.self, "\(count) inserts") { try store.commit(tx) }
            #expect(error?.code == .uniqueViolation)
            #expect(store.snapshot.count(entity: 0) == 0, "nothing of the refused commit stays")
            // The same inserts with the other b for the last one: every pair distinct.
            try store.write { tx in
                for n in 0..<count - 1 { tx.insert(entity: 0, row: row(n, n % 2 == 0)) }
                tx.insert(entity: 0, row: row(k, k % 2 != 0))
            }
            #expect(store.snapshot.count(entity: 0) == count)
        }
    }

    /// A pair index is not stored: a reopened store rebuilds it from the journal's records or from a checkpoint's
    /// rows and the order the checkpoint kept.
    @Test func aReopenedStoreRebuildsEveryPairIndexFromTheJournalAndFromACheckpoint() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pairs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var rng = SeededRandom(seed: 99)
        var rows: [ObjectID: [Value]] = [:]
        let options = StoreOptions(compaction: .manual)
        var store = try Store(directory: directory, schema: Self.schema, options: options)
        try store.write { tx in
            for n in 0..<700 {
                let row = Self.randomRow(&rng, unique: n)
                rows[tx.insert(entity: 0, row: row)] = row
            }
        }
        try store.write { tx in
            for id in rows.keys.sorted().prefix(300) {
                let d = Value.double(Self.randomDouble(&rng))
                try tx.set(id, "d", d)
                rows[id]![1] = d
            }
        }
        try store.close()
        for compacted in [false, true] {
            store = try Store(directory: directory, schema: Self.schema, options: options)
            try Self.check(store.snapshot, rows, rng: &rng, rounds: 60)
            if !compacted { try store.compact() }
            try store.close()
        }
        // A migration that adds an attribute keeps every pair index's tree (`keptIndex`) beside the moved columns.
        var attributes = Self.schema.entities[0].attributes
        attributes.append(AttributeDescription("note", .string, default: .string("")))
        let migrated = try Schema([
            EntityDescription("Sample", attributes: attributes, indexes: Self.schema.entities[0].indexes)
        ])
        // Kept, not rebuilt: the migration the open runs (`SchemaMigrator.run`), on the version the store holds,
        // hands back each tree with its root (`SortedTree.isIdentical`); a rebuild makes new nodes, the same entries.
        let stored = store.snapshot
        let inMemory = try SchemaMigrator.run(stored, plan: ResolvedMigrationPlan(schema: migrated)).graph
        #expect(inMemory.schema.layouts[0].attributes.count == 6)
        for (number, index) in Self.indexed.enumerated() {
            guard case .pair(let old, _, _) = stored.tables[0].indexes[number],
                case .pair(let new, _, _) = inMemory.tables[0].indexes[number]
            else {
                Issue.record("index \(index.name) is not a pair index before and after the migration")
                continue
            }
            #expect(old.count == rows.count, "index \(index.name) holds every row (an empty tree has no root)")
            let kept = new.isIdentical(to: old)
            #expect(kept, "index \(index.name) was rebuilt by the migration, not kept")
        }
        store = try Store(directory: directory, schema: migrated, options: options)
        defer { try? store.close() }
        #expect(store.schema.layouts[0].attributes.count == 6)
        try Self.check(store.snapshot, rows.mapValues { $0 + [.string("")] }, rng: &rng, rounds: 60)
    }

    /// `forEachEntry` reads a one-value scalar index and a general index (optional values, a string) too: every entry,
    /// in index order, with the values its row holds, forwards and backwards, and as far as a limit.
    @Test func forEachEntryReadsScalarAndGeneralIndexesAsTheirRowsHoldThem() throws {
        let schema = try Schema([
            EntityDescription(
                "Thing",
                attributes: [
                    AttributeDescription("n", .int32), AttributeDescription("name", .string, optional: true),
                    AttributeDescription("when", .date, optional: true),
                ], indexes: [.on("n"), .on("name", "when")])
        ])
        let store = Store(schema: schema)
        var rng = SeededRandom(seed: 8)
        var rows: [ObjectID: [Value]] = [:]
        try store.write { tx in
            for k in 0..<300 {
                let row: [Value] = [
                    .int(Int64(bitPattern: rng.next()) % 50),
                    k % 5 == 0 ? .null : .string("name \(rng.next() % 30)"),
                    k % 7 == 0 ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(rng.next() % 1_000))),
                ]
                rows[tx.insert(entity: 0, row: row)] = row
            }
        }
        let s = store.snapshot
        if case .scalar = s.tables[0].indexes[0] {} else { Issue.record("n is not a scalar index") }
        if case .general = s.tables[0].indexes[1] {} else { Issue.record("(name, when) is not a general index") }
        for (number, columns) in [[0], [1, 2]].enumerated() {
            let key = IndexKey(entity: 0, index: number)
            let expected = rows.map { id, row in (id: id, values: columns.map { row[$0] }) }.sorted { a, b in
                let c = Self.compare(a.values, b.values)
                return c != 0 ? c < 0 : a.id.serial < b.id.serial
            }
            for (reverse, limit) in [(false, Int.max), (true, Int.max), (false, 17), (true, 1)] {
                var read: [(id: ObjectID, values: [Value])] = []
                s.forEachEntry(key, reverse: reverse, limit: limit) { entry in
                    read.append((entry.id, (0..<entry.count).map(entry.value)))
                }
                let wanted = Array((reverse ? expected.reversed() : expected).prefix(limit))
                #expect(read.map { $0.id } == wanted.map { $0.id }, "index \(number) reverse \(reverse) limit \(limit)")
                #expect(zip(read, wanted).allSatisfy { Self.compare($0.values, $1.values) == 0 })
            }
            var typed = 0
            s.forEachEntry(key) { entry in
                guard let id = rows[entry.id] else { return }
                if number == 0, entry.int(0) == id[0].intValue, entry.double(0) == nil, entry.value(-1) == .null {
                    typed += 1
                }
                if number == 1, entry.string(0) == id[1].stringValue, entry.date(1) == id[2].dateValue,
                    entry.value(2) == .null
                {
                    typed += 1
                }
            }
            #expect(typed == rows.count, "typed reads of index \(number)")
        }
    }
}
