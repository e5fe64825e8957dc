import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Large commits take the batched paths (rows a leaf at a time, one index merge per index, one walk for unique
/// checks); these tests hold them to the one-object-at-a-time paths and to the errors those report.
@Suite struct BatchApplyTests {
    /// A change set cut into change sets of one element each, in the order `applying` takes them: each goes through
    /// the one-row paths.
    private static func applyOneAtATime(_ changes: ChangeSet, to graph: Graph) throws -> Graph {
        var next = graph
        for insert in changes.inserts { next = try next.applying(ChangeSet(inserts: [insert])) }
        for update in changes.updates { next = try next.applying(ChangeSet(updates: [update])) }
        for edit in changes.edits { next = try next.applying(ChangeSet(edits: [edit])) }
        for delete in changes.deletes { next = try next.applying(ChangeSet(deletes: [delete])) }
        return next
    }

    /// Random large commits (inserts, updates, links, cascading deletes, refused ones) against stores from empty to a
    /// few thousand objects, so batches are both large and small against the trees they change.
    @Test(arguments: 0..<6)
    func largeCommitsEqualTheirChangesAppliedOneAtATime(seed: Int) throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var workload = RandomWorkload(seed: UInt64(1000 + seed), schema: store.schema)
        var whole = Graph(schema: store.schema)
        var single = Graph(schema: store.schema)
        var committed = 0
        for round in 0..<40 {
            let tx = try workload.transaction(for: store, size: round % 4 == 0 ? 12 : 300)
            guard let commit = try? store.commit(tx), !commit.changes.isEmpty else { continue }
            committed += 1
            whole = try whole.applying(commit.changes)
            single = try Self.applyOneAtATime(commit.changes, to: single)
            try #require(whole.differences(from: single) == [], "seed \(seed) round \(round)")
        }
        let live = store.snapshot
        #expect(committed > 10)
        #expect(live.differences(from: whole) == [])
        #expect(live.invariantViolations() == [])
        #expect(whole.invariantViolations() == [])
        #expect(single.invariantViolations() == [])
    }

    /// A batch whose rows refuse, replayed whole or one at a time, names the same object.
    @Test func aRefusedBatchNamesTheFirstObjectItRefuses() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let commit = try store.write { tx in
            for i in 0..<100 { try tx.insert("Folder", ["name": .string("f\(i)")]) }
            return tx
        }
        _ = commit
        let graph = store.snapshot
        let ids = try graph.objectIDs("Folder")
        let rows = ids.map { ChangeSet.Insert(id: $0, values: graph.row($0)!) }
        // The 31st insert exists already; the 60th has the wrong number of values.
        var inserts = (0..<70).map { i in
            ChangeSet.Insert(id: ObjectID(entity: ids[0].entity, serial: 1_000 + UInt64(i)), values: rows[0].values)
        }
        inserts[30] = rows[5]
        inserts[59].values = [.string("x")]
        for prefix in [31, 70] {
            let changes = ChangeSet(inserts: Array(inserts.prefix(prefix)))
            let error = #expect(throws: TrellisError.self) { try graph.applying(changes) }
            #expect(error?.object == rows[5].id)
            #expect(error?.code == .corrupt)
        }
        inserts[30].id = ObjectID(entity: ids[0].entity, serial: 2_000)
        let error = #expect(throws: TrellisError.self) { try graph.applying(ChangeSet(inserts: inserts)) }
        #expect(error?.object == inserts[59].id)
        #expect(error?.message.contains("wrong number of values") == true)

        var updates = ids.prefix(50).map {
            ChangeSet.Update(
                id: $0,
                changes: [.init(attribute: AttributeKey(entity: $0.entity, index: 1), old: .int(0), new: .int(7))])
        }
        updates[20].id = ObjectID(entity: ids[0].entity, serial: 5_000)
        updates[40].changes[0].new = .string("not a number")
        let missing = #expect(throws: TrellisError.self) { try graph.applying(ChangeSet(updates: updates)) }
        #expect(missing?.object == updates[20].id)
        #expect(missing?.message.contains("missing") == true)
        updates[20].id = ids[20]
        let bad = #expect(throws: TrellisError.self) { try graph.applying(ChangeSet(updates: updates)) }
        #expect(bad?.object == ids[40])
    }

    /// A cascade over hundreds of folders and their notes, with survivors whose links must be cleaned (notes in a
    /// surviving folder's tags, a surviving parent), equals its deletes applied one at a time, in any order.
    @Test func largeCascadesEqualTheirDeletesOneAtATime() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let root = try Fixtures.folderTree(in: store, fanOut: 4, depth: 5)
        let folders = try store.snapshot.objectIDs("Folder")
        let (tags, notes) = try store.write { tx in
            let tags = try (0..<5).map { try tx.insert("Tag", ["label": .string("tag\($0)")]) }
            var notes: [ObjectID] = []
            for (i, folder) in folders.enumerated() where i % 3 == 0 {
                let note = try tx.insert("Note", ["title": .string("n\(i)"), "score": .double(Double(i % 17))])
                try tx.link(note, "folder", folder)
                try tx.link(note, "tags", tags[i % 5])
                notes.append(note)
            }
            return (tags, notes)
        }
        let before = store.snapshot
        // A subtree under the root's first child, deleted with some of its members named again.
        let child = try before.targets(root, "children")[0]
        var tx = store.transaction()
        try tx.delete(child)
        for folder in folders.reversed() where folder.serial % 7 == 0 { try tx.delete(folder) }
        let commit = try store.commit(tx)
        #expect(commit.changes.deletes.count > 100)
        let single = try Self.applyOneAtATime(commit.changes, to: before)
        #expect(store.snapshot.differences(from: single) == [])
        var shuffled = commit.changes
        shuffled.deletes.reverse()
        #expect(try before.applying(shuffled).differences(from: single) == [])
        #expect(store.snapshot.invariantViolations() == [])
        #expect(try store.snapshot.count("Tag") == tags.count)
        #expect(try store.snapshot.count("Note") < notes.count)

        // A change set naming one object twice fails on the second, as one at a time does.
        var twice = commit.changes
        twice.deletes.insert(twice.deletes[3], at: 50)
        let error = #expect(throws: TrellisError.self) { try before.applying(twice) }
        #expect(error?.object == commit.changes.deletes[3].id)
        #expect(error?.message.contains("missing") == true)
    }

    private func uniqueError(_ store: Store, _ build: (inout Transaction) throws -> Void) throws -> TrellisError? {
        var tx = store.transaction()
        try build(&tx)
        let before = store.snapshot
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error?.code == .uniqueViolation)
        #expect(store.snapshot.differences(from: before).isEmpty)
        return error
    }

    /// Large commits report the object the per-object check reports: the first checked (in insert, then update
    /// order) that shares its values with another, and the lowest other serial holding them.
    @Test func largeCommitsReportTheSameUniqueViolations() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let existing = try store.write { tx in
            try (0..<100).map { try tx.insert("Tag", ["label": .string("t\($0)")]) }
        }
        // A duplicate inside the commit (positions 40 and 80) and one against a stored tag (position 70).
        var ids: [ObjectID] = []
        var error = try uniqueError(store) { tx in
            for i in 0..<100 {
                let label = i == 40 || i == 80 ? "dup" : i == 70 ? "t5" : "n\(i)"
                ids.append(try tx.insert("Tag", ["label": .string(label)]))
            }
        }
        #expect(error?.object == ids[40])
        #expect(error?.message.contains(store.schema.describe(ids[80])) == true)
        ids = []
        error = try uniqueError(store) { tx in
            for i in 0..<100 { ids.append(try tx.insert("Tag", ["label": .string(i == 70 ? "t5" : "n\(i)")])) }
        }
        #expect(error?.object == ids[70])
        #expect(error?.message.contains(store.schema.describe(existing[5])) == true)

        // Deleting the holder and inserting its value again in one commit is fine, and so is a swap of values.
        try store.write { tx in
            try tx.delete(existing[5])
            for i in 0..<100 { try tx.insert("Tag", ["label": .string(i == 70 ? "t5" : "m\(i)")]) }
            for i in 10..<90 { try tx.set(existing[i], "label", .string("t\(i % 2 == 0 ? i + 1 : i - 1)")) }
        }
        let snapshot = store.snapshot
        #expect(try snapshot.count("Tag") == 199)
        #expect(try snapshot.lookup("Tag", ["label": "t10"]) == existing[11])
        #expect(try snapshot.lookup("Tag", ["label": "t11"]) == existing[10])
        #expect(snapshot.invariantViolations() == [])

        // Updates that make two stored values equal: the first updated object in update order is named.
        error = try uniqueError(store) { tx in
            for i in stride(from: 99, through: 20, by: -1) { try tx.set(existing[i], "label", .string("u\(i)")) }
            try tx.set(existing[60], "label", "t3")
        }
        #expect(error?.object == existing[60])
        #expect(error?.message.contains(store.schema.describe(existing[3])) == true)

        // A two-attribute unique index (a general tree) and a one-attribute one over strings.
        let accounts = try store.write { tx in
            try (0..<80).map { try tx.insert("Account", ["email": .string("a\($0)@x"), "region": "eu"]) }
        }
        ids = []
        error = try uniqueError(store) { tx in
            for i in 0..<80 {
                ids.append(try tx.insert("Account", ["email": .string(i == 50 ? "a7@x" : "b\(i)@x"), "region": "us"]))
            }
        }
        #expect(error?.object == ids[50])
        #expect(error?.message.contains(store.schema.describe(accounts[7])) == true)
        #expect(error?.message.contains("Account(email)") == true)
    }

    /// The last value set wins, attributes come out in ascending order, and objects in the order of their first
    /// update, whatever order their serials come in.
    @Test func transactionUpdatesKeepTheirOrderAndLastValues() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let notes = try store.write { tx in
            try (0..<30).map { try tx.insert("Note", ["title": .string("n\($0)"), "score": .double(Double($0))]) }
        }
        var tx = store.transaction()
        let order = [5, 3, 29, 4, 0, 17, 3, 5, 12]
        for (step, i) in order.enumerated() {
            try tx.set(notes[i], "done", .bool(step % 2 == 0))
            try tx.set(notes[i], "score", .double(Double(100 + step)))
            try tx.set(notes[i], "title", .string("t\(step)"))
        }
        let added = try tx.insert("Note", ["title": "new"])
        try tx.set(added, "score", 9)
        let commit = try store.commit(tx)
        var firstSeen: [Int] = []
        for i in order where !firstSeen.contains(i) { firstSeen.append(i) }
        #expect(commit.changes.updates.map(\.id) == firstSeen.map { notes[$0] })
        let layout = store.schema.layouts[Int(notes[0].entity)]
        let (title, score, done) = try (
            layout.attributeIndex("title"), layout.attributeIndex("score"), layout.attributeIndex("done")
        )
        for update in commit.changes.updates {
            let i = notes.firstIndex(of: update.id)!
            let last = order.lastIndex(of: i)!
            let attributes = update.changes.map(\.attribute.index)
            #expect(attributes == attributes.sorted())
            #expect(update.changes.first { $0.attribute.index == score }?.new == .double(Double(100 + last)))
            #expect(update.changes.first { $0.attribute.index == title }?.new == .string("t\(last)"))
            #expect(
                update.changes.first { $0.attribute.index == done }.map(\.new) ?? .bool(false) == .bool(last % 2 == 0))
        }
        #expect(commit.changes.inserts.map(\.id) == [added])
        #expect(commit.changes.inserts[0].values[score] == .double(9))
        #expect(try store.snapshot.value(notes[3], "title") == "t6")
    }
}

