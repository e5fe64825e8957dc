import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisStore

/// Issue 21: a small commit puts its index entries in the trees' pending runs, which fold into the nodes in batches.
/// Thousands of one-object commits, with snapshots kept along the way: each kept snapshot still reads exactly its own
/// version — rows, unique lookups, index scans and range counts — against a plain dictionary kept for that version,
/// including versions taken before, between and after folds.
@Suite struct SmallCommitVersionsTests {
    static let schema = try! Schema([
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("code", .int64), AttributeDescription("score", .double),
                AttributeDescription("name", .string),
            ],
            indexes: [.unique("code"), .on("score"), .on("name")])
    ])

    /// One object of the model: what a version should hold for it.
    struct Plain: Equatable {
        var code: Int64
        var score: Double
        var name: String
    }

    @Test("4,000 one-object commits: every kept snapshot reads its own version, across pending-run folds")
    func keptSnapshotsReadTheirVersions() throws {
        let store = Store(schema: Self.schema)
        let item = try Self.schema.entity("Item")
        let code = try Self.schema.attribute("Item", "code")
        let score = try Self.schema.attribute("Item", "score")
        let name = try Self.schema.attribute("Item", "name")
        var random = SeededRandom(seed: 0x21_5B)
        var model: [ObjectID: Plain] = [:]
        var nextCode: Int64 = 1
        var kept: [(snapshot: Snapshot, model: [ObjectID: Plain])] = []
        var keptWithPending = 0
        var refused = 0

        var folds = 0
        for step in 1...4_000 {
            let pendingBefore = Self.pendingEntries(store.snapshot)
            defer {
                // A fold moves a whole run into the nodes at once; anything else changes a run by an entry or two.
                if Self.pendingEntries(store.snapshot) + 16 < pendingBefore { folds += 1 }
            }
            var tx = store.transaction()
            let roll = random.below(100)
            if roll < 60 || model.count < 10 {
                // Scores repeat, so equal index values order by serial.
                let plain = Plain(
                    code: nextCode, score: Double(random.below(200)), name: "n\(random.below(300))")
                nextCode += Int64(1 + random.below(3))
                let id = tx.insert(entity: item, row: [.int(plain.code), .double(plain.score), .string(plain.name)])
                try store.commit(tx)
                model[id] = plain
            } else if roll < 80 {
                let id = model.keys.sorted(by: { $0.serial < $1.serial })[random.below(model.count)]
                let new = Double(random.below(200))
                try tx.set(id, score, .double(new))
                if random.chance(30) { try tx.set(id, name, .string("n\(random.below(300))")) }
                let committed = try store.commit(tx)
                model[id]!.score = new
                if let change = committed.changes.updates.first?.changes.first(where: { $0.attribute == name }),
                    case .string(let s) = change.new
                {
                    model[id]!.name = s
                }
            } else if roll < 95 {
                let id = model.keys.sorted(by: { $0.serial < $1.serial })[random.below(model.count)]
                try tx.delete(id)
                try store.commit(tx)
                model[id] = nil
            } else {
                // A code another live object holds, perhaps one still in a pending run: refused.
                let taken = model.values.map(\.code).sorted()[random.below(model.count)]
                tx.insert(entity: item, row: [.int(taken), .double(0), .string("dup")])
                #expect(throws: TrellisError.self) { try store.commit(tx) }
                refused += 1
            }
            if step % 40 == 0 || step % 97 == 0 {
                let snapshot = store.snapshot
                if Self.pendingEntries(snapshot) > 0 { keptWithPending += 1 }
                kept.append((snapshot, model))
            }
            if step % 1_000 == 0 {
                for version in kept {
                    try Self.check(version.snapshot, version.model, item, code, score, name, &random)
                }
            }
        }
        #expect(refused > 50)
        #expect(kept.count > 100)
        // Versions with entries still pending, and (4,000 commits against runs of a few dozen) many folds between.
        #expect(keptWithPending > 20)
        #expect(folds > 50)
        for version in kept {
            try Self.check(version.snapshot, version.model, item, code, score, name, &random)
            for table in version.snapshot.tables { for index in table.indexes { index.checkInvariants() } }
        }
    }

    /// Entries waiting in the pending runs of the snapshot's indexes.
    static func pendingEntries(_ snapshot: Snapshot) -> Int {
        snapshot.tables.reduce(0) { total, table in
            table.indexes.reduce(total) { total, index in
                switch index {
                case .scalar(let tree, _): return total + tree.pendingCount
                case .pair(let tree, _, _): return total + tree.pendingCount
                case .general(let tree): return total + tree.pendingCount
                }
            }
        }
    }

    /// Compares everything a reader can ask of `snapshot` with the plain model of its version.
    static func check(
        _ snapshot: Snapshot, _ model: [ObjectID: Plain], _ item: EntityKey, _ code: AttributeKey,
        _ score: AttributeKey, _ name: AttributeKey, _ random: inout SeededRandom
    ) throws {
        try #require(snapshot.count(entity: item) == model.count, "version \(snapshot.sequence): count")
        let ids = snapshot.objectIDs(entity: item)
        try #require(Set(ids) == Set(model.keys), "version \(snapshot.sequence): objects")
        let byCode = try Self.schema.index("Item", ["code"])
        let byScore = try Self.schema.index("Item", ["score"])
        let byName = try Self.schema.index("Item", ["name"])
        for (id, plain) in model {
            try #require(
                snapshot.value(id, code) == .int(plain.code) && snapshot.value(id, score) == .double(plain.score)
                    && snapshot.value(id, name) == .string(plain.name), "version \(snapshot.sequence): \(id)")
            try #require(snapshot.lookup(byCode, [.int(plain.code)]) == id, "version \(snapshot.sequence): code")
        }
        // A code no live object holds finds nothing.
        let free = (model.values.map(\.code).max() ?? 0) + 1
        try #require(snapshot.lookup(byCode, [.int(free)]) == nil)
        let scoreOrder = model.sorted { ($0.value.score, $0.key.serial) < ($1.value.score, $1.key.serial) }.map(\.key)
        try #require(snapshot.scan(byScore) == scoreOrder, "version \(snapshot.sequence): score scan")
        try #require(
            snapshot.scan(byScore, reverse: true) == scoreOrder.reversed(), "version \(snapshot.sequence): reverse")
        let codeOrder = model.sorted { $0.value.code < $1.value.code }.map(\.key)
        try #require(snapshot.scan(byCode) == codeOrder, "version \(snapshot.sequence): code scan")
        let nameOrder = model.sorted { ($0.value.name, $0.key.serial) < ($1.value.name, $1.key.serial) }.map(\.key)
        try #require(snapshot.scan(byName) == nameOrder, "version \(snapshot.sequence): name scan")
        for _ in 0..<5 {
            let (a, b) = (Double(random.below(200)), Double(random.below(200)))
            let (low, high) = (min(a, b), max(a, b))
            let expected = model.values.filter { $0.score >= low && $0.score < high }.count
            try #require(
                snapshot.count(byScore, from: [.double(low)], inclusive: true, to: [.double(high)], inclusive: false)
                    == expected)
            let limited = snapshot.scan(byScore, from: [.double(low)], limit: 7)
            try #require(limited == Array(scoreOrder.filter { model[$0]!.score >= low }.prefix(7)))
            // The same range as rows: the IDs in index order, each row reading its object's values.
            let reverse = random.below(2) == 0
            let rows = snapshot.rows(
                byScore, from: [.double(low)], inclusive: true, to: [.double(high)], inclusive: false,
                reverse: reverse)
            let inRange = scoreOrder.filter { model[$0]!.score >= low && model[$0]!.score < high }
            try #require(rows.count == inRange.count)
            try #require(rows.map(\.id) == (reverse ? inRange.reversed() : inRange), "rows \(low)..<\(high)")
            for row in rows {
                let plain = model[row.id]!
                try #require(row.int(code) == plain.code && row.double(score) == plain.score)
                try #require(row.string(name) == plain.name)
            }
            // The same rows lent by `forEach`, in the same order, reading the same values.
            var lent: [ObjectID] = []
            try rows.forEach { row in
                let plain = model[row.id]!
                try #require(row.int(code) == plain.code && row.double(score) == plain.score)
                try #require(row.string(name) == plain.name)
                lent.append(row.id)
            }
            try #require(lent == rows.map(\.id), "forEach \(low)..<\(high)")
        }
    }
}
