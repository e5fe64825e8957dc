import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisStore

/// The runtime's strong retain count of a heap object (an array's buffer here), to check that lent rows leave every
/// count as they found it.
@_silgen_name("swift_retainCount")
private func retainCount(_ object: UnsafeMutableRawPointer) -> Int

/// `IndexRowSequence.forEach` lends each row from its leaf instead of making it (issue 21): the same rows as
/// `for row in rows`, in the same order; a row the closure keeps is an ordinary row that outlives the snapshot; an
/// error from the closure ends the walk; and no retain count is left changed, whatever the closure does.
@Suite struct IndexRowLendingTests {
    static let schema = try! Schema([
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("code", .int64), AttributeDescription("score", .double),
                AttributeDescription("name", .string),
            ],
            relationships: [RelationshipDescription("folder", to: "Folder", inverse: "items")],
            indexes: [.unique("code"), .on("score")]),
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("items", to: "Item", inverse: "folder", toMany: true)]),
    ])

    struct Stop: Error, Equatable { var at: Int64 }

    /// 1,000 items in one commit (full leaves in the trie's nodes), then 30 more one at a time (the trie's tail leaf),
    /// with scores that put both kinds side by side in index order; every third item is in a folder.
    static func store() throws -> Store {
        let store = Store(schema: schema)
        var tx = store.transaction()
        try tx.insert("Folder", ["name": .string("inbox")])
        for i in 0..<1_000 { try insert(&tx, i) }
        try store.commit(tx)
        for i in 1_000..<1_030 {
            var one = store.transaction()
            try insert(&one, i)
            try store.commit(one)
        }
        return store
    }

    static func insert(_ tx: inout Transaction, _ i: Int) throws {
        let score = Double((i * 7_919) % 1_030) / 10
        let item = try tx.insert(
            "Item", ["code": .int(Int64(i)), "score": .double(score), "name": .string("item \(i)")])
        if i % 3 == 0 { try tx.link(item, "folder", ObjectID(entity: 1, serial: 1)) }
    }

    /// What a row reads: its ID and its three values.
    struct Read: Equatable {
        var id: ObjectID
        var code: Int64?
        var score: Double?
        var name: String?
    }

    static func read(_ row: Row) throws -> Read {
        Read(
            id: row.id, code: row.int(try schema.attribute("Item", "code")),
            score: row.double(try schema.attribute("Item", "score")),
            name: row.string(try schema.attribute("Item", "name")))
    }

    @Test func forEachReadsTheRowsTheIteratorReadsInTheSameOrder() throws {
        let snapshot = try Self.store().snapshot
        let byScore = try Self.schema.index("Item", ["score"])
        let tailLeaf = snapshot.tables[0].leaves.tail?.key
        var sawTail = false
        var sawNodes = false
        for (low, high, reverse, limit) in [
            (0.0, 200.0, false, Int.max), (10.0, 20.5, true, Int.max), (50.0, 90.0, false, 17),
            (100.0, 200.0, false, 5),
        ] {
            let rows = snapshot.rows(
                byScore, from: [.double(low)], inclusive: true, to: [.double(high)], inclusive: false,
                reverse: reverse, limit: limit)
            var iterated: [Read] = []
            for row in rows { iterated.append(try Self.read(row)) }
            var lent: [Read] = []
            try rows.forEach { lent.append(try Self.read($0)) }
            #expect(!lent.isEmpty && lent == iterated, "\(low)..<\(high) reverse \(reverse) limit \(limit)")
            // In index order, every value within the bounds, as the store holds it.
            let scores = lent.map { $0.score ?? .nan }
            #expect(scores == (reverse ? scores.sorted(by: >) : scores.sorted()))
            #expect(scores.allSatisfy { $0 >= low && $0 < high })
            for read in lent {
                let i = Int(read.code ?? -1)
                #expect(read.name == "item \(i)" && read.score == Double((i * 7_919) % 1_030) / 10)
                if read.id.serial >> Leaf.shift == tailLeaf { sawTail = true } else { sawNodes = true }
            }
        }
        #expect(sawTail && sawNodes, "the ranges cover rows of the tail leaf and of the trie's nodes")
    }

    /// `forEach` finds rows in their leaves a batch at a time before reading them: every count of rows around the
    /// batch's size, forwards and backwards, reads the rows the iterator reads, the tail leaf's among them.
    @Test func forEachReadsTheSameRowsAcrossItsBatchBoundaries() throws {
        let snapshot = try Self.store().snapshot
        let byScore = try Self.schema.index("Item", ["score"])
        let batch = IndexRowSequence.batch
        #expect(batch > 1 && batch <= 64)
        var sawTail = false
        let tailLeaf = snapshot.tables[0].leaves.tail?.key
        for reverse in [false, true] {
            for limit in [0, 1, batch - 1, batch, batch + 1, 2 * batch, 2 * batch + 3, 1_029, 1_030, 1_031] {
                let rows = snapshot.rows(byScore, reverse: reverse, limit: limit)
                let iterated = try rows.map(Self.read)
                var lent: [Read] = []
                try rows.forEach { lent.append(try Self.read($0)) }
                #expect(lent.count == Swift.min(limit, 1_030), "limit \(limit) reverse \(reverse)")
                #expect(lent == iterated, "limit \(limit) reverse \(reverse)")
                if lent.contains(where: { $0.id.serial >> Leaf.shift == tailLeaf }) { sawTail = true }
            }
        }
        #expect(sawTail)
    }

    /// `forEach(reading:)` reads what `forEach` reads, in the same order, whatever it is told the closure reads: all
    /// of it, some, none, a string attribute (no hint), a key of another entity, a repeated key; across batch
    /// boundaries, forwards and backwards, with the tail leaf's rows among them.
    @Test func forEachReadingReadsWhatForEachReads() throws {
        let snapshot = try Self.store().snapshot
        let byScore = try Self.schema.index("Item", ["score"])
        let code = try Self.schema.attribute("Item", "code")
        let score = try Self.schema.attribute("Item", "score")
        let name = try Self.schema.attribute("Item", "name")
        let folderName = try Self.schema.attribute("Folder", "name")
        // The hints are on: otherwise this would compare `forEach` with itself.
        #expect(ArrayStorageHint.holds)
        let batch = IndexRowSequence.batch
        for hints in [[code, score, name], [score], [name], [], [folderName], [score, score, code]] {
            for reverse in [false, true] {
                for limit in [0, 1, batch - 1, batch, batch + 1, 3 * batch + 5, 1_030] {
                    let rows = snapshot.rows(byScore, reverse: reverse, limit: limit)
                    var plain: [Read] = []
                    try rows.forEach { plain.append(try Self.read($0)) }
                    var hinted: [Read] = []
                    try rows.forEach(reading: hints) { hinted.append(try Self.read($0)) }
                    #expect(hinted.count == Swift.min(limit, 1_030), "limit \(limit)")
                    #expect(hinted == plain, "hints \(hints.map(\.index)) limit \(limit) reverse \(reverse)")
                }
            }
        }
    }

    /// Leaves loaded from a checkpoint hold narrow integer columns (32-bit offsets from a base), whose hint lands on
    /// a different byte: reopened in another process's way (from its files), the hinted walk reads the same values.
    @Test func forEachReadingReadsNarrowColumnsOfAReopenedStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reading-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(directory: directory, schema: Self.schema)
            var tx = store.transaction()
            try tx.insert("Folder", ["name": .string("inbox")])
            for i in 0..<1_000 { try Self.insert(&tx, i) }
            try store.commit(tx)
            try store.compact()
            try store.close()
        }
        let store = try Store(directory: directory, schema: Self.schema)
        defer { try? store.close() }
        let snapshot = store.snapshot
        var narrow = 0
        snapshot.tables[0].leaves.forEach { _, leaf in if leaf.columns[0].isNarrow { narrow += 1 } }
        #expect(narrow > 0, "the reopened leaves' code columns are narrow")
        let code = try Self.schema.attribute("Item", "code")
        let score = try Self.schema.attribute("Item", "score")
        let rows = snapshot.rows(try Self.schema.index("Item", ["score"]), from: [.double(5)], to: [.double(95)])
        var plain: [Read] = []
        try rows.forEach { plain.append(try Self.read($0)) }
        var hinted: [Read] = []
        try rows.forEach(reading: [code, score]) { hinted.append(try Self.read($0)) }
        #expect(hinted.count > 800 && hinted == plain)
        #expect(Set(hinted.compactMap(\.code)).count == hinted.count)
    }

    /// The leaves `forEach` looked up for a batch stay valid while the closure commits: renames and deletes of rows
    /// later in the same batch, with the snapshot itself gone and replaced versions freed, leave the walk reading the
    /// version it started on.
    @Test func commitsFromTheClosureDoNotChangeTheRowsOfTheWalk() throws {
        let store = try Self.store()
        let byScore = try Self.schema.index("Item", ["score"])
        let rows = store.snapshot.rows(byScore)
        let expected = try rows.map(Self.read)
        #expect(expected.count == 1_030)
        var lent: [Read] = []
        try rows.forEach { row in
            let k = lent.count
            lent.append(try Self.read(row))
            // Rows k+1…k+4 renamed, row k+5 deleted: every fifth row goes, the others are renamed once.
            guard k % 5 == 0, k + 5 < expected.count else { return }
            var tx = store.transaction()
            for later in expected[(k + 1)...(k + 4)] { try tx.set(later.id, "name", .string("renamed")) }
            try tx.delete(expected[k + 5].id)
            try store.commit(tx)
            store.reclaimer.drain()
        }
        #expect(lent == expected)
        let now = store.snapshot
        #expect(now.count(entity: byScore.entity) < 1_030)
        #expect(try now.value(expected[1].id, "name") == .string("renamed"))
    }

    @Test func aRowTheClosureKeepsOutlivesTheSnapshotAndLaterCommits() throws {
        let store = try Self.store()
        let byScore = try Self.schema.index("Item", ["score"])
        var kept: [Row] = []
        var expected: [Read] = []
        do {
            let snapshot = store.snapshot
            try snapshot.rows(byScore, from: [.double(40)], to: [.double(60)]).forEach { row in
                kept.append(row)
                expected.append(try Self.read(row))
            }
        }
        // The kept rows' objects change and go in later versions; the rows read the version they came from.
        for row in kept.prefix(50) {
            var tx = store.transaction()
            try tx.set(row.id, "name", .string("renamed"))
            try store.commit(tx)
        }
        for row in kept.suffix(50) {
            var tx = store.transaction()
            try tx.delete(row.id)
            try store.commit(tx)
        }
        // Replaced versions are freed now rather than after the reclaimer's delay: the kept rows are what holds the
        // leaves they came from.
        store.reclaimer.drain()
        #expect(kept.count > 100)
        #expect(try kept.map(Self.read) == expected)
        #expect(try store.snapshot.value(kept[0].id, "name") == .string("renamed"))
    }

    @Test func anErrorFromTheClosureEndsTheWalkAndReachesTheCaller() throws {
        let snapshot = try Self.store().snapshot
        let byScore = try Self.schema.index("Item", ["score"])
        let code = try Self.schema.attribute("Item", "code")
        let rows = snapshot.rows(byScore)
        var seen = 0
        let stopAt = rows.map { $0.int(code) ?? -1 }[500]
        #expect(throws: Stop(at: stopAt)) {
            try rows.forEach { row in
                seen += 1
                if row.int(code) == stopAt { throw Stop(at: stopAt) }
            }
        }
        #expect(seen == 501)
        // The snapshot reads on as before.
        var codes: [Int64] = []
        rows.forEach { codes.append($0.int(code) ?? -1) }
        #expect(codes.count == 1_030 && Set(codes) == Set(0..<1_030))
    }

    @Test func lentRowsLeaveEveryRetainCountAsTheyFoundIt() throws {
        let store = try Self.store()
        // Versions the commits replaced are freed first, so that no count changes under the test.
        store.reclaimer.drain()
        let snapshot = store.snapshot
        let byScore = try Self.schema.index("Item", ["score"])
        let code = try Self.schema.attribute("Item", "code")
        // Each leaf's two arrays, held here so that their counts have a steady base.
        var arrays: [(columns: [Column], links: [LinkColumn])] = []
        snapshot.tables[0].leaves.forEach { _, leaf in arrays.append((leaf.columns, leaf.links)) }
        #expect(arrays.count == 17)
        func address<T>(_ array: [T]) -> UnsafeMutableRawPointer {
            unsafeBitCast(array, to: UnsafeMutableRawPointer.self)
        }
        func counts() -> [UnsafeMutableRawPointer: Int] {
            var counts: [UnsafeMutableRawPointer: Int] = [:]
            for pair in arrays {
                counts[address(pair.columns)] = retainCount(address(pair.columns))
                counts[address(pair.links)] = retainCount(address(pair.links))
            }
            return counts
        }
        // The sequence holds the trie, and with it the tail leaf's arrays: made before the counts are taken.
        let rows = snapshot.rows(byScore)
        let before = counts()
        #expect(before.count == 34 && before.values.allSatisfy { $0 >= 2 && $0 < 10 }, "\(before)")
        let folder = try Self.schema.relationship("Item", "folder")
        var total: Int64 = 0
        var inFolder = 0
        for _ in 0..<20 {
            rows.forEach { row in
                total &+= row.int(code) ?? 0
                inFolder += row.targetSerials(folder).count
            }
        }
        #expect(total == 20 * (0..<1_030).reduce(0, +) && inFolder == 20 * 344)
        #expect(counts() == before, "rows read and dropped")
        // The hints read the leaves' arrays where they are stored and retain nothing either.
        total = 0
        rows.forEach(reading: [code]) { row in total &+= row.int(code) ?? 0 }
        #expect(total == (0..<1_030).reduce(0, +))
        #expect(counts() == before, "rows read with hints")
        // Kept rows hold one reference to each of their leaf's arrays, an error or not.
        var kept: [Row] = []
        try? rows.forEach { row in
            if kept.count < 40 { kept.append(row) } else { throw Stop(at: row.int(code) ?? -1) }
        }
        var expected = before
        for row in kept {
            expected[address(row.columns), default: 0] += 1
            expected[address(row.links!), default: 0] += 1
        }
        #expect(kept.count == 40 && counts() == expected)
        kept.removeAll()
        #expect(counts() == before)
    }

    /// A store whose items all sit in the trie's tail leaf (no node yet): `forEach` reads them as the iterator does.
    @Test func forEachReadsAStoreWithOnlyATailLeaf() throws {
        let store = Store(schema: Self.schema)
        var tx = store.transaction()
        try tx.insert("Folder", ["name": .string("inbox")])
        try store.commit(tx)
        for i in 0..<20 {
            var one = store.transaction()
            try Self.insert(&one, i)
            try store.commit(one)
        }
        let snapshot = store.snapshot
        #expect(snapshot.tables[0].leaves.root == nil && snapshot.tables[0].leaves.tail != nil)
        let rows = snapshot.rows(try Self.schema.index("Item", ["score"]))
        var lent: [Read] = []
        try rows.forEach { lent.append(try Self.read($0)) }
        let iterated = try rows.map(Self.read)
        #expect(lent.count == 20 && lent == iterated)
    }

    /// `Row.lend` writes a row's words by their offsets: a row is the two arrays, one word each, and the ID, nothing
    /// more, or a field it does not write would hold garbage.
    @Test func aRowIsItsTwoArraysAndItsID() {
        #expect(MemoryLayout<[Column]>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<[LinkColumn]>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<Row>.size == 2 * MemoryLayout<UInt>.size + MemoryLayout<ObjectID>.size)
    }
}