/// Batches of `Graph.parallelIndexesFrom` inserts or updates and more build their index trees on another thread from
/// the batch's values while the leaves are written; the trees must be the ones the one-at-a-time path builds.
@Suite struct ParallelIndexBatchTests {
    static let schema = try! Schema([
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("id", .int64), AttributeDescription("score", .double),
                AttributeDescription("title", .string), AttributeDescription("note", .string, optional: true),
            ],
            indexes: [.unique("id"), .on("score"), .on("title")])
    ])

    @Test func largeInsertAndUpdateBatchesEqualTheirChangesAppliedOneAtATime() throws {
        let store = Store(schema: Self.schema)
        let item = try Self.schema.entityNumber("Item")
        let count = Graph.parallelIndexesFrom + 500
        var random = SeededRandom(seed: 4242)
        var tx = store.transaction()
        for k in 0..<count {
            // Scores repeat (a tenth of the values), so equal index values order by serial.
            let score = Double(random.next() % UInt64(count / 10))
            tx.insert(entity: item, row: [.int(Int64(k)), .double(score), .string("t\(random.next() % 500)"), .null])
        }
        let inserted = try store.commit(tx)
        #expect(inserted.changes.inserts.count == count)
        var single = Graph(schema: Self.schema)
        for insert in inserted.changes.inserts { single = try single.applying(ChangeSet(inserts: [insert])) }
        #expect(store.snapshot.differences(from: single) == [])

        // Every score and some ids and titles change; the ids move past every existing one, so they stay unique.
        let ids = store.snapshot.objectIDs(entity: item)
        let keys = (id: try Self.schema.attribute("Item", "id"), score: try Self.schema.attribute("Item", "score"))
        let title = try Self.schema.attribute("Item", "title")
        var update = store.transaction()
        for (k, id) in ids.enumerated() {
            try update.set(id, keys.score, .double(Double(1000 + random.next() % 97)))
            if k % 3 == 0 { try update.set(id, keys.id, .int(Int64(count + k))) }
            if k % 5 == 0 { try update.set(id, title, .string("moved \(k % 7)")) }
        }
        let updated = try store.commit(update)
        #expect(updated.changes.updates.count == count)
        for change in updated.changes.updates { single = try single.applying(ChangeSet(updates: [change])) }
        let live = store.snapshot
        #expect(live.differences(from: single) == [])
        #expect(live.invariantViolations() == [])
        // The index answers as the rows say.
        let idIndex = try Self.schema.index("Item", ["id"])
        #expect(live.lookup(idIndex, [.int(Int64(count + 3))]) == ids[3])
        #expect(live.lookup(idIndex, [.int(3)]) == nil)
        #expect(live.lookup(idIndex, [.int(4)]) == ids[4])
        let scoreIndex = try Self.schema.index("Item", ["score"])
        let scores = live.scan(scoreIndex).map { live.value($0, keys.score)!.doubleValue! }
        #expect(scores.count == count && scores == scores.sorted())
    }

    /// Updates listed in descending serial order with few distinct values: the batch's index changes are sorted by
    /// value (a radix sort from 256 changes) and then by serial within each value, as one update at a time orders
    /// them.
    @Test func updatesInDescendingSerialOrderWithRepeatedValuesEqualThemOneAtATime() throws {
        let store = Store(schema: Self.schema)
        let item = try Self.schema.entityNumber("Item")
        let score = try Self.schema.attribute("Item", "score")
        let count = 1_500
        try store.write { tx in
            for k in 0..<count {
                tx.insert(entity: item, row: [.int(Int64(k)), .double(Double(k % 7)), .string("t"), .null])
            }
        }
        let before = store.snapshot
        var update = store.transaction()
        for (k, id) in before.objectIDs(entity: item).reversed().enumerated() {
            try update.set(id, score, .double(Double(k * 3 % 5)))
        }
        let updated = try store.commit(update)
        // An update to the value an object holds already changes nothing; the others are two index changes each,
        // past the radix sort's threshold.
        let changed = (0..<count).filter { k in (count - 1 - k) % 7 != k * 3 % 5 }.count
        #expect(updated.changes.updates.count == changed)
        #expect(changed * 2 >= 256)
        var single = before
        for change in updated.changes.updates { single = try single.applying(ChangeSet(updates: [change])) }
        let live = store.snapshot
        #expect(live.differences(from: single) == [])
        #expect(live.invariantViolations() == [])
        let scoreIndex = try Self.schema.index("Item", ["score"])
        let entries = live.scan(scoreIndex).map { (live.value($0, score)!.doubleValue!, $0.serial) }
        #expect(entries.count == count)
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) })
    }

    /// Inserts are written a column at a time per leaf: rows of every attribute type and nulls in every optional
    /// column, in runs that start mid-leaf and leave gaps, read back as the one-row path writes them.
    @Test(arguments: [UInt64(1), 2, 3])
    func insertRunsOfEveryAttributeTypeEqualTheirRowsInsertedOneAtATime(seed: UInt64) throws {
        let schema = CheckpointColumnsTests.schema
        let thing = schema.layouts[0]
        var random = SeededRandom(seed: seed)
        var inserts: [ChangeSet.Insert] = []
        var serial: UInt64 = random.next() % 64
        for n in 0..<700 {
            serial += random.next() % 9 == 0 ? 1 + random.next() % 70 : 1
            var values = thing.attributes.map { attribute in
                attribute.isOptional && random.next() % 3 == 0
                    ? .null : CheckpointColumnsTests.randomValue(attribute.type, &random)
            }
            values[14] = .int(Int64(n))  // the unique key
            inserts.append(ChangeSet.Insert(id: ObjectID(entity: 0, serial: 1 + serial), values: values))
        }
        let batched = try Graph(schema: schema).applying(ChangeSet(inserts: inserts))
        var single = Graph(schema: schema)
        for insert in inserts {
            let stored = single.tables[0].insertRow(insert.id.serial, insert.values, layout: thing)
            #expect(stored)
        }
        #expect(batched.differences(from: single) == [])
        #expect(batched.invariantViolations() == [])
        #expect(batched.count(entity: 0) == inserts.count)
        // Read back value for value, nulls included (the graphs could agree and both be wrong).
        for insert in inserts.prefix(200) {
            let row = try #require(batched.row(insert.id))
            for (a, value) in insert.values.enumerated() {
                #expect(row[a] == value || (row[a].doubleValue?.isNaN == true && value.doubleValue?.isNaN == true))
            }
        }
    }

    /// A run refuses a value of the wrong type and a serial it holds already (twice in one batch), naming that object;
    /// a graph that refuses a batch is left as it was.
    @Test func anInsertRunRefusesAWrongTypeAndARepeatedSerial() throws {
        let schema = CheckpointColumnsTests.schema
        let thing = schema.layouts[0]
        var random = SeededRandom(seed: 77)
        let inserts = (0..<40).map { n in
            var values = thing.attributes.map { CheckpointColumnsTests.randomValue($0.type, &random) }
            values[14] = .int(Int64(n))
            return ChangeSet.Insert(id: ObjectID(entity: 0, serial: 100 + UInt64(n)), values: values)
        }
        let base = try Graph(schema: schema).applying(ChangeSet(inserts: Array(inserts.prefix(10))))
        var wrongType = Array(inserts.dropFirst(10))
        wrongType[13].values[1] = .string("not an int")
        let typeError = #expect(throws: TrellisError.self) { try base.applying(ChangeSet(inserts: wrongType)) }
        #expect(typeError?.object == wrongType[13].id)
        var repeated = Array(inserts.dropFirst(10))
        repeated[20].id = repeated[19].id
        repeated[20].values[14] = .int(999)
        let repeatError = #expect(throws: TrellisError.self) { try base.applying(ChangeSet(inserts: repeated)) }
        #expect(repeatError?.object == repeated[20].id)
        #expect(base.count(entity: 0) == 10)
        #expect(base.invariantViolations() == [])
    }
}
