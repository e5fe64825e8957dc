import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 3 (the seed-002 scenario): what a background context saves appears in the view context with
/// no merge code, and the change report names it.
@MainActor @Suite struct ViewContextTests {
    @Test func anObjectSavedInTheBackgroundAppearsInTheViewContextAndTheReportNamesIt() async throws {
        let store = try makeStore()
        let view = store.viewContext
        #expect(view === store.viewContext)
        var reports = view.changes().makeAsyncIterator()
        var called: [ContextChanges] = []
        let token = view.onChange { called.append($0) }
        #expect(try view.fetchCount(FetchDescriptor<Chore>()) == 0)

        let id = try await store.performBackgroundTask { context in
            let chore = Chore(title: "from the background", estimate: 5)
            context.insert(chore)
            try context.save()
            return chore.objectID!
        }
        let inserted = try #require(await reports.next())
        #expect(inserted.inserted == [id] && inserted.updated.isEmpty && inserted.deleted.isEmpty)
        #expect(view.model(for: id, as: Chore.self)?.title == "from the background")
        #expect(try view.fetchIdentifiers(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 5 })) == [id])
        #expect(called.count == 1 && called[0].inserted == [id])

        let project = try await store.performBackgroundTask { context in
            let chore = context.model(for: id, as: Chore.self)!
            let launch = Project(name: "Launch")
            chore.title = "renamed"
            chore.project = launch
            try context.save()
            return launch.objectID!
        }
        let updated = try #require(await reports.next())
        #expect(updated.inserted == [project])
        #expect(updated.updated[id] == ["title", "project"])
        #expect(view.model(for: id, as: Chore.self)?.project?.name == "Launch")

        try await store.performBackgroundTask { context in
            context.delete(context.model(for: project, as: Project.self)!)
            try context.save()
        }
        let deleted = try #require(await reports.next())
        #expect(deleted.deleted == [project, id])
        #expect(try view.fetchCount(FetchDescriptor<Chore>()) == 0)
        #expect(view.model(for: id, as: Chore.self) == nil)
        token.cancel()
        #expect(called.count == 3)
    }

    @Test func theViewContextKeepsItsPendingChangesOnTopAndDoesNotReportItsOwnSaves() async throws {
        let store = try makeStore()
        let view = store.viewContext
        var reports = view.changes().makeAsyncIterator()
        let chore = Chore(title: "mine", estimate: 1)
        view.insert(chore)
        try view.save()
        let id = chore.objectID!
        chore.title = "edited in view"
        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.estimate = 7
            try context.save()
        }
        let report = try #require(await reports.next())
        #expect(report.updated[id] == ["estimate"])  // the view's own insert was not reported
        #expect(chore.title == "edited in view" && chore.estimate == 7)
        #expect(view.hasChanges)
        // The view read the object before the background commit: saving is a conflict under the default policy.
        #expect(throws: TrellisError.self) { try view.save() }
        view.mergePolicy = .mergeByProperty(favoring: .context)
        try view.save()
        #expect(try store.snapshot.value(id, "title") == "edited in view")
        #expect(try store.snapshot.value(id, "estimate") == 7)
    }
}
