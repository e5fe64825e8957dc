import Foundation
import Testing
import Trellis

/// The README's examples, verbatim, run and checked. Each block's lines sit in one test (`.ci/check-doc-examples.py`
/// finds them there); what the example leaves to the reader (`url`, `deadline`, a store, a view context) is declared
/// before it, and what it claims is checked after it. Functions that hold a block keep the README's layout, which the
/// formatter would change (aligned comments), hence `swift-format-ignore`.
@MainActor @Suite struct ReadmeTests {
    /// The tour: model classes (local, so that `Task` shadows Swift's only here), a durable store, 100,000 tasks saved
    /// in one background commit, and the view context fetching the first 50 due before a deadline on the index.
    // swift-format-ignore
    @Test func theTourSavesInOneBackgroundCommitAndTheViewContextFetchesTheFirstFiftyDue() async throws {
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        let deadline = Date(timeIntervalSinceNow: 100 * 3600)

        final class Project: Model {
            @Attribute(.unique) var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]
        }

        final class Task: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
            @Relationship var project: Project?
        }

        let store = try Store(directory: url, models: [Project.self, Task.self])
        let view = store.viewContext                          // main actor; follows every commit, never waits
                                                              // (synchronous code on Linux: call view.refresh(), below)

        try await store.performBackgroundTask { context in    // a writer off the reader's thread
            let launch = Project()
            launch.name = "Launch"
            context.insert(launch)
            for i in 0..<100_000 {
                let task = Task()
                task.title = "step \(i)"
                task.due = Date(timeIntervalSinceNow: Double(i) * 3600)   // one due every hour
                task.project = launch
                context.insert(task)
            }
            try context.save()                                // one commit, durable when it returns
        }

        let next = try view.fetch(FetchDescriptor<Task>(
            predicate: #Predicate { !$0.done && $0.due < deadline },   // planned on the index on `due`
            sortBy: [SortDescriptor(\.due)], fetchLimit: 50))

        // The background commit was delivered to the view context before the await returned (both are main-actor
        // jobs, the delivery queued first).
        #expect(next.map(\.title) == (0..<50).map { "step \($0)" })
        #expect(next.allSatisfy { $0.project?.name == "Launch" })
        #expect(store.snapshot.sequence == 1, "one commit")
        let plan = try view.explain(FetchDescriptor<Task>(predicate: #Predicate { !$0.done && $0.due < deadline }))
        #expect(plan.index == ["due"])
        try store.close()
        let reopened = try Store(directory: url, models: [Project.self, Task.self])
        #expect(try reopened.snapshot.count("Task") == 100_000)
        try reopened.close()
    }

    // swift-format-ignore
    @Test func theStoreByNamesCascadesInOneCommitAndTheOldSnapshotStillHasBothFolders() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }

        let schema = try Schema([
            EntityDescription("Folder", attributes: [AttributeDescription("name", .string)], relationships: [
                RelationshipDescription("parent", to: "Folder", inverse: "children"),
                RelationshipDescription("children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
            ], indexes: [.on("name")]),
        ])
        let store = Store(schema: schema)                    // in memory; Store(directory:schema:) for a durable one
        let inbox = try store.write { tx -> ObjectID in
            let inbox = try tx.insert("Folder", ["name": "Inbox"])
            try tx.link(try tx.insert("Folder", ["name": "Receipts"]), "parent", inbox)
            return inbox
        }
        let snapshot = store.snapshot                        // O(1); read it on any thread, as long as you like
        try store.write { tx in try tx.delete(inbox) }       // cascades to Receipts, in one commit
        print(try snapshot.count("Folder"), try store.snapshot.count("Folder"))   // 2 0

        #expect(printed.lines == ["2 0"])
        #expect(try snapshot.targets(inbox, "children").count == 1)
        #expect(store.snapshot.sequence == 2)
    }

    /// "The view context in synchronous code": `refresh()` reports at once, without the main actor running.
    // swift-format-ignore
    @Test func refreshingTheViewContextInSynchronousCodeCallsItsHandlerAtOnce() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let schema = try Schema([EntityDescription("Task", attributes: [AttributeDescription("title", .string)])])
        let store = Store(schema: schema)
        let view = store.viewContext

        let token = view.onChange { changes in print("new:", changes.inserted.count) }
        try store.write { tx in _ = try tx.insert("Task", ["title": "from elsewhere"]) }
        view.refresh()                                        // prints "new: 1" here, not when the main actor next runs

        #expect(printed.lines == ["new: 1"])
        #expect(view.snapshot.sequence == store.snapshot.sequence)
        token.cancel()
    }

    /// "When the model changes": the next version renames `title` and adds `priority`; the dry run lists both steps
    /// with what they touch, and opening migrates.
    // swift-format-ignore
    @Test func theNextModelVersionMigratesTheStoreAndTheDryRunListsTheSteps() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        try Self.storeOfTheFirstVersion(at: url, titles: ["plan", "build", "ship"])

        final class Project: Model {
            @Attribute(.unique) var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]
        }

        final class Task: Model {
            @Attribute(originalName: "title") var headline = ""   // renamed: the values move with it
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
            @Attribute var priority = 2                            // new: every stored task gets 2
            @Relationship var project: Project?
        }
        let plan = try Store.plannedMigration(directory: url, schema: Schema(models: [Project.self, Task.self]))
        print(plan.steps)      // the dry run: each step and the objects it touches, nothing written
        let store = try Store(directory: url, models: [Project.self, Task.self])   // migrates, in one atomic record

        #expect(plan.canRun)
        #expect(plan.steps.map(\.kind) == [.renameAttribute, .addAttribute])
        #expect(printed.lines == ["\(plan.steps)"])
        #expect(printed.lines[0].contains("priority"))
        let context = ModelContext(store)
        let tasks = try context.fetch(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.headline)]))
        #expect(tasks.map(\.headline) == ["build", "plan", "ship"])
        #expect(tasks.allSatisfy { $0.priority == 2 })
        #expect(store.schema.history.count == 1)
        try store.close()
    }

    /// A first-version store of the README's models with some tasks, closed.
    private static func storeOfTheFirstVersion(at url: URL, titles: [String]) throws {
        final class Project: Model {
            @Attribute(.unique) var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]
        }
        final class Task: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
            @Relationship var project: Project?
        }
        let store = try Store(directory: url, models: [Project.self, Task.self])
        let context = ModelContext(store)
        for title in titles {
            let task = Task()
            task.title = title
            context.insert(task)
        }
        try context.save()
        try store.close()
    }
}
