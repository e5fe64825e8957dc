import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 18: a follower's view context and live results move with the writer's commits as they do in the writer's
/// own process, with the values the writer saved.
@MainActor @Suite struct FollowerContextTests {
    /// The test process's copy of `trellis-crashtest`'s `Note` (same name, same declarations, so the same entity).
    final class Note: Model {
        @Attribute var uid = UUID()
        @Attribute var created = Date()
        @Attribute var text = ""
    }

    final class Chore: Model {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var done = false
    }

    @Test("the view context and a FetchedResultsController of a follower show what writers in other processes save")
    func viewContextFollowsWritersInOtherProcesses() async throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let created = try CrashChild.run(["notes", "--dir", directory.path])
        #expect(created.lines.last == "closed 0")
        let follower = try Store(directory: directory, models: [Note.self], options: .follower)
        let view = follower.viewContext
        let live = try FetchedResultsController(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.text)]), context: view)
        var reported: [[ResultsIndexPath]] = []
        let token = live.onChange { reported.append($0.insertedRows) }
        defer { token.cancel() }

        // Each child is a writer of its own: it opens, saves one note and closes.
        for text in ["pears", "apples", "figs"] {
            let child = try CrashChild.run(["notes", "--dir", directory.path, "--add", text])
            #expect(child.lines.contains { $0.hasSuffix("\t\(text)") })
        }
        #expect(await eventuallyYielding { live.count == 3 && view.snapshot.sequence == 3 })
        #expect((0..<live.count).map { live[$0].text } == ["apples", "figs", "pears"])
        #expect(try view.fetch(FetchDescriptor<Note>()).map(\.text).sorted() == ["apples", "figs", "pears"])
        #expect(reported.flatMap { $0 }.count == 3)
        try follower.close()
    }

    @Test("updates and deletes reach a follower's live results and objects with their values")
    func updatesAndDeletesReachTheFollower() async throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(directory: directory, models: [Chore.self])
        let follower = try Store(directory: directory, models: [Chore.self], options: .follower)
        let view = follower.viewContext
        let live = try FetchedResultsController(
            FetchDescriptor<Chore>(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.rank)]), context: view)
        var changes: [ResultsChanges] = []
        let token = live.onChange { changes.append($0) }
        defer { token.cancel() }

        let context = ModelContext(writer)
        let chores = (1...4).map { i in
            let chore = Chore()
            chore.title = "chore \(i)"
            chore.rank = 10 * i
            context.insert(chore)
            return chore
        }
        try context.save()
        #expect(await eventuallyYielding { live.count == 4 })
        #expect((0..<4).map { live[$0].title } == ["chore 1", "chore 2", "chore 3", "chore 4"])
        let second = live[1]

        chores[1].done = true
        chores[3].rank = 5
        try context.save()
        #expect(await eventuallyYielding { live.count == 3 })
        #expect((0..<3).map { live[$0].title } == ["chore 4", "chore 1", "chore 3"])
        #expect(second.done == true)
        #expect(changes.last?.deletedRows == [ResultsIndexPath(section: 0, row: 1)])

        context.delete(chores[0])
        try context.save()
        #expect(await eventuallyYielding { live.count == 2 })
        #expect((0..<2).map { live[$0].title } == ["chore 4", "chore 3"])
        #expect(try view.fetch(FetchDescriptor<Chore>()).count == 3)
        #expect(follower.snapshot.sequence == writer.snapshot.sequence)
        try writer.close()
        try follower.close()
    }
}
