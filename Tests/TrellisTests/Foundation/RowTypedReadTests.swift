import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

#if canImport(Glibc)
import Glibc
#endif

/// `Row`'s typed reads are inlined into the caller and reach the column through a pointer into the leaf: each must
/// still answer exactly what `value(_:)` holds (nil for a null and for an attribute of another kind), in leaves a
/// commit wrote and in leaves a checkpoint load built (narrow int columns included), and a key past the entity's
/// attributes must stop the process rather than read past the leaf's columns.
@Suite struct RowTypedReadTests {
    static let schema = try! Schema([
        EntityDescription(
            "Thing",
            attributes: [
                AttributeDescription("i", .int64, optional: true), AttributeDescription("d", .double, optional: true),
                AttributeDescription("b", .bool, optional: true), AttributeDescription("s", .string, optional: true),
                AttributeDescription("t", .date, optional: true), AttributeDescription("wide", .int64, optional: true),
            ]),
        EntityDescription(
            "Other", attributes: (0..<9).map { AttributeDescription("a\($0)", .int64, optional: true) }),
    ])

    static func randomRow(_ rng: inout SeededRandom) -> [Value] {
        func maybe(_ value: Value) -> Value { rng.next() % 5 == 0 ? .null : value }
        let n = rng.next()
        return [
            maybe(.int(1_000_000 + Int64(n % 5000))), maybe(.double(Double(Int64(bitPattern: n) % 1000) / 8)),
            maybe(.bool(n % 3 == 0)), maybe(.string("row \(n % 977)")),
            maybe(.date(Date(timeIntervalSinceReferenceDate: Double(n % 100_000)))),
            maybe(.int(Int64(bitPattern: rng.next()))),
        ]
    }

    /// Every typed read of every attribute of `row` against the value it holds.
    static func check(_ row: Row, _ keys: [AttributeKey], _ expected: [Value]) {
        for (k, key) in keys.enumerated() {
            let value = row.value(key)
            #expect(value == expected[k], "\(row.id) attribute \(k)")
            let reads: [Value?] = [
                row.int(key).map(Value.int), row.double(key).map(Value.double), row.bool(key).map(Value.bool),
                row.string(key).map(Value.string), row.date(key).map(Value.date),
            ]
            // The one accessor of the attribute's kind answers its value; the others, and all five for a null, nil.
            let kind = [0, 1, 2, 3, 4, 0][k]
            for (a, read) in reads.enumerated() {
                #expect(read == (a == kind && value != .null ? value : nil), "\(row.id) attribute \(k) accessor \(a)")
            }
        }
    }

    @Test func typedReadsAnswerWhatTheLeafHoldsBeforeAndAfterACheckpointLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rowreads-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = try ["i", "d", "b", "s", "t", "wide"].map { try Self.schema.attribute("Thing", $0) }
        let thing = try Self.schema.entity("Thing")
        var rng = SeededRandom(seed: 77)
        var expected: [ObjectID: [Value]] = [:]
        var store = try Store(directory: directory, schema: Self.schema, options: StoreOptions(compaction: .manual))
        try store.write { tx in
            for _ in 0..<300 {
                let row = Self.randomRow(&rng)
                expected[tx.insert(entity: thing, row: row)] = row
            }
        }
        func checkAll(_ snapshot: Snapshot) {
            var seen = 0
            for row in snapshot.rows(entity: thing) {
                Self.check(row, keys, expected[row.id] ?? [])
                seen += 1
            }
            #expect(seen == expected.count)
            for (id, row) in expected {
                guard let object = snapshot.object(id) else {
                    Issue.record("\(id) missing")
                    continue
                }
                Self.check(object, keys, row)
            }
        }
        checkAll(store.snapshot)
        try store.compact()
        try store.close()
        store = try Store(directory: directory, schema: Self.schema, options: StoreOptions(compaction: .manual))
        defer { try? store.close() }
        // The loader narrows the int column `i` (its values span 5,000) and leaves `wide` wide.
        let leaf = try #require(store.snapshot.tables[Int(thing.number)].leaves.first { _ in true }?.value)
        #expect(leaf.columns[keys[0].index].isNarrow)
        #expect(!leaf.columns[keys[5].index].isNarrow)
        checkAll(store.snapshot)
    }

    /// `Row.string` makes the string from the leaf's bytes in place (it copied up to 64 of them to the stack before):
    /// every length around that old edge, multibyte characters across it, and the empty string read back as stored,
    /// beside their neighbours in the same leaf, from a looked-up row and from the row iterator.
    @Test func stringsOfEveryLengthReadBackWhole() throws {
        let store = Store(schema: Self.schema)
        let s = try Self.schema.attribute("Thing", "s")
        var texts: [String] = ["", "a"]
        for n in [15, 16, 62, 63, 64, 65, 66, 127, 128, 300] { texts.append(String(repeating: "x", count: n)) }
        // "é" is two UTF-8 bytes, "€" three, "𝄞" four: each ends at, straddles or starts past byte 64.
        for (prefix, scalar) in [(62, "é"), (63, "é"), (62, "€"), (63, "€"), (61, "𝄞"), (62, "𝄞"), (64, "é")] {
            texts.append(String(repeating: "y", count: prefix) + scalar + "z")
        }
        var tx = store.transaction()
        var ids: [ObjectID] = []
        for text in texts { ids.append(try tx.insert("Thing", ["s": .string(text)])) }
        try store.commit(tx)
        let snapshot = store.snapshot
        for (k, id) in ids.enumerated() {
            #expect(snapshot.object(id)?.string(s) == texts[k], "length \(texts[k].utf8.count)")
        }
        var read: [String?] = []
        for row in snapshot.rows(entity: s.entity) { read.append(row.string(s)) }
        #expect(read == texts.map { $0 })
    }

    /// An attribute key of another entity whose index is past this entity's columns traps: the read must not reach
    /// memory after the leaf's column array.
    @Test func aKeyPastTheEntitysAttributesTraps() async throws {
        await #expect(processExitsWith: .failure) { try RowTypedReadTests.readPastTheColumns(0) }
        await #expect(processExitsWith: .failure) { try RowTypedReadTests.readPastTheColumns(1) }
        await #expect(processExitsWith: .failure) { try RowTypedReadTests.readPastTheColumns(2) }
        await #expect(processExitsWith: .failure) { try RowTypedReadTests.readPastTheColumns(3) }
        await #expect(processExitsWith: .failure) { try RowTypedReadTests.readPastTheColumns(4) }
        // The same child with a key of the row's own entity exits normally: the failures above are the traps.
        await #expect(processExitsWith: .success) { try RowTypedReadTests.readPastTheColumns(5) }
    }

    /// Reads attribute `a8` of `Other` (index 8; `Thing` has 6 columns) from a `Thing` with accessor `accessor`
    /// (5: reads `Thing.i` instead), then exits with success.
    static func readPastTheColumns(_ accessor: Int) throws {
        let store = Store(schema: schema)
        let thing = try schema.entity("Thing")
        try store.write { tx in _ = tx.insert(entity: thing, row: [.int(1), .null, .null, .null, .null, .null]) }
        let far = try schema.attribute("Other", "a8")
        guard let row = store.snapshot.rows(entity: thing).first(where: { _ in true }) else { exit(3) }
        switch accessor {
        case 0: _ = row.int(far)
        case 1: _ = row.double(far)
        case 2: _ = row.bool(far)
        case 3: _ = row.string(far)
        case 4: _ = row.date(far)
        default: guard try row.int(schema.attribute("Thing", "i")) == 1 else { exit(4) }
        }
        exit(0)
    }
}
