import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Undoing a saved commit: old values and links come back, deleted objects return with their IDs, values and links,
/// and an undo that would overwrite a later commit's change is refused, naming the properties.
@Suite struct UndoTests {
    @Test func undoRestoresOldValuesAndLinks() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        let context = ModelContext(store)
        let first = Project(name: "First")
        let second = Project(name: "Second")
        let chore = Chore(title: "a", estimate: 1, project: first)
        [first, second, chore].forEach(context.insert)
        try context.save()
        chore.title = "b"
        chore.estimate = 2
        chore.project = second
        try context.save()

        let edit = try #require(try store.history().last)
        try context.undo(edit)
        #expect(chore.title == "a" && chore.estimate == 1)
        #expect(chore.project === first)
        #expect(first.chores.map(\.objectID) == [chore.objectID] && second.chores.isEmpty)
        let undo = try #require(try store.history().last)
        #expect(undo.sequence == edit.sequence + 1)
        #expect(undo.changes(of: Chore.self).first?.newValue(\Chore.title) == "a")
    }

    @Test func undoOfADeleteBringsTheObjectBackWithItsIDValuesAndLinks() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        let context = ModelContext(store)
        let project = Project(name: "P")
        let chore = Chore(title: "keep me", estimate: 5, project: project)
        context.insert(project)
        context.insert(chore)
        try context.save()
        let id = chore.objectID!
        context.delete(chore)
        try context.save()
        #expect(try store.snapshot.count("Chore") == 0)

        try context.undo(try #require(try store.history().last))
        let back = try #require(context.model(for: id, as: Chore.self))
        #expect(back.title == "keep me" && back.estimate == 5)
        #expect(back.project === project && project.chores.map(\.objectID) == [id])
    }

    @Test func undoOfAnInsertDeletesWhatItInserted() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        let context = ModelContext(store)
        context.insert(Folder(name: "gone soon"))
        try context.save()
        try store.undo(try #require(try store.history().last))
        #expect(try store.snapshot.count("Folder") == 0)
    }

    @Test func anUndoThatWouldOverwriteALaterChangeIsRefusedNamingTheProperties() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        let context = ModelContext(store)
        let first = Project(name: "First")
        let second = Project(name: "Second")
        let chore = Chore(title: "a", estimate: 1, project: first)
        [first, second, chore].forEach(context.insert)
        try context.save()
        chore.title = "b"
        chore.estimate = 2
        try context.save()
        let edit = try #require(try store.history().last)
        chore.title = "c"  // a later commit changes the title again, and the relationship
        chore.project = second
        try context.save()
        let before = store.snapshot.sequence

        let error = #expect(throws: TrellisError.self) { try store.undo(edit) }
        #expect(error?.code == .conflict)
        let name = store.schema.describe(chore.objectID!)
        #expect(error?.message.contains("\(name).title (commit \(before))") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\(name).estimate") == false, "estimate was not changed later")
        #expect(store.snapshot.sequence == before, "nothing was committed")

        // Undoing the later commit instead works, and puts the title and the project back.
        try context.undo(try #require(try store.history().last))
        #expect(chore.title == "b" && chore.project === first)
    }
}
