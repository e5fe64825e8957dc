import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A unique index on one required number or date is checked in place, by the value's encoded bits and two probes
/// (the first entry with those bits, then the first after the object's own). These tests check every commit's outcome
/// against a brute-force model of the objects.
@Suite struct ScalarUniqueConflictTests {
    static let schema = try! Schema([
        EntityDescription(
            "Reading",
            attributes: [
                AttributeDescription("code", .int64), AttributeDescription("ratio", .double),
                AttributeDescription("at", .date), AttributeDescription("note", .int64),
            ], indexes: [.unique("code"), .unique("ratio"), .unique("at"), .on("note")])
    ])

    private struct Fields: Equatable {
        var code: Int64
        var ratio: Double
        var at: Double
        var note: Int64

        var row: [Value] {
            [.int(code), .double(ratio), .date(Date(timeIntervalSinceReferenceDate: at)), .int(note)]
        }
    }

    /// Small pools, so that values collide often; -0.0 and 0.0 are one value.
    private static let ratios: [Double] = [0, -0.0, 0.5, 1, 2.5, -1, 1e300]

    private static func random(_ rng: inout SeededRandom) -> Fields {
        Fields(
            code: Int64(rng.next() % 14) - 3, ratio: ratios[Int(rng.next() % UInt64(ratios.count))],
            at: Double(rng.next() % 12) * 60, note: Int64(rng.next() % 3))
    }

    /// Whether two objects share a code, a ratio or a date: what the unique indexes forbid (`note` may repeat).
    private static func hasDuplicate(_ objects: [ObjectID: Fields]) -> Bool {
        let all = Array(objects.values)
        return Set(all.map(\.code)).count < all.count || Set(all.map(\.ratio)).count < all.count
            || Set(all.map(\.at)).count < all.count
    }

    private static func stored(_ store: Store) -> [ObjectID: Fields] {
        var out: [ObjectID: Fields] = [:]
        for id in store.snapshot.objectIDs(entity: 0) {
            let row = store.snapshot.row(id)!
            guard case .int(let code) = row[0], case .double(let ratio) = row[1], case .date(let at) = row[2],
                case .int(let note) = row[3]
            else {
                Issue.record("row \(row) is not stored as written")
                continue
            }
            out[id] = Fields(code: code, ratio: ratio, at: at.timeIntervalSinceReferenceDate, note: note)
        }
        return out
    }

    @Test func everyCommitIsRejectedExactlyWhenItsResultRepeatsAUniqueValue() throws {
        let store = Store(schema: Self.schema)
        var model: [ObjectID: Fields] = [:]
        var rng = SeededRandom(seed: 21)
        var rejected = 0
        var accepted = 0
        var olderIntoNewer = 0
        for round in 0..<1_500 {
            var next = model
            var tx = store.transaction()
            // Mostly one or two changes (the per-object check); now and then enough for the whole-index walk.
            let changes = round % 50 == 49 ? 80 : 1 + Int(rng.next() % 2)
            for _ in 0..<changes {
                let live = next.keys.sorted()
                if live.isEmpty || rng.next() % 3 == 0 {
                    let fields = Self.random(&rng)
                    next[tx.insert(entity: 0, row: fields.row)] = fields
                } else if rng.next() % 6 == 0 {
                    let id = live[Int(rng.next() % UInt64(live.count))]
                    try tx.delete(id)
                    next[id] = nil
                } else {
                    // An update taking one unique value of another object, often of an older object into a value a
                    // newer one holds (which only the probe after the object's own entry finds).
                    let id = live[Int(rng.next() % UInt64(live.count))]
                    let sourceID = live[Int(rng.next() % UInt64(live.count))]
                    let source = next[sourceID]!
                    var fields = next[id]!
                    let attribute = Int(rng.next() % 3)
                    let value: Value
                    switch attribute {
                    case 0:
                        fields.code = source.code
                        value = .int(source.code)
                    case 1:
                        fields.ratio = source.ratio
                        value = .double(source.ratio)
                    default:
                        fields.at = source.at
                        value = .date(Date(timeIntervalSinceReferenceDate: source.at))
                    }
                    if sourceID > id, fields != next[id]! { olderIntoNewer += 1 }
                    try tx.set(id, AttributeKey(entity: 0, index: attribute), value)
                    next[id] = fields
                }
            }
            let expectRejection = Self.hasDuplicate(next)
            do {
                try store.commit(tx)
                #expect(!expectRejection, "round \(round): a commit repeating a unique value was accepted")
                model = next
                accepted += 1
            } catch let error as TrellisError {
                #expect(error.code == .uniqueViolation, "round \(round): \(error)")
                #expect(expectRejection, "round \(round): a commit with no repeated unique value was rejected")
                rejected += 1
            }
            #expect(Self.stored(store) == model, "round \(round): the store differs from the model")
        }
        // Both outcomes, and the update of an older object into a newer one's value, actually happened.
        #expect(accepted > 100)
        #expect(rejected > 100)
        #expect(olderIntoNewer > 100)
    }

    @Test func negativeZeroAndZeroAreOneUniqueValueAndTheErrorNamesIt() throws {
        let store = Store(schema: Self.schema)
        let zero = try store.write { tx in
            tx.insert(entity: 0, row: Fields(code: 1, ratio: 0, at: 0, note: 0).row)
        }
        var tx = store.transaction()
        tx.insert(entity: 0, row: Fields(code: 2, ratio: -0.0, at: 60, note: 0).row)
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error?.code == .uniqueViolation)
        #expect(error?.uniqueViolation?.attributes == ["ratio"])
        #expect(error?.uniqueViolation?.existing == zero)
        #expect(error?.message.contains("ratio = ") == true)
        #expect(store.snapshot.count(entity: 0) == 1)
    }

    @Test func aRepeatedNonUniqueValueCommitsAndSwappedUniqueValuesCommit() throws {
        let store = Store(schema: Self.schema)
        let (a, b) = try store.write { tx in
            (
                tx.insert(entity: 0, row: Fields(code: 1, ratio: 1, at: 0, note: 5).row),
                tx.insert(entity: 0, row: Fields(code: 2, ratio: 2, at: 60, note: 5).row)
            )
        }
        // Swapping the codes of two objects in one commit: the constraint holds on the result.
        try store.write { tx in
            try tx.set(a, AttributeKey(entity: 0, index: 0), .int(2))
            try tx.set(b, AttributeKey(entity: 0, index: 0), .int(1))
        }
        #expect(store.snapshot.value(a, AttributeKey(entity: 0, index: 0)) == .int(2))
        #expect(store.snapshot.value(b, AttributeKey(entity: 0, index: 0)) == .int(1))
        let code = try Self.schema.index("Reading", ["code"])
        #expect(store.snapshot.lookup(code, .int(1)) == b)
        #expect(store.snapshot.lookup(code, .int(2)) == a)
    }
}
