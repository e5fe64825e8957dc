import Foundation
import Testing
import Trellis

/// The models of the "Getting Started" article (Trellis.docc/GettingStarted.md), verbatim; `Project` and `Chore` in
/// this namespace are the article's, not the test module's.
enum GettingStartedExample {
    final class Project: Model {
        @Attribute(.unique) var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
    }

    final class Chore: Model {
        @Attribute var title = ""
        @Attribute(.indexed) var due = Date.distantFuture
        @Attribute var done = false
        @Relationship var project: Project?
    }
}

extension GettingStartedExample {
    /// The article's examples, verbatim, run in order and checked (see `ReadmeTests` for how).
    @MainActor @Suite struct GettingStartedTests {
        /// Open a store, write 100,000 chores in the background, read the next ones due on the main actor.
        // swift-format-ignore
        @Test func theArticleOpensAStoreSavesInTheBackgroundAndReadsTheNextChoresDue() async throws {
            let appData = DocsScratch.directory()
            defer { DocsScratch.remove(appData) }

            let url = appData.appending(path: "store")         // a directory of the app's own data
            let store = try Store(directory: url, models: [Project.self, Chore.self])

            #expect(FileManager.default.fileExists(atPath: url.appending(path: "MANIFEST").path))

            try await store.performBackgroundTask { context in
                let launch = Project()
                launch.name = "Launch"
                context.insert(launch)
                for i in 0..<100_000 {
                    let chore = Chore()
                    chore.title = "step \(i)"
                    chore.due = Date(timeIntervalSinceNow: Double(i) * 3600)   // one due every hour
                    chore.project = launch
                    context.insert(chore)
                }
                try context.save()
            }

            #expect(store.snapshot.sequence == 1, "one commit")

            @MainActor func nextChores(before deadline: Date) throws -> [Chore] {
                try store.viewContext.fetch(FetchDescriptor<Chore>(
                    predicate: #Predicate { !$0.done && $0.due < deadline },
                    sortBy: [SortDescriptor(\.due)], fetchLimit: 50))
            }

            store.viewContext.refresh()
            // Chore i is due i hours after it was made, which was before this deadline: chores 0...10 are due.
            let soon = try nextChores(before: Date(timeIntervalSinceNow: 10.5 * 3600))
            #expect(soon.map(\.title) == (0...10).map { "step \($0)" })
            #expect(try nextChores(before: .distantFuture).count == 50)
            try store.close()
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
            let store = Store(schema: schema)
            let inbox = try store.write { tx -> ObjectID in
                let inbox = try tx.insert("Folder", ["name": "Inbox"])
                try tx.link(try tx.insert("Folder", ["name": "Receipts"]), "parent", inbox)
                return inbox
            }
            let snapshot = store.snapshot                        // O(1); read it on any thread
            try store.write { tx in try tx.delete(inbox) }       // cascades to Receipts, in one commit
            print(try snapshot.count("Folder"), try store.snapshot.count("Folder"))   // 2 0

            #expect(printed.lines == ["2 0"])
        }
    }
}

/// The landing page's example (Trellis.docc/Trellis.md): its models are local to the test, as an app's would be
/// global.
@MainActor @Suite struct LandingPageTests {
    // swift-format-ignore
    @Test func theLandingPageExampleFetchesTheOpenChoresInOrderOfDueDate() throws {
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        do {
            // The store the example opens, with five chores of which two are done.
            let store = try Store(directory: url, models: [Project.self, Chore.self])
            let context = ModelContext(store)
            for i in 0..<5 {
                let chore = Chore()
                chore.title = "chore \(i)"
                chore.due = Date(timeIntervalSince1970: Double(5 - i) * 86_400)
                chore.done = i % 2 == 1
                context.insert(chore)
            }
            try context.save()
            try store.close()
        }

        final class Project: Model {
            @Attribute(.unique) var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
        }

        final class Chore: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
            @Relationship var project: Project?
        }

        let store = try Store(directory: url, models: [Project.self, Chore.self])
        let next = try store.viewContext.fetch(FetchDescriptor<Chore>(
            predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.due)], fetchLimit: 50))

        #expect(next.map(\.title) == ["chore 4", "chore 2", "chore 0"])
        try store.close()
    }
}
