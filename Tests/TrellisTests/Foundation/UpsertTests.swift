import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// `Store.commit(_:onConflict:)`: `.error` refuses an insert whose unique values are taken, `.update` merges it into
/// the object holding them, for single and compound constraints, across commits and within one.
@Suite struct UpsertTests {
    /// Seats unique only by (row, number), with a guest that an upsert replaces.
    private func seatStore() throws -> Store {
        Store(
            schema: try Schema([
                EntityDescription(
                    "Seat",
                    attributes: [
                        AttributeDescription("row", .int), AttributeDescription("number", .int),
                        AttributeDescription("guest", .string, optional: true),
                    ], indexes: [.unique("row", "number")])
            ]))
    }

    @Test func singleConstraintAcrossCommits() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let red = try store.write { tx in try tx.insert("Tag", ["label": "red"]) }
        var tx = store.transaction()
        let again = try tx.insert("Tag", ["label": "red"])
        let note = try tx.insert("Note", ["title": "paint"])
        try tx.link(note, "tags", again)
        let refused = #expect(throws: TrellisError.self) { try store.commit(tx, onConflict: .error) }
        #expect(refused?.code == .uniqueViolation)
        #expect(refused?.message.contains("Tag#\(red.serial)") == true)
        let before = store.snapshot
        let commit = try store.commit(tx, onConflict: .update)
        #expect(commit.merged == [again: red])
        let after = store.snapshot
        #expect(try after.count("Tag") == 1 && !after.contains(again))
        #expect(try after.targets(note, "tags") == [red])
        #expect(try after.targets(red, "notes") == [note])
        // What was journaled is an update and an edit of the existing tag: replaying it rebuilds the graph.
        #expect(commit.changes.inserts.map(\.id) == [note])
        #expect(after.differences(from: try before.applying(commit.changes)) == [])
    }

    @Test func theDefaultCommitStillRefuses() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        try store.write { tx in try tx.insert("Tag", ["label": "red"]) }
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "red"])
        #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(try store.snapshot.count("Tag") == 1)
    }

    @Test func twoInsertsOfOneKeyInOneCommit() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        let first = try tx.insert("Account", ["email": "a@x", "region": "eu"])
        let second = try tx.insert("Account", ["email": "a@x", "region": "us"])
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error?.code == .uniqueViolation)
        let commit = try store.commit(tx, onConflict: .update)
        #expect(commit.merged == [second: first])
        #expect(try store.snapshot.objectIDs("Account") == [first])
        #expect(try store.snapshot.value(first, "region") == "us")
    }

    @Test func compoundConstraintAcrossCommitsAndWithinOne() throws {
        let store = try seatStore()
        let seat = try store.write { tx in try tx.insert("Seat", ["row": 1, "number": 1, "guest": "Ann"]) }
        var tx = store.transaction()
        let taken = try tx.insert("Seat", ["row": 1, "number": 1, "guest": "Bob"])
        let free = try tx.insert("Seat", ["row": 1, "number": 2, "guest": "Cy"])
        let twice = try tx.insert("Seat", ["row": 1, "number": 2, "guest": "Di"])
        let refused = #expect(throws: TrellisError.self) { try store.commit(tx, onConflict: .error) }
        #expect(refused?.message.contains("Seat(row, number)") == true)
        #expect(try store.snapshot.count("Seat") == 1)
        let commit = try store.commit(tx, onConflict: .update)
        #expect(commit.merged == [taken: seat, twice: free])
        let after = store.snapshot
        #expect(try after.objectIDs("Seat") == [seat, free])
        #expect(try after.value(seat, "guest") == "Bob")
        #expect(try after.value(free, "guest") == "Di")
        // Only the full key matches: the same row with another number is a new seat.
        let other = try store.write { tx in try tx.insert("Seat", ["row": 2, "number": 1]) }
        #expect(try store.snapshot.count("Seat") == 3 && store.snapshot.contains(other))
    }

    @Test func anUpsertReplacesEveryAttributeAndKeepsNullKeysApart() throws {
        let store = try seatStore()
        let seat = try store.write { tx in try tx.insert("Seat", ["row": 1, "number": 1, "guest": "Ann"]) }
        var tx = store.transaction()
        try tx.insert("Seat", ["row": 1, "number": 1])  // guest not given: null, as a new seat would have
        try store.commit(tx, onConflict: .update)
        #expect(try store.snapshot.value(seat, "guest") == .null)
    }

    @Test func aHolderDeletedInTheSameCommitIsNotMergedInto() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let red = try store.write { tx in try tx.insert("Tag", ["label": "red"]) }
        var tx = store.transaction()
        try tx.delete(red)
        let fresh = try tx.insert("Tag", ["label": "red"])
        let commit = try store.commit(tx, onConflict: .update)
        #expect(commit.merged.isEmpty)
        #expect(try store.snapshot.objectIDs("Tag") == [fresh])
    }

    @Test func editsAndDeletesOfAMergedInsertReachTheHolder() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let (red, note) = try store.write { tx in
            let red = try tx.insert("Tag", ["label": "red"])
            let note = try tx.insert("Note", ["title": "n"])
            try tx.link(note, "tags", red)
            return (red, note)
        }
        var tx = store.transaction()
        let again = try tx.insert("Tag", ["label": "red"])
        try tx.unlink(again, "notes", note)
        try store.commit(tx, onConflict: .update)
        #expect(try store.snapshot.targets(red, "notes") == [])
        var doomed = store.transaction()
        let third = try doomed.insert("Tag", ["label": "red"])
        try doomed.delete(third)
        try store.commit(doomed, onConflict: .update)
        #expect(try store.snapshot.count("Tag") == 0)
    }
}
