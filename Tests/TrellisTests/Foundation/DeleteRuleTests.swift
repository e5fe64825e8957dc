import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct DeleteRuleTests {
    @Test func cascadeRemovesA111111FolderTreeAndEveryReverseLinkInOneCommit() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let root = try Fixtures.folderTree(in: store, fanOut: 10, depth: 6)
        #expect(try store.snapshot.count("Folder") == 111_111)
        // A folder outside the tree whose parent is inside it keeps living but loses the parent (nullify upward is
        // the child's rule; cascade goes down). Here: an outside folder that is the tree's root's sibling-less parent.
        var tx = store.transaction()
        let outside = try tx.insert("Folder", ["name": "outside"])
        try tx.link(root, "parent", outside)
        try store.commit(tx)

        let before = store.snapshot
        try store.write { tx in try tx.delete(root) }
        let after = store.snapshot
        #expect(try after.count("Folder") == 1)
        #expect(after.contains(outside))
        #expect(try after.targets(outside, "children").isEmpty)
        #expect(after.invariantViolations().isEmpty)
        // The snapshot taken before still holds the whole tree.
        #expect(try before.count("Folder") == 111_112)
        #expect(try before.targets(root, "children").count == 10)
    }

    @Test func cascadeChangeSetListsEveryDeletedObjectWithItsOldValues() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let root = try Fixtures.folderTree(in: store, fanOut: 3, depth: 3)
        let result = try store.commit(
            {
                var tx = store.transaction()
                try tx.delete(root)
                return tx
            }())
        #expect(result.changes.deletes.count == 13)
        #expect(result.changes.deletes.first?.id == root)
        #expect(result.changes.deletes.first?.values.first == .string("root"))
        #expect(result.changes.deletes.first?.relationships[1].count == 3)
    }

    /// From `DeletedRow.recordedFrom` deletes up, a cascade records each deleted object as its row in the version it
    /// was deleted from, not as arrays; what the change set reports and the bytes the journal gets must be what arrays
    /// of the same values and targets give.
    @Test func aBigCascadeReportsAndJournalsTheValuesAndTargetsItsObjectsHad() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let root = try Fixtures.folderTree(in: store, fanOut: 4, depth: 7)  // 5,461 folders
        let folders = try store.snapshot.objectIDs("Folder")
        try store.write { tx in
            let outside = try tx.insert("Folder", ["name": "outside"])
            try tx.link(root, "parent", outside)
            let tag = try tx.insert("Tag", ["label": "kept"])
            for (i, folder) in folders.enumerated() where i % 5 == 0 {
                let note = try tx.insert(
                    "Note",
                    [
                        "title": .string("note \(i) with a title longer than fifteen bytes"),
                        "body": i % 2 == 0 ? .string("b\(i)") : .null,
                        "due": i % 3 == 0 ? .date(Date(timeIntervalSince1970: Double(i))) : .null,
                        "score": .double(Double(i) / 7), "done": .bool(i % 4 == 0),
                    ])
                try tx.link(note, "folder", folder)
                if i % 10 == 0 { try tx.link(note, "tags", tag) }
            }
        }
        let before = store.snapshot
        var tx = store.transaction()
        try tx.delete(root)
        let commit = try store.commit(tx)
        let deletes = commit.changes.deletes
        #expect(deletes.count == folders.count + (folders.count + 4) / 5)
        #expect(deletes.count >= DeletedRow.recordedFrom)
        #expect(deletes.allSatisfy { if case .row = $0.record { true } else { false } })

        for delete in deletes {
            try #require(delete.values == before.row(delete.id), "values of \(delete.id)")
            let layout = store.schema.layouts[Int(delete.id.entity)]
            let expected = try layout.relationships.map { try before.targets(delete.id, $0.name).sorted() }
            try #require(delete.relationships.map { $0.sorted() } == expected, "targets of \(delete.id)")
        }
        let root0 = try #require(deletes.first)
        #expect(root0.id == root && root0.values == [.string("root"), .int(0)] && root0.relationships[1].count == 4)

        let copied = ChangeSet(
            inserts: commit.changes.inserts, updates: commit.changes.updates, edits: commit.changes.edits,
            deletes: deletes.map { ChangeSet.Delete(id: $0.id, values: $0.values, relationships: $0.relationships) })
        #expect(copied == commit.changes)
        let journaled = ChangeSetCodec.encode(commit.changes, schema: store.schema)
        #expect(journaled == ChangeSetCodec.encode(copied, schema: store.schema))
        #expect(try ChangeSetCodec.decode(journaled, schema: store.schema, context: "test") == copied)
        // A changed copy is a plain delete again, and no longer equal.
        var edited = deletes[1]
        edited.values[0] = .string("renamed")
        #expect(edited != deletes[1] && edited.values[0] == .string("renamed"))
        #expect(edited.relationships == deletes[1].relationships)
    }

    @Test func nullifyClearsTheInverseOfEachTarget() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        let folder = try tx.insert("Folder", ["name": "f"])
        let note = try tx.insert("Note", ["title": "n"])
        let tag1 = try tx.insert("Tag", ["label": "red"])
        let tag2 = try tx.insert("Tag", ["label": "blue"])
        try tx.link(note, "folder", folder)
        try tx.link(note, "tags", tag1)
        try tx.link(note, "tags", tag2)
        try store.commit(tx)
        #expect(try store.snapshot.targets(tag1, "notes") == [note])

        try store.write { tx in try tx.delete(note) }
        let s = store.snapshot
        #expect(try s.targets(tag1, "notes").isEmpty)
        #expect(try s.targets(tag2, "notes").isEmpty)
        #expect(try s.targets(folder, "notes").isEmpty)
        #expect(s.contains(tag1) && s.contains(tag2) && s.contains(folder))
        #expect(s.invariantViolations().isEmpty)
    }

    @Test func denyRefusesNamingObjectAndRelationshipAndLeavesTheStoreUnchanged() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        let account = try tx.insert("Account", ["email": "a@x", "region": "eu"])
        let note = try tx.insert("Note", ["title": "n"])
        try tx.link(note, "owner", account)
        try store.commit(tx)
        let before = store.snapshot

        var delete = store.transaction()
        try delete.delete(account)
        let error = #expect(throws: TrellisError.self) { try store.commit(delete) }
        #expect(error?.code == .deleteDenied)
        #expect(error?.object == account)
        #expect(error?.message.contains("Account#\(account.serial)") == true)
        #expect(error?.message.contains("'notes'") == true)
        #expect(error?.message.contains("Note#\(note.serial)") == true)
        #expect(store.snapshot.sequence == before.sequence)
        #expect(store.snapshot.differences(from: before).isEmpty)

        // Deleting the note too in the same commit lifts the denial.
        try store.write { tx in
            try tx.delete(account)
            try tx.delete(note)
        }
        #expect(!store.snapshot.contains(account))
    }

    /// The denial names the first target, in the relationship's order, that the commit does not delete too, and how
    /// many targets the relationship holds; targets deleted later in the same commit do not block.
    @Test func denyNamesTheFirstTargetThatOutlivesTheCommit() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let (account, notes) = try store.write { tx in
            let account = try tx.insert("Account", ["email": "b@x", "region": "eu"])
            let notes = try (0..<3).map { try tx.insert("Note", ["title": .string("n\($0)")]) }
            for note in notes { try tx.link(note, "owner", account) }
            return (account, notes)
        }
        var delete = store.transaction()
        try delete.delete(account)
        try delete.delete(notes[0])
        let error = #expect(throws: TrellisError.self) { try store.commit(delete) }
        #expect(error?.object == account)
        #expect(error?.message.contains("holds Note#\(notes[1].serial) (3 targets)") == true)
        try store.write { tx in
            try tx.delete(account)
            for note in notes.reversed() { try tx.delete(note) }
        }
        #expect(try store.snapshot.count("Account") == 0 && store.snapshot.count("Note") == 0)
    }

    @Test func noActionLeavesDanglingReferencesOnlyWhereDeclared() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        let note = try tx.insert("Note", ["title": "n"])
        let tag = try tx.insert("Tag", ["label": "t"])
        let entry = try tx.insert("LogEntry", ["text": "created"])
        try tx.link(note, "log", entry)
        try tx.link(note, "tags", tag)
        try store.commit(tx)

        try store.write { tx in try tx.delete(note) }
        let s = store.snapshot
        // Note.log is no-action: the log entry still names the deleted note.
        #expect(try s.targets(entry, "note") == [note])
        #expect(!s.contains(note))
        // Note.tags is nullify: the tag does not.
        #expect(try s.targets(tag, "notes").isEmpty)
    }

    @Test func toOneReassignmentUnlinksTheOldInverse() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        let a = try tx.insert("Folder", ["name": "a"])
        let b = try tx.insert("Folder", ["name": "b"])
        let note = try tx.insert("Note", ["title": "n"])
        try tx.link(note, "folder", a)
        try store.commit(tx)
        let commit = try store.commit(
            {
                var tx = store.transaction()
                try tx.link(b, "notes", note)  // from the to-many side: the note's old folder must lose it
                return tx
            }())
        let s = store.snapshot
        #expect(try s.targets(a, "notes").isEmpty)
        #expect(try s.targets(b, "notes") == [note])
        #expect(try s.target(note, "folder") == b)
        #expect(commit.changes.edits.map(\.kind) == [.unlink, .link])
        try store.write { tx in try tx.setTarget(note, "folder", nil) }
        #expect(try store.snapshot.targets(b, "notes").isEmpty)
    }
}
