import Foundation
import Testing
import Trellis

/// The live results example of the README and of the DocC article LiveResults, verbatim: the mirror it builds follows
/// the result through inserts, a move across sections and a delete.
@MainActor @Suite struct LiveResultsDocTests {
    // swift-format-ignore
    @Test func theTableLoopKeepsAMirrorEqualToTheResult() throws {
        final class Task: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
        }
        let store = try Store(models: [Task.self])
        let view = store.viewContext
        try store.write { tx in
            for i in 0..<5 { _ = try tx.insert("Task", ["title": .string("t\(i)"), "due": .date(Date(timeIntervalSinceReferenceDate: Double(i)))]) }
        }
        view.refresh()

        let live = try FetchedResultsController(
            FetchDescriptor<Task>(sortBy: [SortDescriptor(\.due)]), sectionBy: \.done, context: view)
        var table = live.sections.map { section in section.range.map { live.objectID(at: $0) } }   // what the list shows
        let token = live.onChange { change in                 // on the main actor; computed off it, per commit
            for path in (change.deletedRows + change.movedRows.map(\.from)).sorted(by: >) {
                table[path.section].remove(at: path.row)
            }
            for section in change.deletedSections { table.remove(at: section) }
            for section in change.insertedSections { table.insert([], at: section) }
            for path in (change.insertedRows + change.movedRows.map(\.to)).sorted() {
                table[path.section].insert(live.objectID(at: path), at: path.row)
            }
            // A table view takes the same lists in one batch update; change.updatedRows are reloads.
        }

        func shown() -> [[ObjectID]] { live.sections.map { s in s.range.map { live.objectID(at: $0) } } }
        #expect(table.map(\.count) == [5])
        let first = live.objectID(at: 0)
        // Done: the task moves to a new section (done == true sorts after false).
        try store.write { tx in try tx.set(first, "done", true) }
        live.refresh()
        #expect(live.sections.map(\.name) == ["false", "true"])
        #expect(table == shown() && table.map(\.count) == [4, 1])
        try store.write { tx in
            _ = try tx.insert("Task", ["title": "early", "due": .date(Date(timeIntervalSinceReferenceDate: -1))])
            try tx.delete(live.objectID(at: 2))
        }
        live.refresh()
        #expect(table == shown() && table.map(\.count) == [4, 1])
        #expect(live[0].title == "early")
        token.cancel()
    }
}
